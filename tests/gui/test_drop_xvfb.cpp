// Files dropped on the real window under Xvfb, through the XDND protocol as a file manager
// sends them: a photo opens, a bad file is a banner and the previous photo stays.
#include <gtest/gtest.h>

#include "core/io/image.hpp"
#include "test_support.hpp"
#include "xdnd_drop.hpp"
#include "xvfb_session.hpp"

using namespace attnlab;
using namespace attnlab::testing;

TEST(XdndDrop, FileUriIsAbsoluteAndPercentEncoded) {
  EXPECT_EQ(file_uri_line("/tmp/a b/photo #1.jpg"), "file:///tmp/a%20b/photo%20%231.jpg\r\n");
  EXPECT_EQ(file_uri_line("/x/é.png"), "file:///x/%C3%A9.png\r\n");
}

TEST(AppUnderXvfb, DroppedPhotoOpensAndDroppedBadFileKeepsIt) {
  Xvfb x;
  const auto dir = temp_dir();
  AppProcess app(x, dir);
  const unsigned long window = app.wait_for_window();
  ASSERT_NE(window, 0u) << app.log();
  const auto [start, start_png] = app.export_view();
  EXPECT_TRUE(start.at("image").get<std::string>().ends_with("safari.jpg"));
  const int w = start.at("window").at("width").get<int>(), h = start.at("window").at("height").get<int>();

  // A photo dropped in the middle of the window opens with its grid.
  const XdndResult horses = xdnd_drop(x.display(), window, asset("horses.jpg"), w / 2, h / 2);
  ASSERT_TRUE(horses) << horses.error;
  const auto [opened, opened_png] = app.export_view();
  EXPECT_TRUE(opened.at("image").get<std::string>().ends_with("horses.jpg")) << opened.at("image");
  EXPECT_EQ(opened.at("grid").at("cols"), 773 / 16);
  EXPECT_EQ(opened.at("banner").get<std::string>(), "");

  // Lecture notes saved as .png, dropped near a corner (a space in the name, sent as %20):
  // a banner says why, and the horses stay with their grid.
  write_file(dir / "lecture notes.png", "These are lecture notes, not a picture.\n");
  const XdndResult notes = xdnd_drop(x.display(), window, dir / "lecture notes.png", 40, h - 40);
  ASSERT_TRUE(notes) << notes.error;
  const auto [kept, kept_png] = app.export_view();
  EXPECT_TRUE(kept.at("image").get<std::string>().ends_with("horses.jpg")) << kept.at("image");
  EXPECT_EQ(kept.at("grid"), opened.at("grid"));
  EXPECT_NE(kept.at("banner").get<std::string>().find("not an image"), std::string::npos) << kept.at("banner");
  EXPECT_NE(kept.at("banner").get<std::string>().find("lecture notes.png"), std::string::npos) << kept.at("banner");

  // A name long enough that the message is wider than the window: the banner wraps below the
  // menu bar (which stays usable), and its dismiss button stays inside the window and works.
  const auto long_name = dir / ("notes for the lecture on attention in vision transformers, with the exercises of "
                                "chapter 26 and the answers to last week's questions.png");
  write_file(long_name, "Still not a picture.\n");
  ASSERT_TRUE(xdnd_drop(x.display(), window, long_name, w / 2, h / 2));
  const auto [wide, wide_png] = app.export_view();
  EXPECT_NE(wide.at("banner").get<std::string>().find("answers"), std::string::npos) << wide.at("banner");
  const auto banner = wide.at("widgets").at("window:banner"), menu = wide.at("widgets").at("menu:View");
  EXPECT_GE(banner[1].get<float>(), menu[1].get<float>() + menu[3].get<float>()) << "the banner covers the menu bar";
  const auto dismiss = wide.at("widgets").at("banner_dismiss");
  const float dx = dismiss[0].get<float>(), dy = dismiss[1].get<float>();
  ASSERT_GE(dx, 0.0f);
  ASSERT_LE(dx + dismiss[2].get<float>(), static_cast<float>(w)) << "the dismiss button is outside the window";
  app.click(dx + dismiss[2].get<float>() * 0.5f, dy + dismiss[3].get<float>() * 0.5f);
  const auto [dismissed, dismissed_png] = app.export_view();
  EXPECT_EQ(dismissed.at("banner").get<std::string>(), "");

  EXPECT_EQ(app.close(), 0) << app.log();
}

TEST(AppUnderXvfb, AnExportWhileAPatchSizeThatDoesNotFitIsHeldDescribesTheMapDrawn) {
  // Found by the soak test: the sidecar recorded the controls' settings of the exporting frame,
  // which the app applies only in the next one, and never when they do not fit. Pressed at its
  // left end (K = 4) and held at a K larger than the image, the K slider sets that K again every
  // frame while the app keeps K = 4, so the export comes in such a frame.
  Xvfb x;
  const auto dir = temp_dir();
  std::vector<std::uint8_t> grey(64 * 48, 128);
  write_png(dir / "small.png", 64, 48, 1, grey);
  AppProcess app(x, dir, {(dir / "small.png").string()});
  const unsigned long window = app.wait_for_window();
  ASSERT_NE(window, 0u) << app.log();
  const auto [start, start_png] = app.export_view();
  ASSERT_EQ(start.at("grid").at("K"), 16);
  const auto k = start.at("widgets").at("patch");  // the slider, then its label
  const int y = static_cast<int>(k[1].get<float>() + k[3].get<float>() * 0.5f);
  const std::string w = std::to_string(window);
  app.xdotool("mousemove --window " + w + " " + std::to_string(static_cast<int>(k[0].get<float>()) + 4) + " " +
              std::to_string(y) + " mousedown 1 sleep 0.2 mousemove --window " + w + " " +
              std::to_string(static_cast<int>(k[0].get<float>() + k[2].get<float>() * 0.5f)) + " " + std::to_string(y) +
              " sleep 0.5");
  const auto [held, held_png] = app.export_view();
  app.xdotool("mouseup 1");
  EXPECT_NE(held.at("banner").get<std::string>().find("larger than the image"), std::string::npos) << held.at("banner");
  EXPECT_EQ(held.at("patch"), held.at("grid").at("K")) << "the sidecar's K is not the K drawn";
  EXPECT_LE(held.at("patch").get<int>(), 48) << "a K that does not fit a 64x48 image";
  EXPECT_EQ(app.close(), 0) << app.log();
}
