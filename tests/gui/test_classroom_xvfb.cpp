// Issue 16, in front of a class, with the real app under Xvfb and real input (xdotool): the map
// keeps its size at every UI scale, the default colormap's top stays saturated over the photo,
// F12 saves the map alone for a slide into a folder chosen in the app and remembered, and the
// developer readouts live in a Diagnostics panel.
#include "core/io/image.hpp"
#include "test_support.hpp"
#include "xvfb_session.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <thread>

using namespace attnlab;
using namespace attnlab::testing;

namespace {

void write_settings(const std::filesystem::path& dir, const std::string& json) {
  std::filesystem::create_directories(dir / "config" / "attnlab");
  std::ofstream(dir / "config" / "attnlab" / "settings.json") << json;
}

std::array<float, 3> pixel(const Image& img, float x, float y) {
  const int px = std::clamp(static_cast<int>(x), 0, img.width - 1), py = std::clamp(static_cast<int>(y), 0, img.height - 1);
  return {img.at(px, py, 0), img.at(px, py, 1), img.at(px, py, 2)};
}

float saturation(const std::array<float, 3>& c) {
  const float hi = std::max({c[0], c[1], c[2]}), lo = std::min({c[0], c[1], c[2]});
  return hi > 0 ? (hi - lo) / hi : 0.0f;
}


}  // namespace

// At UI scale 1, 1.5 and 2 (the font rasterized at each size) the map stays as large as the
// window allows: it keeps at least 85 % of its size at 1, never under 45 % of the window's
// height, and the heads never lie over it; the menu bar holds its text.
TEST(ClassroomUnderXvfb, TheMapKeepsItsSizeAtEveryUiScale) {
  Xvfb x;
  float map_at_1 = 0;
  for (const float scale : {1.0f, 1.5f, 2.0f}) {
    SCOPED_TRACE("UI scale " + std::to_string(scale));
    const auto dir = temp_dir();
    write_settings(dir, R"({"classroom": {"ui_scale": )" + std::to_string(scale) + "}}");
    AppProcess app(x, dir);
    ASSERT_NE(app.wait_for_window(), 0u) << app.log();
    const auto [s, png] = app.export_view();
    ASSERT_FLOAT_EQ(s.at("classroom").at("ui_scale").get<float>(), scale);
    const float map = s.at("image_view").at("scale").get<float>() * s.at("image_size").at("height").get<float>();
    const float window_h = s.at("window").at("height").get<float>();
    std::printf("UI scale %.2f: the map is %.0f px tall in a %.0f px window (%s)\n", static_cast<double>(scale),
                static_cast<double>(map), static_cast<double>(window_h), png.string().c_str());
    EXPECT_GE(map, 0.45f * window_h);
    if (scale == 1.0f) map_at_1 = map;
    else EXPECT_GE(map, 0.85f * map_at_1);
    // The menu bar is as tall as its text at this scale (not cut in half).
    const auto menu = s.at("widgets").at("menu:View");
    EXPECT_GE(menu[3].get<float>(), 16.0f * scale) << menu.dump();
    // The heads beside the map while the picture leaves them a column (panel_layout), else below it; never over it.
    const auto heads = s.at("widgets").at("window:Heads"), map_window = s.at("widgets").at("window:Attention map");
    const bool right = heads[0].get<float>() >= map_window[0].get<float>() + map_window[2].get<float>() - 1;
    const bool below = heads[1].get<float>() >= map_window[1].get<float>() + map_window[3].get<float>() - 1;
    EXPECT_TRUE(right || below) << heads.dump() << " over " << map_window.dump();
    EXPECT_EQ(app.close(), 0) << app.log();
  }
}

// The default colormap (heat) over the photo at the default opacity: the most-attended patch
// of the giraffe's neck query is a saturated colour in the picture (fire's white top was grey
// there), and stays saturated through a projector's low contrast (black at 30 %, peak 85 %).
TEST(ClassroomUnderXvfb, TheDefaultColormapKeepsTheTopPatchSaturated) {
  Xvfb x;
  const auto dir = temp_dir();
  AppProcess app(x, dir);
  ASSERT_NE(app.wait_for_window(), 0u) << app.log();
  const auto [start, start_png] = app.export_view();
  EXPECT_EQ(start.at("display").at("colormap").get<std::string>(), "heat");
  const auto [nx, ny] = geometry_of(start).centre(20, 4);
  app.click(nx, ny);
  app.xdotool("mousemove 40 40");  // the pointer (and its tooltip) off the map; the query stays
  const auto [s, png] = app.export_view();
  ASSERT_EQ(s.at("hand_made").at("cell"), (nlohmann::json{{"col", 20}, {"row", 4}}));
  const Image shot = load_image(png);
  const auto& largest = s.at("row").at("largest");
  ASSERT_FALSE(largest.empty());
  for (const auto& cell : largest) {
    if (cell.at("col") == 20 && cell.at("row") == 4) continue;  // the query's outline is drawn there
    const auto [cx, cy] = geometry_of(s).centre(cell.at("col").get<int>(), cell.at("row").get<int>());
    auto c = pixel(shot, cx, cy);
    EXPECT_GT(saturation(c), 0.5f) << "patch " << cell.dump() << " is drawn (" << c[0] << ", " << c[1] << ", " << c[2] << ")";
    for (float& v : c) v = 0.30f + 0.55f * v;
    EXPECT_GT(saturation(c), 0.3f) << "patch " << cell.dump() << " fades on a projector";
  }
  EXPECT_EQ(app.close(), 0) << app.log();
}

// F12 for a slide: with "map only" ticked the picture is the map and its colour bar, pixel for
// pixel what the window showed there, and the sidecar says so.
TEST(ClassroomUnderXvfb, MapOnlyExportIsTheMapAndItsColourBar) {
  Xvfb x;
  const auto dir = temp_dir();
  AppProcess app(x, dir);
  ASSERT_NE(app.wait_for_window(), 0u) << app.log();
  const auto [start, start_png] = app.export_view();
  const auto [zx, zy] = geometry_of(start).centre(24, 20);
  app.click(zx, zy);  // the query pinned on the zebra: moving to the checkbox leaves it there
  app.xdotool("mousemove 40 40");
  const nlohmann::json shown = reveal_widget(app, app.export_view().first, "export_map_only");  // below the fold
  const auto [whole, whole_png] = app.export_view();
  EXPECT_EQ(whole.at("export").at("scope"), "window");
  const auto box = shown.at("widgets").at("export_map_only");
  const auto [bx, by] = centre_of(box);
  app.click(bx - box[2].get<float>() * 0.5f + 8, by);
  app.xdotool("mousemove 40 40");
  const auto [map, map_png] = app.export_view();
  EXPECT_TRUE(map.at("export_map_only").get<bool>());
  EXPECT_EQ(map.at("export").at("scope"), "map");
  EXPECT_EQ(map.at("hand_made").at("cell"), whole.at("hand_made").at("cell"));
  EXPECT_NE(map_png.filename().string().find("attnlab-map-"), std::string::npos) << map_png;
  const auto crop = map.at("export").at("crop");
  const int cx = crop[0].get<int>(), cy = crop[1].get<int>(), cw = crop[2].get<int>(), ch = crop[3].get<int>();
  const Image slide = load_image(map_png), window = load_image(whole_png);
  EXPECT_EQ(slide.width, cw);
  EXPECT_EQ(slide.height, ch);
  // Inside the map window, covering the drawn photo and more (the bar): the grid's whole patches
  // of the 500 x 500 photo, scaled (the cropped remainder lies outside the canvas when the map is
  // as tall as its window allows).
  const auto mw = map.at("widgets").at("window:Attention map");
  EXPECT_GE(cx, mw[0].get<int>());
  EXPECT_LE(cx + cw, mw[0].get<int>() + mw[2].get<int>() + 1);
  const int K = map.at("patch").get<int>();
  const float drawn = map.at("image_view").at("scale").get<float>() * static_cast<float>(500 / K * K);
  EXPECT_GT(static_cast<float>(cw), drawn + 40.0f) << "no room for the colour bar";
  EXPECT_GE(static_cast<float>(ch), drawn - 2.0f);
  EXPECT_LT(ch, map.at("window").at("height").get<int>() - 100) << "more than the map";
  // The same pixels as the window export, over the whole slide.
  int differ = 0;
  for (int y = 0; y < slide.height; y += 3)
    for (int xx = 0; xx < slide.width; xx += 3)
      for (int c = 0; c < 3; ++c)
        if (std::abs(slide.at(xx, y, c) - window.at(xx + cx, y + cy, c)) > 2.5f / 255.0f) ++differ;
  EXPECT_EQ(differ, 0) << "the slide is not the window's map";
  EXPECT_EQ(app.close(), 0) << app.log();
}

// The export folder is chosen in the app (typed, Enter), takes the next F12, and is remembered
// by the next run; a file's path is refused with a one-line error and the folder stays.
TEST(ClassroomUnderXvfb, TheExportFolderIsChosenAndRemembered) {
  Xvfb x;
  const auto dir = temp_dir();
  const auto slides = dir / "slides";
  {
    AppProcess app(x, dir);
    ASSERT_NE(app.wait_for_window(), 0u) << app.log();
    const auto [start, start_png] = app.export_view();
    const auto field = reveal_widget(app, start, "export_dir").at("widgets").at("export_dir");  // below the fold
    const auto [fx, fy] = centre_of(field);
    // A file is not a folder: refused, the export folder unchanged.
    app.click(fx, fy);  // selects the whole path: typing replaces it
    app.xdotool("type --delay 20 '" + start_png.string() + "'");
    app.key("Return");
    const auto [refused, refused_png] = app.export_view();
    EXPECT_NE(refused.at("banner").get<std::string>().find("not a folder"), std::string::npos) << refused.at("banner");
    EXPECT_EQ(refused.at("export_dir"), start.at("export_dir"));
    // A new folder in an existing one: made, and the next F12 goes there.
    app.click(fx, fy);
    app.xdotool("type --delay 20 '" + slides.string() + "'");
    app.key("Return");
    app.xdotool("mousemove 40 40");
    app.key("F12");
    // The sidecar is written after the picture: once it is there, both are.
    const auto json = wait_for_file(slides, ".json");
    ASSERT_FALSE(json.empty()) << "no sidecar in " << slides << "; log:\n" << app.log();
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(json).replace_extension(".png")));
    EXPECT_EQ(app.close(), 0) << app.log();
  }
  std::ifstream in(dir / "config" / "attnlab" / "settings.json");
  const auto remembered = nlohmann::json::parse(in);
  EXPECT_EQ(remembered.at("export_dir").get<std::string>(), slides.string());
}

// Issue 47: with no folder chosen, F12 and F9 save into the Pictures folder's attnlab (made then):
// ~/Pictures, or the folder user-dirs.dirs names. The toast names the file and its "Open folder"
// opens that folder (a stand-in xdg-open on the PATH writes what it was asked to open); the
// remembered settings never take the default folder as a choice ("." of older ones included).
TEST(ClassroomUnderXvfb, SavesGoToThePicturesFolderByDefault) {
  Xvfb x;
  const auto dir = temp_dir();
  const auto home = dir / "home";
  std::filesystem::create_directories(home);
  const auto bin = dir / "bin", opened = dir / "opened.txt";
  std::filesystem::create_directories(bin);
  std::ofstream(bin / "xdg-open") << "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '" << opened.string() << "'\n";
  std::filesystem::permissions(bin / "xdg-open", std::filesystem::perms::owner_all);
  const char* path = std::getenv("PATH");
  const std::vector<std::string> env = {"HOME=" + home.string(), "XDG_PICTURES_DIR",
                                        "PATH=" + bin.string() + ":" + (path ? path : "/usr/bin:/bin")};
  auto remembered_export_dir = [&] {
    std::ifstream in(dir / "config" / "attnlab" / "settings.json");
    return nlohmann::json::parse(in).at("export_dir");
  };
  const auto pictures = home / "Pictures" / "attnlab";
  {
    AppProcess app(x, dir, {}, env, pictures);
    ASSERT_NE(app.wait_for_window(), 0u) << app.log();
    EXPECT_FALSE(std::filesystem::exists(home / "Pictures")) << "made before anything was saved";
    const auto [first, first_png] = app.export_view();
    EXPECT_EQ(first_png.parent_path(), pictures);
    EXPECT_NE(app.log().find("attnlab: saved " + first_png.string() + "\n"), std::string::npos) << app.log();
    app.key("F9");
    std::filesystem::path csv;
    wait_for_csv(pictures, "attnlab-row-", &csv);
    // The next picture leaves the toast out but says where it is: its text and its button.
    const auto [second, second_png] = app.export_view();
    EXPECT_EQ(second.at("toast").get<std::string>(), "saved " + csv.string());
    EXPECT_FALSE(second.at("widgets").contains("toast")) << "the toast is in the exported picture";
    ASSERT_TRUE(second.at("left_out_widgets").contains("toast:open_folder")) << second.at("left_out_widgets").dump();
    const auto [ox, oy] = centre_of(second.at("left_out_widgets").at("toast:open_folder"));
    app.click(ox, oy);
    for (int n = 0; n < 100 && !std::filesystem::exists(opened); ++n) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::ifstream in(opened);
    std::string asked;
    std::getline(in, asked);
    EXPECT_EQ(asked, pictures.string()) << "Open folder opened another folder, or none; log:\n" << app.log();
    app.xdotool("mousemove 5 5");
    EXPECT_EQ(app.close(), 0) << app.log();
  }
  EXPECT_EQ(remembered_export_dir(), "") << "the default folder was remembered as a choice";
  // Settings of an older version ("." was its default) and a Pictures folder named in
  // user-dirs.dirs, as xdg-user-dirs writes it.
  write_settings(dir, R"({"export_dir": "."})");
  std::ofstream(dir / "config" / "user-dirs.dirs") << "# written by xdg-user-dirs-update\nXDG_PICTURES_DIR=\"$HOME/Bilder\"\n";
  const auto bilder = home / "Bilder" / "attnlab";
  {
    AppProcess app(x, dir, {}, env, bilder);
    ASSERT_NE(app.wait_for_window(), 0u) << app.log();
    const auto [shot, shot_png] = app.export_view();
    EXPECT_EQ(shot_png.parent_path(), bilder);
    EXPECT_EQ(shot.at("export_dir"), "") << "\".\" was not read as the default";
    EXPECT_EQ(app.close(), 0) << app.log();
  }
  EXPECT_EQ(remembered_export_dir(), "");
}

// The map shows no developer numbers; View > Diagnostics has the driver, the timings and the
// engine's row checked against the CPU reference for the current query.
TEST(ClassroomUnderXvfb, DiagnosticsPanelHasTheDriverAndTheChecks) {
  Xvfb x;
  const auto dir = temp_dir();
  AppProcess app(x, dir);
  ASSERT_NE(app.wait_for_window(), 0u) << app.log();
  const auto [start, start_png] = app.export_view();
  EXPECT_FALSE(start.at("widgets").contains("window:Diagnostics")) << "closed at first";
  EXPECT_TRUE(start.at("checks").empty()) << start.at("checks").dump();
  const auto menu = start.at("widgets").at("menu:View");
  const auto [mx, my] = centre_of(menu);
  app.click(mx, my);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto [open, open_png] = app.export_view();
  ASSERT_TRUE(open.at("widgets").contains("menu:View/Diagnostics")) << "no Diagnostics entry";
  const auto [ex, ey] = centre_of(open.at("widgets").at("menu:View/Diagnostics"));
  app.click(ex, ey);
  const auto [zx, zy] = geometry_of(open).centre(24, 20);
  app.click(zx, zy);
  const auto [s, png] = app.export_view();
  EXPECT_TRUE(s.at("classroom").at("panels").at("diagnostics").get<bool>());
  ASSERT_TRUE(s.at("widgets").contains("window:Diagnostics"));
  EXPECT_TRUE(s.at("widgets").contains("diagnostics:timing"));
  const auto& checks = s.at("checks");
  ASSERT_EQ(checks.size(), 1u) << checks.dump();
  const std::string result = checks.begin().value().get<std::string>();
  EXPECT_NE(checks.begin().key().find("CPU reference"), std::string::npos) << checks.dump();
  double diff = 1;
  ASSERT_EQ(std::sscanf(result.c_str(), "largest difference %lf", &diff), 1) << result;
  EXPECT_LT(diff, 1e-5) << result;
  EXPECT_NE(result.find("query " + std::to_string(s.at("query_index").get<int>())), std::string::npos)
      << "checked another query: " << result;
  EXPECT_EQ(app.close(), 0) << app.log();
}
