#pragma once
// A ViT's forward pass on the GPU (OpenGL compute shaders vit_*.comp), one for one with the
// Eigen reference (core/vit_reference.hpp): tiled GEMMs for the patch embedding, q/k/v, the
// projection and the MLP; LayerNorm; softmax(q kᵀ/√(D/H)) per head; A·V. Every layer's
// attention (H × T × T) stays on the GPU in a buffer of its own, so reading another layer, head
// or query never runs the forward pass again. Needs a current OpenGL 4.3+ context on this thread.
#include "core/gpu/gl.hpp"
#include "core/vit.hpp"

#include <cstdint>
#include <vector>

namespace attnlab {

class VitGpuEngine final : public VitRunner {
 public:
  /// Compiles the shaders. Throws Error if a shader fails (name and driver log).
  VitGpuEngine();
  ~VitGpuEngine() override;
  VitGpuEngine(const VitGpuEngine&) = delete;
  VitGpuEngine& operator=(const VitGpuEngine&) = delete;

  /// Uploads the model's weights (once per model) and the input, runs every block. Throws
  /// Error, keeping the previous result, when one layer's attention or activations would not
  /// fit one storage buffer of the driver (llvmpipe: 128 MiB), naming the sizes.
  void run(const VitModel& model, const VitInput& input) override;
  int layers() const override { return static_cast<int>(attention_.size()); }
  int heads() const override { return H_; }
  int T() const override { return T_; }
  /// Reads back heads × T floats (one row per head).
  std::vector<float> attention_rows(int layer, int query) const override;
  /// Reads back T × T floats.
  Matrix attention(int layer, int head) const override;
  std::vector<float> logits() const override { return logits_; }

  /// How many forward passes have run (tests check that reads do not run one).
  int forward_passes() const { return forward_passes_; }

 private:
  struct Weights;
  void upload(const VitModel& model);

  gl::Program gemm_, layernorm_, attention_pass_, attend_, pool_;
  gl::ParamBlock params_;
  std::unique_ptr<Weights> weights_;
  std::uint64_t model_id_ = 0;
  int H_ = 0, T_ = 0, forward_passes_ = 0;
  std::vector<gl::Buffer> attention_;  ///< per layer H × T × T
  std::vector<float> logits_;
};

}  // namespace attnlab
