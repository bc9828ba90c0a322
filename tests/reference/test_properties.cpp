// The chapter's properties of attention, checked on the CPU reference.
#include "core/hand_made/reference.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <numeric>
#include <random>

using namespace attnlab;
using attnlab::testing::asset;
using attnlab::testing::safari;
using attnlab::testing::every_mask;

namespace {



}  // namespace

TEST(Properties, EveryRowSumsToOneAndMaskedWeightsAreExactlyZero) {
  Settings s;
  s.patch = 50;  // 10×10 grid, N = 100: every row of every head, mask and positional mode
  for (PosMode pos : {PosMode::None, PosMode::Concat, PosMode::Add})
    for (const MaskSpec& mask : every_mask(100)) {
      s.pos.mode = pos;
      s.mask = mask;
      const Reference ref(safari(), s);
      for (int h = 0; h < kHeadCount; ++h) {
        std::vector<int> empty;
        const Matrix A = ref.matrix(h, &empty);
        for (int i = 0; i < ref.N(); ++i) {
          const bool is_empty = std::find(empty.begin(), empty.end(), i) != empty.end();
          double sum = 0;
          for (int j = 0; j < ref.N(); ++j) {
            ASSERT_TRUE(std::isfinite(A(i, j)));
            if (!ref.setup().mask.allowed(i, j)) {
              ASSERT_EQ(A(i, j), 0.0f) << "masked a_" << i << "," << j;
            }
            sum += A(i, j);
          }
          SCOPED_TRACE(std::string(mask_kind_name(mask.kind)) + " head " + std::to_string(h) + " row " + std::to_string(i));
          if (is_empty)
            EXPECT_EQ(sum, 0.0);
          else
            EXPECT_NEAR(sum, 1.0, 1e-5);
        }
      }
    }
}

TEST(Properties, StrictMaskReportsTheFirstRowEmptyNeverNaN) {
  Settings s;
  s.patch = 100;
  s.mask.kind = MaskKind::Strict;  // query 0 has no key j < 0
  const Reference ref(safari(), s);
  const auto row = ref.row(0, 0);
  EXPECT_TRUE(row.empty);
  for (int j = 0; j < ref.N(); ++j) EXPECT_EQ(row.weights[j], 0.0f);
  std::vector<int> empty;
  ref.matrix(0, &empty);
  EXPECT_EQ(empty, std::vector<int>{0});
  EXPECT_FALSE(ref.row(0, 1).empty);
  EXPECT_EQ(ref.row(0, 1).weights[0], 1.0f);  // the only key left
  const Matrix out = ref.output(0);
  EXPECT_TRUE(out.allFinite());
}

TEST(Properties, MaskShapes) {
  const auto g = make_grid(100, 100, 10, EdgeMode::Crop);  // 10×10
  MaskSpec spec;
  spec.kind = MaskKind::Window;
  spec.radius = 1;
  const Mask window(spec, g);
  const int i = g.index(5, 5);
  int allowed = 0;
  for (int j = 0; j < g.N(); ++j) allowed += window.allowed(i, j);
  EXPECT_EQ(allowed, 9);  // the 3×3 neighbourhood
  EXPECT_TRUE(window.allowed(i, g.index(6, 4)));
  EXPECT_FALSE(window.allowed(i, g.index(7, 5)));
  EXPECT_EQ([&] { int n = 0; for (int j = 0; j < g.N(); ++j) n += window.allowed(g.index(0, 0), j); return n; }(), 4);

  spec.kind = MaskKind::Random;
  spec.ratio = 0.25f;
  spec.seed = 3;
  const Mask random(spec, g);
  EXPECT_EQ(std::count(random.key_keep().begin(), random.key_keep().end(), 0), 25);
  EXPECT_EQ(Mask(spec, g).key_keep(), random.key_keep());  // seeded: the same keys again
  spec.seed = 4;
  EXPECT_NE(Mask(spec, g).key_keep(), random.key_keep());

  spec.kind = MaskKind::Causal;
  const Mask causal(spec, g);
  EXPECT_TRUE(causal.allowed(7, 7));
  EXPECT_TRUE(causal.allowed(7, 3));
  EXPECT_FALSE(causal.allowed(7, 8));
  spec.kind = MaskKind::Strict;
  EXPECT_FALSE(Mask(spec, g).allowed(7, 7));
}

// Exercise 12.3: Sa[XP] = Sa[X]P. Shuffling the patches permutes the tokens, and without
// positional codes A is permuted the same way on both sides and T_out moves with its tokens.
TEST(Properties, PermutationEquivarianceWithoutPositionalCodes) {
  Settings s;
  s.patch = 50;
  const int N = 100;
  std::vector<int> perm(N);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(11));
  const Reference ref(safari(), s);
  const Reference shuffled(attnlab::testing::shuffle_patches(safari(), 50, perm), s);
  Eigen::PermutationMatrix<Eigen::Dynamic> Pm(N);  // row n of (Pm X) = row perm[n] of X
  for (int n = 0; n < N; ++n) Pm.indices()[perm[n]] = n;
  for (HeadKind h : {HeadKind::Colour, HeadKind::Texture, HeadKind::Random, HeadKind::Custom}) {
    SCOPED_TRACE(std::string(head_name(h)));
    const int hi = static_cast<int>(h);
    const Matrix A = ref.matrix(hi), As = shuffled.matrix(hi);
    const Matrix expect_A = Pm * A * Pm.transpose();
    EXPECT_LT((As - expect_A).cwiseAbs().maxCoeff(), 1e-6);
    const Matrix expect_out = Pm * ref.output(hi);
    EXPECT_LT((shuffled.output(hi) - expect_out).cwiseAbs().maxCoeff(), 1e-5);
  }
}

TEST(Properties, PermutationEquivarianceFailsWithPositionalCodes) {
  Settings s{.patch = 50, .pos = {.mode = PosMode::Concat}};
  const int N = 100;
  std::vector<int> perm(N);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(11));
  Eigen::PermutationMatrix<Eigen::Dynamic> Pm(N);
  for (int n = 0; n < N; ++n) Pm.indices()[perm[n]] = n;
  for (PosMode mode : {PosMode::Concat, PosMode::Add}) {
    s.pos.mode = mode;
    const Reference ref(safari(), s);
    const Reference shuffled(attnlab::testing::shuffle_patches(safari(), 50, perm), s);
    const Matrix diff = shuffled.matrix(0) - Pm * ref.matrix(0) * Pm.transpose();
    // Weights are around 1/N = 0.01; the codes move them by a clear fraction of that.
    EXPECT_GT(diff.cwiseAbs().maxCoeff(), 1e-3) << pos_mode_name(mode);
  }
}

// Exercise 12.4: logits (−3, 1, 100, 5, −1) saturate the softmax but must stay finite.
TEST(Properties, SoftmaxStaysFiniteForLargeLogits) {
  const std::vector<float> z = {-3, 1, 100, 5, -1};
  const auto y = softmax(z);
  double sum = 0;
  for (float v : y) {
    EXPECT_TRUE(std::isfinite(v));
    sum += v;
  }
  EXPECT_NEAR(sum, 1.0, 1e-6);
  EXPECT_NEAR(y[2], 1.0, 1e-6);
  EXPECT_GT(y[3], 0.0f);  // e^-95, a subnormal float, not flushed
  EXPECT_LT(y[3], 1e-40f);
  // The derivatives y_i(δ_ij − y_j) are all near zero: the softmax is saturated.
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) EXPECT_LT(std::abs(y[i] * ((i == j) - y[j])), 1e-40) << i << "," << j;
  const std::vector<float> huge = {-3e30f, 1e30f, 3e38f, 5e30f};
  for (float v : softmax(huge)) EXPECT_TRUE(std::isfinite(v));
}

TEST(Properties, LowTemperatureStaysFiniteAndSaturates) {
  Settings s{.patch = 20, .temperature = 0.01f};
  const Reference ref(safari(), s);
  const int i = ref.grid().index(12, 8);
  for (int h = 0; h < kHeadCount; ++h) {
    const auto row = ref.row(h, i);
    ASSERT_TRUE(row.weights.allFinite()) << head_name(static_cast<HeadKind>(h));
    EXPECT_NEAR(row.weights.sum(), 1.0, 1e-5);
  }
  // Colour head: as τ falls the weights concentrate on the patches of the query's colour.
  const auto sat = saturation(std::span<const float>(ref.row(0, i).weights.data(), static_cast<size_t>(ref.N())));
  s.temperature = 1.0f;
  const Reference warm(safari(), s);
  const auto flat = saturation(std::span<const float>(warm.row(0, i).weights.data(), static_cast<size_t>(warm.N())));
  EXPECT_GT(sat.max_weight, 3 * flat.max_weight);
  EXPECT_LT(sat.entropy, flat.entropy - 0.5f);
  std::printf("tau 0.01: max %g entropy %g; tau 1: max %g entropy %g (uniform %g)\n", sat.max_weight, sat.entropy,
              flat.max_weight, flat.entropy, std::log(static_cast<float>(ref.N())));
}

TEST(Properties, SettingsAreValidated) {
  Settings s;
  s.temperature = 0.0f;
  EXPECT_THROW(validate(s), Error);
  s.temperature = -1.0f;
  EXPECT_THROW(validate(s), Error);
  s = Settings{};
  s.patch = 0;
  EXPECT_THROW(Reference(safari(), s), Error);
  s.patch = 501;
  EXPECT_THROW(Reference(safari(), s), Error);
  s.edge = EdgeMode::Pad;  // one padded patch
  EXPECT_EQ(Reference(safari(), s).N(), 1);
  s = Settings{};
  s.pos.B = 0.0f;
  EXPECT_THROW(validate(s), Error);
  EXPECT_THROW(parse_head("colour2"), Error);
  EXPECT_THROW(parse_mask("window:x"), Error);
  EXPECT_THROW(parse_mask("random:1.5"), Error);
  EXPECT_EQ(parse_mask("random:0.25:9").spec.seed, 9u);
  EXPECT_EQ(parse_mask("window:3").spec.radius, 3);
  EXPECT_EQ(parse_head("colour+position"), HeadKind::ColourPosition);
}

TEST(Properties, CropAndPadGrids) {
  const auto crop = make_grid(500, 500, 16, EdgeMode::Crop);
  EXPECT_EQ(crop.cols, 31);
  const auto pad = make_grid(500, 500, 16, EdgeMode::Pad);
  EXPECT_EQ(pad.cols, 32);
  Settings s;
  s.edge = EdgeMode::Pad;
  const Reference ref(safari(), s);
  // The last column's patches hold 4 image pixels and 12 of padding: the mean is over the 4.
  const auto i = pad.index(31, 0);
  double r = 0;
  for (int y = 0; y < 16; ++y)
    for (int x = 496; x < 500; ++x) r += safari().at(x, y, 0);
  EXPECT_NEAR(ref.T()(i, TokenLayout::kColour), r / 64, 1e-5);
  EXPECT_THROW(make_grid(500, 500, 1, EdgeMode::Crop), Error);  // 250 000 tokens: over the limit
}
