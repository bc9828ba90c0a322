#include "core/hand_made/attention.hpp"

#include "core/base/error.hpp"
#include "core/base/parse.hpp"
#include "core/base/translate.hpp"

#include <cmath>
#include <limits>
#include <memory>
#include <algorithm>

namespace attnlab {

bool masked_softmax(std::span<const float> logits, std::span<const bool> keep, std::span<float> weights) {
  const size_t n = logits.size();
  float mx = -std::numeric_limits<float>::infinity();
  for (size_t j = 0; j < n; ++j)
    if (keep[j]) mx = std::max(mx, logits[j]);
  if (mx == -std::numeric_limits<float>::infinity()) {  // nothing kept
    for (auto& w : weights) w = 0.0f;
    return false;
  }
  double sum = 0;
  for (size_t j = 0; j < n; ++j) sum += keep[j] ? std::exp(static_cast<double>(logits[j]) - mx) : 0.0;
  for (size_t j = 0; j < n; ++j)
    weights[j] = keep[j] ? static_cast<float>(std::exp(static_cast<double>(logits[j]) - mx) / sum) : 0.0f;
  return true;
}

std::vector<float> softmax(std::span<const float> logits) {
  std::vector<float> w(logits.size());
  std::unique_ptr<bool[]> keep(new bool[logits.size()]);
  std::fill_n(keep.get(), logits.size(), true);
  masked_softmax(logits, std::span<const bool>(keep.get(), logits.size()), w);
  return w;
}

namespace {

void check_temperature(float temperature) {
  if (!(temperature > 0.0f) || !std::isfinite(temperature))
    throw Error(text_format(_("temperature must be a number > 0, got %s"), format_float(temperature).c_str()));
}

RowResult row_from_logits(RowVector logits, const std::unique_ptr<bool[]>& keep) {
  RowResult r;
  const auto N = static_cast<size_t>(logits.size());
  r.weights.resize(logits.size());
  r.empty = !masked_softmax(std::span<const float>(logits.data(), N), std::span<const bool>(keep.get(), N),
                            std::span<float>(r.weights.data(), N));
  r.logits = std::move(logits);
  return r;
}

}  // namespace

RowResult attention_row(const Matrix& Q, const Matrix& K, int i, float temperature, const Mask& mask) {
  check_temperature(temperature);
  const int N = static_cast<int>(K.rows());
  if (i < 0 || i >= Q.rows())
    throw Error(text_format(_("query index %d is outside [0,%lld)"), i, static_cast<long long>(Q.rows())));
  const float scale = 1.0f / (temperature * std::sqrt(static_cast<float>(Q.cols())));
  RowVector logits = (Q.row(i) * K.transpose()) * scale;  // s_ij / (τ√m), eqs. 26.22, 26.20
  std::unique_ptr<bool[]> keep(new bool[static_cast<size_t>(N)]);
  for (int j = 0; j < N; ++j) keep[j] = mask.allowed(i, j);
  return row_from_logits(std::move(logits), keep);
}

RowResult attention_row_for(const RowVector& q, const Matrix& K, float temperature) {
  check_temperature(temperature);
  const auto N = static_cast<size_t>(K.rows());
  const float scale = 1.0f / (temperature * std::sqrt(static_cast<float>(q.size())));
  RowVector logits = (q * K.transpose()) * scale;  // eq. 26.14
  std::unique_ptr<bool[]> keep(new bool[N]);
  for (size_t j = 0; j < N; ++j) keep[j] = true;
  return row_from_logits(std::move(logits), keep);
}

Matrix attention_matrix(const Matrix& Q, const Matrix& K, float temperature, const Mask& mask, std::vector<int>* empty_rows) {
  check_temperature(temperature);
  const int N = static_cast<int>(Q.rows());
  const float scale = 1.0f / (temperature * std::sqrt(static_cast<float>(Q.cols())));
  Matrix A = (Q * K.transpose()) * scale;  // logits, eq. 26.20
  std::unique_ptr<bool[]> keep(new bool[static_cast<size_t>(N)]);
  std::vector<float> w(static_cast<size_t>(N));
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < N; ++j) keep[j] = mask.allowed(i, j);
    const bool ok = masked_softmax(std::span<const float>(A.row(i).data(), static_cast<size_t>(N)),
                                   std::span<const bool>(keep.get(), static_cast<size_t>(N)), w);
    std::copy(w.begin(), w.end(), A.row(i).data());
    if (!ok && empty_rows) empty_rows->push_back(i);
  }
  return A;
}

Matrix attend(const Matrix& A, const Matrix& V) { return A * V; }  // eq. 26.21

Matrix merge_heads(const std::vector<Matrix>& outputs, const Matrix& W_MSA) {
  if (outputs.empty()) throw Error(_("merge_heads: no heads"));
  const auto N = outputs.front().rows();
  Eigen::Index width = 0;
  for (const auto& o : outputs) width += o.cols();
  if (W_MSA.rows() != width)
    throw Error(text_format(_("merge_heads: W_MSA has %lld rows, expected %lld"), static_cast<long long>(W_MSA.rows()),
                            static_cast<long long>(width)));
  Matrix Tbar(N, width);  // eq. 26.27
  Eigen::Index at = 0;
  for (const auto& o : outputs) {
    Tbar.middleCols(at, o.cols()) = o;
    at += o.cols();
  }
  return Tbar * W_MSA;  // eq. 26.28
}

AttentionCost attention_cost(long long N, long long D) {
  // The worked solution of exercise 12.1 writes the bias counts as "3" and "N²"; each β is a
  // D×1 vector and a dense layer has one bias per output, which gives 3D and DN.
  return {3 * D * D, 3 * D, N * N, D * D * N * N, D * N};
}

Saturation saturation(std::span<const float> weights) {
  Saturation s{0.0f, 0.0f};
  double h = 0;
  for (float w : weights) {
    s.max_weight = std::max(s.max_weight, w);
    if (w > 0) h -= static_cast<double>(w) * std::log(static_cast<double>(w));
  }
  s.entropy = static_cast<float>(h);
  return s;
}

RowFlatness row_flatness(std::span<const float> row, std::span<const std::uint8_t> keep) {
  if (!keep.empty() && keep.size() != row.size()) throw Error(_("internal: row and keep differ in length"));
  RowFlatness f;
  double lo = std::numeric_limits<double>::infinity(), hi = 0, h = 0;
  for (size_t j = 0; j < row.size(); ++j) {
    if (!keep.empty() && !keep[j]) continue;
    const double a = row[j];
    ++f.n;
    lo = std::min(lo, a);
    hi = std::max(hi, a);
    if (a > 0) h -= a * std::log(a);
  }
  if (f.n == 0) return f;
  f.uniform = 1.0 / f.n;
  f.max_over_min = lo > 0 ? hi / lo : std::numeric_limits<double>::infinity();
  f.entropy_ratio = f.n > 1 ? h / std::log(static_cast<double>(f.n)) : 1.0;
  f.nearly_uniform = f.max_over_min < RowFlatness::kNearlyUniform;
  return f;
}

} // namespace attnlab
