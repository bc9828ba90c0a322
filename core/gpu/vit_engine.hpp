#pragma once
// A ViT's forward pass on the GPU (OpenGL compute shaders vit_*.comp), one for one with the
// CPU path (core/vit/vit_cpu.hpp): register-tiled GEMMs for the patch embedding, q/k/v, the
// projection and the MLP (bias, GELU, residual with layer scale in their epilogue); LayerNorm
// (with the token norms); attention fused per head and query (softmax(q kᵀ/√(D/H)) taken
// online over blocks of keys, then A·V, never a T × T buffer), which also sums the mean
// attention distance. Each layer's queries and keys are read back into the VitPass, from which
// any row is read afterwards; the token norms (T per layer) and the distance (layers × heads)
// are read back at the end. Activations larger than one storage block are processed in
// chunks of rows bound with glBindBufferRange. Needs a current OpenGL 4.3+ context on this
// thread.
#include "core/gpu/gl.hpp"
#include "core/vit/vit.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
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
  /// Error when the pass would not fit `budget` (vit_check_budget(), checked first), when a head
  /// is not a multiple of 4 wide or wider than 256, or when a single buffer would exceed what
  /// the driver can bind even in chunks (one row over a storage block, or a buffer texture
  /// over GL_MAX_TEXTURE_BUFFER_SIZE texels), naming the sizes. Buffers over one storage block
  /// (llvmpipe: 128 MiB) are used in chunks of rows, not refused.
  VitPass run(const VitModel& model, const VitInput& input, std::int64_t budget,
              const std::atomic<bool>* stop = nullptr) override;

  /// How many forward passes have run (tests check that reads do not run one).
  int forward_passes() const { return forward_passes_; }

  /// Caps every storage-buffer binding of later passes at `bytes` (at most the driver's
  /// gl::max_storage_block_bytes(); 0: the driver's), so that tests can make small inputs
  /// take the chunked paths that large ones take.
  void set_storage_limit(std::size_t bytes) { storage_limit_ = bytes; }
  /// Storage-buffer bindings the last pass split into more than one chunk (0: none).
  int chunked_dispatches() const { return chunked_dispatches_; }

 private:
  struct Weights;
  void upload(const VitModel& model);
  /// The fused attention kernel for heads `m` wide (k and v read from an RGBA32F image buffer
  /// over QKV); compiled on first use.
  const gl::Program& attention_program(int m);

  gl::Program gemm_, layernorm_, distance_sum_, pool_;
  std::map<int, gl::Program> attention_;
  gl::ParamBlock params_;
  std::unique_ptr<Weights> weights_;
  std::uint64_t model_id_ = 0;
  int forward_passes_ = 0;
  std::size_t storage_limit_ = 0;
  int chunked_dispatches_ = 0;
};

}  // namespace attnlab
