#include "core/hand_made/heads.hpp"

#include "core/hand_made/tokens.hpp"

namespace attnlab {
namespace {

using L = TokenLayout;

// m × D matrix that copies `count` columns of X starting at `from` (scaled) into rows `to`...
void select(Matrix& W, int to_row, int from_col, int count, float scale = 1.0f) {
  for (int n = 0; n < count; ++n) W(to_row + n, from_col + n) = scale;
}

}  // namespace

std::vector<Head> make_heads(int code_len, const Settings& s) {
  const int D = L::d + code_len;
  const int pcol = L::d;  // P starts right after T in X
  Matrix W_v = Matrix::Zero(3, D);
  select(W_v, 0, L::kColour, 3);

  std::vector<Head> heads;
  auto add = [&](HeadKind kind, Matrix W_q, Matrix W_k) {
    heads.push_back(Head{kind, std::string(head_name(kind)), std::move(W_q), std::move(W_k), W_v});
  };
  {  // colour (fig. 26.12)
    Matrix W = Matrix::Zero(3, D);
    select(W, 0, L::kUnitColour, 3);
    add(HeadKind::Colour, W, W);
  }
  {  // position
    Matrix W = Matrix::Zero(code_len, D);
    select(W, 0, pcol, code_len);
    add(HeadKind::Position, W, W);
  }
  {  // colour + position
    Matrix W = Matrix::Zero(3 + code_len, D);
    select(W, 0, L::kUnitColour, 3);
    select(W, 3, pcol, code_len, 0.5f);
    add(HeadKind::ColourPosition, W, W);
  }
  {  // texture
    Matrix W = Matrix::Zero(3, D);
    W(0, L::kTexture) = 10.0f;
    W(1, L::kTexture + 1) = 1.0f;
    W(2, L::kTexture + 2) = 1.0f;
    add(HeadKind::Texture, W, W);
  }
  {  // random projections of the raw patch
    const int m = 8;
    const float scale = 1.0f / std::sqrt(static_cast<float>(L::kRandomDims));
    Matrix W_q = Matrix::Zero(m, D), W_k = Matrix::Zero(m, D);
    W_q.middleCols(L::kRandom, L::kRandomDims) = seeded_gaussian(m, L::kRandomDims, s.seed + 101, scale);
    W_k.middleCols(L::kRandom, L::kRandomDims) = seeded_gaussian(m, L::kRandomDims, s.seed + 202, scale);
    add(HeadKind::Random, W_q, W_k);
  }
  {  // custom: s_ij = ĉ_iᵀ W_qᵀ W_k ĉ_j (eq. 26.24)
    Matrix W_q = Matrix::Zero(3, D), W_k = Matrix::Zero(3, D);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        W_q(r, L::kUnitColour + c) = s.custom.W_q[r * 3 + c];
        W_k(r, L::kUnitColour + c) = s.custom.W_k[r * 3 + c];
      }
    add(HeadKind::Custom, W_q, W_k);
  }
  return heads;
}

HeadQKV project(const Head& head, const Matrix& X, const Matrix& P, const PosSpec& pos) {
  HeadQKV out;
  Matrix Q = X * head.W_q.transpose();  // eq. 26.17
  Matrix K = X * head.W_k.transpose();  // eq. 26.18
  out.V = X * head.W_v.transpose();     // eq. 26.19
  if (pos.mode == PosMode::Concat) {    // q' = [q; λp], k' = [k; λp]
    out.Q.resize(Q.rows(), Q.cols() + P.cols());
    out.K.resize(K.rows(), K.cols() + P.cols());
    out.Q << Q, pos.lambda * P;
    out.K << K, pos.lambda * P;
  } else {
    out.Q = std::move(Q);
    out.K = std::move(K);
  }
  return out;
}

Matrix query_key_weights(const Matrix& W, const PosSpec& pos, int code_len) {
  if (pos.mode != PosMode::Concat) return W;
  Matrix full = Matrix::Zero(W.rows() + code_len, W.cols());
  full.topRows(W.rows()) = W;
  for (int k = 0; k < code_len; ++k) full(W.rows() + k, TokenLayout::d + k) = pos.lambda;
  return full;
}

Matrix merge_weights(int heads, int v) {
  Matrix W = Matrix::Zero(heads * v, v);
  for (int h = 0; h < heads; ++h) W.block(h * v, 0, v, v).setIdentity();
  return W / static_cast<float>(heads);
}

} // namespace attnlab
