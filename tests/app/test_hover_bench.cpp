// The hover benchmark's pieces that need no window: its fixed path and its percentiles.
#include "app/gui/hover_bench.hpp"
#include "core/error.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace attnlab;
using namespace attnlab::app;

TEST(HoverBench, ThePathMovesToANeighbouringPatchEachTimeInsideTheGrid) {
  const auto path = hover_path(31, 31, 300, 19);
  ASSERT_EQ(path.size(), 300u);
  EXPECT_EQ(path.front(), (Cell{15, 15}));
  for (std::size_t k = 1; k < path.size(); ++k) {
    const int dc = std::abs(path[k].col - path[k - 1].col), dr = std::abs(path[k].row - path[k - 1].row);
    EXPECT_TRUE(dc <= 1 && dr <= 1 && dc + dr > 0) << "step " << k;
    EXPECT_TRUE(path[k].col >= 0 && path[k].col < 31 && path[k].row >= 0 && path[k].row < 31) << "step " << k;
  }
  // The same path every time; another seed, another path.
  EXPECT_EQ(hover_path(31, 31, 300, 19), path);
  EXPECT_NE(hover_path(31, 31, 300, 20), path);
  // Along one edge of a thin grid too.
  for (const Cell& c : hover_path(1, 5, 50, 3)) EXPECT_EQ(c.col, 0);
  EXPECT_THROW(hover_path(0, 5, 10, 1), Error);
  EXPECT_THROW(hover_path(1, 1, 10, 1), Error);
  EXPECT_THROW(hover_path(4, 4, 0, 1), Error);
}

TEST(HoverBench, PercentilesAreNearestRank) {
  std::vector<double> ms;
  for (int k = 100; k >= 1; --k) ms.push_back(k);  // 1..100, unsorted
  const Spread s = spread_of(ms);
  EXPECT_EQ(s.median, 50);
  EXPECT_EQ(s.p95, 95);
  EXPECT_EQ(s.max, 100);
  EXPECT_EQ(s.count, 100u);
  EXPECT_EQ(spread_of({7}).p95, 7);
  EXPECT_EQ(spread_of({1, 2, 3}).median, 2);
  EXPECT_THROW(spread_of({}), Error);
}

TEST(HoverBench, AnExistingReportOrAMissingFolderIsRefusedAtTheStart) {
  const auto dir = std::filesystem::temp_directory_path() / ("attnlab_hover_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "old.json") << "{}";
  EXPECT_THROW(HoverReplay(HoverBenchConfig{dir / "old.json"}), Error);
  EXPECT_THROW(HoverReplay(HoverBenchConfig{dir / "no" / "such" / "folder.json"}), Error);
  EXPECT_NO_THROW(HoverReplay(HoverBenchConfig{dir / "new.json"}));
  std::filesystem::remove_all(dir);
}
