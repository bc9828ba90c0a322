// The main map of any MapSource: the photo, row i of A (or what else the source shows) as a
// heat map over it, the source's overlays, the grid, the pinned patches and the query
// outlined, and the colour bar with the real values. Hover, click, right click, wheel, pan.
#include "app/gui/maps/map_source.hpp"
#include "app/gui/state/widget_log.hpp"

#include <algorithm>
#include <cmath>

namespace attnlab::app {
namespace {

constexpr ImU32 kQueryColour = IM_COL32(0, 255, 255, 255);

void outline(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 colour, float thickness) {
  dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), IM_COL32(0, 0, 0, 255), 0, 0, thickness + 2);
  dl->AddRect(a, b, colour, 0, 0, thickness);
}

}  // namespace

void draw_source_map(AppState& state, MapSource& source, ViewGeometry& geometry) {
  geometry.valid = false;
  const SourceInfo info = source.info();
  if (!info.ready) {
    ImGui::TextUnformatted(info.empty_text.c_str());
    return;
  }
  const SourceGrid g = info.grid;
  SourceChoice& choice = source.choice();
  const MainMap map = source.main_map(choice);
  source.draw_map_header(map);
  if (state.zoom != 1.0f || state.pan[0] != 0.0f || state.pan[1] != 0.0f) {  // the way back, whichever source is shown
    ImGui::TextDisabled("zoom %.2fx", static_cast<double>(state.zoom));
    ImGui::SameLine();
    if (ImGui::SmallButton("reset zoom")) {
      state.zoom = 1.0f;
      state.pan = {0.0f, 0.0f};
    }
    record_widget("map:reset_zoom");
  }
  const std::optional<Cell> query_patch = query_cell(g, map.query);

  // The canvas: everything left of the colour bar. A map narrower than the room (a tall
  // window, or a wide one at a large UI scale) is centred with its colour bar beside it.
  const float cw = static_cast<float>(g.covered_w), ch = static_cast<float>(g.covered_h);
  ImVec2 avail = ImGui::GetContentRegionAvail();
  avail.x = std::max(avail.x - colour_bar_space(), 50.0f);
  avail.y = std::max(avail.y, 50.0f);
  if (const float map_w = cw * std::min(avail.x / cw, avail.y / ch); map_w < avail.x - 1) {
    ImGui::SetCursorPosX(ImGui::GetCursorPosX() + (avail.x - map_w) * 0.5f);
    avail.x = map_w;
  }
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("canvas", avail,
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight | ImGuiButtonFlags_MouseButtonMiddle);
  record_widget("image_canvas");
  const bool hovered = ImGui::IsItemHovered();
  ImGuiIO& io = ImGui::GetIO();

  const float scale = std::min(avail.x / cw, avail.y / ch) * state.zoom;
  const ImVec2 origin(p0.x + (avail.x - cw * scale) * 0.5f + state.pan[0], p0.y + (avail.y - ch * scale) * 0.5f + state.pan[1]);
  const float pw = cw / static_cast<float>(g.cols), ph = ch / static_cast<float>(g.rows);  // a patch, photo pixels
  auto to_screen = [&](float x, float y) { return ImVec2(origin.x + x * scale, origin.y + y * scale); };
  auto patch_rect = [&](const Cell& c, ImVec2& a, ImVec2& b) {
    a = to_screen(static_cast<float>(c.col) * pw, static_cast<float>(c.row) * ph);
    b = to_screen(static_cast<float>(c.col + 1) * pw, static_cast<float>(c.row + 1) * ph);
  };

  // Zoom about the cursor, pan with the middle button (or Ctrl + left).
  if (hovered && io.MouseWheel != 0) {
    const float old_zoom = state.zoom;
    state.zoom = std::clamp(state.zoom * std::pow(1.15f, io.MouseWheel), 0.25f, 32.0f);
    const float k = state.zoom / old_zoom;
    const float cx = io.MousePos.x - (p0.x + avail.x * 0.5f), cy = io.MousePos.y - (p0.y + avail.y * 0.5f);
    state.pan[0] = cx - (cx - state.pan[0]) * k;  // the point under the cursor stays where it is
    state.pan[1] = cy - (cy - state.pan[1]) * k;
  }
  if (ImGui::IsItemActive() &&
      (ImGui::IsMouseDragging(ImGuiMouseButton_Middle) || (io.KeyCtrl && ImGui::IsMouseDragging(ImGuiMouseButton_Left)))) {
    state.pan[0] += io.MouseDelta.x;
    state.pan[1] += io.MouseDelta.y;
  }

  // The patch under the pointer: painted, explored, pinned as the query, pinned for comparison.
  std::optional<Cell> under;
  if (hovered) {
    const int c = static_cast<int>(std::floor((io.MousePos.x - origin.x) / (pw * scale)));
    const int r = static_cast<int>(std::floor((io.MousePos.y - origin.y) / (ph * scale)));
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

  // Draw: photo, heat map, overlays, grid, outlines.
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(p0, ImVec2(p0.x + avail.x, p0.y + avail.y), true);
  source.draw_photo(dl, origin, scale);
  set_texture_filter(map.texture, state.bilinear);
  dl->AddImage(map.texture, to_screen(0, 0), to_screen(cw, ch), ImVec2(0, 0), ImVec2(1, 1),
               IM_COL32(255, 255, 255, static_cast<int>(state.opacity * 255)));
  source.draw_overlays(map, dl, origin, scale, p0);
  if (state.show_grid && pw * scale >= 5.0f) {
    const ImU32 line = IM_COL32(255, 255, 255, 60);
    for (int c = 0; c <= g.cols; ++c) dl->AddLine(to_screen(static_cast<float>(c) * pw, 0), to_screen(static_cast<float>(c) * pw, ch), line);
    for (int r = 0; r <= g.rows; ++r) dl->AddLine(to_screen(0, static_cast<float>(r) * ph), to_screen(cw, static_cast<float>(r) * ph), line);
  }
  ImVec2 a, b;
  const std::vector<Cell>& pinned = choice.pins;
  for (std::size_t n = 0; n < pinned.size(); ++n) {
    if (pinned[n].col >= g.cols || pinned[n].row >= g.rows) continue;
    patch_rect(pinned[n], a, b);
    outline(dl, a, b, pinned_colour(n), 2.0f);
  }
  if (query_patch) {
    patch_rect(*query_patch, a, b);
    outline(dl, a, b, kQueryColour, 3.0f);
  }
  dl->PopClipRect();

  // Tooltip: the value under the pointer.
  if (under && !state.presentation) {
    const int j = under->row * g.cols + under->col;
    const bool kept = map.keep.empty() || map.keep[static_cast<std::size_t>(j)];
    ImGui::BeginTooltip();
    ImGui::Text("key (%d,%d)  j = %d", under->col, under->row, g.prefix + j);
    ImGui::Text("%s = %s%s", map.value_name.c_str(), format_weight(map.values[static_cast<std::size_t>(j)]).c_str(), kept ? "" : "  (masked)");
    ImGui::EndTooltip();
  }

  // The colour bar with the real values.
  ImGui::SameLine();
  ImGui::BeginGroup();
  ImGui::TextUnformatted(map.value_name.c_str());
  const std::vector<std::uint8_t> keep = map.keep.empty() ? std::vector<std::uint8_t>(map.values.size(), 1) : map.keep;
  colour_bar(state.colormap, state.normalization, normalization_range(map.values, keep, state.normalization),
             std::max(avail.y - ImGui::GetTextLineHeightWithSpacing() * 2, 40.0f), map.uniform);
  ImGui::EndGroup();

  geometry = ViewGeometry{origin.x, origin.y, scale, true, map.head.head,
                          map_picture(p0, ImVec2(p0.x + avail.x, p0.y + avail.y), to_screen(0, 0), to_screen(cw, ch)), map.query};
}

}  // namespace attnlab::app
