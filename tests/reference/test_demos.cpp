// The numbers behind the positional-codes, permutation and question-token views (core/hand_made/demos),
// against hand values and the CPU reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <vector>

#include "core/hand_made/demos.hpp"
#include "core/hand_made/positional.hpp"
#include "test_support.hpp"

using namespace attnlab;
using attnlab::testing::asset;
using attnlab::testing::safari;

namespace {


// The heads that read neither p nor the mask: permutation equivariant without codes (eq. 26.30).
constexpr HeadKind kContentHeads[] = {HeadKind::Colour, HeadKind::Texture, HeadKind::Random, HeadKind::Custom};

// The images and patch sizes the permutation readout is tried on: the safari photo at two
// sizes, and random pixels (no two patches alike).
struct PermutationCase {
  const Image* image;
  int K;
};
std::vector<PermutationCase> permutation_cases() {
  static const Image random = attnlab::testing::random_image(240, 160, 21);
  return {{&safari(), 50}, {&safari(), 20}, {&random, 16}};
}

}  // namespace

TEST(DemoColours, SharedRangeColours) {
  const std::vector<float> v = {-1.0f, 0.0f, 1.0f, 3.0f};
  const std::vector<std::uint8_t> keep = {1, 1, 1, 0};
  const auto px = colormap_pixels(v, keep, Colormap::Gray, Normalization::MinMax, ValueRange{-1, 1});
  ASSERT_EQ(px.size(), 16u);
  const auto lo = colormap_rgb8(Colormap::Gray, 0), mid = colormap_rgb8(Colormap::Gray, 0.5f),
             hi = colormap_rgb8(Colormap::Gray, 1);
  EXPECT_EQ(px[0], lo[0]);
  EXPECT_EQ(px[4], mid[0]);
  EXPECT_EQ(px[8], hi[0]);
  EXPECT_EQ(px[11], 255);
  EXPECT_EQ(px[15], 0);  // dropped: transparent
  // The same as apply_colormap() when the range is the map's own.
  const std::vector<float> w = {0.1f, 0.3f, 0.2f};
  EXPECT_EQ(
      colormap_pixels(w, {}, Colormap::Fire, Normalization::MinMax, normalization_range(w, {}, Normalization::MinMax)),
      apply_colormap(w, {}, Colormap::Fire, Normalization::MinMax));
  EXPECT_THROW(colormap_pixels(w, keep, Colormap::Fire, Normalization::MinMax, ValueRange{0, 1}), Error);
}

// ------------------------------------------------------------------ positional codes

TEST(DemoPositional, CodeSimilarityMatchesHandValues) {
  // A 3 × 2 grid, B = 2, P = 1: p = [sin x, sin(x/2), sin y, sin(y/2)].
  const PatchGrid g = make_grid(30, 20, 10, EdgeMode::Crop);
  PosSpec spec;
  spec.P = 1;
  const Matrix P = positional_codes(g, spec);
  const int i = g.index(1, 0), j = g.index(2, 1);
  const auto s = code_similarity(P, i);
  ASSERT_EQ(s.size(), 6u);
  // p_i = [sin 1, sin 0.5, 0, 0], p_j = [sin 2, sin 1, sin 1, sin 0.5]
  EXPECT_NEAR(s[static_cast<size_t>(j)], 0.841471 * 0.909297 + 0.479426 * 0.841471, 1e-5);  // 1.168570
  EXPECT_NEAR(s[static_cast<size_t>(i)], 0.841471 * 0.841471 + 0.479426 * 0.479426, 1e-5);  // |p_i|² = 0.937922
  EXPECT_NEAR(s[static_cast<size_t>(g.index(0, 0))], 0.0, 1e-7);                            // p at (0,0) is all zeros
  EXPECT_THROW(code_similarity(P, 6), Error);
  EXPECT_THROW(code_similarity(P, -1), Error);
  EXPECT_THROW(code_similarity(Matrix(), 0), Error);
}

TEST(DemoPositional, DimensionLabelsFollowTheCodeLayout) {
  PosSpec spec;  // B = 2, P = 7: 16 sines
  EXPECT_EQ(code_dimension_label(spec, 0), "sin(x)");
  EXPECT_EQ(code_dimension_label(spec, 1), "sin(x/2)");
  EXPECT_EQ(code_dimension_label(spec, 3), "sin(x/2^3)");
  EXPECT_EQ(code_dimension_label(spec, 8), "sin(y)");
  EXPECT_EQ(code_dimension_label(spec, 15), "sin(y/2^7)");
  EXPECT_THROW(code_dimension_label(spec, 16), Error);
  EXPECT_THROW(code_dimension_label(spec, -1), Error);
  spec.sincos = true;
  spec.B = 1.5f;
  spec.P = 2;  // 12 values: x: sin, cos per k; then y
  EXPECT_EQ(code_dimension_label(spec, 1), "cos(x)");
  EXPECT_EQ(code_dimension_label(spec, 4), "sin(x/1.5^2)");
  EXPECT_EQ(code_dimension_label(spec, 9), "cos(y/1.5)");
  // The labels name what positional_code() computes.
  const Vector p = positional_code(3.0f, 5.0f, spec);
  EXPECT_NEAR(p[4], std::sin(3.0 / 2.25), 1e-6);
  EXPECT_NEAR(p[9], std::cos(5.0 / 1.5), 1e-6);
}

TEST(DemoPositional, LambdaSweepMatchesTheReferenceInConcatMode) {
  Settings s;
  s.patch = 25;  // 20 × 20
  for (PosMode base : {PosMode::None, PosMode::Add, PosMode::Concat})
    for (bool sincos : {false, true})
      for (MaskKind mask : {MaskKind::None, MaskKind::Window}) {
        s.pos.mode = base;
        s.pos.sincos = sincos;
        s.pos.lambda = 1.7f;  // the sweep must not depend on the current λ
        s.mask.kind = mask;
        const Reference ref(safari(), s);
        for (float lambda : {0.0f, 0.5f, 1.0f, 2.0f, 4.0f}) {
          Settings c = s;
          c.pos.mode = PosMode::Concat;
          c.pos.lambda = lambda;
          const Reference expect(safari(), c);
          for (int h = 0; h < kHeadCount; ++h) {
            const LambdaSweep sweep(ref.heads()[static_cast<size_t>(h)], ref.X(), ref.setup(), s);
            EXPECT_EQ(sweep.m_concat(), expect.qkv(h).m());
            for (int i : {0, 168, 399}) {
              const RowResult got = sweep.row(i, lambda), want = expect.row(h, i);
              ASSERT_EQ(got.empty, want.empty);
              // The same numbers up to float rounding: the logits are summed in another order,
              // and at λ = 4 they reach ~60, where exp() turns a rounding of the logit into a
              // relative change of the weight of about the same size.
              float err = 0;
              for (int j = 0; j < ref.N(); ++j)
                err = std::max(err, std::abs(got.weights[j] - want.weights[j]) / (2e-5f * want.weights[j] + 1e-7f));
              ASSERT_LE(err, 1.0f) << pos_mode_name(base) << (sincos ? " sincos" : "") << " mask "
                                   << mask_kind_name(mask) << " head " << h << " lambda " << lambda << " i " << i;
            }
          }
        }
      }
}

TEST(DemoPositional, LargerLambdaPullsTheMapTowardsTheQuery) {
  Settings s;
  s.patch = 20;
  const Reference ref(safari(), s);
  const LambdaSweep sweep(ref.heads()[0], ref.X(), ref.setup(), s);
  const int i = ref.grid().index(12, 8);
  float previous = 0;
  for (float lambda : {0.0f, 1.0f, 2.0f, 4.0f}) {
    const float self = sweep.row(i, lambda).weights[i];
    EXPECT_GT(self, previous) << lambda;  // λ² p_iᵀp_i is the largest code score: the query's own weight grows
    previous = self;
  }
  const RowResult flat = sweep.row(i, 0.0f);  // λ = 0: the colour head's numbers, with m' = 3 + 16
  EXPECT_NEAR(flat.weights.sum(), 1.0, 1e-5);
  EXPECT_THROW(sweep.row(625, 1.0f), Error);
  EXPECT_THROW(sweep.row(0, std::numeric_limits<float>::infinity()), Error);
  EXPECT_THROW(LambdaSweep(ref.heads()[0], ref.X().leftCols(10), ref.setup(), s), Error);
}

TEST(DemoPositional, FullyMaskedRowIsReportedNotNaN) {
  const Settings s{.patch = 100, .mask = {.kind = MaskKind::Strict}};
  const Reference ref(safari(), s);
  const LambdaSweep sweep(ref.heads()[0], ref.X(), ref.setup(), s);
  const RowResult r = sweep.row(0, 2.0f);
  EXPECT_TRUE(r.empty);
  EXPECT_TRUE(r.weights.allFinite());
  EXPECT_EQ(r.weights.sum(), 0.0f);
}

// ------------------------------------------------------------------ permutation

TEST(DemoPermutation, SeededPermutationIsAPermutationAndRepeatable) {
  for (int n : {0, 1, 2, 100, 15625}) {
    const auto p = seeded_permutation(n, 3);
    std::vector<int> sorted = p;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> iota(static_cast<size_t>(n));
    std::iota(iota.begin(), iota.end(), 0);
    EXPECT_EQ(sorted, iota) << n;
    EXPECT_EQ(seeded_permutation(n, 3), p);
  }
  EXPECT_NE(seeded_permutation(100, 3), seeded_permutation(100, 4));
  // The same numbers on every platform (our own draw, not std::shuffle): a fixed example.
  EXPECT_EQ(seeded_permutation(8, 1), (std::vector<int>{7, 2, 1, 4, 6, 0, 3, 5}));
  const auto p = seeded_permutation(50, 9);
  const auto inv = inverse_permutation(p);
  for (int m = 0; m < 50; ++m) EXPECT_EQ(inv[static_cast<size_t>(p[static_cast<size_t>(m)])], m);
  EXPECT_THROW(seeded_permutation(-1, 0), Error);
  EXPECT_THROW(inverse_permutation(std::vector<int>{0, 0, 1}), Error);
  EXPECT_THROW(inverse_permutation(std::vector<int>{0, 3, 1}), Error);
}

TEST(DemoPermutation, PermutePatchesMovesWholePatches) {
  const Image img = attnlab::testing::random_image(43, 32, 8);  // 4 × 3 patches of 10, a remainder
  const PatchGrid g = make_grid(43, 32, 10, EdgeMode::Crop);
  const auto perm = seeded_permutation(g.N(), 5);
  const Image out = permute_patches(img, g, perm);
  for (int m = 0; m < g.N(); ++m) {
    const int src = perm[static_cast<size_t>(m)];
    for (int y = 0; y < 10; ++y)
      for (int x = 0; x < 10; ++x)
        for (int c = 0; c < 3; ++c)
          ASSERT_EQ(out.at(g.col_of(m) * 10 + x, g.row_of(m) * 10 + y, c),
                    img.at(g.col_of(src) * 10 + x, g.row_of(src) * 10 + y, c));
  }
  for (int y = 0; y < 32; ++y)  // the cropped remainder stays
    for (int x = 40; x < 43; ++x) EXPECT_EQ(out.at(x, y, 1), img.at(x, y, 1));
  // The same as the test helper (output patch m = input patch perm[m]).
  const Image safari_shuffled =
      permute_patches(safari(), make_grid(500, 500, 50, EdgeMode::Crop), seeded_permutation(100, 2));
  EXPECT_EQ(safari_shuffled.rgb, attnlab::testing::shuffle_patches(safari(), 50, seeded_permutation(100, 2)).rgb);
  // Undoing the tokens' order.
  const std::vector<float> values = {10, 11, 12};
  EXPECT_EQ(undo_permutation(values, std::vector<int>{2, 0, 1}), (std::vector<float>{11, 12, 10}));
  EXPECT_THROW(undo_permutation(values, std::vector<int>{0, 1}), Error);
  // Errors: partial patches (pad), a wrong size, not a permutation, another image's grid.
  EXPECT_THROW(permute_patches(img, make_grid(43, 32, 10, EdgeMode::Pad), seeded_permutation(20, 1)), Error);
  EXPECT_NO_THROW(permute_patches(safari(), make_grid(500, 500, 50, EdgeMode::Pad), seeded_permutation(100, 1)));
  EXPECT_THROW(permute_patches(img, g, seeded_permutation(11, 1)), Error);
  EXPECT_THROW(permute_patches(img, g, std::vector<int>(12, 0)), Error);
  EXPECT_THROW(permute_patches(safari(), g, perm), Error);
}

// Without positional codes (and without a mask) attention moves with the patches (eq. 26.30,
// exercise 12.3): undoing the shuffle gives back the same numbers up to float rounding.
TEST(DemoPermutation, ReadoutIsNearZeroWithoutCodes) {
  for (const PermutationCase& c : permutation_cases())
    for (HeadKind h : kContentHeads) {
      Settings s;
      s.patch = c.K;
      const int query = 37;
      const auto r = permutation_readout(*c.image, s, static_cast<int>(h), query, 4);
      std::printf("no codes, %dx%d K=%d %-8s: rows %.3g  T_out %.3g\n", c.image->width, c.image->height, c.K,
                  std::string(head_name(h)).c_str(), r.row_difference, r.output_difference);
      EXPECT_LT(r.row_difference, 1e-5f) << head_name(h);
      EXPECT_LT(r.output_difference, 1e-5f) << head_name(h);
      EXPECT_NE(r.moved_query, query);  // the query patch did move
      EXPECT_EQ(r.perm[static_cast<size_t>(r.moved_query)], query);
    }
}

// With codes the score depends on where a patch sits, so moving the patches changes the
// numbers. Threshold: weights are about 1/N; a difference of more than 10 % of 1/N is a change
// a student can see, and thousands of times the float rounding of the no-code case.
TEST(DemoPermutation, ReadoutIsClearlyAboveWithCodes) {
  for (const PermutationCase& c : permutation_cases())
    for (PosMode mode : {PosMode::Concat, PosMode::Add})
      for (HeadKind h : kContentHeads) {
        Settings s{.patch = c.K, .pos = {.mode = mode}};
        const auto r = permutation_readout(*c.image, s, static_cast<int>(h), 37, 4);
        const int N = (c.image->width / c.K) * (c.image->height / c.K);
        std::printf("%s, %dx%d K=%d %-8s: rows %.3g (= %.2f / N)  T_out %.3g\n",
                    std::string(pos_mode_name(mode)).c_str(), c.image->width, c.image->height, c.K,
                    std::string(head_name(h)).c_str(), r.row_difference, r.row_difference * static_cast<float>(N),
                    r.output_difference);
        EXPECT_GT(r.row_difference, 0.1f / static_cast<float>(N)) << pos_mode_name(mode) << " " << head_name(h);
        // Output tokens are colours in [0,1]; without codes they agree to ~3e-7 (float sums), so
        // 1e-4 is hundreds of times that rounding (the smallest seen here is ~1.5e-3, on the
        // random image, whose every average colour is near grey).
        EXPECT_GT(r.output_difference, 1e-4f) << pos_mode_name(mode) << " " << head_name(h);
      }
}

// The other ways order gets in: a mask picks keys by their place (the chapter's note in section
// 26.11), and the position heads read p even when no codes are added.
TEST(DemoPermutation, MasksAndPositionHeadsAreNotEquivariant) {
  Settings s;
  s.patch = 50;
  const float N = 100;
  for (MaskKind mask : {MaskKind::Causal, MaskKind::Window, MaskKind::Random}) {
    s.mask.kind = mask;
    const auto r = permutation_readout(safari(), s, 0, 55, 4);
    EXPECT_GT(r.row_difference, 0.1f / N) << mask_kind_name(mask);
  }
  s.mask.kind = MaskKind::None;
  for (HeadKind h : {HeadKind::Position, HeadKind::ColourPosition}) {
    const auto r = permutation_readout(safari(), s, static_cast<int>(h), 55, 4);
    EXPECT_GT(r.row_difference, 0.1f / N) << head_name(h);
  }
}

TEST(DemoPermutation, OutputDifferenceCanBeCancelledAndChecksItsInputs) {
  Settings s;
  s.patch = 50;
  const Reference a(safari(), s);
  const auto perm = seeded_permutation(100, 1);
  const Reference b(permute_patches(safari(), a.grid(), perm), s);
  std::atomic<bool> cancel{true};
  EXPECT_FALSE(output_difference(a, b, perm, 0, &cancel).has_value());
  cancel = false;
  EXPECT_TRUE(output_difference(a, b, perm, 0, &cancel).has_value());
  EXPECT_THROW(output_difference(a, b, seeded_permutation(99, 1), 0), Error);
  EXPECT_THROW(row_difference(a, b, perm, kHeadCount, 0), Error);
  EXPECT_THROW(row_difference(a, b, perm, 0, 100), Error);
  EXPECT_THROW(permutation_readout(safari(), s, 0, -1, 1), Error);
}

// ------------------------------------------------------------------ question token

TEST(DemoQuestion, QuestionTokenLayout) {
  const RowVector x = question_token({0.0f, 0.6f, 0.8f}, 41);
  ASSERT_EQ(x.size(), 41);
  EXPECT_FLOAT_EQ(x[TokenLayout::kColour + 1], 0.6f);
  EXPECT_FLOAT_EQ(x[TokenLayout::kColour + 2], 0.8f);
  EXPECT_FLOAT_EQ(x[TokenLayout::kUnitColour + 1], 0.6f);  // already unit length
  EXPECT_FLOAT_EQ(x[TokenLayout::kUnitColour + 2], 0.8f);
  EXPECT_EQ(x.segment(TokenLayout::kTexture, 41 - TokenLayout::kTexture).cwiseAbs().sum(),
            0.0f);  // no texture, features, position
  const RowVector black = question_token({0, 0, 0}, TokenLayout::d);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(black[TokenLayout::kUnitColour + c], 1.0 / std::sqrt(3.0), 1e-7);
  EXPECT_THROW(question_token({0, 0, 0}, TokenLayout::d - 1), Error);
  EXPECT_THROW(question_token({std::numeric_limits<float>::quiet_NaN(), 0, 0}, TokenLayout::d), Error);
}

TEST(DemoQuestion, RowMatchesAttentionRowForOnTheSafari) {
  for (PosMode mode : {PosMode::None, PosMode::Concat, PosMode::Add}) {
    Settings s{.patch = 20, .temperature = 0.5f, .pos = {.mode = mode}};
    const Reference ref(safari(), s);
    const int L = static_cast<int>(ref.P().cols());
    const std::array<float, 3> green{0.2f, 0.7f, 0.1f};
    const RowVector x = question_token(green, static_cast<int>(ref.X().cols()));
    // The colour head's query is ĉ, with λ·0 appended in concat mode (the question has no place).
    const float len = std::sqrt(0.2f * 0.2f + 0.7f * 0.7f + 0.1f * 0.1f);
    RowVector q = RowVector::Zero(mode == PosMode::Concat ? 3 + L : 3);
    q[0] = 0.2f / len;
    q[1] = 0.7f / len;
    q[2] = 0.1f / len;
    const RowResult want = attention_row_for(q, ref.qkv(0).K, s.temperature);
    const RowResult got = question_row(ref, 0, x);
    EXPECT_LT((got.weights - want.weights).cwiseAbs().maxCoeff(), 1e-7f) << pos_mode_name(mode);
    EXPECT_NEAR(got.weights.sum(), 1.0, 1e-5);
    // t_out = Σ a_j [v_j; 1]: the colour part is a V, the count is 1 (softmax weights).
    const auto ans =
        output_with_count(std::span<const float>(got.weights.data(), static_cast<size_t>(ref.N())), ref.qkv(0).V);
    const RowVector expect_colour = got.weights * ref.qkv(0).V;
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(ans.colour[static_cast<size_t>(c)], expect_colour[c], 1e-6);
    EXPECT_NEAR(ans.count, 1.0f, 1e-5f);
    EXPECT_THROW(question_row(ref, 0, x.leftCols(10)), Error);
    EXPECT_THROW(question_row(ref, kHeadCount, x), Error);
  }
}

TEST(DemoQuestion, AskingWithAPatchsOwnColourGivesItsRowOfA) {
  // Without codes and mask, a question with patch i's mean colour asks exactly what token i asks
  // in the colour head: the same row of A (eq. 26.14 with q = ĉ_i).
  Settings s;
  s.patch = 20;
  const Reference ref(safari(), s);
  const int i = ref.grid().index(12, 8);
  const std::array<float, 3> c{ref.T()(i, 0), ref.T()(i, 1), ref.T()(i, 2)};
  const RowResult got = question_row(ref, 0, question_token(c, static_cast<int>(ref.X().cols())));
  EXPECT_LT((got.weights - ref.row(0, i).weights).cwiseAbs().maxCoeff(), 1e-6f);
}

TEST(DemoQuestion, WeightedSumAndCountByHand) {
  Matrix V(3, 3);
  V << 1, 0, 0,  //
      0, 1, 0,   //
      0.5f, 0.5f, 1;
  const std::vector<float> soft = {0.5f, 0.25f, 0.25f};
  auto a = output_with_count(soft, V);
  EXPECT_FLOAT_EQ(a.colour[0], 0.625f);
  EXPECT_FLOAT_EQ(a.colour[1], 0.375f);
  EXPECT_FLOAT_EQ(a.colour[2], 0.25f);
  EXPECT_FLOAT_EQ(a.count, 1.0f);  // softmax weights: the count dimension is always 1
  // The chapter's counting question: weight 1 on every matched token, the count is how many.
  const std::vector<float> scores = {0.9f, 0.2f, 0.95f};
  const auto hard = match_weights(scores, 0.8f);
  EXPECT_EQ(hard, (std::vector<float>{1, 0, 1}));
  a = output_with_count(hard, V);
  EXPECT_FLOAT_EQ(a.count, 2.0f);
  EXPECT_FLOAT_EQ(a.colour[0], 1.5f);  // a sum of colours; divided by the count it is their average
  const std::vector<float> with_nan = {std::numeric_limits<float>::quiet_NaN(), 1.0f};
  EXPECT_EQ(match_weights(with_nan, 0.5f), (std::vector<float>{0, 1}));
  EXPECT_THROW(output_with_count(std::vector<float>{1, 0}, V), Error);
  EXPECT_THROW(output_with_count(soft, Matrix::Zero(3, 2)), Error);
}
