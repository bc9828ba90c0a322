#pragma once
// The Eigen reference of a ViT's forward pass (CPU), what the tests compare the GPU engine
// (gpu/vit_engine.hpp) against, operation for operation. Formulas: docs/MATH.md, "A learned ViT".
#include "core/vit.hpp"

#include <vector>

namespace attnlab {

/// LayerNorm over each row of X (T × D): (x − mean)/√(var + ε) · w + b, the variance with 1/D.
Matrix layer_norm(const Matrix& X, const RowVector& w, const RowVector& b, float eps);

/// The exact GELU, x·Φ(x) = x/2 · (1 + erf(x/√2)), elementwise.
Matrix gelu(const Matrix& X);

/// The forward pass on the CPU with Eigen, keeping every layer's attention (heads × T × T).
class VitReference final : public VitRunner {
 public:
  void run(const VitModel& model, const VitInput& input) override;
  int layers() const override { return static_cast<int>(A_.size()); }
  int heads() const override { return H_; }
  int T() const override { return T_; }
  std::vector<float> attention_rows(int layer, int query) const override;
  Matrix attention(int layer, int head) const override;
  std::vector<float> logits() const override { return logits_; }
  /// Each block's output tokens (before the final LayerNorm), T × D.
  const Matrix& tokens(int layer) const { return tokens_.at(static_cast<std::size_t>(layer)); }
  /// Each block's input tokens, T × D: the embedded tokens for block 0, else tokens(layer − 1).
  const Matrix& block_input(int layer) const { return layer == 0 ? embedded_ : tokens(layer - 1); }

 private:
  int H_ = 0, T_ = 0;
  std::vector<Matrix> A_;       ///< per layer (H·T) × T: head h's A in rows [h·T, (h+1)·T)
  std::vector<Matrix> tokens_;  ///< per layer T × D
  Matrix embedded_;             ///< T × D, the input of block 0
  std::vector<float> logits_;
};

}  // namespace attnlab
