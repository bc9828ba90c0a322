// core/hand_made/grid_math: the query and the pinned patches across a change of K (regrid_cell), with the
// numbers worked by hand on a 100 × 60 image (K = 16, crop: 6 × 3 patches covering 96 × 48).
#include "core/hand_made/grid_math.hpp"

#include "core/base/error.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace attnlab;

namespace {

void expect_cell(const RegriddedCell& got, int col, int row, PixelPoint anchor) {
  EXPECT_EQ(got.col, col);
  EXPECT_EQ(got.row, row);
  EXPECT_EQ(got.anchor, anchor);
}

}  // namespace

TEST(GridMath, CentreOfTheOldCellPicksTheNewCell) {
  const PatchGrid k16 = make_grid(100, 60, 16, EdgeMode::Crop), k8 = make_grid(100, 60, 8, EdgeMode::Crop);
  ASSERT_EQ(k8.cols, 12);
  ASSERT_EQ(k8.rows, 7);
  // Cell (2,1) of K = 16 covers x 32..47, y 16..31: centre (40, 24), in cell (5, 3) of K = 8.
  expect_cell(regrid_cell(k16, k8, 2, 1), 5, 3, {40, 24});
  // Odd K: cell (3,2) of K = 5 has its centre at (3·5 + 2, 2·5 + 2) = (17, 12): cell (2, 1) of K = 8.
  const PatchGrid k5 = make_grid(100, 60, 5, EdgeMode::Crop);
  expect_cell(regrid_cell(k5, k8, 3, 2), 2, 1, {17, 12});
}

TEST(GridMath, TheAnchorBringsTheCellBack) {
  // 256 × 256, cell (3,5) of K = 16 (centre (56, 88)) through K 32, 64, 32 and back to 16.
  std::vector<PatchGrid> ks;
  for (int K : {16, 32, 64, 32, 16}) ks.push_back(make_grid(256, 256, K, EdgeMode::Crop));
  const int expected[][2] = {{3, 5}, {1, 2}, {0, 1}, {1, 2}, {3, 5}};
  RegriddedCell c{3, 5, {}};
  std::vector<PixelPoint> anchors;
  for (size_t s = 1; s < ks.size(); ++s) {
    c = regrid_cell(ks[s - 1], ks[s], c.col, c.row, anchors);
    anchors = {c.anchor};
    EXPECT_EQ(c.col, expected[s][0]) << "step " << s;
    EXPECT_EQ(c.row, expected[s][1]) << "step " << s;
    EXPECT_EQ(c.anchor, (PixelPoint{56, 88})) << "step " << s;
  }
  // Without the anchors the centre drifts: (56,88) → (1,2); centre (48,80) → (0,1); centre
  // (32,96) → (1,3); centre (48,112) → (3,7): two rows below where it started.
  RegriddedCell drift{3, 5, {}};
  for (size_t s = 1; s < ks.size(); ++s) drift = regrid_cell(ks[s - 1], ks[s], drift.col, drift.row);
  EXPECT_EQ(drift.col, 3);
  EXPECT_EQ(drift.row, 7);
}

TEST(GridMath, OnlyAnAnchorInsideTheCellCountsAndTheLastOneWins) {
  const PatchGrid k16 = make_grid(100, 60, 16, EdgeMode::Crop), k4 = make_grid(100, 60, 4, EdgeMode::Crop);
  const std::vector<PixelPoint> outside = {{0, 0}, {48, 24}};  // cells (0,0) and (3,1), not (2,1)
  expect_cell(regrid_cell(k16, k4, 2, 1, outside), 10, 6, {40, 24});
  const std::vector<PixelPoint> two = {{33, 17}, {45, 30}};  // both in cell (2,1)
  expect_cell(regrid_cell(k16, k4, 2, 1, two), 11, 7, {45, 30});
}

TEST(GridMath, PointsPastTheEdgeLandOnTheLastCell) {
  // Crop: cell (11,6) of K = 8 (centre (92, 52)); K = 32 crops to 3 × 1 patches (96 × 32):
  // column 92/32 = 2, row 52/32 = 1 → clamped to 0.
  const PatchGrid k8 = make_grid(100, 60, 8, EdgeMode::Crop), k32 = make_grid(100, 60, 32, EdgeMode::Crop);
  ASSERT_EQ(k32.cols, 3);
  ASSERT_EQ(k32.rows, 1);
  expect_cell(regrid_cell(k8, k32, 11, 6), 2, 0, {92, 52});
  // Pad: K = 16 pads to 7 × 4 patches (112 × 64); cell (6,3) has its centre (104, 56) in the
  // padding. A cropped K = 32 has no such cell: (104/32, 56/32) = (3, 1) → clamped to (2, 0); a
  // padded K = 32 (4 × 2 patches, 128 × 64) keeps it: (3, 1).
  const PatchGrid p16 = make_grid(100, 60, 16, EdgeMode::Pad), p32 = make_grid(100, 60, 32, EdgeMode::Pad);
  ASSERT_EQ(p16.cols, 7);
  ASSERT_EQ(p16.rows, 4);
  expect_cell(regrid_cell(p16, k32, 6, 3), 2, 0, {104, 56});
  expect_cell(regrid_cell(p16, p32, 6, 3), 3, 1, {104, 56});
  // And back from the padded K = 32 to K = 16 with the anchor: the same padding cell (6, 3).
  const std::vector<PixelPoint> kept = {{104, 56}};
  expect_cell(regrid_cell(p32, p16, 3, 1, kept), 6, 3, {104, 56});
}

// Issue 47: the user's K never stops an image from opening. Numbers worked by hand.
TEST(GridMath, AKThatFitsIsKept) {
  EXPECT_EQ(fitted_patch(640, 480, 32, EdgeMode::Crop), 32);
  EXPECT_EQ(fitted_patch(28, 28, 4, EdgeMode::Crop), 4);
  // 28 pixels in 1 whole patch of 28: the user's K is kept, however coarse.
  EXPECT_EQ(fitted_patch(28, 28, 28, EdgeMode::Crop), 28);
  // Pad mode: a K larger than the image still makes one padded patch.
  EXPECT_EQ(fitted_patch(28, 28, 32, EdgeMode::Pad), 32);
}

TEST(GridMath, AKTooLargeForTheImageHalvesToFourPatchesOnTheShorterSide) {
  // 28 × 28 (Fashion-MNIST): 32 → 16 → 8 → 4, the first with 28 / 4 = 7 ≥ 4 patches a side.
  EXPECT_EQ(fitted_patch(28, 28, 32, EdgeMode::Crop), 4);
  // 100 × 60: K = 64 → 32 → 16 → 8; 60 / 4 = 15, so 8 (7 rows) is the first at most 15.
  EXPECT_EQ(fitted_patch(100, 60, 64, EdgeMode::Crop), 8);
  // K = 48 on 40 × 200: 48 → 24 → 12 → 6; 40 / 4 = 10: 6.
  EXPECT_EQ(fitted_patch(40, 200, 48, EdgeMode::Crop), 6);
  // An image under 4 pixels a side: down to K = 1.
  EXPECT_EQ(fitted_patch(3, 5, 16, EdgeMode::Crop), 1);
  // The fitted K makes a grid.
  const PatchGrid g = make_grid(28, 28, fitted_patch(28, 28, 128, EdgeMode::Crop), EdgeMode::Crop);
  EXPECT_EQ(g.cols, 7);
}

TEST(GridMath, AKTooSmallDoublesUntilTheTokensFit) {
  // 4000 × 4000 at K = 4: 1000² tokens, over kMaxTokens = 65536; K = 16 gives 250² = 62500.
  EXPECT_EQ(fitted_patch(4000, 4000, 4, EdgeMode::Crop), 16);
  EXPECT_THROW(fitted_patch(0, 10, 4, EdgeMode::Crop), Error);
  EXPECT_THROW(fitted_patch(10, 10, 0, EdgeMode::Crop), Error);
}
