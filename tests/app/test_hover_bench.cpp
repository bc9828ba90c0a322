// The hover benchmark's pieces that need no window: its fixed path and its percentiles.
#include "app/gui/output/hover_bench.hpp"
#include "core/base/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

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
  const auto dir = attnlab::testing::temp_dir();
  std::ofstream(dir / "old.json") << "{}";
  EXPECT_THROW(HoverReplay(HoverBenchConfig{dir / "old.json"}), Error);
  EXPECT_THROW(HoverReplay(HoverBenchConfig{dir / "no" / "such" / "folder.json"}), Error);
  EXPECT_NO_THROW(HoverReplay(HoverBenchConfig{dir / "new.json"}));
  std::filesystem::remove_all(dir);
}

namespace {
// Plays a replay to its end as the app would: each move shown by the next frame.
std::pair<int, int> play(HoverReplay& r, int cols, int rows, std::vector<std::size_t>* step_after = nullptr) {
  r.path(cols, rows);
  int hovers = 0, steps = 0;
  Shown shown{Cell{-1, -1}, 2, shown_head(HeadChoice{-1, HeadFusion::Mean})};
  for (int frame = 0; !r.done() && frame < 10000; ++frame) {
    if (const auto m = r.next()) {
      const auto now = HoverReplay::Clock::now();
      if (m->kind == ReplayMove::Kind::Hover) {
        r.moved(now);
        shown.query = m->cell;
        ++hovers;
      } else {
        EXPECT_EQ(m->step, steps);
        r.stepped(now, 1, steps);
        shown.layer = 1;
        shown.head = steps;
        ++steps;
        if (step_after) step_after->push_back(static_cast<std::size_t>(hovers));
      }
    }
    const auto now = HoverReplay::Clock::now();
    r.frame(FrameMarks{now, now, now, now}, gl::TransferCounts{}, shown);
  }
  return {hovers, steps};
}
}  // namespace

TEST(HoverBench, AViTReplayStepsTheLayerOrHeadAfterEveryTenthHoverButTheLast) {
  const auto dir = attnlab::testing::temp_dir();
  HoverBenchConfig c{dir / "vit.json"};
  c.hovers = 31;
  c.vit = true;
  HoverReplay vit(c);
  vit.set_source(ReplaySource{"vit", "/m/model.safetensors", 6, 4, 8, 3, 4, "cpu"});
  std::vector<std::size_t> after;
  EXPECT_EQ(play(vit, 6, 4, &after), (std::pair{31, 3}));
  EXPECT_EQ(after, (std::vector<std::size_t>{10, 20, 30}));
  const std::string line = vit.finish("test");
  EXPECT_NE(line.find("31 hovers over the ViT model.safetensors (6 x 4 patches, 3 layers x 4 heads, cpu path) with 3 layer/head steps"),
            std::string::npos) << line;
  std::ifstream in(dir / "vit.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("source").at("kind"), "vit");
  EXPECT_EQ(j.at("layer_head_steps"), 3);
  EXPECT_EQ(j.at("step_to_screen_ms_all").size(), 3u);
  EXPECT_EQ(j.at("query_to_screen_ms_all").size(), 31u);
  EXPECT_EQ(j.at("patch"), 8);

  // The hand-made heads' replay takes no steps, whatever step_every says.
  HoverBenchConfig h{dir / "heads.json"};
  h.hovers = 31;
  HoverReplay heads(h);
  EXPECT_EQ(play(heads, 6, 4), (std::pair{31, 0}));
  std::filesystem::remove_all(dir);
}

// --train: the report counts the training steps made between the first move and the last frame,
// over the replay's wall time (the frames' times summed), and names the source "train".
TEST(HoverBench, AReplayWhileTrainingReportsTheStepsTrainedOverItsWallTime) {
  const auto dir = attnlab::testing::temp_dir();
  HoverBenchConfig c{dir / "train.json"};
  c.hovers = 21;
  c.vit = true;
  c.train = true;
  HoverReplay r(c);
  r.set_source(ReplaySource{"train", "being trained (run A): depth 1", 4, 4, 7, 1, 2, "cpu"});
  r.path(4, 4);
  // Frames 20 ms apart; the model trains one step every second frame, from step 100 on.
  const auto t0 = HoverReplay::Clock::now();
  std::int64_t step = 100;
  Shown shown{Cell{-1, -1}, 0, shown_head(HeadChoice{-1, HeadFusion::Mean})};
  int frame = 0;
  for (; !r.done() && frame < 1000; ++frame) {
    const auto now = t0 + std::chrono::milliseconds(20 * frame);
    if (frame % 2 == 1) ++step;
    r.trained(step);
    r.frame(FrameMarks{now, now, now, now}, gl::TransferCounts{}, shown);
    if (const auto m = r.next()) {
      if (m->kind == ReplayMove::Kind::Hover) {
        r.moved(now);
        shown.query = m->cell;
      } else {
        r.stepped(now, 0, shown.head + 1);
        shown.head += 1;
      }
    }
  }
  ASSERT_TRUE(r.done());
  const std::string line = r.finish("test");
  std::ifstream in(dir / "train.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("source").at("kind"), "train");
  EXPECT_EQ(j.at("source").at("model"), "being trained (run A): depth 1");
  const auto& t = j.at("training");
  // The first move is given after frame 0 (step 100); the frames counted are 1 … frame-1.
  const int counted = frame - 1;
  EXPECT_EQ(j.at("frames"), counted);
  EXPECT_EQ(t.at("step_at_start"), 100);
  EXPECT_EQ(t.at("step_at_end"), step);
  EXPECT_EQ(t.at("steps"), step - 100);
  EXPECT_NEAR(t.at("seconds").get<double>(), counted * 0.020, 1e-6);
  EXPECT_NEAR(t.at("steps_per_second").get<double>(), static_cast<double>(step - 100) / (counted * 0.020), 1e-6);
  EXPECT_NEAR(t.at("steps_per_second").get<double>(), 25.0, 1.5) << "a step every 40 ms";
  EXPECT_NE(line.find("hovers over the model being trained (4 x 4 patches, 1 layers x 2 heads)"), std::string::npos) << line;
  EXPECT_NE(line.find("steps/s"), std::string::npos) << line;

  // Without --train the report has no training block.
  HoverBenchConfig v{dir / "vit.json"};
  v.hovers = 3;
  v.vit = true;
  HoverReplay plain(v);
  plain.set_source(ReplaySource{"vit", "/m/model.safetensors", 4, 4, 7, 1, 2, "cpu"});
  EXPECT_EQ(play(plain, 4, 4), (std::pair{3, 0}));
  plain.finish("test");
  std::ifstream vin(dir / "vit.json");
  EXPECT_FALSE(nlohmann::json::parse(vin).contains("training"));
  std::filesystem::remove_all(dir);
}
