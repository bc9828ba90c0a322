#include "core/vit_cpu.hpp"

#include "core/error.hpp"

#include <cblas.h>
#include <unsupported/Eigen/SpecialFunctions>

#include <algorithm>
#include <cmath>
#include <thread>

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
  return (0.5f * X.array() * (1.0f + (X.array() * 0.70710678118654752f).erf())).matrix();
}

void linear(const Matrix& X, const Matrix& W, const RowVector* bias, Matrix& out) {
  const int rows = static_cast<int>(X.rows()), in = static_cast<int>(X.cols()), outs = static_cast<int>(W.rows());
  if (W.cols() != in) throw Error("internal: linear layer of " + std::to_string(W.cols()) + " inputs given " + std::to_string(in));
  out.resize(rows, outs);
  if (bias) out.rowwise() = *bias;
  if (rows == 0 || outs == 0) return;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, outs, in, 1.0f, X.data(), in, W.data(), in, bias ? 1.0f : 0.0f,
              out.data(), outs);
}

namespace {

constexpr int kQueryBlock = 64;  ///< query rows whose scores are held at once, per thread

/// Runs task(t) for t in [0, tasks) on `threads` threads (the calling one among them).
template <class Task>
void parallel_tasks(int tasks, int threads, const Task& task) {
  threads = std::max(1, std::min(threads, tasks));
  if (threads == 1) {
    for (int t = 0; t < tasks; ++t) task(t, 0);
    return;
  }
  std::vector<std::thread> pool;
  for (int w = 1; w < threads; ++w)
    pool.emplace_back([&, w] {
      for (int t = w; t < tasks; t += threads) task(t, w);
    });
  for (int t = 0; t < tasks; t += threads) task(t, 0);
  for (std::thread& th : pool) th.join();
}

/// OpenBLAS's own threads, set for a scope.
class BlasThreads {
 public:
  explicit BlasThreads(int n) : before_(openblas_get_num_threads()) { openblas_set_num_threads(n); }
  ~BlasThreads() { openblas_set_num_threads(before_); }
  BlasThreads(const BlasThreads&) = delete;
  BlasThreads& operator=(const BlasThreads&) = delete;

 private:
  int before_;
};

}  // namespace

VitCpuRunner::VitCpuRunner(int threads)
    : threads_(threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()))) {}

VitPass VitCpuRunner::run(const VitModel& model, const VitInput& input, std::int64_t budget, const std::atomic<bool>* stop) {
  const VitArchitecture& a = model.arch;
  vit_check_budget(a, input, budget);
  auto check = [&] {
    if (stop && stop->load()) throw Error("cancelled");
  };
  const int H = a.heads, D = a.D, m = D / H, pre = a.prefix(), N = input.N(), cols = input.cols, rows = input.rows;
  BlasThreads blas(threads_);
  // Patch embedding (a conv with kernel = stride = P, as a product), prefix tokens, positions.
  Matrix patch_tokens;
  linear(input.patches, model.W_patch, &model.b_patch, patch_tokens);
  Matrix X = vit_initial_tokens(model, patch_tokens, vit_position_embedding(model, rows, cols));
  patch_tokens = Matrix();
  const int T = static_cast<int>(X.rows());
  const float scale = 1.0f / std::sqrt(static_cast<float>(m));

  VitPass pass;
  pass.T = T;
  pass.H = H;
  pass.m = m;
  pass.path = path();
  pass.Q.resize(model.blocks.size());
  pass.K.resize(model.blocks.size());
  pass.token_norms.resize(model.blocks.size());
  Eigen::MatrixXd distance = Eigen::MatrixXd::Zero(a.depth, H);

  Matrix QKV, O(T, D), tmp, hidden;
  const int blocks = (T + kQueryBlock - 1) / kQueryBlock;
  for (std::size_t l = 0; l < model.blocks.size(); ++l) {
    check();
    const VitBlock& b = model.blocks[l];
    // q, k, v of every head from one product (eqs. 26.17–26.19).
    linear(layer_norm(X, b.ln1_w, b.ln1_b, a.eps), b.W_qkv, &b.b_qkv, QKV);
    // A = softmax(q kᵀ/√m), O = A·V (eqs. 26.20–26.21), a block of query rows at a time on each
    // thread, every head; the mean attention distance summed from the same rows.
    std::vector<Eigen::MatrixXd> dist_sums(static_cast<std::size_t>(threads_), Eigen::MatrixXd::Zero(1, H));
    {
      BlasThreads single(1);
      parallel_tasks(blocks, threads_, [&](int blk, int worker) {
        const int first = blk * kQueryBlock, count = std::min(kQueryBlock, T - first);
        Matrix S(count, T);
        Eigen::MatrixXd dist;
        const int patch_first = std::max(first, pre), patch_count = first + count - patch_first;
        if (patch_count > 0) vit_patch_distances(patch_first - pre, patch_count, cols, rows, a.patch, dist);
        for (int h = 0; h < H; ++h) {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, count, T, m, scale, QKV.data() + static_cast<std::ptrdiff_t>(first) * 3 * D + h * m,
                      3 * D, QKV.data() + D + h * m, 3 * D, 0.0f, S.data(), T);
          for (int i = 0; i < count; ++i) {
            auto row = S.row(i).array();
            row = (row - row.maxCoeff()).exp();
            row /= row.sum();
          }
          if (patch_count > 0)
            dist_sums[static_cast<std::size_t>(worker)](0, h) +=
                (S.bottomRightCorner(patch_count, N).cast<double>().array() * dist.array()).sum();
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, count, m, T, 1.0f, S.data(), T, QKV.data() + 2 * D + h * m, 3 * D,
                      0.0f, O.data() + static_cast<std::ptrdiff_t>(first) * D + h * m, D);
        }
      });
    }
    for (const Eigen::MatrixXd& d : dist_sums) distance.row(static_cast<Eigen::Index>(l)) += d;
    pass.Q[l] = QKV.leftCols(D);
    pass.K[l] = QKV.middleCols(D, D);
    // Projection, layer scale, residual; then the MLP with the exact GELU.
    linear(O, b.W_proj, &b.b_proj, tmp);
    if (a.layer_scale) X += (tmp.array().rowwise() * b.ls1.array()).matrix();
    else X += tmp;
    linear(layer_norm(X, b.ln2_w, b.ln2_b, a.eps), b.W_fc1, &b.b_fc1, hidden);
    hidden = gelu(hidden);
    linear(hidden, b.W_fc2, &b.b_fc2, tmp);
    if (a.layer_scale) X += (tmp.array().rowwise() * b.ls2.array()).matrix();
    else X += tmp;
    pass.token_norms[l] = X.rowwise().norm().transpose();
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
