// The pooled picture of A on the CPU: pool_block_row / downsample_matrix by hand for mean and
// max, and the reference model's streaming pooled_matrix (row by row, never N²) against the
// full A it would otherwise need, for every mask kind and a block that does not divide N.
#include "core/base/error.hpp"
#include "core/hand_made/hand_made.hpp"
#include "core/hand_made/reference.hpp"
#include "core/hand_made/structure.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace attnlab;
using attnlab::testing::safari;

TEST(PooledMatrix, MeanAndMaxOfBlocksByHand) {
  // 5 × 5 in 3 pixels: b = 2, S = 3, the last block row and column one cell wide.
  const int N = 5;
  std::vector<float> A(25);
  for (int t = 0; t < 25; ++t) A[static_cast<size_t>(t)] = static_cast<float>(t) / 100.0f;  // a_ij = (5i + j)/100
  const BlockImage mean = downsample_matrix(A, N, 3, nullptr, Pooling::Mean);
  const BlockImage max = downsample_matrix(A, N, 3, nullptr, Pooling::Max);
  ASSERT_EQ(max.block, 2);
  ASSERT_EQ(max.side, 3);
  EXPECT_FLOAT_EQ(mean.value(0, 0), (0 + 1 + 5 + 6) / 400.0f);
  EXPECT_FLOAT_EQ(max.value(0, 0), 0.06f);
  EXPECT_FLOAT_EQ(mean.value(1, 2), (14 + 19) / 200.0f);  // rows 2-3, column 4
  EXPECT_FLOAT_EQ(max.value(1, 2), 0.19f);
  EXPECT_FLOAT_EQ(max.value(2, 2), 0.24f);
  EXPECT_FLOAT_EQ(mean.value(2, 2), 0.24f);
  EXPECT_EQ(downsample_matrix(A, N, 3, nullptr).values, mean.values);  // Mean is the default

  // Scrambled values (largest cell anywhere in a block): 7 × 7 in 3 pixels, b = 3, every pixel
  // against its block's cells summed and compared one by one.
  std::vector<float> B(49);
  for (int t = 0; t < 49; ++t) B[static_cast<size_t>(t)] = static_cast<float>((t * 19 + 5) % 49) / 49.0f;
  const BlockImage bmean = downsample_matrix(B, 7, 3, nullptr, Pooling::Mean), bmax = downsample_matrix(B, 7, 3, nullptr, Pooling::Max);
  ASSERT_EQ(bmax.side, 3);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      double sum = 0;
      float big = 0;
      for (int i = bmax.first(r); i < bmax.last(r); ++i)
        for (int j = bmax.first(c); j < bmax.last(c); ++j) {
          sum += B[static_cast<size_t>(i * 7 + j)];
          big = std::max(big, B[static_cast<size_t>(i * 7 + j)]);
        }
      EXPECT_EQ(bmax.value(r, c), big) << r << "," << c;
      EXPECT_NEAR(bmean.value(r, c), sum / ((bmax.last(r) - bmax.first(r)) * (bmax.last(c) - bmax.first(c))), 1e-7) << r << "," << c;
    }

  // Causal mask (j <= i): block (0, 1) (rows 0-1, columns 2-3) and (0, 2), (1, 2) are masked
  // through; their cells, whatever they hold, are not drawn.
  MaskSpec spec;
  spec.kind = MaskKind::Causal;
  PatchGrid grid;
  grid.K = 1;
  grid.cols = 5;
  grid.rows = 1;
  const Mask causal(spec, grid);
  const BlockImage masked = downsample_matrix(A, N, 3, &causal, Pooling::Max);
  EXPECT_TRUE(masked.empty(0, 1));
  EXPECT_TRUE(masked.empty(0, 2));
  EXPECT_TRUE(masked.empty(1, 2));
  EXPECT_FALSE(masked.empty(1, 1));  // cell (3, 2) is kept
  EXPECT_FALSE(masked.empty(2, 2));  // (4, 4)

  // A band at a time gives the same image; bad rows are an Error.
  BlockImage bands = empty_block_image(N, 3);
  EXPECT_TRUE(bands.empty(0, 0));
  for (int r = 2; r >= 0; --r) {
    const size_t from = static_cast<size_t>(bands.first(r)) * N, cells = static_cast<size_t>(bands.last(r) - bands.first(r)) * N;
    pool_block_row(bands, r, std::span<const float>(A).subspan(from, cells), &causal, Pooling::Max);
  }
  EXPECT_EQ(bands.values, masked.values);
  EXPECT_EQ(bands.all_zero, masked.all_zero);
  EXPECT_THROW(pool_block_row(bands, 3, std::span<const float>(A).subspan(0, 5), nullptr, Pooling::Max), Error);
  EXPECT_THROW(pool_block_row(bands, 2, std::span<const float>(A).subspan(0, 10), nullptr, Pooling::Max), Error);
  EXPECT_THROW(empty_block_image(0, 3), Error);
  EXPECT_STREQ(pooling_name(Pooling::Max), "max");
}

TEST(PooledMatrix, ReferenceModelStreamsTheFullMatrixImage) {
  // 31 × 31 = 961 tokens into at most 100 pixels: b = 10, S = 97 (the last block 1 cell wide).
  const int N = 961, max_side = 100;
  for (const MaskSpec& mask : attnlab::testing::every_mask(N)) {
    Settings s;
    s.patch = 16;
    s.mask = mask;
    const auto model = make_reference_model();
    model->set_image(safari(), s);
    ASSERT_EQ(model->N(), N);
    const Reference ref(safari(), s);
    for (int h : {0, 3, 5}) {
      const Matrix A = ref.matrix(h);
      for (Pooling p : {Pooling::Mean, Pooling::Max}) {
        const std::string what = std::string(mask_kind_name(mask.kind)) + " head " + std::to_string(h) + " " + pooling_name(p);
        const BlockImage got = model->pooled_matrix(h, max_side, p);
        const BlockImage want =
            downsample_matrix(std::span<const float>(A.data(), static_cast<size_t>(N) * N), N, max_side, &ref.setup().mask, p);
        ASSERT_EQ(got.side, 97) << what;
        EXPECT_EQ(got.all_zero, want.all_zero) << what;
        // Row by row (Q.row(i) Kᵀ) against the whole product Q Kᵀ: the same sums up to float rounding.
        for (size_t t = 0; t < want.values.size(); ++t)
          ASSERT_NEAR(got.values[t], want.values[t], 1e-5 * want.values[t] + 1e-9) << what << " pixel " << t;
      }
    }
  }
}

TEST(PooledMatrix, BadCallsAreErrors) {
  const auto model = make_reference_model();
  EXPECT_THROW(model->pooled_matrix(0, 100, Pooling::Mean), Error);  // no image
  EXPECT_THROW((void)model->N(), Error);
  Settings s;
  s.patch = 25;
  model->set_image(safari(), s);
  BlockImage img = empty_block_image(model->N(), 64);
  EXPECT_THROW(model->pool_matrix_rows(kHeadCount, Pooling::Mean, 0, 1, img), Error);
  EXPECT_THROW(model->pool_matrix_rows(0, Pooling::Mean, img.side - 1, 2, img), Error);
  BlockImage other = empty_block_image(model->N() + 3, 64);
  EXPECT_THROW(model->pool_matrix_rows(0, Pooling::Mean, 0, 1, other), Error);
  EXPECT_THROW(model->pooled_matrix(0, 0, Pooling::Mean), Error);
}
