// The reference against numbers worked by hand on a 4×4 image with K = 2 (N = 4 tokens).
#include "core/hand_made/reference.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace attnlab;

namespace {

// Patches (raster order): 0 red; 1 two red and two blue pixels; 2 green; 3 (0.2,0.4,0.4).
Image four_patch_image() {
  Image img{4, 4, std::vector<float>(48, 0.0f)};
  auto set = [&](int x, int y, float r, float g, float b) {
    img.at(x, y, 0) = r;
    img.at(x, y, 1) = g;
    img.at(x, y, 2) = b;
  };
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 2; ++x) {
      set(x, y, 1, 0, 0);
      set(2 + x, y, y == 0 ? 1.0f : 0.0f, 0, y == 0 ? 0.0f : 1.0f);
      set(x, 2 + y, 0, 1, 0);
      set(2 + x, 2 + y, 0.2f, 0.4f, 0.4f);
    }
  return img;
}

Settings k2() {
  Settings s;
  s.patch = 2;
  return s;
}

}  // namespace

TEST(HandWorked, GridIsRasterOrder) {
  const auto g = make_grid(4, 4, 2, EdgeMode::Crop);
  EXPECT_EQ(g.cols, 2);
  EXPECT_EQ(g.rows, 2);
  EXPECT_EQ(g.N(), 4);
  EXPECT_EQ(g.index(1, 0), 1);
  EXPECT_EQ(g.index(0, 1), 2);
  EXPECT_EQ(g.col_of(3), 1);
  EXPECT_EQ(g.row_of(3), 1);
}

TEST(HandWorked, MeanColoursAndUnitVectors) {
  const Image img = four_patch_image();
  const auto g = make_grid(4, 4, 2, EdgeMode::Crop);
  const Matrix c = mean_colours(img, g);
  const float expect_c[4][3] = {{1, 0, 0}, {0.5f, 0, 0.5f}, {0, 1, 0}, {0.2f, 0.4f, 0.4f}};
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(c(i, k), expect_c[i][k], 1e-7) << "token " << i << " channel " << k;
  const Matrix u = unit_rows(c);
  const float r2 = 1.0f / std::sqrt(2.0f);
  const float expect_u[4][3] = {{1, 0, 0}, {r2, 0, r2}, {0, 1, 0}, {1.0f / 3, 2.0f / 3, 2.0f / 3}};
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(u(i, k), expect_u[i][k], 1e-6) << "token " << i << " channel " << k;
}

TEST(HandWorked, RawTokenIsVectorizedPatch) {
  const Image img = four_patch_image();
  const Matrix R = raw_tokens(img, make_grid(4, 4, 2, EdgeMode::Crop));
  ASSERT_EQ(R.cols(), 12);  // 3K²
  // Patch 1: pixels (2,0),(3,0) red, (2,1),(3,1) blue, in raster order with interleaved channels.
  const float expect[12] = {1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1};
  for (int k = 0; k < 12; ++k) EXPECT_EQ(R(1, k), expect[k]) << k;
}

TEST(HandWorked, ColourHeadRowZero) {
  // s_0j = ĉ_0ᵀ ĉ_j = (1, 1/√2, 0, 1/3); a_0 = softmax(s / √3), worked out by hand.
  const Reference ref(four_patch_image(), k2());
  const auto row = ref.row(0, 0);
  const double expect[4] = {0.324009920, 0.273601359, 0.181893957, 0.220494765};
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(row.weights[j], expect[j], 1e-6) << "a_0" << j;
  EXPECT_NEAR(row.logits[1], (1.0 / std::sqrt(2.0)) / std::sqrt(3.0), 1e-6);
  EXPECT_FALSE(row.empty);
}

TEST(HandWorked, TemperatureHalfSharpensTheRow) {
  Settings s = k2();
  s.temperature = 0.5f;  // softmax(s / (0.5 √3))
  const auto row = Reference(four_patch_image(), s).row(0, 0);
  const double expect[4] = {0.401395692, 0.286215135, 0.126500615, 0.185888558};
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(row.weights[j], expect[j], 1e-6) << "a_0" << j;
}

TEST(HandWorked, CausalRowOne) {
  Settings s = k2();
  s.mask.kind = MaskKind::Causal;  // query 1 sees keys 0 and 1: softmax((1/√2, 1)/√3)
  const auto row = Reference(four_patch_image(), s).row(0, 1);
  EXPECT_NEAR(row.weights[0], 0.457824959, 1e-6);
  EXPECT_NEAR(row.weights[1], 0.542175041, 1e-6);
  EXPECT_EQ(row.weights[2], 0.0f);
  EXPECT_EQ(row.weights[3], 0.0f);
}

TEST(HandWorked, ColourHeadOutputIsWeightedMeanColour) {
  // t_out_0 = Σ_j a_0j c_j (eq. 26.21) with the weights above.
  const Reference ref(four_patch_image(), k2());
  const Matrix out = ref.output(0);
  const double a[4] = {0.324009920, 0.273601359, 0.181893957, 0.220494765};
  const double c[4][3] = {{1, 0, 0}, {0.5, 0, 0.5}, {0, 1, 0}, {0.2, 0.4, 0.4}};
  for (int k = 0; k < 3; ++k) {
    double expect = 0;
    for (int j = 0; j < 4; ++j) expect += a[j] * c[j][k];
    EXPECT_NEAR(out(0, k), expect, 1e-6) << "channel " << k;
  }
}

TEST(HandWorked, PositionalCodeOfOnePatch) {
  PosSpec spec;  // B = 2, P = 7
  const Vector p = positional_code(3.0f, 1.0f, spec);
  ASSERT_EQ(p.size(), 16);  // 2(P+1)
  for (int k = 0; k <= 7; ++k) {
    EXPECT_NEAR(p[k], std::sin(3.0 / std::pow(2.0, k)), 1e-6) << "p_x[" << k << "]";
    EXPECT_NEAR(p[8 + k], std::sin(1.0 / std::pow(2.0, k)), 1e-6) << "p_y[" << k << "]";
  }
  spec.sincos = true;
  const Vector q = positional_code(3.0f, 1.0f, spec);
  ASSERT_EQ(q.size(), 32);
  EXPECT_NEAR(q[0], std::sin(3.0), 1e-6);
  EXPECT_NEAR(q[1], std::cos(3.0), 1e-6);
  EXPECT_NEAR(q[16 + 3], std::cos(0.5), 1e-6);
}

TEST(HandWorked, ConcatAppendsLambdaTimesCode) {
  Settings s = k2();
  s.pos.mode = PosMode::Concat;
  s.pos.lambda = 0.5f;
  const Reference ref(four_patch_image(), s);
  const auto& qkv = ref.qkv(0);
  ASSERT_EQ(qkv.m(), 3 + 16);  // m' = m + 2(P+1)
  const Vector p3 = positional_code(1.0f, 1.0f, s.pos);
  for (int k = 0; k < 16; ++k) {
    EXPECT_NEAR(qkv.Q(3, 3 + k), 0.5f * p3[k], 1e-6);
    EXPECT_NEAR(qkv.K(3, 3 + k), 0.5f * p3[k], 1e-6);
  }
  EXPECT_NEAR(qkv.Q(3, 1), 2.0f / 3.0f, 1e-6);  // the colour part is unchanged
}

TEST(HandWorked, ParameterCountsOfExercise12_1) {
  const auto c = attention_cost(4, 3);  // N = 4 tokens of width D = 3
  EXPECT_EQ(c.qkv_weights, 27);         // 3 D²
  EXPECT_EQ(c.qkv_biases, 9);           // 3 D
  EXPECT_EQ(c.attention_weights, 16);   // N²
  EXPECT_EQ(c.fc_weights, 144);         // D² N²
  EXPECT_EQ(c.fc_biases, 12);           // D N
  const auto vit = attention_cost(196, 768);
  EXPECT_EQ(vit.qkv_weights, 3LL * 768 * 768);
  EXPECT_EQ(vit.fc_weights, 768LL * 768 * 196 * 196);
}

TEST(HandWorked, ConcatWeightsGiveTheSameQueriesAsProject) {
  Settings s = k2();
  s.pos.mode = PosMode::Concat;
  s.pos.lambda = 0.5f;
  const Reference ref(four_patch_image(), s);
  for (int h = 0; h < kHeadCount; ++h) {
    const Matrix Wq = query_key_weights(ref.heads()[h].W_q, s.pos, static_cast<int>(ref.P().cols()));
    EXPECT_LT((ref.X() * Wq.transpose() - ref.qkv(h).Q).cwiseAbs().maxCoeff(), 1e-6) << h;
  }
}

// The honest-scale readout of a row, against numbers worked by hand.
TEST(RowFlatness, HandWorkedRows) {
  const std::vector<float> flat = {0.25f, 0.25f, 0.25f, 0.25f};
  const RowFlatness f = row_flatness(flat, {});
  EXPECT_EQ(f.n, 4);
  EXPECT_DOUBLE_EQ(f.uniform, 0.25);
  EXPECT_DOUBLE_EQ(f.max_over_min, 1.0);
  EXPECT_NEAR(f.entropy_ratio, 1.0, 1e-7);
  EXPECT_TRUE(f.nearly_uniform);

  // 0.5, 0.3, 0.2: max/min = 2.5; H = 0.346574 + 0.361192 + 0.321888 = 1.029653 nats, over
  // log 3 = 1.098612 gives 0.937231.
  const std::vector<float> peaked = {0.5f, 0.3f, 0.2f};
  const RowFlatness p = row_flatness(peaked, {});
  EXPECT_NEAR(p.max_over_min, 2.5, 1e-6);
  EXPECT_NEAR(p.entropy_ratio, 0.937231, 1e-5);
  EXPECT_FALSE(p.nearly_uniform);

  // A masked key does not count: 0.6 and 0.4 kept, max/min 1.5, H = 0.306495 + 0.366516 =
  // 0.673012 over log 2 = 0.693147 gives 0.970951.
  const std::vector<float> masked = {0.6f, 0.4f, 0.0f};
  const std::vector<std::uint8_t> keep = {1, 1, 0};
  const RowFlatness m = row_flatness(masked, keep);
  EXPECT_EQ(m.n, 2);
  EXPECT_DOUBLE_EQ(m.uniform, 0.5);
  EXPECT_NEAR(m.max_over_min, 1.5, 1e-6);
  EXPECT_NEAR(m.entropy_ratio, 0.970951, 1e-5);
  EXPECT_TRUE(m.nearly_uniform);
  // The same row with the zero kept: one-hot-like, infinitely far from flat.
  EXPECT_TRUE(std::isinf(row_flatness(masked, {}).max_over_min));
  EXPECT_FALSE(row_flatness(masked, {}).nearly_uniform);
  // No key kept: nothing to call flat.
  const std::vector<std::uint8_t> none = {0, 0, 0};
  EXPECT_EQ(row_flatness(masked, none).n, 0);
  EXPECT_FALSE(row_flatness(masked, none).nearly_uniform);
}
