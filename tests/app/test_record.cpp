// Export → Record without a window (issue 40): the Recorder's files (a live recording lasts as
// long as it ran, a sweep's frames come out once each, in order, cut or padded to the first
// frame's size; nothing is left when nothing was recorded) and the sweeps' steps.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>
#include <unistd.h>

#include "app/gui/output/recorder.hpp"
#include "app/gui/output/sweeps.hpp"
#include "core/base/error.hpp"
#include "core/io/files.hpp"
#include "core/io/video.hpp"

using namespace attnlab;
using namespace attnlab::app;

namespace {

std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("attnlab-record-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

RgbFrame solid(int w, int h, std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  RgbFrame f{w, h, std::vector<std::uint8_t>(static_cast<std::size_t>(w) * h * 3)};
  for (std::size_t i = 0; i < f.rgb.size(); i += 3) {
    f.rgb[i] = r;
    f.rgb[i + 1] = g;
    f.rgb[i + 2] = b;
  }
  return f;
}

// Waits for the recording's file (or its error) after stop().
std::filesystem::path finished(Recorder& recorder, std::string* error = nullptr) {
  for (int i = 0; i < 400; ++i) {
    if (auto e = recorder.poll_error(); e && error) *error = *e;
    if (auto f = recorder.take_finished()) return *f;
    if (!recorder.busy()) return {};
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    if (!recorder.busy()) break;
  }
  return {};
}

std::vector<Image> read_all(const std::filesystem::path& video) {
  VideoReader reader = VideoReader::open_file(video, 1 << 24);
  std::vector<Image> frames;
  while (auto f = reader.next()) frames.push_back(std::move(f->image));
  return frames;
}

// The mean of a channel over a rectangle, in grey levels.
double mean_channel(const Image& im, int c, int x0, int y0, int w, int h) {
  double s = 0;
  for (int y = y0; y < y0 + h; ++y)
    for (int x = x0; x < x0 + w; ++x) s += im.at(x, y, c);
  return 255.0 * s / (w * h);
}

}  // namespace

TEST(Recorder, ALiveRecordingLastsAsLongAsItRanAndRepeatsTheNewestFrame) {
  const auto dir = fresh_dir("live");
  Recorder recorder;
  recorder.start({.kind = RecordPlan::Kind::Live, .map_only = true, .gif = false, .fps = 10, .what = "map"}, dir,
                 {{"note", "test"}});
  EXPECT_THROW(recorder.start({}, dir, {}), Error);  // one at a time
  const auto t0 = std::chrono::steady_clock::now();
  recorder.add(solid(64, 48, 250, 0, 0));  // red, then nothing new for 0.6 s: repeated
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  recorder.add(solid(64, 48, 0, 0, 250));  // blue until the end
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  recorder.stop();
  const double ran = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string error;
  const auto video = finished(recorder, &error);
  ASSERT_FALSE(video.empty()) << error;
  EXPECT_EQ(video.extension(), ".mp4");
  EXPECT_TRUE(video.filename().string().starts_with("attnlab-record-map-"));
  const auto frames = read_all(video);
  // 10 frames a second of wall-clock time: about 12 for 1.2 s.
  EXPECT_NEAR(static_cast<double>(frames.size()), ran * 10, 2.0);
  ASSERT_GE(frames.size(), 8u);
  EXPECT_EQ(frames.front().width, 64);
  EXPECT_EQ(frames.front().height, 48);
  EXPECT_GT(mean_channel(frames[1], 0, 0, 0, 64, 48), 200);  // still red at 0.1 s
  EXPECT_GT(mean_channel(frames[4], 0, 0, 0, 64, 48), 200);  // and at 0.4 s: the newest frame repeated
  EXPECT_GT(mean_channel(frames.back(), 2, 0, 0, 64, 48), 200);  // blue at the end
  auto sidecar_path = video;
  sidecar_path.replace_extension(".json");
  std::ifstream in(sidecar_path);
  const nlohmann::json sidecar = nlohmann::json::parse(in);
  EXPECT_EQ(sidecar.at("note"), "test");
  EXPECT_EQ(sidecar.at("record").at("kind"), "live");
  EXPECT_EQ(sidecar.at("record").at("frames").get<std::size_t>(), frames.size());
  EXPECT_NEAR(sidecar.at("record").at("seconds_recorded").get<double>(), ran, 0.3);
  std::filesystem::remove_all(dir);
}

TEST(Recorder, ASweepWritesEachFrameOnceInOrderFittedToTheFirst) {
  const auto dir = fresh_dir("sweep");
  Recorder recorder;
  recorder.start({.kind = RecordPlan::Kind::Sweep, .map_only = true, .gif = true, .fps = 2, .what = "sweep-head"}, dir, {});
  recorder.add(solid(40, 30, 250, 0, 0));
  recorder.add(solid(20, 20, 0, 250, 0));  // smaller: padded with black
  recorder.add(solid(60, 40, 0, 0, 250));  // larger: cut
  recorder.stop({{"sweep", {{"kind", "head"}, {"values", {"0", "1", "2"}}}}});
  std::string error;
  const auto video = finished(recorder, &error);
  ASSERT_FALSE(video.empty()) << error;
  EXPECT_EQ(video.extension(), ".gif");
  const auto frames = read_all(video);
  ASSERT_EQ(frames.size(), 3u);
  for (const Image& f : frames) {
    EXPECT_EQ(f.width, 40);
    EXPECT_EQ(f.height, 30);
  }
  EXPECT_GT(mean_channel(frames[0], 0, 0, 0, 40, 30), 200);
  EXPECT_GT(mean_channel(frames[1], 1, 0, 0, 20, 20), 200);
  EXPECT_LT(mean_channel(frames[1], 1, 25, 0, 15, 30), 20);  // the padding is black
  EXPECT_GT(mean_channel(frames[2], 2, 0, 0, 40, 30), 200);
  std::filesystem::remove_all(dir);
}

TEST(Recorder, NothingRecordedLeavesNoFileAndSaysSo) {
  const auto dir = fresh_dir("empty");
  Recorder recorder;
  recorder.start({.kind = RecordPlan::Kind::Sweep, .map_only = true, .gif = false, .fps = 2, .what = "sweep-K"}, dir, {});
  recorder.stop();
  std::string error;
  EXPECT_TRUE(finished(recorder, &error).empty());
  EXPECT_NE(error.find("nothing was recorded"), std::string::npos) << error;
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  // An abandoned recording (the window closed) leaves nothing either.
  {
    Recorder abandoned;
    abandoned.start({.kind = RecordPlan::Kind::Live, .map_only = false, .gif = false, .fps = 10, .what = "window"}, dir, {});
    abandoned.add(solid(32, 32, 10, 20, 30));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  EXPECT_THROW(recorder.start({}, dir / "missing", {}), Error);
  std::filesystem::remove_all(dir);
}

TEST(Sweeps, TheHandMadeHeadsSweepTheirHeadsTemperatureAndTheKThatFit) {
  AppState state;
  state.hand_made.cell = {3, 2};
  const SweepShape shape{.vit = false, .cols = 5, .rows = 4, .layers = 1, .heads = 6, .image_width = 40, .image_height = 30};
  EXPECT_NE(sweep_unavailable("layer", shape), "");
  EXPECT_THROW(plan_sweep("layer", state, shape), Error);
  EXPECT_NE(sweep_unavailable("octaves", shape), "");

  const auto row = plan_sweep("query-row", state, shape);
  ASSERT_EQ(row.size(), 5u);  // every column of the query's row
  AppState s = state;
  row[4].apply(s);
  EXPECT_EQ(s.hand_made.cell.col, 4);
  EXPECT_EQ(s.hand_made.cell.row, 2);
  EXPECT_TRUE(s.hand_made.query_pinned);

  EXPECT_EQ(plan_sweep("head", state, shape).size(), 6u);
  EXPECT_NE(sweep_unavailable("query-path", shape), "");  // no pins: no path
  AppState pinned = state;
  pinned.hand_made.pins = {{0, 0}, {2, 1}, {4, 3}};
  SweepShape with_pins = shape;
  with_pins.pins = 3;
  const auto path = plan_sweep("query-path", pinned, with_pins);
  ASSERT_EQ(path.size(), 3u);
  EXPECT_EQ(path[1].value, "2,1");
  path[2].apply(s);
  EXPECT_EQ(s.hand_made.cell.col, 4);
  EXPECT_EQ(s.hand_made.cell.row, 3);
  const auto tau = plan_sweep("tau", state, shape);
  ASSERT_EQ(tau.size(), std::size(kSweepTemperatures));
  tau[0].apply(s);
  EXPECT_FLOAT_EQ(s.attention.temperature, kSweepTemperatures[0]);

  const auto k = plan_sweep("K", state, shape);  // 8, 12, 16, 24: a 40 × 30 photo takes no larger K
  ASSERT_EQ(k.size(), 4u);
  EXPECT_EQ(k.back().value, "24");
  k.back().apply(s);
  EXPECT_EQ(s.attention.patch, 24);
}

TEST(Sweeps, AViTSweepsItsLayersHeadsAndQueryNotTheHandMadeSettings) {
  AppState state;
  state.source = ShownSource::Vit;
  state.vit.prefix_token = 0;  // the CLS token: the query row is the middle one
  const SweepShape shape{.vit = true, .cols = 14, .rows = 14, .layers = 12, .heads = 6};
  EXPECT_NE(sweep_unavailable("tau", shape), "");
  EXPECT_NE(sweep_unavailable("K", shape), "");
  const auto layers = plan_sweep("layer", state, shape);
  ASSERT_EQ(layers.size(), 12u);
  AppState s = state;
  layers[7].apply(s);
  EXPECT_EQ(s.vit.layer, 7);
  EXPECT_EQ(s.hand_made.layer, state.hand_made.layer);  // the ViT's choice, not the hand-made heads'
  const auto row = plan_sweep("query-row", state, shape);
  ASSERT_EQ(row.size(), 14u);
  row[2].apply(s);
  EXPECT_EQ(s.vit.prefix_token, -1);
  EXPECT_EQ(s.vit.cell.col, 2);
  EXPECT_EQ(s.vit.cell.row, 7);
  const auto heads = plan_sweep("head", state, shape);
  ASSERT_EQ(heads.size(), 6u);
  heads[5].apply(s);
  EXPECT_EQ(s.vit.head.head, 5);
}

// A recording's (or `attnlab video`'s) sidecar that cannot be written takes its video with it
// (core/io/files.hpp): no video is left without its settings. Written, it is the same name with
// ".json".
TEST(Files, ASidecarThatCannotBeWrittenTakesItsOutputWithIt) {
  const auto dir = std::filesystem::temp_directory_path() / ("attnlab-sidecar-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  EXPECT_EQ(sidecar_of(dir / "clip.mp4"), dir / "clip.json");
  EXPECT_EQ(sidecar_of(dir / "a.b" / "map.png"), dir / "a.b" / "map.json");

  const auto video = dir / "clip.mp4";
  write_file_safely(video, std::string("frames"));
  write_sidecar_or_remove(video, "{}\n");
  EXPECT_TRUE(std::filesystem::exists(video));
  std::ifstream in(dir / "clip.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "{}\n");

  // A folder where the sidecar goes: the write fails, the error goes on, the video is gone.
  const auto other = dir / "other.mp4";
  write_file_safely(other, std::string("frames"));
  std::filesystem::create_directories(dir / "other.json");
  EXPECT_THROW(write_sidecar_or_remove(other, "{}\n"), Error);
  EXPECT_FALSE(std::filesystem::exists(other));
  // Not replaced without `overwrite`: the first video's sidecar exists, so the video goes.
  EXPECT_THROW(write_sidecar_or_remove(video, "{\"again\": 1}\n"), Error);
  EXPECT_FALSE(std::filesystem::exists(video));
  std::filesystem::remove_all(dir);
}
