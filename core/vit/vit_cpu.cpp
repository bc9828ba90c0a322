#include "core/vit/vit_cpu.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/vit/vit_kernels.hpp"

#include "core/base/blas.hpp"
#include <unsupported/Eigen/SpecialFunctions>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <thread>

namespace attnlab {

namespace {

/// LayerNorm of rows [first, first + count) of X into the same rows of Y.
void layer_norm_rows(const Matrix& X, const RowVector& w, const RowVector& b, float eps, Matrix& Y, int first, int count) {
  const float D = static_cast<float>(X.cols());
  for (int t = first; t < first + count; ++t) {
    const float mean = X.row(t).sum() / D;
    const float var = (X.row(t).array() - mean).square().sum() / D;
    Y.row(t) = ((X.row(t).array() - mean) * (1.0f / std::sqrt(var + eps))) * w.array() + b.array();
  }
}

/// The exact GELU in place, on a matrix or a block of one.
template <class Values>
void gelu_in_place(Values&& v) {
  v = (0.5f * v.array() * (1.0f + (v.array() * 0.70710678118654752f).erf())).matrix();
}

}  // namespace

Matrix layer_norm(const Matrix& X, const RowVector& w, const RowVector& b, float eps) {
  Matrix Y(X.rows(), X.cols());
  layer_norm_rows(X, w, b, eps, Y, 0, static_cast<int>(X.rows()));
  return Y;
}

Matrix gelu(const Matrix& X) {
  Matrix Y = X;
  gelu_in_place(Y);
  return Y;
}

namespace {

constexpr int kQueryBlock = 64;  ///< query rows whose scores are held at once, per thread

using vit_kernels::parallel_ranges;
using vit_kernels::parallel_rows;
using vit_kernels::parallel_tasks;

/// Columns [first, first + count) of out = X·Wᵀ + b (W's rows [first, first + count)), then
/// `epilogue` on those columns. A split by columns packs each thread's own part of W, where a
/// split by rows packs all of W on every thread (and W is the larger operand here).
template <class Epilogue>
void linear_cols(const Matrix& X, const Matrix& W, const RowVector& b, Matrix& out, int first, int count, const Epilogue& epilogue) {
  const int in = static_cast<int>(X.cols()), outs = static_cast<int>(W.rows()), rows = static_cast<int>(X.rows());
  auto cols = out.middleCols(first, count);
  cols.rowwise() = b.segment(first, count);
  blas::sgemm(false, true, rows, count, in, 1.0f, X.data(), in, W.data() + static_cast<std::ptrdiff_t>(first) * in, in, 1.0f,
              out.data() + first, outs);
  epilogue(cols, first);
}

constexpr int kColumnGranule = 16;  ///< columns split among threads in multiples of this (a kernel's width)

}  // namespace

VitCpuRunner::VitCpuRunner(int threads) : threads_(threads > 0 ? threads : vit_kernels::default_threads()) {}

VitPass VitCpuRunner::run(const VitModel& model, const VitInput& input, std::int64_t budget, const std::atomic<bool>* stop) {
  return run(model, input, budget, stop, VitTokenSink());
}

VitPass VitCpuRunner::run(const VitModel& model, const VitInput& input, std::int64_t budget, const std::atomic<bool>* stop,
                          const VitTokenSink& tokens) {
  const VitArchitecture& a = model.arch;
  vit_check_budget(a, input, budget);
  auto check = [&] {
    if (stop && stop->load()) throw Error(_("cancelled"));
  };
  const int H = a.heads, D = a.D, m = D / H, pre = a.prefix(), N = input.N(), cols = input.cols, rows = input.rows;
  const int threads = threads_;
  // The work is split among this path's own threads (vit_kernels::run_tasks), each calling
  // sgemm, which is one-threaded (core/base/blas.hpp).
  auto none = [](auto&&, int) {};
  // Patch embedding (a conv with kernel = stride = P, as a product), prefix tokens, positions.
  Matrix patch_tokens(N, D);
  parallel_ranges(D, threads, kColumnGranule, [&](int first, int count) {
    linear_cols(input.patches, model.W_patch, model.b_patch, patch_tokens, first, count, none);
  });
  Matrix X = vit_initial_tokens(model, patch_tokens, vit_position_embedding(model, rows, cols));
  patch_tokens = Matrix();
  if (tokens) tokens(0, X);
  const int T = static_cast<int>(X.rows());
  const float scale = 1.0f / std::sqrt(static_cast<float>(m));
  const PatchDistances distances(cols, rows, a.patch);

  VitPass pass;
  pass.T = T;
  pass.H = H;
  pass.m = m;
  pass.path = path();
  pass.Q.resize(model.blocks.size());
  pass.K.resize(model.blocks.size());
  pass.token_norms.resize(model.blocks.size());
  Eigen::MatrixXd distance = Eigen::MatrixXd::Zero(a.depth, H);

  Matrix Xn(T, D), QKV(T, 3 * D), O(T, D), hidden(T, a.mlp_hidden);
  const int block_rows = vit_kernels::even_block_rows(T, threads, kQueryBlock);
  const int blocks = (T + block_rows - 1) / block_rows;
  std::vector<Matrix> scores(static_cast<std::size_t>(threads), Matrix(block_rows, T));
  for (std::size_t l = 0; l < model.blocks.size(); ++l) {
    check();
    const VitBlock& b = model.blocks[l];
    // q, k, v of every head from one product (eqs. 26.17–26.19). LayerNorms split by rows, the
    // products by columns (linear_cols).
    parallel_rows(T, threads, [&](int first, int count) { layer_norm_rows(X, b.ln1_w, b.ln1_b, a.eps, Xn, first, count); });
    parallel_ranges(3 * D, threads, kColumnGranule, [&](int first, int count) { linear_cols(Xn, b.W_qkv, b.b_qkv, QKV, first, count, none); });
    // A = softmax(q kᵀ/√m), O = A·V (eqs. 26.20–26.21), a block of query rows at a time on each
    // thread, every head; the mean attention distance summed from the same rows.
    std::vector<Eigen::RowVectorXd> dist_sums(static_cast<std::size_t>(threads), Eigen::RowVectorXd::Zero(H));
    parallel_tasks(blocks, threads, [&](int blk, int worker) {
      const int first = blk * block_rows, count = std::min(block_rows, T - first);
      Matrix& S = scores[static_cast<std::size_t>(worker)];
      for (int h = 0; h < H; ++h) {
        blas::sgemm(false, true, count, T, m, scale, QKV.data() + static_cast<std::ptrdiff_t>(first) * 3 * D + h * m,
                    3 * D, QKV.data() + D + h * m, 3 * D, 0.0f, S.data(), T);
        auto rows_of_A = S.topRows(count);
        vit_softmax_rows(rows_of_A);
        double dist = 0.0;
        for (int i = std::max(0, pre - first); i < count; ++i) dist += distances.weighted_sum(first + i - pre, S.row(i).data() + pre);
        dist_sums[static_cast<std::size_t>(worker)](h) += dist;
        blas::sgemm(false, false, count, m, T, 1.0f, S.data(), T, QKV.data() + 2 * D + h * m, 3 * D, 0.0f,
                    O.data() + static_cast<std::ptrdiff_t>(first) * D + h * m, D);
      }
    });
    for (const Eigen::RowVectorXd& d : dist_sums) distance.row(static_cast<Eigen::Index>(l)) += d;
    pass.Q[l] = QKV.leftCols(D);
    pass.K[l] = QKV.middleCols(D, D);
    // Projection, layer scale, residual; then the MLP with the exact GELU, layer scale, residual.
    const bool ls = a.layer_scale;
    auto residual = [&](const RowVector& scale_of_layer) {  // X += out (⊙ the layer scale), on out's columns
      return [&, ls](auto out_cols, int f) {
        if (ls) X.middleCols(f, out_cols.cols()).array() += out_cols.array().rowwise() * scale_of_layer.segment(f, out_cols.cols()).array();
        else X.middleCols(f, out_cols.cols()) += out_cols;
      };
    };
    parallel_ranges(D, threads, kColumnGranule, [&](int first, int count) { linear_cols(O, b.W_proj, b.b_proj, Xn, first, count, residual(b.ls1)); });
    parallel_rows(T, threads, [&](int first, int count) { layer_norm_rows(X, b.ln2_w, b.ln2_b, a.eps, O, first, count); });  // O is free again: LN2(x)
    parallel_ranges(a.mlp_hidden, threads, kColumnGranule, [&](int first, int count) {
      linear_cols(O, b.W_fc1, b.b_fc1, hidden, first, count, [](auto h_cols, int) { gelu_in_place(h_cols); });
    });
    parallel_ranges(D, threads, kColumnGranule, [&](int first, int count) { linear_cols(hidden, b.W_fc2, b.b_fc2, Xn, first, count, residual(b.ls2)); });
    pass.token_norms[l] = X.rowwise().norm().transpose();
    if (tokens) tokens(static_cast<int>(l) + 1, X);
  }
  pass.distance = (distance / std::max(1, N)).cast<float>();
  if (a.classes > 0) {
    RowVector pooled;
    if (a.pooling == VitPooling::Token) {
      pooled = layer_norm(X.topRows(1), model.norm_w, model.norm_b, a.eps);
    } else {
      const Matrix mean = X.bottomRows(T - pre).colwise().mean();
      pooled = layer_norm(mean, model.norm_w, model.norm_b, a.eps);
    }
    const RowVector z = pooled * model.W_head.transpose() + model.b_head;
    pass.logits.assign(z.data(), z.data() + z.size());
  }
  return pass;
}

}  // namespace attnlab
