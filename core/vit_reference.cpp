#include "core/vit_reference.hpp"

#include "core/error.hpp"

#include <cmath>

namespace attnlab {

Matrix layer_norm(const Matrix& X, const RowVector& w, const RowVector& b, float eps) {
  Matrix Y(X.rows(), X.cols());
  const float D = static_cast<float>(X.cols());
  for (Eigen::Index t = 0; t < X.rows(); ++t) {
    const float mean = X.row(t).sum() / D;
    const RowVector centred = X.row(t).array() - mean;
    const float var = centred.squaredNorm() / D;
    Y.row(t) = (centred.array() / std::sqrt(var + eps)) * w.array() + b.array();
  }
  return Y;
}

Matrix gelu(const Matrix& X) {
  return X.unaryExpr([](float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); });
}

void VitReference::run(const VitModel& model, const VitInput& input) {
  const VitArchitecture& a = model.arch;
  const int H = a.heads, D = a.D, dh = D / H;
  // Patch embedding (a conv with kernel = stride = P, as a product), prefix tokens, positions.
  const Matrix patch_tokens = (input.patches * model.W_patch.transpose()).rowwise() + model.b_patch;
  Matrix X = vit_initial_tokens(model, patch_tokens, vit_position_embedding(model, input.rows, input.cols));
  const int T = static_cast<int>(X.rows());
  Matrix embedded = X;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  std::vector<Matrix> A(model.blocks.size()), tokens(model.blocks.size());
  for (std::size_t l = 0; l < model.blocks.size(); ++l) {
    const VitBlock& b = model.blocks[l];
    // Attention: q, k, v per head from one product, A = softmax(q kᵀ/√(D/H)) (eq. 26.20).
    const Matrix QKV = (layer_norm(X, b.ln1_w, b.ln1_b, a.eps) * b.W_qkv.transpose()).rowwise() + b.b_qkv;
    Matrix O(T, D);
    A[l].resize(static_cast<Eigen::Index>(H) * T, T);
    for (int h = 0; h < H; ++h) {
      const auto Q = QKV.middleCols(h * dh, dh);
      const auto K = QKV.middleCols(D + h * dh, dh);
      const auto V = QKV.middleCols(2 * D + h * dh, dh);
      Matrix S = (Q * K.transpose()) * scale;
      for (int i = 0; i < T; ++i) {
        S.row(i).array() = (S.row(i).array() - S.row(i).maxCoeff()).exp();
        S.row(i) /= S.row(i).sum();
      }
      O.middleCols(h * dh, dh) = S * V;  // eq. 26.21
      A[l].middleRows(static_cast<Eigen::Index>(h) * T, T) = S;
    }
    X += (((O * b.W_proj.transpose()).rowwise() + b.b_proj).array().rowwise() * b.ls1.array()).matrix();
    // MLP with the exact GELU, layer scale, residual.
    const Matrix hidden = gelu((layer_norm(X, b.ln2_w, b.ln2_b, a.eps) * b.W_fc1.transpose()).rowwise() + b.b_fc1);
    X += (((hidden * b.W_fc2.transpose()).rowwise() + b.b_fc2).array().rowwise() * b.ls2.array()).matrix();
    tokens[l] = X;
  }
  std::vector<float> logits;
  if (a.classes > 0) {
    RowVector pooled;
    if (a.pooling == VitPooling::Token) {
      pooled = layer_norm(X.topRows(1), model.norm_w, model.norm_b, a.eps);
    } else {
      const Matrix mean = X.bottomRows(T - a.prefix()).colwise().mean();
      pooled = layer_norm(mean, model.norm_w, model.norm_b, a.eps);
    }
    const RowVector z = pooled * model.W_head.transpose() + model.b_head;
    logits.assign(z.data(), z.data() + z.size());
  }
  H_ = H;
  T_ = T;
  A_ = std::move(A);
  tokens_ = std::move(tokens);
  embedded_ = std::move(embedded);
  logits_ = std::move(logits);
}

std::vector<float> VitReference::attention_rows(int layer, int query) const {
  if (layer < 0 || layer >= layers() || query < 0 || query >= T_) throw Error("internal: attention row outside the model");
  std::vector<float> out(static_cast<std::size_t>(H_) * T_);
  for (int h = 0; h < H_; ++h)
    for (int j = 0; j < T_; ++j) out[static_cast<std::size_t>(h) * T_ + j] = A_[static_cast<std::size_t>(layer)](h * T_ + query, j);
  return out;
}

Matrix VitReference::attention(int layer, int head) const {
  if (layer < 0 || layer >= layers() || head < 0 || head >= H_) throw Error("internal: attention outside the model");
  return A_[static_cast<std::size_t>(layer)].middleRows(static_cast<Eigen::Index>(head) * T_, T_);
}

}  // namespace attnlab
