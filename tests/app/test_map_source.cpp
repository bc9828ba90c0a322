// The source-generic views (app/gui/maps/map_source.hpp) drawing a source they have never seen: a
// test-only MapSource of 2 layers × 3 heads over a 4 × 3 grid with one prefix token, whose
// row for (layer l, head h, query q) puts all its weight on patch (q + 3l + h) mod 12. The views
// are drawn in-process (HeadlessUi: EGL, an ImGui context, no window), driven with scripted
// pointer input, and their pixels read back: each map must be drawn where its widget is, with
// the lit patch where the source's row says, and clicks must reach the source's choices. A
// new source needs no change to these views; this test is that source.
#include "app/gui/window/headless.hpp"
#include "app/gui/maps/map_source.hpp"
#include "app/gui/state/widget_log.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

using namespace attnlab;
using namespace attnlab::app;

namespace {

constexpr int kCols = 4, kRows = 3, kPrefix = 1, kLayers = 2, kHeads = 3, kPatchPx = 10;

// The patch (raster index) a row lights.
int lit_patch(int layer, int head, int query) { return (query + 3 * layer + head) % (kCols * kRows); }

class LitPatchSource final : public MapSource {
 public:
  LitPatchSource() {
    std::vector<std::uint8_t> blue(static_cast<std::size_t>(kCols * kPatchPx) * kRows * kPatchPx * 4);
    for (std::size_t p = 0; p < blue.size(); p += 4) blue[p + 2] = 200, blue[p + 3] = 255;
    photo_.set(kCols * kPatchPx, kRows * kPatchPx, 4, blue, false);
  }
  // The document's choice: layer 1, head 2, patch (1,1) (token kPrefix + 5), following the pointer.
  SourceChoice choice_{1, HeadChoice{2, HeadFusion::Mean}, -1, Cell{1, 1}, true, {}};
  std::vector<std::array<int, 3>> maps_asked;  // (layer, head, query) of every map() call
  int maps_chosen = 0, pins_added = 0;         // changed(...)
  bool drew = false;

  static SourceGrid grid() {
    return SourceGrid{.cols = kCols, .rows = kRows, .prefix = kPrefix, .covered_w = kCols * kPatchPx, .covered_h = kRows * kPatchPx};
  }
  int query() const { return choice_query(choice_, grid()); }

  SourceInfo info() const override { return SourceInfo{true, "nothing", grid(), kLayers, kHeads, query()}; }
  SourceChoice& choice() override { return choice_; }
  HeadInfo head_info(int layer, HeadChoice head) const override {
    return HeadInfo{"lit " + std::to_string(head.head), "layer " + std::to_string(layer) + " head " + std::to_string(head.head),
                    std::nullopt, layer == choice_.layer && head == choice_.head};
  }
  void changed(ChoiceChange what) override { ++(what == ChoiceChange::MapChosen ? maps_chosen : pins_added); }
  void draw_photo(ImDrawList* dl, ImVec2 origin, float scale) override {
    dl->AddImage(photo_.im(), origin, ImVec2(origin.x + kCols * kPatchPx * scale, origin.y + kRows * kPatchPx * scale));
  }
  SourceMap map(int layer, HeadChoice head, int query) override {
    maps_asked.push_back({layer, head.head, query});
    const int lit = lit_patch(layer, head.head, query);
    std::vector<std::uint8_t> px(kCols * kRows * 4, 0);  // transparent but the lit patch, white
    for (int c = 0; c < 4; ++c) px[static_cast<std::size_t>(lit) * 4 + c] = 255;
    GuiTexture& t = textures_[std::to_string(layer) + ":" + std::to_string(head.head) + ":" + std::to_string(query)];
    t.set(kCols, kRows, 4, px, false);
    return SourceMap{t.im(), 1.0f};
  }
  void keep_pinned(const std::vector<int>&) override {}
  MainMap main_map(const SourceChoice& c) override {
    MainMap m;
    m.layer = c.layer;
    m.head = c.head;
    m.query = choice_query(c, grid());
    m.values.assign(kCols * kRows, 0.0f);
    m.values[static_cast<std::size_t>(lit_patch(m.layer, m.head.head, m.query))] = 1.0f;
    m.texture = map(m.layer, m.head, m.query).texture;
    return m;
  }
  void draw_map_header(const MainMap&) override { ImGui::TextUnformatted("a source the views have never seen"); }
  void draw_overlays(const MainMap&, ImDrawList*, ImVec2, float, ImVec2) override { drew = true; }

 private:
  GuiTexture photo_;
  std::map<std::string, GuiTexture> textures_;
};

struct Rgb {
  int r, g, b;
};

Rgb pixel(const std::vector<std::uint8_t>& rgb, int width, float x, float y) {
  const std::size_t at = (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)) * 3;
  return {rgb[at], rgb[at + 1], rgb[at + 2]};
}

// The centre of patch `j` (raster) inside a picture of the grid drawn over `rect` (x, y, w, h).
std::array<float, 2> patch_centre(const std::array<float, 4>& rect, int j) {
  const float pw = rect[2] / kCols, ph = rect[3] / kRows;
  return {rect[0] + (static_cast<float>(j % kCols) + 0.5f) * pw, rect[1] + (static_cast<float>(j / kCols) + 0.5f) * ph};
}

// White at 0.65 over the blue photo is light; the photo alone is dark blue.
bool lit(Rgb p) { return p.r > 120 && p.g > 120 && p.b > 180; }
bool dark_blue(Rgb p) { return p.r < 40 && p.g < 40 && p.b > 150; }

// Draws `view` in a full-size window for `frames` frames; `input(frame)` runs after each frame's
// views (so what it sets reaches ImGui at the next frame's start).
std::vector<std::uint8_t> draw(HeadlessUi& ui, const std::function<void()>& view, int frames,
                               const std::function<void(int)>& input = {}) {
  int frame = 0;
  return ui.render(
      [&] {
        widget_log().clear();
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
        ImGui::Begin("##test", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoMove);
        view();
        ImGui::End();
        if (input) input(frame);
        ++frame;
      },
      frames);
}

}  // namespace

TEST(MapSourceViews, HeadsGridDrawsEveryLayerAndHeadOfANewSourceWhereItsRowsSay) {
  HeadlessUi ui(900, 700);
  AppState state;
  LitPatchSource source;
  const auto rgb = draw(ui, [&] { draw_heads_grid(state, source); }, 3);
  for (int l = 0; l < kLayers; ++l)
    for (int h = 0; h < kHeads; ++h) {
      const std::string id = "head:" + std::to_string(l) + ":" + std::to_string(h);
      ASSERT_TRUE(widget_log().rects.contains(id)) << id << " was not drawn";
      const auto rect = widget_log().rects.at(id);
      EXPECT_NEAR(rect[2] / rect[3], 4.0f / 3.0f, 0.05f) << id << ": the covered part's aspect";
      const int on = lit_patch(l, h, source.query()), off = (on + 6) % (kCols * kRows);
      const auto a = patch_centre(rect, on), b = patch_centre(rect, off);
      EXPECT_TRUE(lit(pixel(rgb, 900, a[0], a[1]))) << id << ": the row's patch is not lit";
      EXPECT_TRUE(dark_blue(pixel(rgb, 900, b[0], b[1]))) << id << ": another patch is not the photo";
    }
  for (const auto& [l, h, q] : source.maps_asked) EXPECT_EQ(q, source.query()) << "a map of another query than the source's";
  EXPECT_EQ(source.maps_chosen, 0);
}

TEST(MapSourceViews, AClickOnALayerAndHeadChoosesItInTheSource) {
  HeadlessUi ui(900, 700);
  AppState state;
  LitPatchSource source;
  std::array<float, 4> target{};
  draw(ui, [&] { draw_heads_grid(state, source); }, 6, [&](int frame) {
    ImGuiIO& io = ImGui::GetIO();
    if (frame == 0) {  // over layer 0, head 1; press, release
      target = widget_log().rects.at("head:0:1");
      io.MousePos = ImVec2(target[0] + target[2] * 0.5f, target[1] + target[3] * 0.5f);
    }
    io.MouseDown[0] = frame == 1 || frame == 2;
  });
  EXPECT_EQ(source.maps_chosen, 1) << "one click, one choice";
  EXPECT_EQ(source.choice_.layer, 0);
  EXPECT_EQ(source.choice_.head, (HeadChoice{1, HeadFusion::Mean}));
}

TEST(MapSourceViews, MainMapShowsTheSourcesRowAndThePointerReachesItsQueryAndPins) {
  HeadlessUi ui(900, 700);
  AppState state;
  LitPatchSource source;
  source.choice_.query_pinned = false;
  std::array<float, 4> canvas{};
  ViewGeometry geometry;
  const Cell over{2, 1};
  const auto rgb = draw(ui, [&] { draw_source_map(state, source, geometry); }, 6, [&](int frame) {
    ImGuiIO& io = ImGui::GetIO();
    if (frame == 0) {  // the pointer over patch (2,1), then a right click there
      ASSERT_TRUE(geometry.valid);
      const float px = static_cast<float>(kPatchPx) * geometry.scale;
      io.MousePos = ImVec2(geometry.x + (static_cast<float>(over.col) + 0.5f) * px, geometry.y + (static_cast<float>(over.row) + 0.5f) * px);
    }
    io.MouseDown[1] = frame == 1;
    if (frame == 4) io.MousePos = ImVec2(-1, -1);  // away, so the last picture has no tooltip over it
  });
  canvas = widget_log().rects.at("image_canvas");
  ASSERT_TRUE(geometry.valid);
  EXPECT_TRUE(source.drew);
  const std::array<float, 4> picture{geometry.x, geometry.y, kCols * kPatchPx * geometry.scale, kRows * kPatchPx * geometry.scale};
  EXPECT_GE(picture[0], canvas[0] - 1);
  EXPECT_LE(picture[0] + picture[2], canvas[0] + canvas[2] + 1);
  const int on = lit_patch(source.choice_.layer, source.choice_.head.head, source.query());
  const auto a = patch_centre(picture, on), b = patch_centre(picture, (on + 5) % (kCols * kRows));
  EXPECT_TRUE(lit(pixel(rgb, 900, a[0], a[1]))) << "the main map's lit patch";
  EXPECT_TRUE(dark_blue(pixel(rgb, 900, b[0], b[1]))) << "the photo elsewhere";
  EXPECT_EQ(source.choice_.cell, over) << "the pointer did not reach the source's query";
  ASSERT_EQ(source.choice_.pins.size(), 1u) << "the right click did not pin the patch";
  EXPECT_EQ(source.choice_.pins[0], over);
  EXPECT_EQ(source.pins_added, 1);
}

TEST(MapSourceViews, PinnedMapsAreTheSourcesRowsOfEachPinnedPatchInItsLayerAndHead) {
  HeadlessUi ui(1400, 300);
  AppState state;
  LitPatchSource source;
  source.choice_.pins = {{0, 0}, {3, 2}, {9, 9}};  // the last is outside the grid: dropped
  const auto rgb = draw(ui, [&] { draw_pinned_maps(state, source); }, 6, [&](int frame) {
    ImGuiIO& io = ImGui::GetIO();
    if (frame == 0) {
      const auto r = widget_log().rects.at("pinned:3,2");
      io.MousePos = ImVec2(r[0] + 3, r[1] + 3);
    }
    io.MouseDown[0] = frame == 1;
    if (frame == 4) io.MousePos = ImVec2(-1, -1);
  });
  ASSERT_EQ(source.choice_.pins.size(), 2u) << "a pinned patch outside the grid stays";
  for (const Cell c : source.choice_.pins) {
    const std::string id = "pinned:" + std::to_string(c.col) + "," + std::to_string(c.row);
    ASSERT_TRUE(widget_log().rects.contains(id)) << id;
    const int token = kPrefix + c.row * kCols + c.col, on = lit_patch(source.choice_.layer, source.choice_.head.head, token);
    const auto a = patch_centre(widget_log().rects.at(id), on);
    EXPECT_TRUE(lit(pixel(rgb, 1400, a[0], a[1]))) << id << ": the lit patch of its own row in the source's layer and head";
  }
  EXPECT_EQ(source.choice_.cell, (Cell{3, 2})) << "a click on a pinned map makes it the query";
  EXPECT_TRUE(source.choice_.query_pinned);
}
