// core/hand_made/step: the step-by-step breakdown of a row (figs. 26.8, 26.10) against the reference,
// the cost counts of exercises 12.1 and 12.5 against hand numbers, the saturation curve, and
// the tokenization of one patch (eq. 26.32).
#include "core/hand_made/reference.hpp"
#include "core/hand_made/step.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace attnlab;
using attnlab::testing::safari;

namespace {


// Checks the breakdown of (head, query) against Reference::row() and Reference::output().
void expect_matches_reference(const Reference& ref, int head, int i) {
  SCOPED_TRACE("head " + std::to_string(head) + ", query " + std::to_string(i));
  const HeadQKV& h = ref.qkv(head);
  const StepBreakdown b = step_breakdown(h.Q, h.K, h.V, i, ref.settings().temperature, ref.setup().mask);
  const RowResult row = ref.row(head, i);
  const int N = ref.N();
  ASSERT_EQ(static_cast<int>(b.weight.size()), N);
  EXPECT_EQ(b.m, h.m());
  EXPECT_EQ(b.empty, row.empty);
  EXPECT_NEAR(b.divisor, ref.settings().temperature * std::sqrt(static_cast<double>(h.m())), 1e-6);
  for (int c = 0; c < b.m; ++c) EXPECT_EQ(b.q[c], h.Q(i, c));
  int kept = 0;
  double sum = 0;
  for (int j = 0; j < N; ++j) {
    const auto J = static_cast<size_t>(j);
    const double qk = static_cast<double>(h.Q.row(i).dot(h.K.row(j)));
    ASSERT_NEAR(b.score[J], qk, 1e-5 * std::max(1.0, std::abs(qk))) << "s_ij, key " << j;
    ASSERT_NEAR(b.scaled[J], row.logits[j], 1e-5 * std::max(1.0f, std::abs(row.logits[j]))) << "logit, key " << j;
    ASSERT_NEAR(b.weight[J], row.weights[j], 1e-6 + 1e-5 * row.weights[j]) << "a_ij, key " << j;
    const bool allowed = ref.setup().mask.allowed(i, j);
    ASSERT_EQ(b.keep[J] != 0, allowed);
    if (!allowed) {
      ASSERT_EQ(b.weight[J], 0.0f) << "masked key " << j << " must weigh exactly 0";
      ASSERT_EQ(b.exp_term[J], 0.0);
    } else {
      ++kept;
      ASSERT_LE(b.scaled[J], b.row_max + 1e-6);
      ASSERT_NEAR(b.exp_term[J], std::exp(static_cast<double>(b.scaled[J]) - b.row_max), 1e-12);
      sum += b.exp_term[J];
    }
  }
  EXPECT_EQ(b.kept, kept);
  EXPECT_NEAR(b.row_sum, sum, 1e-9 * sum);
  if (!b.empty) {
    EXPECT_GE(b.row_sum, 1.0);  // the largest term is exp(0) = 1
    EXPECT_NEAR(std::accumulate(b.weight.begin(), b.weight.end(), 0.0), 1.0, 1e-5);
  }
  const Matrix out = ref.output(head);
  ASSERT_EQ(b.t_out.size(), out.cols());
  for (Eigen::Index c = 0; c < out.cols(); ++c) EXPECT_NEAR(b.t_out[c], out(i, c), 1e-5) << "t_out channel " << c;
  // The same t_out from the reference's own weights through weighted_sum().
  const RowVector t = weighted_sum(std::span<const float>(row.weights.data(), static_cast<size_t>(N)), h.V);
  for (Eigen::Index c = 0; c < out.cols(); ++c) EXPECT_NEAR(t[c], out(i, c), 1e-5);
}

}  // namespace

TEST(StepBreakdown, SafariK20Query12x8MatchesReferenceForSeveralHeads) {
  Settings s;
  s.patch = 20;
  const Reference ref(safari(), s);
  const int i = token_at(ref.grid(), 12, 8);
  for (int head : {0, 1, 3, 4}) expect_matches_reference(ref, head, i);
  // The colour head at τ = 1: q_i is the unit mean colour, m = 3, divisor √3.
  const StepBreakdown b = step_breakdown(ref.qkv(0).Q, ref.qkv(0).K, ref.qkv(0).V, i, 1.0f, ref.setup().mask);
  EXPECT_EQ(b.m, 3);
  EXPECT_NEAR(b.divisor, std::sqrt(3.0), 1e-12);
  EXPECT_NEAR(b.q.norm(), 1.0f, 1e-5f);
  EXPECT_NEAR(b.score[static_cast<size_t>(i)], 1.0f, 1e-5f);  // q_i · k_i = |ĉ_i|² = 1
  // t_out of the colour head is a colour: every channel within [0,1].
  for (Eigen::Index c = 0; c < 3; ++c) {
    EXPECT_GE(b.t_out[c], 0.0f);
    EXPECT_LE(b.t_out[c], 1.0f);
  }
}

TEST(StepBreakdown, SafariWithCausalMaskAndLowTemperature) {
  Settings s{.patch = 20, .temperature = 0.5f, .mask = {.kind = MaskKind::Causal}};
  const Reference ref(safari(), s);
  const int i = token_at(ref.grid(), 12, 8);
  for (int head : {0, 2, 4, 5}) expect_matches_reference(ref, head, i);
  const StepBreakdown b = step_breakdown(ref.qkv(0).Q, ref.qkv(0).K, ref.qkv(0).V, i, 0.5f, ref.setup().mask);
  EXPECT_EQ(b.kept, i + 1);  // keys j <= i
  EXPECT_NEAR(b.divisor, 0.5 * std::sqrt(3.0), 1e-12);
}

TEST(StepBreakdown, SafariWindowAndRandomMasksWithConcatCodes) {
  Settings s{.patch = 20, .temperature = 0.5f, .mask = {.kind = MaskKind::Window, .radius = 3}, .pos = {.mode = PosMode::Concat}};
  {
    const Reference ref(safari(), s);
    const int i = token_at(ref.grid(), 12, 8);
    for (int head : {0, 1}) expect_matches_reference(ref, head, i);
    EXPECT_EQ(ref.qkv(0).m(), 3 + 16);
  }
  s.mask.kind = MaskKind::Random;
  s.mask.ratio = 0.7f;
  const Reference ref(safari(), s);
  expect_matches_reference(ref, 0, token_at(ref.grid(), 12, 8));
}

TEST(StepBreakdown, FullyMaskedRowIsEmptyNeverNaN) {
  Settings s;
  s.patch = 20;
  s.mask.kind = MaskKind::Strict;  // query 0 may attend to nothing
  const Reference ref(safari(), s);
  const HeadQKV& h = ref.qkv(0);
  const StepBreakdown b = step_breakdown(h.Q, h.K, h.V, 0, 1.0f, ref.setup().mask);
  EXPECT_TRUE(b.empty);
  EXPECT_EQ(b.kept, 0);
  EXPECT_EQ(b.row_sum, 0.0);
  for (float w : b.weight) EXPECT_EQ(w, 0.0f);
  for (double e : b.exp_term) EXPECT_EQ(e, 0.0);
  for (Eigen::Index c = 0; c < b.t_out.size(); ++c) EXPECT_EQ(b.t_out[c], 0.0f);
  for (float x : b.scaled) EXPECT_TRUE(std::isfinite(x));
  EXPECT_TRUE(top_keys(b.weight, b.keep, 10).empty());
  expect_matches_reference(ref, 0, 0);
}

TEST(StepBreakdown, HandWorkedTwoTokens) {
  // q_0 = (1, 0), k_0 = (1, 0), k_1 = (0, 1); m = 2, τ = 1: scaled = (1/√2, 0).
  Matrix Q(2, 2), K(2, 2), V(2, 3);
  Q << 1, 0, 0, 1;
  K << 1, 0, 0, 1;
  V << 1, 0, 0, 0, 0, 1;
  const Mask none(MaskSpec{}, make_grid(2, 1, 1, EdgeMode::Crop));
  const StepBreakdown b = step_breakdown(Q, K, V, 0, 1.0f, none);
  const double s = 1.0 / std::sqrt(2.0);
  EXPECT_NEAR(b.scaled[0], s, 1e-7);
  EXPECT_NEAR(b.scaled[1], 0.0, 1e-7);
  EXPECT_NEAR(b.row_max, s, 1e-7);
  EXPECT_NEAR(b.exp_term[1], std::exp(-s), 1e-7);
  EXPECT_NEAR(b.row_sum, 1.0 + std::exp(-s), 1e-7);
  const double a0 = 1.0 / (1.0 + std::exp(-s));
  EXPECT_NEAR(b.weight[0], a0, 1e-7);
  EXPECT_NEAR(b.t_out[0], a0, 1e-6);  // red from v_0
  EXPECT_NEAR(b.t_out[2], 1.0 - a0, 1e-6);  // blue from v_1
  EXPECT_THROW(step_breakdown(Q, K, V, 2, 1.0f, none), Error);
  EXPECT_THROW(step_breakdown(Q, K, V, 0, 0.0f, none), Error);
  EXPECT_THROW(step_breakdown(Q, K, V.topRows(1), 0, 1.0f, none), Error);
}

TEST(StepBreakdown, TopKeysSortsByWeightSkipsMaskedAndBreaksTiesByIndex) {
  const std::vector<float> w = {0.1f, 0.4f, 0.0f, 0.4f, 0.05f, 0.05f};
  const std::vector<std::uint8_t> keep = {1, 1, 0, 1, 1, 1};
  EXPECT_EQ(top_keys(w, keep, 3), (std::vector<int>{1, 3, 0}));
  EXPECT_EQ(top_keys(w, keep, 100), (std::vector<int>{1, 3, 0, 4, 5}));
  EXPECT_EQ(top_keys(w, {}, 100), (std::vector<int>{1, 3, 0, 4, 5, 2}));
  EXPECT_TRUE(top_keys(w, keep, 0).empty());
  EXPECT_THROW(top_keys(w, std::vector<std::uint8_t>{1, 1}, 3), Error);
}

TEST(StepBreakdown, WeightedSumHandNumbers) {
  Matrix V(3, 3);
  V << 1, 0, 0, 0, 1, 0, 0.5f, 0.5f, 1;
  const std::vector<float> a = {0.25f, 0.25f, 0.5f};
  const RowVector t = weighted_sum(a, V);
  EXPECT_FLOAT_EQ(t[0], 0.5f);
  EXPECT_FLOAT_EQ(t[1], 0.5f);
  EXPECT_FLOAT_EQ(t[2], 0.5f);
  EXPECT_THROW(weighted_sum(std::vector<float>{1.0f}, V), Error);
}

TEST(CostReport, HandNumbersSmall) {
  const std::vector<int> m = {3, 16};
  const CostReport r = cost_report(4, 3, m, 3);
  EXPECT_EQ(r.H, 2);
  EXPECT_EQ(r.exercise.qkv_weights, 27);   // 3D²
  EXPECT_EQ(r.exercise.qkv_biases, 9);     // 3D
  EXPECT_EQ(r.exercise.attention_weights, 16);  // N²
  EXPECT_EQ(r.exercise.fc_weights, 144);   // D²N²
  EXPECT_EQ(r.exercise.fc_biases, 12);     // DN
  EXPECT_EQ(r.attention_weights_all, 32);
  ASSERT_EQ(r.qk_flops.size(), 2u);
  EXPECT_EQ(r.qk_flops[0], 96);    // 2·16·3
  EXPECT_EQ(r.qk_flops[1], 512);   // 2·16·16
  EXPECT_EQ(r.qk_flops_all, 608);
  EXPECT_EQ(r.av_flops_all, 192);  // 2 heads · 2·16·3
  EXPECT_EQ(r.a_bytes, 64);
  EXPECT_EQ(r.a_bytes_all, 128);
  EXPECT_EQ(r.row_bytes_all, 32);
  EXPECT_DOUBLE_EQ(r.head_width, 1.5);
  EXPECT_DOUBLE_EQ(r.split_qkv_weights_per_head, 13.5);
  EXPECT_DOUBLE_EQ(r.split_qkv_weights_all, 27.0);
  EXPECT_DOUBLE_EQ(r.split_qk_flops_per_head, 48.0);
  EXPECT_DOUBLE_EQ(r.split_qk_flops_all, 96.0);
  EXPECT_EQ(r.full_qkv_weights_all, 54);
  EXPECT_EQ(r.full_qk_flops_all, 192);
}

TEST(CostReport, SafariDefaultsAndLargestGrid) {
  // K = 20 on the 500×500 safari photo: N = 625, d = 25, the six preset heads.
  const std::vector<int> m = {3, 16, 19, 3, 8, 3};
  const CostReport r = cost_report(625, 25, m, 3);
  EXPECT_EQ(r.exercise.qkv_weights, 1875);
  EXPECT_EQ(r.exercise.qkv_biases, 75);
  EXPECT_EQ(r.exercise.attention_weights, 390625);
  EXPECT_EQ(r.exercise.fc_weights, 244140625LL);
  EXPECT_EQ(r.attention_weights_all, 2343750);
  EXPECT_EQ(r.qk_flops[0], 2343750);  // 2·625²·3
  EXPECT_EQ(r.qk_flops_all, 2LL * 390625 * 52);
  EXPECT_EQ(r.a_bytes, 1562500);
  // K = 4: N = 15 625, A per head is 976.6 MB; nothing overflows.
  const CostReport big = cost_report(15625, 25, m, 3);
  EXPECT_EQ(big.a_bytes, 976562500LL);
  EXPECT_EQ(big.exercise.fc_weights, 25LL * 25 * 15625 * 15625);
  // Exercise 12.5: splitting D over H heads keeps 3D² weights and 2N²D FLOPs whatever H is.
  for (int H : {1, 2, 4, 8, 12}) {
    const std::vector<int> mh(static_cast<size_t>(H), 768 / H);
    const CostReport v = cost_report(197, 768, mh, 768 / H);
    EXPECT_DOUBLE_EQ(v.split_qkv_weights_all, 3.0 * 768 * 768);
    EXPECT_DOUBLE_EQ(v.split_qk_flops_all, 2.0 * 197 * 197 * 768);
    EXPECT_EQ(v.full_qkv_weights_all, static_cast<long long>(H) * 3 * 768 * 768);
    EXPECT_EQ(v.qk_flops_all, 2LL * 197 * 197 * 768);  // the per-head m = D/H adds up to the same
  }
  EXPECT_THROW(cost_report(-1, 3, m, 3), Error);
}

TEST(CostReport, SaturationCurveHandNumbersAndLimits) {
  // logits (0, ln 3) at τ = 1: weights (1/4, 3/4).
  const std::vector<float> logits = {0.0f, std::log(3.0f)};
  const std::vector<float> taus = {1.0f, 0.5f, 1e-3f, 1e3f};
  const auto c = saturation_curve(logits, {}, 1.0f, taus);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_NEAR(c[0].max_weight, 0.75f, 1e-6f);
  EXPECT_NEAR(c[0].entropy, -(0.25 * std::log(0.25) + 0.75 * std::log(0.75)), 1e-6);
  EXPECT_NEAR(c[1].max_weight, 0.9f, 1e-6f);  // τ = 1/2 squares the odds: 9 : 1
  EXPECT_NEAR(c[2].max_weight, 1.0f, 1e-6f);  // τ → 0: one-hot
  EXPECT_NEAR(c[2].entropy, 0.0f, 1e-6f);
  EXPECT_NEAR(c[3].entropy, std::log(2.0), 1e-3);  // τ → ∞: uniform
  // Masked keys weigh nothing; nothing kept gives zeros.
  const std::vector<float> l3 = {0.0f, std::log(3.0f), 100.0f};
  const std::vector<std::uint8_t> keep = {1, 1, 0};
  EXPECT_NEAR(saturation_curve(l3, keep, 1.0f, taus)[0].max_weight, 0.75f, 1e-6f);
  const auto none = saturation_curve(l3, std::vector<std::uint8_t>{0, 0, 0}, 1.0f, taus);
  EXPECT_EQ(none[0].max_weight, 0.0f);
  EXPECT_EQ(none[0].entropy, 0.0f);
  EXPECT_THROW(saturation_curve(logits, {}, 1.0f, std::vector<float>{0.0f}), Error);
}

TEST(CostReport, SaturationCurveAtCurrentTemperatureMatchesTheRow) {
  Settings s{.patch = 20, .temperature = 0.5f, .mask = {.kind = MaskKind::Window}};
  const Reference ref(safari(), s);
  const int i = token_at(ref.grid(), 12, 8);
  const RowResult row = ref.row(0, i);
  const auto N = static_cast<size_t>(ref.N());
  std::vector<std::uint8_t> keep(N);
  for (size_t j = 0; j < N; ++j) keep[j] = ref.setup().mask.allowed(i, static_cast<int>(j)) ? 1 : 0;
  const std::vector<float> taus = {0.5f, 0.05f, 1.0f};
  const auto c = saturation_curve(std::span<const float>(row.logits.data(), N), keep, 0.5f, taus);
  const Saturation direct = saturation(std::span<const float>(row.weights.data(), N));
  EXPECT_NEAR(c[0].max_weight, direct.max_weight, 1e-6f);
  EXPECT_NEAR(c[0].entropy, direct.entropy, 1e-5f);
  // Lower temperature: more saturated (larger max weight, smaller entropy).
  EXPECT_GT(c[1].max_weight, c[0].max_weight);
  EXPECT_LT(c[1].entropy, c[0].entropy);
  EXPECT_LT(c[0].entropy, c[2].entropy);
  const int kept = static_cast<int>(std::count(keep.begin(), keep.end(), std::uint8_t{1}));
  EXPECT_LE(c[2].entropy, std::log(static_cast<float>(kept)) + 1e-5f);
}

TEST(StepTokenization, RawTokenAndProjectionMatchTheReference) {
  Settings s;
  s.patch = 20;
  const Reference ref(safari(), s);
  const Matrix raw = raw_tokens(safari(), ref.grid());
  for (int i : {0, token_at(ref.grid(), 12, 8), ref.N() - 1}) {
    const RowVector x = raw_token(safari(), ref.grid(), i);
    ASSERT_EQ(x.size(), 3 * 20 * 20);
    EXPECT_EQ((x - raw.row(i)).cwiseAbs().maxCoeff(), 0.0f);
    const RowVector r = project_patch(x, ref.setup().W_tokenize);
    ASSERT_EQ(r.size(), TokenLayout::kRandomDims);
    for (int n = 0; n < TokenLayout::kRandomDims; ++n)
      EXPECT_NEAR(r[n], ref.T()(i, TokenLayout::kRandom + n), 1e-5f) << "token " << i << ", r[" << n << "]";
  }
  EXPECT_THROW(raw_token(safari(), ref.grid(), ref.N()), Error);
  EXPECT_THROW(project_patch(RowVector::Zero(5), ref.setup().W_tokenize), Error);
}

TEST(StepTokenization, PaddedOddSizedImage) {
  const Image img = attnlab::testing::random_image(50, 37, 3);
  const Settings s{.patch = 8, .edge = EdgeMode::Pad};
  const Reference ref(img, s);
  const Matrix raw = raw_tokens(img, ref.grid());
  const int last = ref.N() - 1;  // the bottom-right patch is mostly padding
  const RowVector x = raw_token(img, ref.grid(), last);
  EXPECT_EQ((x - raw.row(last)).cwiseAbs().maxCoeff(), 0.0f);
  EXPECT_EQ(x[x.size() - 1], 0.0f);
  const RowVector r = project_patch(x, ref.setup().W_tokenize);
  for (int n = 0; n < TokenLayout::kRandomDims; ++n) EXPECT_NEAR(r[n], ref.T()(last, TokenLayout::kRandom + n), 1e-5f);
}

TEST(StepTokenization, TokenPartsTileTheHeadInput) {
  for (int code_len : {0, 16, 32}) {
    const auto parts = token_parts(code_len);
    int at = 0;
    for (const auto& p : parts) {
      EXPECT_EQ(p.begin, at) << p.symbol;
      EXPECT_GT(p.count, 0);
      at += p.count;
    }
    EXPECT_EQ(at, TokenLayout::d + code_len);
  }
  EXPECT_EQ(token_parts(0).size(), 4u);
  EXPECT_EQ(token_parts(16).back().symbol, "p");
}
