// core/hand_made/structure: the conv and fc matrices of fig. 26.21, the reduction of A to an image
// (fig. 26.18's masked cells), and T_out = A V (eq. 26.21) as the 8-bit colours the output
// view draws.
#include "core/hand_made/structure.hpp"

#include "core/hand_made/attention.hpp"
#include "core/base/error.hpp"
#include "core/hand_made/reference.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace attnlab;
using attnlab::testing::asset;
using attnlab::testing::safari;

namespace {

PatchGrid grid_of(int cols, int rows) {
  // A cols × rows grid of 1-pixel patches.
  return make_grid(cols, rows, 1, EdgeMode::Crop);
}

std::vector<std::string> pattern(const Matrix& W) {
  std::vector<std::string> out;
  for (Eigen::Index i = 0; i < W.rows(); ++i) {
    std::string line;
    for (Eigen::Index j = 0; j < W.cols(); ++j) line += W(i, j) != 0.0f ? '1' : '.';
    out.push_back(line);
  }
  return out;
}


}  // namespace

// The hand-worked case: a 3×3 grid (tokens 0..8 in raster order) and a 3×3 kernel. Token i
// sees itself and its 8 neighbours that exist (zero padding): corners 4, edges 6, centre 9.
TEST(Structure, ConvThreeByThreeGridIsTheKnownBandedPattern) {
  const PatchGrid g = grid_of(3, 3);
  const std::vector<float> ones(9, 1.0f);
  const Matrix W = conv_matrix(g, 3, ones);
  const std::vector<std::string> expect = {
      "11.11....",  // 0 (0,0): 0 1 3 4
      "111111...",  // 1 (1,0): 0 1 2 3 4 5
      ".11.11...",  // 2 (2,0): 1 2 4 5
      "11.11.11.",  // 3 (0,1): 0 1 3 4 6 7
      "111111111",  // 4 (1,1): all
      ".11.11.11",  // 5 (2,1): 1 2 4 5 7 8
      "...11.11.",  // 6 (0,2): 3 4 6 7
      "...111111",  // 7 (1,2): 3 4 5 6 7 8
      "....11.11",  // 8 (2,2): 4 5 7 8
  };
  EXPECT_EQ(pattern(W), expect);
  EXPECT_EQ((W.array() != 0.0f).count(), 4 * 4 + 4 * 6 + 9);
  EXPECT_EQ(conv_nonzeros(g, 3), 49);
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 9; ++j) EXPECT_EQ(conv_nonzero(g, 3, i, j), expect[i][j] == '1') << i << "," << j;
}

TEST(Structure, ConvTapsAreTheKernelOffsets) {
  const PatchGrid g = grid_of(3, 3);
  EXPECT_EQ(conv_tap(g, 3, 4, 4), 4);  // centre tap
  EXPECT_EQ(conv_tap(g, 3, 4, 0), 0);  // up-left neighbour: (dr,dc) = (-1,-1)
  EXPECT_EQ(conv_tap(g, 3, 4, 8), 8);  // down-right
  EXPECT_EQ(conv_tap(g, 3, 4, 5), 5);  // right: (0,+1)
  EXPECT_EQ(conv_tap(g, 3, 0, 8), -1);
  EXPECT_EQ(conv_tap(g, 3, 2, 3), -1);  // 3 follows 2 in raster order but is on the next row, far left
  // k = 1: only the diagonal (a 1×1 convolution: the token-wise layers of section 26.9).
  const Matrix I = conv_matrix(g, 1, std::vector<float>{2.0f});
  EXPECT_TRUE(I.isApprox(2.0f * Matrix::Identity(9, 9)));
  // k = 5 on a 3×3 grid: every token sees every other one.
  EXPECT_EQ((conv_matrix(g, 5, std::vector<float>(25, 1.0f)).array() != 0.0f).count(), 81);
}

TEST(Structure, ConvMatrixIsBlockToeplitzAndSharesTheKernel) {
  for (auto [cols, rows, k] : {std::array{3, 3, 3}, std::array{5, 4, 3}, std::array{7, 6, 5}, std::array{4, 9, 7}}) {
    const PatchGrid g = grid_of(cols, rows);
    const auto kernel = demo_kernel(k, 3);
    const Matrix W = conv_matrix(g, k, kernel);
    EXPECT_TRUE(is_block_toeplitz(W, cols)) << cols << "x" << rows << " k=" << k;
    // Every non-zero entry is one of the k² kernel weights: k² numbers for N² entries.
    for (int i = 0; i < g.N(); ++i)
      for (int j = 0; j < g.N(); ++j) {
        const int tap = conv_tap(g, k, i, j);
        EXPECT_EQ(W(i, j), tap < 0 ? 0.0f : kernel[static_cast<size_t>(tap)]);
      }
    // The bandwidth in raster order: nothing beyond r rows·cols + r from the diagonal.
    const int r = (k - 1) / 2;
    for (int i = 0; i < g.N(); ++i)
      for (int j = 0; j < g.N(); ++j)
        if (std::abs(i - j) > r * cols + r) {
          EXPECT_EQ(W(i, j), 0.0f);
        }
    EXPECT_EQ(conv_nonzeros(g, k), (W.array() != 0.0f).count());
    Matrix broken = W;
    broken(g.N() - 1, g.N() - 1) += 0.5f;  // one diagonal entry different: no longer Toeplitz
    EXPECT_FALSE(is_block_toeplitz(broken, cols));
  }
  // A dense fc matrix is not Toeplitz: each entry is its own weight.
  const int N = 12;
  Matrix fc(N, N);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) fc(i, j) = fc_weight(i, j, 1);
  EXPECT_FALSE(is_block_toeplitz(fc, 4));
  EXPECT_THROW(is_block_toeplitz(Matrix::Zero(6, 6), 4), Error);
  EXPECT_THROW(is_block_toeplitz(Matrix::Zero(6, 5), 1), Error);
}

TEST(Structure, WindowMaskHasTheConvPattern) {
  // A local-window mask of radius r keeps exactly the entries a (2r+1)×(2r+1) conv uses:
  // A becomes banded like W_conv, but its values still depend on the input.
  const PatchGrid g = grid_of(6, 5);
  MaskSpec spec;
  spec.kind = MaskKind::Window;
  spec.radius = 1;
  const Mask mask(spec, g);
  for (int i = 0; i < g.N(); ++i)
    for (int j = 0; j < g.N(); ++j) EXPECT_EQ(mask.allowed(i, j), conv_nonzero(g, 3, i, j));
}

TEST(Structure, BadKernelsAreErrors) {
  const PatchGrid g = grid_of(3, 3);
  EXPECT_THROW(conv_tap(g, 2, 0, 0), Error);
  EXPECT_THROW(conv_tap(g, 0, 0, 0), Error);
  EXPECT_THROW(conv_matrix(g, 3, std::vector<float>(8, 1.0f)), Error);
  EXPECT_THROW(demo_kernel(4, 1), Error);
  EXPECT_THROW(conv_structure_image(g, 3, std::vector<float>(3, 1.0f), 4), Error);
  EXPECT_THROW(conv_matrix(grid_of(65, 64), 3, std::vector<float>(9, 1.0f)), Error);  // N = 4160
}

TEST(Structure, BlockSize) {
  EXPECT_EQ(block_size(1, 512), 1);
  EXPECT_EQ(block_size(512, 512), 1);
  EXPECT_EQ(block_size(513, 512), 2);
  EXPECT_EQ(block_size(961, 512), 2);
  EXPECT_EQ(block_size(15625, 512), 31);
  EXPECT_THROW(block_size(0, 512), Error);
  EXPECT_THROW(block_size(5, 0), Error);
}

TEST(Structure, DownsampleAveragesBlocks) {
  // 5×5 matrix, at most 2 pixels per side: b = 3, S = 2, blocks of 3×3, 3×2, 2×3 and 2×2 cells.
  const int N = 5;
  std::vector<float> A(N * N);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) A[static_cast<size_t>(i * N + j)] = static_cast<float>(10 * i + j);
  const BlockImage img = downsample_matrix(A, N, 2, nullptr);
  ASSERT_EQ(img.block, 3);
  ASSERT_EQ(img.side, 2);
  EXPECT_EQ(img.first(1), 3);
  EXPECT_EQ(img.last(1), 5);
  // Mean of 10i + j over the block = 10·mean(i) + mean(j).
  EXPECT_FLOAT_EQ(img.value(0, 0), 10 * 1.0f + 1.0f);
  EXPECT_FLOAT_EQ(img.value(0, 1), 10 * 1.0f + 3.5f);
  EXPECT_FLOAT_EQ(img.value(1, 0), 10 * 3.5f + 1.0f);
  EXPECT_FLOAT_EQ(img.value(1, 1), 10 * 3.5f + 3.5f);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c) EXPECT_FALSE(img.empty(r, c));
  // Exact when N fits.
  const BlockImage exact = downsample_matrix(A, N, 5, nullptr);
  ASSERT_EQ(exact.block, 1);
  ASSERT_EQ(exact.side, 5);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) EXPECT_EQ(exact.value(i, j), A[static_cast<size_t>(i * N + j)]);
  EXPECT_THROW(downsample_matrix(A, 4, 2, nullptr), Error);
}

TEST(Structure, MaskedBlocksAreEmptyOnlyWhenEveryCellIsMasked) {
  // N = 4 tokens (2×2 grid), causal mask (j <= i), 2×2 blocks.
  const PatchGrid g = grid_of(2, 2);
  MaskSpec spec;
  spec.kind = MaskKind::Causal;
  const Mask causal(spec, g);
  std::vector<float> A(16, 0.0f);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j <= i; ++j) A[static_cast<size_t>(i * 4 + j)] = 1.0f / static_cast<float>(i + 1);
  const BlockImage img = downsample_matrix(A, 4, 2, &causal);
  ASSERT_EQ(img.side, 2);
  EXPECT_FALSE(img.empty(0, 0));  // (0,1) is masked, (0,0), (1,0), (1,1) are not
  EXPECT_TRUE(img.empty(0, 1));   // rows 0-1, columns 2-3: j > i everywhere
  EXPECT_FALSE(img.empty(1, 0));
  EXPECT_FALSE(img.empty(1, 1));  // (2,3) is masked, the rest is not
  EXPECT_FLOAT_EQ(img.value(0, 0), (1.0f + 0.5f + 0.5f + 0.0f) / 4);  // the masked cell counts as 0
  EXPECT_FLOAT_EQ(img.value(0, 1), 0.0f);
  // Strict mask at full size: row 0 has no key at all, every cell of it is black.
  spec.kind = MaskKind::Strict;
  const Mask strict(spec, g);
  const BlockImage full = downsample_matrix(A, 4, 512, &strict);
  for (int j = 0; j < 4; ++j) EXPECT_TRUE(full.empty(0, j));
  EXPECT_FALSE(full.empty(1, 0));
  EXPECT_TRUE(full.empty(1, 1));
  const auto px = block_image_rgb8(full, Colormap::Bmy, Normalization::MinMax, BlockRange::Whole);
  for (int j = 0; j < 4; ++j)
    for (int ch = 0; ch < 3; ++ch) EXPECT_EQ(px[static_cast<size_t>(j * 3 + ch)], 0);
}

TEST(Structure, ColoursFollowTheNormalization) {
  BlockImage img;
  img.N = img.side = 2;
  img.values = {0.1f, 0.3f, 0.2f, 0.2f};
  img.all_zero = {0, 0, 0, 1};
  const Colormap c = Colormap::Gray;
  const auto whole = block_image_rgb8(img, c, Normalization::MinMax, BlockRange::Whole);
  EXPECT_EQ(whole[0], colormap_rgb8(c, 0.0f)[0]);   // the matrix min
  EXPECT_EQ(whole[3], colormap_rgb8(c, 1.0f)[0]);   // the matrix max
  EXPECT_EQ(whole[6], colormap_rgb8(c, normalize_value(0.2f, {0.1f, 0.3f}, Normalization::MinMax))[0]);
  EXPECT_EQ(whole[9], 0);                            // empty block: black
  const auto rows = block_image_rgb8(img, c, Normalization::MinMax, BlockRange::EachRow);
  EXPECT_EQ(rows[6], colormap_rgb8(c, 1.0f)[0]);    // row 1 has one kept value: it is its row's max
  EXPECT_EQ(rows[3], colormap_rgb8(c, 1.0f)[0]);
  const auto absolute = block_image_rgb8(img, c, Normalization::Absolute, BlockRange::Whole);
  EXPECT_EQ(absolute[0], colormap_rgb8(c, 0.1f / 0.3f)[0]);
  const auto lifted = block_image_rgb8(img, c, Normalization::MinMax, BlockRange::Whole, 0.4f);
  EXPECT_EQ(lifted[0], colormap_rgb8(c, 0.4f)[0]);  // the minimum is lifted off black
  EXPECT_EQ(lifted[3], colormap_rgb8(c, 1.0f)[0]);
  EXPECT_EQ(lifted[9], 0);                           // empty stays black
}

TEST(Structure, ConvAndFcImagesMatchTheirMatrices) {
  for (auto [cols, rows, k, max_side] : {std::array{5, 4, 3, 512}, std::array{9, 7, 3, 10}, std::array{8, 8, 5, 7}}) {
    const PatchGrid g = grid_of(cols, rows);
    const int N = g.N();
    const auto kernel = demo_kernel(k, 5);
    const Matrix W = conv_matrix(g, k, kernel);
    const BlockImage img = conv_structure_image(g, k, kernel, max_side);
    const BlockImage dense = downsample_matrix(std::span<const float>(W.data(), static_cast<size_t>(N) * N), N, max_side, nullptr);
    ASSERT_EQ(img.side, dense.side);
    for (int r = 0; r < img.side; ++r)
      for (int c = 0; c < img.side; ++c) {
        EXPECT_NEAR(img.value(r, c), dense.value(r, c), 1e-6) << r << "," << c;
        EXPECT_EQ(img.empty(r, c), dense.value(r, c) == 0.0f);
      }
    const BlockImage fc = fc_structure_image(N, max_side, 2);
    for (int r = 0; r < fc.side; ++r)
      for (int c = 0; c < fc.side; ++c) {
        EXPECT_FALSE(fc.empty(r, c));
        double sum = 0;
        for (int i = fc.first(r); i < fc.last(r); ++i)
          for (int j = fc.first(c); j < fc.last(c); ++j) sum += fc_weight(i, j, 2);
        EXPECT_NEAR(fc.value(r, c), sum / ((fc.last(r) - fc.first(r)) * (fc.last(c) - fc.first(c))), 1e-6);
      }
  }
  for (int i = 0; i < 50; ++i) {
    const float w = fc_weight(i, 3 * i + 1, 9);
    EXPECT_GE(w, 0.35f);
    EXPECT_LE(w, 1.0f);
  }
  // Large grids stay cheap and never empty for fc; the conv band stays narrow.
  const PatchGrid big = grid_of(125, 125);
  const BlockImage conv = conv_structure_image(big, 3, demo_kernel(3, 1), 512);
  EXPECT_EQ(conv.block, 31);
  EXPECT_FALSE(conv.empty(0, 0));
  EXPECT_TRUE(conv.empty(0, conv.side - 1));
}

// The matrix view's image of A: exact (b = 1) at N <= 512, block means above.
TEST(Structure, MatrixImageIsTheReferenceMatrix) {
  Settings s;
  s.patch = 25;  // 20 × 20 = 400 tokens
  s.mask.kind = MaskKind::Causal;
  const Reference ref(safari(), s);
  const Matrix A = ref.matrix(0);
  const int N = ref.N();
  const std::span<const float> a(A.data(), static_cast<size_t>(N) * N);
  const BlockImage exact = downsample_matrix(a, N, 512, &ref.setup().mask);
  ASSERT_EQ(exact.block, 1);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      EXPECT_EQ(exact.value(i, j), A(i, j));
      EXPECT_EQ(exact.empty(i, j), j > i);
    }
  const BlockImage small = downsample_matrix(a, N, 64, &ref.setup().mask);
  ASSERT_EQ(small.block, 7);
  EXPECT_NEAR(small.value(3, 2), A.block(21, 14, 7, 7).mean(), 1e-6);
  // Rows of A sum to 1, so the mean of a full-width band of rows is 1/N.
  double band = 0;
  for (int c = 0; c < small.side; ++c)
    band += static_cast<double>(small.value(0, c)) * (small.last(c) - small.first(c));
  EXPECT_NEAR(band, 1.0, 1e-5);
}

// The output view paints T_out = A V (eq. 26.21): the colours are the reference's output
// within one 8-bit level, and equal to multiplying the full A by V.
TEST(Structure, OutputColoursAreTheReferenceOutput) {
  for (MaskKind kind : {MaskKind::None, MaskKind::Strict}) {
    Settings s;
    s.patch = 20;  // 25 × 25 = 625 tokens
    s.mask.kind = kind;
    const Reference ref(safari(), s);
    const int N = ref.N();
    std::vector<Matrix> outs;
    for (int h = 0; h < kHeadCount; ++h) {
      outs.push_back(ref.output(h));
      const auto px = colours_rgb8(outs.back());
      ASSERT_EQ(px.size(), static_cast<size_t>(N) * 3);
      const Matrix via_A = attend(ref.matrix(h), ref.qkv(h).V);  // A V with the full A
      for (int i = 0; i < N; ++i)
        for (int ch = 0; ch < 3; ++ch) {
          const double want = 255.0 * via_A(i, ch);
          EXPECT_LE(std::abs(px[static_cast<size_t>(i) * 3 + ch] - want), 1.0) << "head " << h << " token " << i;
        }
      if (kind == MaskKind::Strict) {  // row 0 has no key: t_out = 0, painted black
        for (int ch = 0; ch < 3; ++ch) EXPECT_EQ(px[static_cast<size_t>(ch)], 0);
      }
    }
    // Merged (eq. 26.28 with W_MSA = the average of the heads).
    const auto merged = colours_rgb8(ref.merged_output());
    for (int i = 0; i < N; ++i)
      for (int ch = 0; ch < 3; ++ch) {
        double mean = 0;
        for (const Matrix& o : outs) mean += o(i, ch);
        mean /= kHeadCount;
        EXPECT_LE(std::abs(merged[static_cast<size_t>(i) * 3 + ch] - 255.0 * mean), 1.0);
      }
    // The input colours: T's first three columns are the patches' mean colours.
    const auto input = colours_rgb8(ref.X(), TokenLayout::kColour);
    const Matrix mean = mean_colours(safari(), ref.grid());
    for (int i = 0; i < N; ++i)
      for (int ch = 0; ch < 3; ++ch)
        EXPECT_EQ(input[static_cast<size_t>(i) * 3 + ch], std::lround(std::clamp(mean(i, ch), 0.0f, 1.0f) * 255.0f)) << i;
  }
}

TEST(Structure, ColourConversionClampsAndChecksColumns) {
  Matrix M(2, 3);
  M << -0.5f, 0.5f, 2.0f, std::nanf(""), 1.0f, 0.0f;
  const auto px = colours_rgb8(M);
  EXPECT_EQ(px, (std::vector<std::uint8_t>{0, 128, 255, 0, 255, 0}));
  EXPECT_THROW(colours_rgb8(M, 1), Error);
  EXPECT_THROW(colours_rgb8(M, -1), Error);
}
