// Reading a finished forward pass (VitPass): rows of A from q and k, rollout, mean attention
// distance, the classifier's top classes.
#include "core/vit/vit.hpp"

#include "core/base/blas.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/vit/attention_source.hpp"
#include "core/vit/vit_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnlab {

namespace {

void check_layer(const VitPass& pass, int layer) {
  if (layer < 0 || layer >= pass.layers())
    throw Error(text_format(_("layer %d is outside 0…%d"), layer, pass.layers() - 1));
}
void check_query(const VitPass& pass, int query) {
  if (query < 0 || query >= pass.T) throw Error(text_format(_("query token %d is outside 0…%d"), query, pass.T - 1));
}

constexpr int kRowBlock = 64;  ///< rows of A computed at once where a whole A is streamed over

}  // namespace

void vit_softmax_rows(Eigen::Ref<Matrix> S) {
  for (Eigen::Index i = 0; i < S.rows(); ++i) {
    auto row = S.row(i).array();
    row = (row - row.maxCoeff()).exp();
    row *= 1.0f / row.sum();
  }
}

void vit_attention_block(const VitPass& pass, int layer, int head, int first, int count, Matrix& out) {
  check_layer(pass, layer);
  if (head < 0 || head >= pass.H) throw Error(text_format(_("head %d is outside 0…%d"), head, pass.H - 1));
  if (first < 0 || count < 0 || first + count > pass.T) throw Error(_("internal: attention rows outside the pass"));
  const Matrix& Q = pass.Q[static_cast<std::size_t>(layer)];
  const Matrix& K = pass.K[static_cast<std::size_t>(layer)];
  const float scale = 1.0f / std::sqrt(static_cast<float>(pass.m));
  const int D = static_cast<int>(Q.cols());
  out.resize(count, pass.T);
  if (count == 0) return;
  blas::sgemm(false, true, count, pass.T, pass.m, scale,
              Q.data() + static_cast<std::ptrdiff_t>(first) * D + static_cast<std::ptrdiff_t>(head) * pass.m, D,
              K.data() + static_cast<std::ptrdiff_t>(head) * pass.m, D, 0.0f, out.data(), pass.T);
  vit_softmax_rows(out);
}

std::vector<float> vit_attention_rows(const VitPass& pass, int layer, int query) {
  check_layer(pass, layer);
  check_query(pass, query);
  std::vector<float> out(static_cast<std::size_t>(pass.H) * pass.T);
  Matrix row;
  for (int h = 0; h < pass.H; ++h) {
    vit_attention_block(pass, layer, h, query, 1, row);
    std::copy(row.data(), row.data() + pass.T, out.begin() + static_cast<std::ptrdiff_t>(h) * pass.T);
  }
  return out;
}

Matrix vit_attention(const VitPass& pass, int layer, int head) {
  Matrix A;
  vit_attention_block(pass, layer, head, 0, pass.T, A);
  return A;
}

std::vector<float> vit_patch_row(const VitPass& pass, int prefix, int layer, HeadChoice head, int query) {
  check_layer(pass, layer);
  if (head.head >= pass.H) throw Error(text_format(_("head %d is outside 0…%d"), head.head, pass.H - 1));
  check_query(pass, query);
  const int T = pass.T, N = T - prefix;
  const std::vector<float> rows = vit_attention_rows(pass, layer, query);
  auto patch_keys = [&](int h) {  // head h's row over the patch keys, 1 × N
    return Matrix(Eigen::Map<const Matrix>(rows.data() + static_cast<std::size_t>(h) * T + prefix, 1, N));
  };
  const Matrix out = head.head >= 0 ? patch_keys(head.head) : fuse_heads(pass.H, head.fusion, patch_keys);
  return {out.data(), out.data() + out.size()};
}

std::vector<float> vit_rollout_row(const VitPass& pass, int layer, HeadFusion fusion, int query) {
  check_layer(pass, layer);
  check_query(pass, query);
  const int T = pass.T, H = pass.H;
  Eigen::RowVectorXd r = Eigen::RowVectorXd::Zero(T);
  r(query) = 1.0;
  const int threads = vit_kernels::default_threads(), blocks = (T + kRowBlock - 1) / kRowBlock;
  std::vector<Matrix> block(static_cast<std::size_t>(threads));
  std::vector<Eigen::RowVectorXd> next(static_cast<std::size_t>(threads));
  for (int l = layer; l >= 0; --l) {
    // r ← r Â_l, over blocks of Â_l's rows (a worker's blocks summed into its own part of the
    // next r); rows where r is 0 are skipped (the first step reads one).
    for (Eigen::RowVectorXd& n : next) n = Eigen::RowVectorXd::Zero(T);
    vit_kernels::parallel_tasks(blocks, threads, [&](int b, int worker) {
      const int first = b * kRowBlock, count = std::min(kRowBlock, T - first);
      if (r.segment(first, count).isZero(0.0)) return;
      Matrix& rows_of_A = block[static_cast<std::size_t>(worker)];
      Eigen::RowVectorXd& part = next[static_cast<std::size_t>(worker)];
      const Eigen::MatrixXd hat_rows = fuse_heads(H, fusion, [&](int h) {
                                         vit_attention_block(pass, l, h, first, count, rows_of_A);
                                         return rows_of_A;
                                       }).cast<double>();
      for (int i = 0; i < count; ++i) {
        const double ri = r(first + i);
        if (ri == 0.0) continue;
        // Â's row: (a + e_i)/2, renormalized to sum 1.
        const double sum = 0.5 * (hat_rows.row(i).sum() + 1.0);
        part += (0.5 * ri / sum) * hat_rows.row(i);
        part(first + i) += 0.5 * ri / sum;
      }
    });
    r = next[0];
    for (std::size_t w = 1; w < next.size(); ++w) r += next[w];
  }
  std::vector<float> out(static_cast<std::size_t>(T));
  for (int j = 0; j < T; ++j) out[static_cast<std::size_t>(j)] = static_cast<float>(r(j));
  return out;
}

Matrix vit_attention_distance(const VitPass& pass, int prefix, int cols, int rows, int patch) {
  const int T = pass.T, N = cols * rows;
  if (T != prefix + N) throw Error(_("the grid does not match the tokens of the pass"));
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(pass.layers(), pass.H);
  Matrix block;
  const PatchDistances distances(cols, rows, patch);
  for (int first = prefix; first < T; first += kRowBlock) {
    const int count = std::min(kRowBlock, T - first);
    for (int l = 0; l < pass.layers(); ++l)
      for (int h = 0; h < pass.H; ++h) {
        vit_attention_block(pass, l, h, first, count, block);
        for (int i = 0; i < count; ++i) sum(l, h) += distances.weighted_sum(first + i - prefix, block.row(i).data() + prefix);
      }
  }
  return (sum / N).cast<float>();
}

PatchDistances::PatchDistances(int cols, int rows, int patch) : cols_(cols), rows_(rows) {
  const int width = 2 * cols - 1;
  profiles_.resize(static_cast<std::size_t>(rows) * width);
  for (int dy = 0; dy < rows; ++dy)
    for (int k = 0; k < width; ++k)
      profiles_[static_cast<std::size_t>(dy) * width + k] =
          static_cast<float>(patch * std::hypot(static_cast<double>(k - cols + 1), static_cast<double>(dy)));
}

double PatchDistances::weighted_sum(int query, const float* w) const {
  const int qx = query % cols_, qy = query / cols_, width = 2 * cols_ - 1;
  double sum = 0.0;
  for (int y = 0; y < rows_; ++y) {
    const float* profile = profiles_.data() + static_cast<std::size_t>(std::abs(y - qy)) * width + (cols_ - 1 - qx);
    sum += Eigen::Map<const Eigen::VectorXf>(w + static_cast<std::ptrdiff_t>(y) * cols_, cols_).dot(Eigen::Map<const Eigen::VectorXf>(profile, cols_));
  }
  return sum;
}

std::vector<std::pair<int, float>> vit_top_classes(std::span<const float> logits, int k) {
  if (logits.empty()) return {};
  const float top = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p(logits.size());
  double sum = 0.0;
  for (std::size_t c = 0; c < logits.size(); ++c) sum += p[c] = std::exp(static_cast<double>(logits[c]) - top);
  std::vector<int> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[static_cast<std::size_t>(a)] > logits[static_cast<std::size_t>(b)]; });
  std::vector<std::pair<int, float>> out;
  for (int i = 0; i < k && i < static_cast<int>(order.size()); ++i)
    out.emplace_back(order[static_cast<std::size_t>(i)], static_cast<float>(p[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] / sum));
  return out;
}

}  // namespace attnlab
