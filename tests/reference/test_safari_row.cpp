// Fig. 26.12 on the safari photo: the colour head's row for a query on the giraffe.
#include "core/hand_made/attention.hpp"
#include "core/hand_made/reference.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

using namespace attnlab;

TEST(SafariRow, ColourHeadQueryOnGiraffeAttendsToGiraffe) {
  Settings s;
  s.patch = 20;  // 25 × 25 grid
  const Reference ref(load_image(attnlab::testing::asset("safari.jpg")), s);
  ASSERT_EQ(ref.grid().cols, 25);
  ASSERT_EQ(ref.grid().rows, 25);
  const int i = token_at(ref.grid(), 12, 8);  // the giraffe's flank
  const auto row = ref.row(0, i);

  std::printf("colour head, K = 20, query (12,8): row %d of A as the 25 x 25 grid\n", i);
  for (int r = 0; r < 25; ++r) {
    for (int c = 0; c < 25; ++c) std::printf("%s%.6f", c ? "," : "", row.weights[r * 25 + c]);
    std::printf("\n");
  }
  EXPECT_NEAR(row.weights.sum(), 1.0, 1e-5);
  // At τ = 1 the row is nearly flat, max/min ≈ 1.2 (docs/MATH.md, "How flat a row is").
  const float ratio = row.weights.maxCoeff() / row.weights.minCoeff();
  std::printf("max/min = %.4f\n", ratio);
  EXPECT_GT(ratio, 1.1f);
  EXPECT_LT(ratio, 1.4f);

  // The 20 largest weights: every one on a patch of giraffe, labelled by hand from the photo
  // with the 25 × 25 grid drawn over it: the body (columns 9–16, rows 5–13), the neck
  // (columns 13–20, rows 2–4) and the legs (columns 8–10 and 13–15, rows 12–21).
  std::vector<int> order(static_cast<size_t>(ref.N()));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + 20, order.end(),
                    [&](int a, int b) { return row.weights[a] > row.weights[b]; });
  auto on_giraffe = [](int col, int r) {
    return (col >= 9 && col <= 16 && r >= 5 && r <= 13) || (col >= 13 && col <= 20 && r >= 2 && r <= 4) ||
           (((col >= 8 && col <= 10) || (col >= 13 && col <= 15)) && r >= 12 && r <= 21);
  };
  double giraffe_sum = 0, rest_sum = 0;
  int giraffe_n = 0;
  for (int j = 0; j < ref.N(); ++j)
    if (on_giraffe(j % 25, j / 25)) {
      giraffe_sum += row.weights[j];
      ++giraffe_n;
    } else {
      rest_sum += row.weights[j];
    }
  EXPECT_GT(giraffe_sum / giraffe_n, rest_sum / (ref.N() - giraffe_n));
  for (int n = 0; n < 20; ++n) {
    const int j = order[static_cast<size_t>(n)];
    EXPECT_TRUE(on_giraffe(j % 25, j / 25)) << "weight #" << n << " at patch (" << j % 25 << "," << j / 25 << ")";
  }
}

// Issue 16's honest scale: the colour head's row for a query on the giraffe's neck (K = 16,
// patch (20,4)) is nearly uniform at τ = 1 (the chapter's fig. 26.12 setting: a ±10 % spread
// about 1/N) and clearly peaked at τ = 0.05.
TEST(SafariRow, NeckRowIsNearlyUniformAtTauOneAndNotAtTauOneTwentieth) {
  const Image photo = load_image(attnlab::testing::asset("safari.jpg"));
  Settings s;
  ASSERT_EQ(s.patch, 16);
  const Reference warm(photo, s);
  const int i = token_at(warm.grid(), 20, 4);
  const auto w = warm.row(0, i).weights;
  const RowFlatness f = row_flatness(std::span<const float>(w.data(), static_cast<size_t>(w.size())), {});
  std::printf("tau = 1: max/min %.4f, H/log N %.6f\n", f.max_over_min, f.entropy_ratio);
  EXPECT_TRUE(f.nearly_uniform);
  EXPECT_GT(f.entropy_ratio, 0.999);
  s.temperature = 0.05f;
  const Reference cold(photo, s);
  const auto c = cold.row(0, i).weights;
  const RowFlatness g = row_flatness(std::span<const float>(c.data(), static_cast<size_t>(c.size())), {});
  std::printf("tau = 0.05: max/min %.4f, H/log N %.6f\n", g.max_over_min, g.entropy_ratio);
  EXPECT_FALSE(g.nearly_uniform);
  EXPECT_LT(g.entropy_ratio, f.entropy_ratio);
}
