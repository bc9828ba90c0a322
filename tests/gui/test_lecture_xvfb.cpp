// Issue 47's acceptance: a lecture on a 1024 × 768 projector, walked in the real window under
// Xvfb at UI scale 1 and 2 with real input (xdotool): the hand-made heads at K = 32, presentation
// mode (F5), three steps of the guided tour, the bundled Fashion-MNIST ViT on three of its
// examples after K = 32, the Train tab before and after Start; F12 at each step. At each step,
// from the sidecar's rectangles (app/gui/state/widget_log.hpp):
//   1. the map gets the space: the map's picture ("map:picture", the photo and its heat map as
//      drawn) is larger in area than every other window, and at least kMapShare of the window;
//      at UI scale 2 it is no smaller than at 1 (the same step);
//   2. no two windows overlap (every "window:<name>" of the frame; the error banner is left out:
//      it is meant to lie over the panels, and the steps that must not show one say so);
//   3. nothing is clipped: every recorded control lies inside its window's width (the window it
//      was drawn in: "widget_windows"), every window inside the screen, no tab label shrunk and
//      no window title cut ("labels_cut");
//   4. the saved file's folder: started without ATTNLAB_EXPORT_DIR, HOME a folder of the test's
//      (XDG_PICTURES_DIR unset, no user-dirs.dirs), F12's PNG lands in $HOME/Pictures/attnlab;
//   5. settings.json: written by the test before the start with settings of a user's own
//      (temperature, a mask, the custom head's W_q and W_k, the colormap, the panels, the UI
//      scale); after the walk and the window closed, every one of them is as written except the
//      keys the walk set, listed per walk.
// The ViT's steps also check that the map is the ViT's map of that image: the sidecar names the
// image, the source and the model, and the values drawn are the model's row, computed here on
// the CPU from the same files.
// ATTNLAB_LECTURE_SHOTS=<folder> keeps every step's F12 picture there
// (scale<S>-<step>.png) to look at.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "core/io/image.hpp"
#include "core/vit/vit_cpu.hpp"
#include "core/vit/vit_run.hpp"
#include "test_support.hpp"
#include "xdnd_drop.hpp"
#include "xvfb_session.hpp"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

constexpr int kScreenW = 1024, kScreenH = 768;
/// The least share of the window's area the map's picture takes at every step (a 443 px
/// square at 1024 × 768).
constexpr float kMapShare = 0.25f;

std::filesystem::path fashion_vit() { return asset("fashion_vit"); }
std::filesystem::path fashion_image(const std::string& name) { return fashion_vit() / "images" / name; }

// settings.json as a user left it: nothing here is the default but the panels (all shown) and
// the export folder (none chosen: the Pictures folder). Numbers exact in float.
nlohmann::json users_settings(float ui_scale, int patch) {
  return {
      {"patch", patch},
      {"temperature", 0.25},
      {"mask", {{"kind", "window"}, {"radius", 3}}},
      {"custom", {{"W_q", {0, 1, 0, 1, 0, 0, 0, 0, 1}}, {"W_k", {1, 0, 0, 0, 0, 1, 0, 1, 0}}}},
      {"display", {{"colormap", "bmy"}, {"opacity", 0.625}, {"grid", false}}},
      {"classroom",
       {{"ui_scale", ui_scale},
        {"panels", {{"controls", true}, {"heads", true}, {"pinned", true}, {"images", true}, {"diagnostics", false}}}}},
      {"export_dir", ""}};
}

void write_settings(const std::filesystem::path& dir, const nlohmann::json& j) {
  std::filesystem::create_directories(dir / "config" / "attnlab");
  std::ofstream(dir / "config" / "attnlab" / "settings.json") << j.dump(2);
}

// Every leaf of a JSON object by its path ("mask/radius"); arrays are leaves.
void leaves(const nlohmann::json& j, const std::string& at, std::map<std::string, nlohmann::json>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) leaves(v, at.empty() ? k : at + "/" + k, out);
    return;
  }
  out[at] = j;
}

bool same_value(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number() && b.is_number()) return static_cast<float>(a.get<double>()) == static_cast<float>(b.get<double>());
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!same_value(a[i], b[i])) return false;
    return true;
  }
  return a == b;
}

// Check 5: the settings.json the app left is the one written, but for the keys the walk set
// (paths or their prefixes, "vit" for everything under it).
void expect_settings_kept(const std::filesystem::path& dir, const nlohmann::json& written,
                          const std::set<std::string>& set_by_walk) {
  std::ifstream in(dir / "config" / "attnlab" / "settings.json");
  ASSERT_TRUE(in) << "no settings.json after the walk";
  const nlohmann::json saved = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(saved.is_discarded()) << "settings.json is not JSON";
  std::map<std::string, nlohmann::json> before, after;
  leaves(written, "", before);
  leaves(saved, "", after);
  auto walk_set = [&](const std::string& path) {
    for (const auto& k : set_by_walk)
      if (path == k || path.starts_with(k + "/")) return true;
    return false;
  };
  std::string lost;
  for (const auto& [path, value] : before) {
    if (walk_set(path)) continue;
    const auto it = after.find(path);
    if (it == after.end())
      lost += "\n  " + path + ": " + value.dump() + " -> (gone)";
    else if (!same_value(value, it->second))
      lost += "\n  " + path + ": " + value.dump() + " -> " + it->second.dump();
  }
  EXPECT_TRUE(lost.empty()) << "settings.json lost what the user set:" << lost;
}

struct Rect {
  float x, y, w, h;
  float area() const { return std::max(w, 0.0f) * std::max(h, 0.0f); }
};
Rect rect_of(const nlohmann::json& r) {
  return {r[0].get<float>(), r[1].get<float>(), r[2].get<float>(), r[3].get<float>()};
}
std::string str(const Rect& r) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "[%.0f, %.0f, %.0f x %.0f]", static_cast<double>(r.x), static_cast<double>(r.y),
                static_cast<double>(r.w), static_cast<double>(r.h));
  return buf;
}

// One step's picture, kept when ATTNLAB_LECTURE_SHOTS names a folder.
void keep_shot(const std::filesystem::path& png, float scale, const std::string& step) {
  const char* keep = std::getenv("ATTNLAB_LECTURE_SHOTS");
  if (!keep || !*keep) return;
  std::error_code ec;
  std::filesystem::create_directories(keep, ec);
  std::filesystem::copy_file(
      png, std::filesystem::path(keep) / ("scale" + std::to_string(static_cast<int>(scale)) + "-" + step + ".png"),
      std::filesystem::copy_options::overwrite_existing, ec);
}

// Checks 1 to 4 on one step's export; returns the area of the map's picture (0 when none was
// drawn, minus the chapter view's area when a chapter view takes the map's place) and prints the
// step's numbers.
float check_step(const nlohmann::json& s, const std::filesystem::path& png, const std::filesystem::path& dir,
                 float scale, const std::string& step) {
  SCOPED_TRACE("step " + step + " at UI scale " + std::to_string(static_cast<int>(scale)));
  keep_shot(png, scale, step);
  // 4. The folder a teacher looks in.
  EXPECT_EQ(png.parent_path(), dir / "home" / "Pictures" / "attnlab") << "F12 saved " << png;

  const float W = s.at("window").at("width").get<float>(), H = s.at("window").at("height").get<float>();
  EXPECT_GE(W, 0.9f * kScreenW) << "the window does not fill the screen";
  EXPECT_GE(H, 0.9f * kScreenH) << "the window does not fill the screen";
  const auto& widgets = s.at("widgets");
  std::map<std::string, Rect> windows;
  for (const auto& [name, r] : widgets.items())
    if (name.starts_with("window:") && name != "window:banner") windows[name] = rect_of(r);

  // 1. The map gets the space; while a chapter view is open (the tour's steps) it takes the map's
  // place, one view at a time, and that view gets the space.
  float map_area = 0;
  std::string largest_other = "none";
  float largest_other_area = 0;
  std::string chapter_view;
  const nlohmann::json views = s.value("views", nlohmann::json::object());
  for (auto it = views.begin(); it != views.end(); ++it)
    if (it.value().is_boolean() && it.value().get<bool>()) {
      EXPECT_TRUE(chapter_view.empty()) << "two chapter views open: " << chapter_view << " and " << it.key();
      chapter_view = "window:" + it.key();
    }
  if (!chapter_view.empty()) {
    EXPECT_FALSE(widgets.contains("map:picture")) << "the map drawn under the chapter view";
    const Rect view = windows.contains(chapter_view) ? windows.at(chapter_view) : Rect{};
    if (!windows.contains(chapter_view)) ADD_FAILURE() << chapter_view << " was not drawn";
    map_area = view.area();
    for (const auto& [name, r] : windows) {
      if (name == chapter_view) continue;
      if (r.area() > largest_other_area) largest_other_area = r.area(), largest_other = name + " " + str(r);
      EXPECT_GT(map_area, r.area()) << "the chapter view " << str(view) << " is smaller than " << name << " " << str(r);
    }
    EXPECT_GE(map_area, kMapShare * W * H) << "the chapter view " << str(view) << " takes " << 100 * map_area / (W * H) << " % of the window";
    // The chapter view takes all the room right of the controls at every scale, less the menu bar
    // and the tour's box, which grow with the scale: it is left out of the scale 2 against 1 check.
    map_area = -map_area;
  } else if (!widgets.contains("map:picture")) {
    ADD_FAILURE() << "the map's picture was not drawn";
  } else {
    const Rect map = rect_of(widgets.at("map:picture"));
    map_area = map.area();
    for (const auto& [name, r] : windows) {
      if (name == "window:Attention map") continue;
      if (r.area() > largest_other_area) largest_other_area = r.area(), largest_other = name + " " + str(r);
      EXPECT_GT(map_area, r.area()) << "the map's picture " << str(map) << " is smaller than " << name << " " << str(r);
    }
    EXPECT_GE(map_area, kMapShare * W * H)
        << "the map's picture " << str(map) << " takes " << 100 * map_area / (W * H) << " % of the window";
  }

  // 2. No two windows overlap (their edges may touch: a pixel of rounding).
  std::string overlaps;
  for (auto a = windows.begin(); a != windows.end(); ++a)
    for (auto b = std::next(a); b != windows.end(); ++b) {
      const Rect &p = a->second, &q = b->second;
      const float ox = std::min(p.x + p.w, q.x + q.w) - std::max(p.x, q.x),
                  oy = std::min(p.y + p.h, q.y + q.h) - std::max(p.y, q.y);
      if (ox > 1 && oy > 1) overlaps += "\n  " + a->first + " " + str(p) + " and " + b->first + " " + str(q);
    }
  EXPECT_TRUE(overlaps.empty()) << "windows overlap:" << overlaps;

  // 3. Nothing clipped: controls inside their window's width, windows inside the screen, no label
  // shortened by ImGui.
  std::string clipped;
  for (const auto& [name, r] : windows)
    if (r.x < -1 || r.y < -1 || r.x + r.w > W + 1 || r.y + r.h > H + 1)
      clipped += "\n  " + name + " " + str(r) + " off the screen";
  const auto owners = s.value("widget_windows", nlohmann::json::object());
  EXPECT_FALSE(owners.empty()) << "the sidecar does not say which window each control is in";
  for (const auto& [name, owner_json] : owners.items()) {
    if (!widgets.contains(name)) continue;
    const Rect r = rect_of(widgets.at(name));
    const std::string owner = owner_json.get<std::string>();
    Rect in{0, 0, W, H};
    if (widgets.contains(owner)) in = rect_of(widgets.at(owner));
    if (r.x < in.x - 1 || r.x + r.w > in.x + in.w + 1)
      clipped += "\n  " + name + " " + str(r) + " past the edge of " + owner + " " + str(in);
  }
  for (const auto& cut : s.value("labels_cut", nlohmann::json::array()))
    clipped += "\n  " + cut.get<std::string>() + ": label cut";
  EXPECT_TRUE(clipped.empty()) << "clipped:" << clipped;

  std::printf(
      "[lecture] scale %d %-18s map %s = %5.1f %% of the window; largest other window %s (%5.1f %%); "
      "overlaps %zu, clipped %zu; saved in %s\n",
      static_cast<int>(scale), step.c_str(),
      widgets.contains("map:picture") ? str(rect_of(widgets.at("map:picture"))).c_str() : "(none)",
      static_cast<double>(100 * std::abs(map_area) / (W * H)), largest_other.c_str(),
      static_cast<double>(100 * largest_other_area / (W * H)),
      static_cast<std::size_t>(std::count(overlaps.begin(), overlaps.end(), '\n')),
      static_cast<std::size_t>(std::count(clipped.begin(), clipped.end(), '\n')), png.parent_path().string().c_str());
  if (!overlaps.empty() || !clipped.empty()) std::printf("%s%s\n", overlaps.c_str(), clipped.c_str());
  std::fflush(stdout);  // before the next AppProcess forks (its child would write this buffer again)
  return map_area;
}

// Check 1's last part: at UI scale 2 the map is no smaller than at 1, step by step (a pixel
// row or column of rounding).
void expect_scale_two_keeps_the_map(const std::map<std::string, std::array<float, 2>>& area) {
  for (const auto& [step, a] : area)
    if (a[0] >= 0 && a[1] >= 0) {  // a chapter view's step: negative (check_step)
      EXPECT_GE(a[1], a[0] - 2 * std::sqrt(a[0]))
        << "step " << step << ": the map's picture is " << a[0] << " px^2 at UI scale 1, " << a[1] << " px^2 at 2";
    }
}

std::string file_name(const nlohmann::json& s) {
  return s.contains("image") ? std::filesystem::path(s.at("image").get<std::string>()).filename().string() : "";
}

// The ViT's map drawn and settled (no new maps on the way), on this image or after an error.
bool vit_settled(const nlohmann::json& j, const std::string& image) {
  return j.contains("vit_drawn") && !j.at("vit_drawn").at("busy").get<bool>() &&
         (file_name(j) == image || !j.at("banner").get<std::string>().empty());
}

// The map is the bundled ViT's map of `image`: the sidecar names it, the source and the model,
// and the values drawn are the model's row for that image (the choice the sidecar records),
// computed here on the CPU; the GPU's own rounding allowed, as AppUnderXvfb's backend test.
void expect_vit_map_of(const nlohmann::json& s, const std::filesystem::path& image,
                       const std::shared_ptr<const VitModel>& model) {
  SCOPED_TRACE("the ViT on " + image.filename().string());
  EXPECT_EQ(s.at("banner").get<std::string>(), "") << "an error instead of the example";
  EXPECT_EQ(s.at("source"), "vit");
  EXPECT_EQ(file_name(s), image.filename().string()) << "the map is of another image";
  ASSERT_TRUE(s.contains("vit_drawn")) << "no ViT map drawn";
  const auto& d = s.at("vit_drawn");
  EXPECT_NE(d.at("model").get<std::string>().find("fashion_vit"), std::string::npos) << d.at("model");
  ASSERT_EQ(d.at("shows"), "row");
  const auto& h = d.at("head");
  const HeadChoice head = h.is_number() ? HeadChoice{h.get<int>(), HeadFusion::Mean}
                          : h == "max"  ? HeadChoice{-1, HeadFusion::Max}
                          : h == "min"  ? HeadChoice{-1, HeadFusion::Min}
                                        : HeadChoice{-1, HeadFusion::Mean};
  VitCpuRunner cpu;
  const VitRun run(model, load_image(image), s.at("vit").at("resize").get<int>(), cpu, vit_memory_budget());
  const auto row = run.patch_row(d.at("layer").get<int>(), head, d.at("token").get<int>());
  const auto values = d.at("values").get<std::vector<float>>();
  ASSERT_EQ(values.size(), row.size());
  int off = 0;
  for (std::size_t j = 0; j < row.size(); ++j)
    if (std::abs(values[j] - row[j]) > 2e-4f + 1e-3f * row[j]) ++off;
  EXPECT_EQ(off, 0) << off << " of " << row.size() << " patches are not the model's row for this image";
}

// Scrolls `window` (the mouse wheel over it) until `widget` lies inside it; returns the sidecar
// where it does (or the last one).
nlohmann::json reveal(AppProcess& app, nlohmann::json s, const std::string& widget, const std::string& window) {
  for (int n = 0; n < 40; ++n) {  // a long column (the controls with the lower row's sections) takes many turns
    const auto& w = s.at("widgets");
    if (!w.contains(widget) || !w.contains(window)) return s;
    const Rect r = rect_of(w.at(widget)), in = rect_of(w.at(window));
    if (r.y >= in.y && r.y + r.h <= in.y + in.h) return s;
    app.xdotool("mousemove " + std::to_string(static_cast<int>(in.x + in.w / 2)) + " " +
                std::to_string(static_cast<int>(in.y + in.h / 2)));
    app.xdotool(std::string("click --repeat 3 ") + (r.y < in.y ? "4" : "5"));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    s = app.export_view().first;
  }
  return s;
}

// The pointer off the map and the panels (on the menu bar's empty right end): no hover moves
// the query, no tooltip covers a picture.
void pointer_aside(AppProcess& app) { app.xdotool("mousemove " + std::to_string(kScreenW - 4) + " 4"); }

// Exports (F12 held as a person presses it, not tapped: taps were seen lost while the ViT or
// the training kept llvmpipe busy) until the sidecar satisfies `ready`, at most `tries` times.
nlohmann::json wait_for(AppProcess& app, const std::function<bool(const nlohmann::json&)>& ready, int tries) {
  nlohmann::json j;
  for (int n = 0; n < tries; ++n) {
    j = app.export_view().first;
    if (ready(j)) return j;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ADD_FAILURE() << "the app never showed what was expected; last sidecar: " << j.dump().substr(0, 2000);
  return j;
}

// A walk's start: settings.json written, the app started with the user's default export folder.
std::unique_ptr<AppProcess> start(const Xvfb& x, const std::filesystem::path& dir, const nlohmann::json& settings,
                                  const std::vector<std::string>& args = {}) {
  write_settings(dir, settings);
  auto app = std::make_unique<AppProcess>(x, dir, args, std::vector<std::string>{}, Exports::UsersDefault);
  if (app->wait_for_window() == 0) ADD_FAILURE() << "no window: " << app->log();
  pointer_aside(*app);
  return app;
}

// In the plain build only: the walk checks the room a projector's layout gives, whose code the
// sanitized tree runs in the fit, tour and app tests; eight app starts at two UI scales under
// AddressSanitizer cost the sanitized suite minutes that CI's 30 cannot spare (stop 53: 42 min).
#define SKIP_UNDER_ASAN() \
  if (ATTNLAB_ASAN) GTEST_SKIP() << "in the plain build only: the layout walk's code runs under the sanitizers in the fit and tour tests"

}  // namespace

// The hand-made heads at K = 32 (one ']'), presentation mode (F5) and three steps of the guided
// tour (Tour > Start, then "next" twice).
TEST(LectureUnderXvfb, HandMadeHeadsPresentationAndThreeTourSteps) {
  SKIP_UNDER_ASAN();
  Xvfb x(kScreenW, kScreenH);
  std::map<std::string, std::array<float, 2>> area;
  for (const float scale : {1.0f, 2.0f}) {
    SCOPED_TRACE("UI scale " + std::to_string(static_cast<int>(scale)));
    const int at = scale == 1.0f ? 0 : 1;
    const auto dir = temp_dir();
    const nlohmann::json settings = users_settings(scale, 16);
    auto app = start(x, dir, settings);
    ASSERT_TRUE(app->alive()) << app->log();
    app->key("bracketright");
    auto [heads, heads_png] = app->export_view();
    EXPECT_EQ(heads.at("patch"), 32) << "']' doubles K from 16";
    area["heads"][at] = check_step(heads, heads_png, dir, scale, "heads");

    app->key("F5");
    auto [slide, slide_png] = app->export_view();
    EXPECT_TRUE(slide.at("classroom").at("presentation").get<bool>());
    area["presentation"][at] = check_step(slide, slide_png, dir, scale, "presentation");
    app->key("F5");

    click_widget(*app, app->export_view().first, "menu:Tour");
    click_widget(*app, app->export_view().first, "menu:Tour/start");
    pointer_aside(*app);
    for (int step = 1; step <= 3; ++step) {
      auto [tour, tour_png] = app->export_view();
      EXPECT_EQ(tour.at("tour_step"), step - 1);
      const std::string name = "tour" + std::to_string(step);
      area[name][at] = check_step(tour, tour_png, dir, scale, name);
      click_widget(*app, tour, step < 3 ? "tour_next" : "tour_end");
      pointer_aside(*app);
    }
    EXPECT_EQ(app->close(), 0) << app->log();
    // What the walk set: K (and the query the new grid moved), presentation mode on and off,
    // the tour and its views, the window's place.
    expect_settings_kept(
        dir, settings,
        {"patch", "hand_made/cell", "classroom/presentation", "tour_step", "views", "image", "window_placement"});
  }
  expect_scale_two_keeps_the_map(area);
}

// After K = 32 on the safari photo, the bundled model from the Images panel's entry
// ("Fashion-MNIST ViT (a shirt)") and then one of its examples dropped on the window: each
// shows the ViT's map of that example.
TEST(LectureUnderXvfb, BundledModelFromTheImagesPanelAndADropAfterKIs32) {
  SKIP_UNDER_ASAN();
  Xvfb x(kScreenW, kScreenH);
  const auto model = std::make_shared<const VitModel>(load_vit(fashion_vit()));
  std::map<std::string, std::array<float, 2>> area;
  for (const float scale : {1.0f, 2.0f}) {
    SCOPED_TRACE("UI scale " + std::to_string(static_cast<int>(scale)));
    const int at = scale == 1.0f ? 0 : 1;
    const auto dir = temp_dir();
    const nlohmann::json settings = users_settings(scale, 16);
    auto app = start(x, dir, settings);
    ASSERT_TRUE(app->alive()) << app->log();
    app->key("bracketright");
    // The Images panel, or on a projector at a large UI scale its section at the foot of the controls.
    auto s = app->export_view().first;
    s = reveal(*app, s, "gallery:fashion_vit", s.at("widgets").contains("window:Images") ? "window:Images" : "window:Controls");
    EXPECT_EQ(s.at("patch"), 32);
    click_widget(*app, s, "gallery:fashion_vit");
    pointer_aside(*app);
    // The entry opens the first shirt of the examples (not a t-shirt).
    const auto shirt = wait_for(
        *app,
        [](const nlohmann::json& j) {
          return j.contains("vit_drawn") && !j.at("vit_drawn").at("busy").get<bool>() &&
                 (file_name(j).find("_shirt") != std::string::npos || !j.at("banner").get<std::string>().empty());
        },
        60);
    const std::string shirt_file =
        file_name(shirt).find("_shirt") != std::string::npos ? file_name(shirt) : "04_shirt.png";
    auto [shown, shown_png] = app->export_view();
    expect_vit_map_of(shown, fashion_image(shirt_file), model);
    area["vit-entry"][at] = check_step(shown, shown_png, dir, scale, "vit-entry");
    if (!shown.at("banner").get<std::string>().empty()) {  // seen: out of the way of the next step
      click_widget(*app, shown, "banner_dismiss");
      pointer_aside(*app);
    }

    const int w = shown.at("window").at("width").get<int>(), h = shown.at("window").at("height").get<int>();
    ASSERT_TRUE(xdnd_drop(x.display(), app->wait_for_window(std::chrono::seconds(5)), fashion_image("14_bag.png"),
                          w / 2, h / 2));
    pointer_aside(*app);
    wait_for(
        *app, [](const nlohmann::json& j) { return vit_settled(j, "14_bag.png"); }, 60);
    auto [bag, bag_png] = app->export_view();
    expect_vit_map_of(bag, fashion_image("14_bag.png"), model);
    area["vit-drop"][at] = check_step(bag, bag_png, dir, scale, "vit-drop");
    EXPECT_EQ(app->close(), 0) << app->log();
    // What the walk set: K and the query, the image, the source and the model (with its
    // choice: the entry's last layer and CLS query, and the recent models), the window's place.
    expect_settings_kept(dir, settings, {"patch", "hand_made/cell", "image", "source", "vit", "window_placement"});
  }
  expect_scale_two_keeps_the_map(area);
}

// The measured loss: started on an example with the bundled model while K = 32 was saved,
// the ViT shows that example, and at exit settings.json keeps every setting of the user's (K too:
// the walk set nothing).
TEST(LectureUnderXvfb, BundledModelStartedOnAnExampleWithKIs32Saved) {
  SKIP_UNDER_ASAN();
  Xvfb x(kScreenW, kScreenH);
  const auto model = std::make_shared<const VitModel>(load_vit(fashion_vit()));
  const auto sandal = fashion_image("07_sandal.png");
  std::map<std::string, std::array<float, 2>> area;
  for (const float scale : {1.0f, 2.0f}) {
    SCOPED_TRACE("UI scale " + std::to_string(static_cast<int>(scale)));
    const auto dir = temp_dir();
    const nlohmann::json settings = users_settings(scale, 32);
    auto app = start(x, dir, settings, {sandal.string(), "--model", fashion_vit().string()});
    ASSERT_TRUE(app->alive()) << app->log();
    wait_for(
        *app,
        [](const nlohmann::json& j) {
          return vit_settled(j, "07_sandal.png") || !j.at("banner").get<std::string>().empty();
        },
        60);
    auto [shown, png] = app->export_view();
    expect_vit_map_of(shown, sandal, model);
    area["vit-start"][scale == 1.0f ? 0 : 1] = check_step(shown, png, dir, scale, "vit-start");
    EXPECT_EQ(app->close(), 0) << app->log();
    // What the walk set: the image, the source and the model it was started with, the window's place.
    expect_settings_kept(dir, settings, {"image", "source", "vit", "window_placement"});
  }
  expect_scale_two_keeps_the_map(area);
}

// The Train tab before Start, and after a few seconds of training run A.
TEST(LectureUnderXvfb, TrainTabBeforeAndAfterStart) {
  SKIP_UNDER_ASAN();
  Xvfb x(kScreenW, kScreenH);
  std::map<std::string, std::array<float, 2>> area;
  for (const float scale : {1.0f, 2.0f}) {
    SCOPED_TRACE("UI scale " + std::to_string(static_cast<int>(scale)));
    const int at = scale == 1.0f ? 0 : 1;
    const auto dir = temp_dir();
    const nlohmann::json settings = users_settings(scale, 16);
    auto app = start(x, dir, settings);
    ASSERT_TRUE(app->alive()) << app->log();
    click_widget(*app, app->export_view().first, "tab:train");
    pointer_aside(*app);
    // Before Start: the untrained model's own maps (a moment to make it), said to be untrained.
    wait_for(
        *app,
        [](const nlohmann::json& j) {
          return j.at("source") == "train" && j.at("widgets").contains("train:start") && j.contains("train_drawn");
        },
        60);
    auto [before, before_png] = app->export_view();
    ASSERT_TRUE(before.contains("train_drawn")) << "no map of the untrained model before Start";
    EXPECT_TRUE(before.at("train_drawn").at("previewing").get<bool>());
    EXPECT_EQ(before.at("train_drawn").at("step").get<int>(), 0);
    EXPECT_TRUE(before.at("widgets").contains("map:note")) << "the map does not say to press Start";
    area["train-before"][at] = check_step(before, before_png, dir, scale, "train-before");

    click_widget(*app, before, "train:start");
    pointer_aside(*app);
    // A few seconds of training: the maps and the curves of a model that has taken steps.
    wait_for(
        *app,
        [](const nlohmann::json& j) {
          return j.contains("train_drawn") && j.at("train_drawn").at("step").get<int>() >= 10 &&
                 j.at("train_drawn").at("points").get<int>() >= 2;
        },
        120);
    auto [after, after_png] = app->export_view();
    EXPECT_TRUE(after.contains("train_drawn")) << "the map is not the model being trained";
    area["train-after"][at] = check_step(after, after_png, dir, scale, "train-after");
    EXPECT_EQ(app->close(), 0) << app->log();
    // What the walk set: the source (the Train tab), the run's choice, the window's place.
    expect_settings_kept(dir, settings, {"source", "train", "image", "hand_made/cell", "window_placement"});
  }
  expect_scale_two_keeps_the_map(area);
}
