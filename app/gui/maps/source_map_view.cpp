// The main map of any MapSource: the photo, row i of A (or what else the source shows) as a
// heat map over it, the source's overlays, the grid, the pinned patches and the query
// outlined, and the colour bar with the real values. Hover, click, right click, wheel, pan.
#include "app/gui/maps/map_source.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace attnlab::app {
namespace {

constexpr ImU32 kQueryColour = IM_COL32(0, 255, 255, 255);

void outline(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 colour, float thickness) {
  dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), IM_COL32(0, 0, 0, 255), 0, 0, thickness + 2);
  dl->AddRect(a, b, colour, 0, 0, thickness);
}

// Where the map is drawn this frame: the canvas (left of the colour bar) and the photo's
// place in it at the current zoom and pan.
struct Canvas {
  ImVec2 p0, avail;   // the canvas's corner and size, screen pixels
  ImVec2 origin;      // the photo's top left corner
  float scale = 1;    // screen pixels per photo pixel
  float cw = 1, ch = 1, pw = 1, ph = 1;  // the covered photo and a patch, photo pixels
  bool hovered = false;
  ImVec2 to_screen(float x, float y) const { return ImVec2(origin.x + x * scale, origin.y + y * scale); }
  void patch_rect(const Cell& c, ImVec2& a, ImVec2& b) const {
    a = to_screen(static_cast<float>(c.col) * pw, static_cast<float>(c.row) * ph);
    b = to_screen(static_cast<float>(c.col + 1) * pw, static_cast<float>(c.row + 1) * ph);
  }
};

// The zoom and a button back to 1x, whichever source is shown.
void draw_zoom_reset(AppState& state) {
  if (state.zoom == 1.0f && state.pan[0] == 0.0f && state.pan[1] == 0.0f) return;
  ImGui::TextDisabled(_("zoom %.2fx"), static_cast<double>(state.zoom));
  ImGui::SameLine();
  if (ImGui::SmallButton(_("reset zoom"))) {
    state.zoom = 1.0f;
    state.pan = {0.0f, 0.0f};
  }
  record_widget("map:reset_zoom");
}

// The canvas: everything left of (or above) the colour bar. A map narrower than the room (a tall
// window, or a wide one at a large UI scale) is centred with its colour bar beside it.
Canvas place_canvas(const AppState& state, const SourceGrid& g, ColourBarPlace bar) {
  Canvas v;
  v.cw = static_cast<float>(g.covered_w);
  v.ch = static_cast<float>(g.covered_h);
  ImVec2 avail = ImGui::GetContentRegionAvail();
  avail.x = std::max(avail.x - (bar == ColourBarPlace::Right ? colour_bar_space() : 0.0f), 50.0f);
  avail.y = std::max(avail.y - (bar == ColourBarPlace::Below ? colour_bar_below_space() : 0.0f), 50.0f);
  if (const float map_w = v.cw * std::min(avail.x / v.cw, avail.y / v.ch); map_w < avail.x - 1) {
    ImGui::SetCursorPosX(ImGui::GetCursorPosX() + (avail.x - map_w) * 0.5f);
    avail.x = map_w;
  }
  v.avail = avail;
  v.p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("canvas", avail,
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight | ImGuiButtonFlags_MouseButtonMiddle);
  record_widget("image_canvas");
  v.hovered = ImGui::IsItemHovered();
  v.scale = std::min(avail.x / v.cw, avail.y / v.ch) * state.zoom;
  v.origin = ImVec2(v.p0.x + (avail.x - v.cw * v.scale) * 0.5f + state.pan[0], v.p0.y + (avail.y - v.ch * v.scale) * 0.5f + state.pan[1]);
  // The map as drawn (the photo's covered part at this zoom, clipped to the canvas): what the
  // class sees of it (issue 47's tests weigh it against the other windows).
  const ImVec2 a(std::max(v.origin.x, v.p0.x), std::max(v.origin.y, v.p0.y));
  const ImVec2 b(std::min(v.origin.x + v.cw * v.scale, v.p0.x + avail.x), std::min(v.origin.y + v.ch * v.scale, v.p0.y + avail.y));
  record_rect("map:picture", a, ImVec2(std::max(b.x - a.x, 0.0f), std::max(b.y - a.y, 0.0f)));
  v.pw = v.cw / static_cast<float>(g.cols);
  v.ph = v.ch / static_cast<float>(g.rows);
  return v;
}

// Zoom about the cursor, pan with the middle button (or Ctrl + left); from the next frame on.
void zoom_and_pan(AppState& state, const Canvas& v) {
  const ImGuiIO& io = ImGui::GetIO();
  if (v.hovered && io.MouseWheel != 0) {
    const float old_zoom = state.zoom;
    state.zoom = std::clamp(state.zoom * std::pow(1.15f, io.MouseWheel), 0.25f, 32.0f);
    const float k = state.zoom / old_zoom;
    const float cx = io.MousePos.x - (v.p0.x + v.avail.x * 0.5f), cy = io.MousePos.y - (v.p0.y + v.avail.y * 0.5f);
    state.pan[0] = cx - (cx - state.pan[0]) * k;  // the point under the cursor stays where it is
    state.pan[1] = cy - (cy - state.pan[1]) * k;
  }
  if (ImGui::IsItemActive() &&
      (ImGui::IsMouseDragging(ImGuiMouseButton_Middle) || (io.KeyCtrl && ImGui::IsMouseDragging(ImGuiMouseButton_Left)))) {
    state.pan[0] += io.MouseDelta.x;
    state.pan[1] += io.MouseDelta.y;
  }
}

// The patch under the pointer (none off the grid): painted, explored, pinned as the query,
// pinned for comparison.
std::optional<Cell> pick_patch(MapSource& source, const MainMap& map, const SourceGrid& g, const Canvas& v,
                               const std::optional<Cell>& query_patch) {
  const ImGuiIO& io = ImGui::GetIO();
  SourceChoice& choice = source.choice();
  std::optional<Cell> under;
  if (v.hovered) {
    const int c = static_cast<int>(std::floor((io.MousePos.x - v.origin.x) / (v.pw * v.scale)));
    const int r = static_cast<int>(std::floor((io.MousePos.y - v.origin.y) / (v.ph * v.scale)));
    if (c >= 0 && r >= 0 && c < g.cols && r < g.rows) under = Cell{c, r};
  }
  if (under && !io.KeyCtrl && !source.paint(*under, ImGui::IsMouseDown(ImGuiMouseButton_Left), io.KeyShift) && map.explore) {
    // A patch query follows the pointer (a prefix token stays the query until a click).
    if (!choice.query_pinned && choice.prefix_token < 0) choice.cell = *under;
    if (ImGui::IsItemClicked(ImGuiMouseButton_Left)) {
      if (choice.query_pinned && query_patch == under) {
        choice.query_pinned = false;  // the pinned patch again: follow the pointer
      } else {
        choice.cell = *under;
        choice.prefix_token = -1;
        choice.query_pinned = true;
      }
    }
    if (ImGui::IsItemClicked(ImGuiMouseButton_Right)) {  // pin for comparison, or unpin
      std::vector<Cell>& pinned = choice.pins;
      const auto it = std::find(pinned.begin(), pinned.end(), *under);
      const bool added = it == pinned.end();
      if (added) pinned.push_back(*under);
      else pinned.erase(it);
      if (added) source.changed(ChoiceChange::PinAdded);
    }
  }
  return under;
}

// Draw: photo, heat map, overlays, grid, outlines.
void draw_layers(const AppState& state, MapSource& source, const MainMap& map, const SourceGrid& g, const Canvas& v,
                 const std::optional<Cell>& query_patch) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(v.p0, ImVec2(v.p0.x + v.avail.x, v.p0.y + v.avail.y), true);
  source.draw_photo(dl, v.origin, v.scale);
  set_texture_filter(map.texture, state.bilinear);
  dl->AddImage(map.texture, v.to_screen(0, 0), v.to_screen(v.cw, v.ch), ImVec2(0, 0), ImVec2(1, 1),
               IM_COL32(255, 255, 255, static_cast<int>(state.opacity * 255)));
  source.draw_overlays(map, dl, v.origin, v.scale, v.p0);
  if (state.show_grid && v.pw * v.scale >= 5.0f) {
    const ImU32 line = IM_COL32(255, 255, 255, 60);
    for (int c = 0; c <= g.cols; ++c)
      dl->AddLine(v.to_screen(static_cast<float>(c) * v.pw, 0), v.to_screen(static_cast<float>(c) * v.pw, v.ch), line);
    for (int r = 0; r <= g.rows; ++r)
      dl->AddLine(v.to_screen(0, static_cast<float>(r) * v.ph), v.to_screen(v.cw, static_cast<float>(r) * v.ph), line);
  }
  ImVec2 a, b;
  const std::vector<Cell>& pinned = source.choice().pins;
  for (std::size_t n = 0; n < pinned.size(); ++n) {
    if (pinned[n].col >= g.cols || pinned[n].row >= g.rows) continue;
    v.patch_rect(pinned[n], a, b);
    outline(dl, a, b, pinned_colour(n), 2.0f);
  }
  if (query_patch) {
    v.patch_rect(*query_patch, a, b);
    outline(dl, a, b, kQueryColour, 3.0f);
  }
  dl->PopClipRect();
}

// Tooltip: the value under the pointer.
void draw_value_tooltip(const MainMap& map, const SourceGrid& g, const Cell& under) {
  const int j = under.row * g.cols + under.col;
  const bool kept = map.keep.empty() || map.keep[static_cast<std::size_t>(j)];
  ImGui::BeginTooltip();
  // A row of A (or its rollout) weighs keys; norms and relevance are the patch's own.
  const bool weighs_keys = map.shows == "row" || map.shows == "rollout";
  // TRANSLATORS: the key (a token attended to) or patch under the pointer: (column,row) and its token index j.
  ImGui::Text(weighs_keys ? _("key (%d,%d)  j = %d") : _("patch (%d,%d)  j = %d"), under.col, under.row, g.prefix + j);
  ImGui::Text("%s = %s%s", map.value_name.c_str(), format_weight(map.values[static_cast<std::size_t>(j)]).c_str(),
              kept ? "" : _("  (masked)"));
  ImGui::EndTooltip();
}

// The colour bar with the real values, right of the canvas or under it.
void draw_map_colour_bar(const AppState& state, const MainMap& map, const Canvas& v, ColourBarPlace bar) {
  if (bar == ColourBarPlace::None) return;
  const std::vector<std::uint8_t> keep = map.keep.empty() ? std::vector<std::uint8_t>(map.values.size(), 1) : map.keep;
  const ValueRange range = map.range ? *map.range : normalization_range(map.values, keep, state.normalization);
  if (bar == ColourBarPlace::Below) {
    ImGui::SetCursorScreenPos(ImVec2(v.p0.x, v.p0.y + v.avail.y + ImGui::GetStyle().ItemSpacing.y));
    colour_bar_below(state.colormap, state.normalization, range, v.avail.x, map.value_name, map.uniform);
    return;
  }
  ImGui::SameLine();
  ImGui::BeginGroup();
  ImGui::TextUnformatted(map.value_name.c_str());
  colour_bar(state.colormap, state.normalization, range, std::max(v.avail.y - ImGui::GetTextLineHeightWithSpacing() * 2, 40.0f),
             map.uniform);
  ImGui::EndGroup();
}

}  // namespace

void draw_source_map(AppState& state, MapSource& source, ViewGeometry& geometry, ColourBarPlace bar) {
  geometry.valid = false;
  const SourceInfo info = source.info();
  if (!info.ready) {
    ImGui::TextUnformatted(info.empty_text.c_str());
    return;
  }
  const SourceGrid g = info.grid;
  const MainMap map = source.main_map(source.choice());
  source.draw_map_header(map);
  draw_zoom_reset(state);
  const std::optional<Cell> query_patch = query_cell(g, map.query);
  const Canvas v = place_canvas(state, g, bar);
  zoom_and_pan(state, v);
  const std::optional<Cell> under = pick_patch(source, map, g, v, query_patch);
  draw_layers(state, source, map, g, v, query_patch);
  // Not in presentation mode, nor in a sweep's frames (the pointer's value is not the sweep's).
  if (under && !state.presentation && !state.ui.recording_steps) draw_value_tooltip(map, g, *under);
  draw_map_colour_bar(state, map, v, bar);
  geometry = ViewGeometry{v.origin.x, v.origin.y, v.scale, true, map.head.head,
                          map_picture(v.p0, ImVec2(v.p0.x + v.avail.x, v.p0.y + v.avail.y), v.to_screen(0, 0), v.to_screen(v.cw, v.ch),
                                      bar != ColourBarPlace::None),
                          map.query};
}

}  // namespace attnlab::app
