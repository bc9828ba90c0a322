#pragma once
// A ViT's forward pass on the GPU (OpenGL compute shaders vit_*.comp), one for one with the
// CPU path (core/vit_cpu.hpp): tiled GEMMs for the patch embedding, q/k/v, the
// projection and the MLP; LayerNorm; softmax(q kᵀ/√(D/H)) per head; A·V. Each layer's queries
// and keys are read back into the VitPass, from which any row is read afterwards. Needs a
// current OpenGL 4.3+ context on this thread.
#include "core/gpu/gl.hpp"
#include "core/vit.hpp"

#include <cstdint>
#include <vector>

namespace attnlab {

class VitGpuRunner final : public VitRunner {
 public:
  /// Compiles the shaders. Throws Error if a shader fails (name and driver log).
  VitGpuRunner();
  ~VitGpuRunner() override;
  VitGpuRunner(const VitGpuRunner&) = delete;
  VitGpuRunner& operator=(const VitGpuRunner&) = delete;

  const char* path() const override { return "gpu"; }
  /// Uploads the model's weights (once per model) and the input, runs every block. Throws
  /// Error when the pass would not fit `budget` or one layer's attention or activations would
  /// not fit one storage buffer of the driver (llvmpipe: 128 MiB), naming the sizes.
  VitPass run(const VitModel& model, const VitInput& input, std::int64_t budget,
              const std::atomic<bool>* stop = nullptr) override;

  /// How many forward passes have run (tests check that reads do not run one).
  int forward_passes() const { return forward_passes_; }

 private:
  struct Weights;
  void upload(const VitModel& model);

  gl::Program gemm_, layernorm_, attention_pass_, attend_, pool_;
  gl::ParamBlock params_;
  std::unique_ptr<Weights> weights_;
  std::uint64_t model_id_ = 0;
  int forward_passes_ = 0;
};

}  // namespace attnlab
