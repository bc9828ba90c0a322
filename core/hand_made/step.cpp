#include "core/hand_made/step.hpp"

#include "core/base/error.hpp"
#include "core/base/parse.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace attnlab {

StepBreakdown step_breakdown(const Matrix& Q, const Matrix& K, const Matrix& V, int i, float temperature,
                             const Mask& mask) {
  if (!(temperature > 0.0f) || !std::isfinite(temperature))
    throw Error(text_format(_("temperature must be a number > 0, got %s"), format_float(temperature).c_str()));
  const auto N = static_cast<int>(K.rows());
  if (Q.rows() != N || V.rows() != N)
    throw Error(text_format(_("step_breakdown: Q, K and V must have one row per token (got %lld, %lld, %lld)"),
                            static_cast<long long>(Q.rows()), static_cast<long long>(K.rows()),
                            static_cast<long long>(V.rows())));
  if (Q.cols() != K.cols())
    throw Error(text_format(_("step_breakdown: queries have %lld values but keys have %lld"), static_cast<long long>(Q.cols()),
                            static_cast<long long>(K.cols())));
  if (i < 0 || i >= N) throw Error(text_format(_("query index %d is outside [0,%d)"), i, N));

  StepBreakdown b;
  const auto n = static_cast<size_t>(N);
  b.i = i;
  b.m = static_cast<int>(Q.cols());
  b.temperature = temperature;
  b.divisor = static_cast<double>(temperature) * std::sqrt(static_cast<double>(b.m));
  b.q = Q.row(i);
  b.score.resize(n);
  b.scaled.resize(n);
  b.keep.resize(n);
  b.exp_term.assign(n, 0.0);
  b.weight.assign(n, 0.0f);
  double mx = -std::numeric_limits<double>::infinity();
  for (int j = 0; j < N; ++j) {
    double s = 0;  // s_ij = q_i · k_j (eq. 26.22)
    for (int c = 0; c < b.m; ++c) s += static_cast<double>(Q(i, c)) * static_cast<double>(K(j, c));
    const auto J = static_cast<size_t>(j);
    b.score[J] = static_cast<float>(s);
    b.scaled[J] = static_cast<float>(b.m > 0 ? s / b.divisor : 0.0);
    b.keep[J] = mask.allowed(i, j) ? 1 : 0;
    if (b.keep[J]) {
      ++b.kept;
      mx = std::max(mx, static_cast<double>(b.scaled[J]));
    }
  }
  b.t_out = RowVector::Zero(V.cols());
  if (b.kept == 0) {
    b.empty = true;
    return b;
  }
  b.row_max = mx;
  for (size_t j = 0; j < n; ++j)
    if (b.keep[j]) {
      b.exp_term[j] = std::exp(static_cast<double>(b.scaled[j]) - mx);  // stable softmax: subtract the max
      b.row_sum += b.exp_term[j];
    }
  for (size_t j = 0; j < n; ++j) b.weight[j] = b.keep[j] ? static_cast<float>(b.exp_term[j] / b.row_sum) : 0.0f;
  b.t_out = weighted_sum(b.weight, V);
  return b;
}

std::vector<int> top_keys(std::span<const float> weights, std::span<const std::uint8_t> keep, int count) {
  if (!keep.empty() && keep.size() != weights.size())
    throw Error(text_format(_("top_keys: %zu weights but %zu mask entries"), weights.size(), keep.size()));
  std::vector<int> idx;
  if (count <= 0) return idx;
  idx.reserve(weights.size());
  for (size_t j = 0; j < weights.size(); ++j)
    if (keep.empty() || keep[j]) idx.push_back(static_cast<int>(j));
  const auto take = std::min(idx.size(), static_cast<size_t>(count));
  auto by_weight = [&](int a, int b) {
    const float wa = weights[static_cast<size_t>(a)], wb = weights[static_cast<size_t>(b)];
    return wa != wb ? wa > wb : a < b;
  };
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(take), idx.end(), by_weight);
  idx.resize(take);
  return idx;
}

RowVector weighted_sum(std::span<const float> a, const Matrix& V) {
  if (static_cast<Eigen::Index>(a.size()) != V.rows())
    throw Error(text_format(_("weighted_sum: %zu weights for %lld values"), a.size(), static_cast<long long>(V.rows())));
  Eigen::Matrix<double, 1, Eigen::Dynamic> t = Eigen::Matrix<double, 1, Eigen::Dynamic>::Zero(V.cols());
  for (Eigen::Index j = 0; j < V.rows(); ++j) {
    const float w = a[static_cast<size_t>(j)];
    if (w != 0.0f) t += static_cast<double>(w) * V.row(j).cast<double>();
  }
  return t.cast<float>();
}

CostReport cost_report(long long N, long long D, std::span<const int> m, long long v) {
  if (N < 0 || D < 0 || v < 0) throw Error(_("cost_report: N, D and v must be >= 0"));
  for (int mh : m)
    if (mh < 0) throw Error(_("cost_report: a head has a negative query/key length"));
  CostReport r;
  r.N = N;
  r.D = D;
  r.H = static_cast<long long>(m.size());
  r.v = v;
  r.exercise = attention_cost(N, D);
  const long long N2 = N * N;
  r.attention_weights_all = r.H * N2;
  for (int mh : m) {
    r.qk_flops.push_back(2 * N2 * mh);  // N² dot products of length m_h, each m_h multiply-adds
    r.qk_flops_all += r.qk_flops.back();
  }
  r.av_flops_all = r.H * 2 * N2 * v;  // each of the N·v outputs sums N products
  r.a_bytes = 4 * N2;
  r.a_bytes_all = r.H * r.a_bytes;
  r.row_bytes_all = 4 * r.H * N;
  if (r.H > 0) {
    const double Dd = static_cast<double>(D), Nd = static_cast<double>(N), Hd = static_cast<double>(r.H);
    r.head_width = Dd / Hd;
    r.split_qkv_weights_per_head = 3.0 * Dd * r.head_width;
    r.split_qkv_weights_all = Hd * r.split_qkv_weights_per_head;
    r.split_qk_flops_per_head = 2.0 * Nd * Nd * r.head_width;
    r.split_qk_flops_all = Hd * r.split_qk_flops_per_head;
  }
  r.full_qkv_weights_all = r.H * 3 * D * D;
  r.full_qk_flops_all = r.H * 2 * N2 * D;
  return r;
}

std::vector<Saturation> saturation_curve(std::span<const float> logits, std::span<const std::uint8_t> keep,
                                         float tau_now, std::span<const float> taus) {
  if (!keep.empty() && keep.size() != logits.size())
    throw Error(text_format(_("saturation_curve: %zu logits but %zu mask entries"), logits.size(), keep.size()));
  if (!(tau_now > 0.0f) || !std::isfinite(tau_now))
    throw Error(text_format(_("temperature must be a number > 0, got %s"), format_float(tau_now).c_str()));
  double mx = -std::numeric_limits<double>::infinity();
  for (size_t j = 0; j < logits.size(); ++j)
    if (keep.empty() || keep[j]) mx = std::max(mx, static_cast<double>(logits[j]));
  std::vector<Saturation> out;
  out.reserve(taus.size());
  for (float tau : taus) {
    if (!(tau > 0.0f) || !std::isfinite(tau))
      throw Error(text_format(_("temperature must be a number > 0, got %s"), format_float(tau).c_str()));
    if (mx == -std::numeric_limits<double>::infinity()) {
      out.push_back({0.0f, 0.0f});
      continue;
    }
    const double f = static_cast<double>(tau_now) / static_cast<double>(tau);
    // With z_j = f·(l_j − max): a_j = e^{z_j}/S, entropy = log S − Σ a_j z_j, max weight = 1/S.
    double S = 0, Sz = 0;
    for (size_t j = 0; j < logits.size(); ++j) {
      if (!(keep.empty() || keep[j])) continue;
      const double z = f * (static_cast<double>(logits[j]) - mx);
      const double e = std::exp(z);
      S += e;
      Sz += e * z;
    }
    const double entropy = std::log(S) - Sz / S;
    out.push_back({static_cast<float>(1.0 / S), static_cast<float>(std::max(entropy, 0.0))});
  }
  return out;
}

RowVector raw_token(const Image& img, const PatchGrid& grid, int i) {
  if (i < 0 || i >= grid.N()) throw Error(text_format(_("patch index %d is outside [0,%d)"), i, grid.N()));
  const int K = grid.K;
  RowVector x = RowVector::Zero(3 * Eigen::Index{K} * K);
  const int x0 = grid.col_of(i) * K, y0 = grid.row_of(i) * K;
  for (int py = 0; py < K; ++py)
    for (int px = 0; px < K; ++px) {
      const int xx = x0 + px, yy = y0 + py;
      if (xx >= img.width || yy >= img.height) continue;  // padding stays 0
      for (int c = 0; c < 3; ++c) x[(Eigen::Index{py} * K + px) * 3 + c] = img.at(xx, yy, c);
    }
  return x;
}

RowVector project_patch(const RowVector& x, const Matrix& W_tokenize) {
  if (x.size() != W_tokenize.cols())
    throw Error(text_format(_("project_patch: the raw token has %lld values but W_tokenize expects %lld"),
                            static_cast<long long>(x.size()), static_cast<long long>(W_tokenize.cols())));
  return x * W_tokenize.transpose();  // one output position of eq. 26.32: d dot products with the K×K×3 filters
}

std::vector<TokenPart> token_parts(int code_len) {
  using L = TokenLayout;
  std::vector<TokenPart> parts = {
      {"c", _("mean colour (r, g, b)"), L::kColour, 3},
      {"c/|c|", _("mean colour scaled to unit length"), L::kUnitColour, 3},
      {"g", _("texture: gradient energy, two orientations"), L::kTexture, 3},
      // TRANSLATORS: W_tokenize is the random projection matrix, x the raw patch's values.
      {"r", _("random projection W_tokenize x of the raw patch"), L::kRandom, L::kRandomDims},
  };
  if (code_len > 0) parts.push_back({"p", _("positional code [p_x; p_y]"), L::d, code_len});
  return parts;
}

} // namespace attnlab
