// Images → Open video under Xvfb (issue 40): a clip made here with the ffmpeg command from the
// safari photo (a slow pan) is played through the hand-made heads in the real window; the
// picture moves while it plays, Pause freezes it as an ordinary image (exported, the same picture
// twice), Play goes on; a file that is not a video gives a banner and the photo stays.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/io/image.hpp"
#include "gui/xvfb_session.hpp"
#include "test_support.hpp"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

// The photo's part of an export (the main map's image view, the grid's cols × rows patches).
Image photo_part(const std::filesystem::path& png, const nlohmann::json& sidecar) {
  const Image shot = load_image(png);
  const Geometry g = geometry_of(sidecar);
  const int w = static_cast<int>(static_cast<float>(sidecar.at("grid").at("cols").get<int>() * g.K) * g.scale);
  const int h = static_cast<int>(static_cast<float>(sidecar.at("grid").at("rows").get<int>() * g.K) * g.scale);
  Image out;
  out.width = w;
  out.height = h;
  out.rgb.resize(static_cast<std::size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        out.at(x, y, c) = shot.at(std::min(shot.width - 1, static_cast<int>(g.x) + x),
                                  std::min(shot.height - 1, static_cast<int>(g.y) + y), c);
  return out;
}

double mean_difference(const Image& a, const Image& b) {
  if (a.width != b.width || a.height != b.height) return INFINITY;
  double sum = 0;
  for (std::size_t i = 0; i < a.rgb.size(); ++i) sum += std::abs(a.rgb[i] - b.rgb[i]);
  return 255.0 * sum / static_cast<double>(a.rgb.size());
}

void open_video_by_path(AppProcess& app, const nlohmann::json& sidecar, const std::string& path) {
  click_widget(app, sidecar, "clear_button");
  click_widget(app, sidecar, "open_path");
  app.xdotool("type --delay 5 '" + path + "'");
  click_widget(app, sidecar, "open_video_button");
}

}  // namespace

// Plays the clip in the real window (with the bundled ViT loaded when `with_model`), checks the
// picture moves, Pause freezes it, Play goes on.
void play_pause_play(bool with_model) {
  Xvfb x;
  const auto dir = temp_dir();
  const auto clip = dir / "pan.mp4";
  // 20 s at 10 frames/s, 320 × 240: a slow zoom while the window pans (long enough to play
  // through the whole test on a busy machine).
  const std::string make =
      "ffmpeg -nostdin -v error -y -loop 1 -framerate 10 -i '" + asset("safari.jpg").string() +
      "' -vf \"zoompan=z='1+0.004*on':x='on*1.5':y='on':d=1:s=320x240:fps=10\" -frames:v 200 -c:v libx264 "
      "-pix_fmt yuv420p '" +
      clip.string() + "'";
  ASSERT_EQ(std::system(make.c_str()), 0) << "the video tests need the ffmpeg command (./setup.sh --tests)";
  write_file(dir / "notes.mp4", "These are lecture notes, not a video.\n");

  AppProcess app(
      x, dir,
      with_model ? std::vector<std::string>{"--model", asset("fashion_vit").string()} : std::vector<std::string>{});
  ASSERT_NE(app.wait_for_window(), 0u) << app.log();
  const nlohmann::json start = with_model
                                   ? export_until(app, [](const nlohmann::json& j) { return j.contains("vit_drawn"); })
                                   : app.export_view().first;

  // Not a video: a banner, the photo stays.
  open_video_by_path(app, start, (dir / "notes.mp4").string());
  const nlohmann::json refused =
      export_until(app, [](const nlohmann::json& j) { return !j.value("banner", std::string()).empty(); });
  EXPECT_NE(refused.value("banner", std::string()).find("notes.mp4"), std::string::npos)
      << refused.value("banner", std::string());
  EXPECT_TRUE(refused.at("image").get<std::string>().ends_with("safari.jpg"));

  open_video_by_path(app, refused, clip.string());
  const nlohmann::json playing =
      export_until(app, [](const nlohmann::json& j) { return j.at("image").get<std::string>().ends_with("pan.mp4"); });
  EXPECT_EQ(playing.at("grid").at("cols"), 320 / 16);
  EXPECT_EQ(playing.at("grid").at("rows"), 240 / 16);
  ASSERT_TRUE(playing.contains("widgets") && playing.at("widgets").contains("video_pause")) << playing.dump(2);

  // Playing: the picture moves between exports.
  auto [a, a_png] = app.export_view();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto [b, b_png] = app.export_view();
  EXPECT_GT(mean_difference(photo_part(a_png, a), photo_part(b_png, b)), 1.0)
      << "the picture did not move while playing";

  // Paused: the same picture, export after export, with the hand-made heads' map on it.
  click_widget(app, b, "video_pause");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto [p1, p1_png] = app.export_view();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto [p2, p2_png] = app.export_view();
  EXPECT_LT(mean_difference(photo_part(p1_png, p1), photo_part(p2_png, p2)), 0.01) << "the paused picture moved";
  EXPECT_TRUE(p2.at("image").get<std::string>().ends_with("pan.mp4"));

  // Play again: it moves on.
  click_widget(app, p2, "video_pause");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto [c, c_png] = app.export_view();
  EXPECT_GT(mean_difference(photo_part(p2_png, p2), photo_part(c_png, c)), 1.0) << "Play did not go on";

  EXPECT_EQ(app.close(), 0) << app.log();
}

TEST(VideoUnderXvfb, PlaysPausesExportsAndPlaysOn) { play_pause_play(false); }

TEST(VideoUnderXvfb, PlaysThroughTheBundledViT) { play_pause_play(true); }

TEST(VideoUnderXvfb, NoCameraFoundIsSaidNotAnError) {
  // This machine has no video device: the panel says so, no banner.
  Xvfb x;
  const auto dir = temp_dir();
  AppProcess app(x, dir);
  ASSERT_NE(app.wait_for_window(), 0u) << app.log();
  const auto [start, start_png] = app.export_view();
  click_widget(app, start, "look_for_cameras");
  const nlohmann::json looked =
      export_until(app, [](const nlohmann::json& j) { return j.at("widgets").contains("no_camera_found"); });
  EXPECT_EQ(looked.value("banner", std::string()), "");
  EXPECT_TRUE(looked.at("image").get<std::string>().ends_with("safari.jpg"));
  EXPECT_EQ(app.close(), 0) << app.log();
}
