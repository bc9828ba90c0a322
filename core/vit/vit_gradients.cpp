#include "core/vit/vit_gradients.hpp"

#include "core/base/blas.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/vit/vit_kernels.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

namespace attnlab {

namespace {

/// What the backward pass needs of one block, kept by the forward.
struct BlockActivations {
  Matrix X_in;                 ///< T × D: the tokens entering the block
  Matrix Xn1, X_mid, Xn2;      ///< T × D: LN1(x), x after attention, LN2(x_mid)
  Matrix QKV;                  ///< T × 3D: q, k, v with bias (q, k unscaled)
  Matrix O;                    ///< T × D: the heads' outputs before the projection
  Matrix H_pre;                ///< T × mlp_hidden: the MLP's hidden layer before GELU
  std::vector<float> mu1, rs1, mu2, rs2;  ///< LayerNorm statistics, T each
};

using vit_kernels::parallel_rows;
using vit_kernels::parallel_tasks;

/// Y (rows × out) = X·Wᵀ + b, W out × in (PyTorch's Linear); the rows split among `threads`.
void linear(const Matrix& X, const Matrix& W, const RowVector& b, Matrix& Y, int threads) {
  Y.resize(X.rows(), W.rows());
  const int in = static_cast<int>(X.cols()), out = static_cast<int>(W.rows());
  parallel_rows(static_cast<int>(X.rows()), threads, [&](int first, int count) {
    Y.middleRows(first, count).rowwise() = b;
    blas::sgemm(false, true, count, out, in, 1.0f, X.data() + static_cast<std::ptrdiff_t>(first) * in, in, W.data(), in, 1.0f,
                Y.data() + static_cast<std::ptrdiff_t>(first) * out, out);
  });
}

/// dX (rows × in) = dY·W: the backward of linear() with respect to its input.
void linear_input_gradient(const Matrix& dY, const Matrix& W, Matrix& dX, int threads) {
  dX.resize(dY.rows(), W.cols());
  const int in = static_cast<int>(W.cols()), out = static_cast<int>(W.rows());
  parallel_rows(static_cast<int>(dY.rows()), threads, [&](int first, int count) {
    blas::sgemm(false, false, count, in, out, 1.0f, dY.data() + static_cast<std::ptrdiff_t>(first) * out, out, W.data(), in, 0.0f,
                dX.data() + static_cast<std::ptrdiff_t>(first) * in, in);
  });
}

void layer_norm(const Matrix& X, const RowVector& w, const RowVector& b, float eps, Matrix& Y, std::vector<float>& mu,
                std::vector<float>& rs, int threads = 1) {
  Y.resize(X.rows(), X.cols());
  mu.resize(static_cast<std::size_t>(X.rows()));
  rs.resize(static_cast<std::size_t>(X.rows()));
  const int D = static_cast<int>(X.cols());
  parallel_rows(static_cast<int>(X.rows()), threads, [&](int first, int count) {
    const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(first) * D;
    vit_kernels::ln_forward(X.data() + at, w.data(), b.data(), count, D, eps, Y.data() + at, mu.data() + first, rs.data() + first);
  });
}

/// dX += the LayerNorm's backward of dY (no weight gradients).
void add_layer_norm_gradient(const Matrix& dY, const Matrix& X, const std::vector<float>& mu, const std::vector<float>& rs,
                             const RowVector& w, Matrix& dX, int threads = 1) {
  const int D = static_cast<int>(X.cols());
  parallel_rows(static_cast<int>(X.rows()), threads, [&](int first, int count) {
    const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(first) * D;
    vit_kernels::ln_backward(dY.data() + at, X.data() + at, mu.data() + first, rs.data() + first, w.data(), count, D, dX.data() + at,
                             true, nullptr, nullptr);
  });
}

/// One block forward: X (T × D) in, X out; keeps its activations in `k` and A in `A`.
void block_forward(const VitArchitecture& a, const VitBlock& b, Matrix& X, BlockActivations& k, Matrix& A, int threads) {
  const int T = static_cast<int>(X.rows()), D = a.D, H = a.heads, m = D / H;
  const float scale = 1.0f / std::sqrt(static_cast<float>(m));
  k.X_in = X;
  layer_norm(X, b.ln1_w, b.ln1_b, a.eps, k.Xn1, k.mu1, k.rs1, threads);
  linear(k.Xn1, b.W_qkv, b.b_qkv, k.QKV, threads);
  A.resize(static_cast<Eigen::Index>(H) * T, T);
  k.O.resize(T, D);
  parallel_tasks(H, threads, [&](int h, int) {  // heads are independent (eqs. 26.20–26.21)
    float* Ah = A.data() + static_cast<std::ptrdiff_t>(h) * T * T;
    const float* q = k.QKV.data() + h * m;
    blas::sgemm(false, true, T, T, m, scale, q, 3 * D, q + D, 3 * D, 0.0f, Ah, T);  // eq. 26.20's scores
    vit_softmax_rows(A.middleRows(static_cast<Eigen::Index>(h) * T, T));
    blas::sgemm(false, false, T, m, T, 1.0f, Ah, T, q + 2 * D, 3 * D, 0.0f, k.O.data() + h * m, D);  // eq. 26.21
  });
  Matrix out;
  linear(k.O, b.W_proj, b.b_proj, out, threads);
  k.X_mid = X + (out.array().rowwise() * b.ls1.array()).matrix();
  layer_norm(k.X_mid, b.ln2_w, b.ln2_b, a.eps, k.Xn2, k.mu2, k.rs2, threads);
  linear(k.Xn2, b.W_fc1, b.b_fc1, k.H_pre, threads);
  Matrix hidden(k.H_pre.rows(), k.H_pre.cols());
  parallel_rows(static_cast<int>(k.H_pre.rows()), threads, [&](int first, int count) {
    const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(first) * k.H_pre.cols();
    vit_kernels::gelu_forward(k.H_pre.data() + at, static_cast<std::size_t>(count) * k.H_pre.cols(), hidden.data() + at);
  });
  linear(hidden, b.W_fc2, b.b_fc2, out, threads);
  X = k.X_mid + (out.array().rowwise() * b.ls2.array()).matrix();
}

/// One block backward: dX (T × D) holds ∂y/∂(block output) and leaves ∂y/∂(block input);
/// ∂y/∂A into dA ((H·T) × T).
void block_backward(const VitArchitecture& a, const VitBlock& b, const BlockActivations& k, const Matrix& A, Matrix& dX, Matrix& dA,
                    int threads) {
  const int T = static_cast<int>(dX.rows()), D = a.D, H = a.heads, m = D / H;
  const float scale = 1.0f / std::sqrt(static_cast<float>(m));
  // x_out = x_mid + ls2 ⊙ fc2(gelu(fc1(LN2(x_mid)))).
  const Matrix dM = (dX.array().rowwise() * b.ls2.array()).matrix();
  Matrix dH, dXn;
  linear_input_gradient(dM, b.W_fc2, dH, threads);
  parallel_rows(static_cast<int>(dH.rows()), threads, [&](int first, int count) {
    const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(first) * dH.cols();
    vit_kernels::gelu_backward(k.H_pre.data() + at, static_cast<std::size_t>(count) * dH.cols(), dH.data() + at);
  });
  linear_input_gradient(dH, b.W_fc1, dXn, threads);
  add_layer_norm_gradient(dXn, k.X_mid, k.mu2, k.rs2, b.ln2_w, dX, threads);  // dX is now ∂y/∂x_mid
  // x_mid = x_in + ls1 ⊙ proj(attention(qkv(LN1(x_in)))).
  const Matrix dP = (dX.array().rowwise() * b.ls1.array()).matrix();
  Matrix dO, dQKV(T, 3 * D);
  std::vector<Matrix> dS(static_cast<std::size_t>(std::max(1, std::min(threads, H))), Matrix(T, T));  // scratch per worker
  linear_input_gradient(dP, b.W_proj, dO, threads);
  dA.resize(static_cast<Eigen::Index>(H) * T, T);
  parallel_tasks(H, threads, [&](int h, int worker) {  // each head writes its own columns of dQKV
    const float* q = k.QKV.data() + h * m;
    float* dq = dQKV.data() + h * m;
    vit_kernels::attention_head_backward(A.data() + static_cast<std::ptrdiff_t>(h) * T * T, dO.data() + h * m, D, q, q + D, q + 2 * D,
                                         3 * D, T, m, scale, dq, dq + D, dq + 2 * D, dS[static_cast<std::size_t>(worker)].data(),
                                         dA.data() + static_cast<std::ptrdiff_t>(h) * T * T);
  });
  linear_input_gradient(dQKV, b.W_qkv, dXn, threads);
  add_layer_norm_gradient(dXn, k.X_in, k.mu1, k.rs1, b.ln1_w, dX, threads);  // ∂y/∂x_in
}

/// The classifier's head: the pooled token (cls, or the patches' mean) through the final
/// LayerNorm and the linear head. Keeps what the seed needs.
struct Classifier {
  Matrix pooled, Z;
  std::vector<float> mu, rs;
  std::vector<float> logits;
};

Classifier classify(const VitModel& model, const Matrix& X) {
  const VitArchitecture& a = model.arch;
  const int N = static_cast<int>(X.rows()) - a.prefix();
  Classifier c;
  c.pooled = a.pooling == VitPooling::Token ? Matrix(X.topRows(1)) : Matrix(X.bottomRows(N).colwise().mean());
  layer_norm(c.pooled, model.norm_w, model.norm_b, a.eps, c.Z, c.mu, c.rs);
  Matrix logits;
  linear(c.Z, model.W_head, model.b_head, logits, 1);
  c.logits.assign(logits.data(), logits.data() + logits.size());
  return c;
}

/// ∂y_c/∂X (T × D) for class `klass`: y_c = z·w_c + b_c gives ∂y_c/∂z = w_c, then back
/// through the LayerNorm and the pooling.
Matrix class_seed(const VitModel& model, const Classifier& c, int klass, int T) {
  const VitArchitecture& a = model.arch;
  const int N = T - a.prefix();
  const Matrix dZ = model.W_head.row(klass);
  Matrix dpooled = Matrix::Zero(1, a.D);
  add_layer_norm_gradient(dZ, c.pooled, c.mu, c.rs, model.norm_w, dpooled);
  Matrix dX = Matrix::Zero(T, a.D);
  if (a.pooling == VitPooling::Token) dX.row(0) = dpooled;
  else dX.bottomRows(N).rowwise() = dpooled.row(0) / static_cast<float>(N);
  return dX;
}

/// The blocks the pass runs for `target`, after checking it against the model and input.
int target_blocks(const VitArchitecture& a, int T, const VitGradientTarget& target) {
  if (target.klass >= 0 || target.klass == VitGradientTarget::kTopClass) {
    if (a.classes == 0) throw Error(_("this checkpoint has no classifier: no class to explain"));
    if (target.klass >= a.classes)
      throw Error(text_format(_("class %d is outside 0…%d"), target.klass, a.classes - 1));
    return a.depth;
  }
  if (target.layer < 0 || target.layer >= a.depth)
    throw Error(text_format(_("layer %d is outside 0…%d"), target.layer, a.depth - 1));
  if (target.token < 0 || target.token >= T)
    throw Error(text_format(_("query token %d is outside 0…%d"), target.token, T - 1));
  return target.layer + 1;
}

}  // namespace

std::int64_t vit_gradient_bytes(const VitArchitecture& arch, int T, int blocks) {
  const std::int64_t t = T, D = arch.D, Hd = arch.mlp_hidden, H = arch.heads, L = blocks, K = 3LL * arch.patch * arch.patch;
  const std::int64_t kept = L * (t * (8 * D + Hd + 4) + 2 * H * t * t);                  // activations, A and ∂y/∂A
  const std::int64_t working = t * (10 * D + 2 * Hd) + t * t + (t - arch.prefix()) * 2 * K;  // X, dX, dO, dQKV…, dS, patches
  return (kept + working) * static_cast<std::int64_t>(sizeof(float));
}

void vit_check_gradient_budget(const VitArchitecture& arch, const VitInput& input, int blocks, std::int64_t budget) {
  // TRANSLATORS: goes into "the image gives %d tokens: %s would need %lld MiB, ..." (the backward pass for gradients).
  vit_check_budget_for(arch, input, budget, _("the gradient pass"),
                       [&arch, blocks](int t) { return vit_gradient_bytes(arch, t, blocks); });
}

VitGradients vit_gradients(const VitModel& model, const VitInput& input, const VitGradientTarget& target, std::int64_t budget,
                           const std::atomic<bool>* stop) {
  const VitArchitecture& a = model.arch;
  const int T = a.prefix() + input.N(), blocks = target_blocks(a, T, target);
  vit_check_gradient_budget(a, input, blocks, budget);
  auto check = [&] {
    if (stop && stop->load()) throw Error(_("cancelled"));
  };
  VitGradients g;
  g.T = T;
  g.H = a.heads;
  g.prefix = a.prefix();
  g.cols = input.cols;
  g.rows = input.rows;
  g.patch = a.patch;
  g.pooling = a.pooling;
  // The products are one-threaded (core/base/blas.hpp), the work split among the CPU path's
  // own threads: OpenBLAS's threads on these small products cost more than they give, and spin
  // on the cores the app's other work is using (attnlab-bench's Relevance/Cpu/S16_224: 7.6 s
  // with them on a busy machine, 0.45 s without).
  // Forward, keeping every block's activations.
  const auto start = std::chrono::steady_clock::now();
  auto ms_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
  };
  const int threads = vit_kernels::default_threads();
  Matrix patch_tokens;
  linear(input.patches, model.W_patch, model.b_patch, patch_tokens, threads);
  Matrix X = vit_initial_tokens(model, patch_tokens, vit_position_embedding(model, input.rows, input.cols));
  std::vector<BlockActivations> kept(static_cast<std::size_t>(blocks));
  g.A.resize(static_cast<std::size_t>(blocks));
  g.dA.resize(static_cast<std::size_t>(blocks));
  for (int l = 0; l < blocks; ++l) {
    check();
    block_forward(a, model.blocks[static_cast<std::size_t>(l)], X, kept[static_cast<std::size_t>(l)], g.A[static_cast<std::size_t>(l)],
                  threads);
  }
  // The seed: ∂y/∂(last block's output).
  g.forward_ms = ms_since(start);
  const auto backward_start = std::chrono::steady_clock::now();
  Matrix dX;
  if (target.layer < 0) {
    const Classifier c = classify(model, X);
    g.logits = c.logits;
    g.klass = target.klass >= 0 ? target.klass
                                : static_cast<int>(std::max_element(g.logits.begin(), g.logits.end()) - g.logits.begin());
    dX = class_seed(model, c, g.klass, T);
  } else {
    dX = Matrix::Zero(T, a.D);
    dX.row(target.token).setOnes();
  }
  for (int l = blocks - 1; l >= 0; --l) {
    check();
    const std::size_t i = static_cast<std::size_t>(l);
    block_backward(a, model.blocks[i], kept[i], g.A[i], dX, g.dA[i], threads);
    kept[i] = BlockActivations();
  }
  // The tokens entering block 0 are [prefix…, patch embedding + position code]: the patch rows'
  // gradient goes back through the patch embedding (a product with W_patch).
  linear_input_gradient(dX.bottomRows(input.N()), model.W_patch, g.d_patches, threads);
  g.backward_ms = ms_since(backward_start);
  return g;
}

Matrix vit_input_gradient_map(const VitGradients& g) {
  const int P = g.patch;
  Matrix map = Matrix::Zero(static_cast<Eigen::Index>(g.rows) * P, static_cast<Eigen::Index>(g.cols) * P);
  for (int p = 0; p < g.N(); ++p) {
    const int py = p / g.cols, px = p % g.cols;
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < P; ++y)
        for (int x = 0; x < P; ++x) map(py * P + y, px * P + x) += std::abs(g.d_patches(p, (c * P + y) * P + x));
  }
  return map;
}

}  // namespace attnlab
