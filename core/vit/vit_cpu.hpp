#pragma once
// A ViT's forward pass on the CPU: the products on OpenBLAS's sgemm (the CPU's vector units,
// every core), the rest in Eigen, attention fused per block of query rows (scores → softmax →
// A·V, never a whole T × T), leaving a VitPass in O(L·T·D). Also the reference the GPU engine
// (gpu/vit_engine.hpp) is tested against. Formulas: docs/MATH.md, "A learned ViT".
#include "core/vit/vit.hpp"

#include <functional>
#include <vector>

namespace attnlab {

/// LayerNorm over each row of X (T × D): (x − mean)/√(var + ε) · w + b, the variance with 1/D.
Matrix layer_norm(const Matrix& X, const RowVector& w, const RowVector& b, float eps);

/// The exact GELU, x·Φ(x) = x/2 · (1 + erf(x/√2)), elementwise.
Matrix gelu(const Matrix& X);

/// Receives the residual stream of a forward pass as the CPU path computes it: `index` 0 the
/// tokens entering block 0 (vit_initial_tokens()), `index` l + 1 the tokens leaving block l
/// (before the final LayerNorm); X is T × D, rows [cls, registers…, patches]. Called on the
/// thread that runs the pass, in order of depth; X is only valid during the call.
using VitTokenSink = std::function<void(int index, const Matrix& X)>;

/// The forward pass on the CPU.
class VitCpuRunner final : public VitRunner {
 public:
  /// `threads`: how many threads share the work; 0: ATTNLAB_THREADS when set, else one per core.
  explicit VitCpuRunner(int threads = 0);
  const char* path() const override { return "cpu"; }
  VitPass run(const VitModel& model, const VitInput& input, std::int64_t budget,
              const std::atomic<bool>* stop = nullptr) override;
  /// The same pass, also handing `tokens` (when set) the tokens at every depth: the
  /// representations whose similarity core/vit/vit_similarity.hpp measures.
  VitPass run(const VitModel& model, const VitInput& input, std::int64_t budget, const std::atomic<bool>* stop,
              const VitTokenSink& tokens);
  int threads() const { return threads_; }

 private:
  int threads_;
};

}  // namespace attnlab
