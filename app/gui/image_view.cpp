// The image view: the photo, the grid, row i of A as a heat map, the mask,
// the query outline and the colour bar with real weights. Hover, click, arrows, zoom, pan,
// and painting the mask.
#include "app/gui/views.hpp"
#include "app/gui/widget_log.hpp"
#include "core/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnlab::app {
namespace {

constexpr ImU32 kQueryColour = IM_COL32(0, 255, 255, 255);


void outline(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 colour, float thickness) {
  dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), IM_COL32(0, 0, 0, 255), 0, 0, thickness + 2);
  dl->AddRect(a, b, colour, 0, 0, thickness);
}

}  // namespace

void draw_photo(ImDrawList* dl, Backend& backend, ImVec2 origin, float scale) {
  const PatchGrid& g = backend.grid();
  const float W = static_cast<float>(backend.image().width), H = static_cast<float>(backend.image().height);
  const float w = std::min(W, static_cast<float>(g.cols * g.K)), h = std::min(H, static_cast<float>(g.rows * g.K));
  dl->AddImage(backend.photo(), origin, ImVec2(origin.x + w * scale, origin.y + h * scale), ImVec2(0, 0), ImVec2(w / W, h / H));
  // Padding (the last row and column past the image, in pad mode) shows black; only those
  // strips are filled, not the whole grid under the photo (one layer less to rasterize).
  const float gw = static_cast<float>(g.cols * g.K), gh = static_cast<float>(g.rows * g.K);
  if (gw > w) dl->AddRectFilled(ImVec2(origin.x + w * scale, origin.y), ImVec2(origin.x + gw * scale, origin.y + gh * scale), IM_COL32(0, 0, 0, 255));
  if (gh > h) dl->AddRectFilled(ImVec2(origin.x, origin.y + h * scale), ImVec2(origin.x + w * scale, origin.y + gh * scale), IM_COL32(0, 0, 0, 255));
}

bool map_thumbnail(const char* id, Backend& backend, ImTextureID heat, const AppState& state, ImVec2 size,
                   const std::vector<Cell>& outlines, bool selected) {
  const PatchGrid& g = backend.grid();
  const float grid_w = static_cast<float>(g.cols * g.K), grid_h = static_cast<float>(g.rows * g.K);
  const float scale = std::min(size.x / grid_w, size.y / grid_h);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const bool clicked = ImGui::InvisibleButton(id, ImVec2(grid_w * scale, grid_h * scale));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  auto at = [&](float x, float y) { return ImVec2(p.x + x * scale, p.y + y * scale); };
  draw_photo(dl, backend, at(0, 0), scale);
  set_texture_filter(heat, state.bilinear);
  dl->AddImage(heat, at(0, 0), at(grid_w, grid_h), ImVec2(0, 0), ImVec2(1, 1),
               IM_COL32(255, 255, 255, static_cast<int>(std::max(state.opacity, 0.5f) * 255)));
  for (const Cell& c : outlines)
    dl->AddRect(at(static_cast<float>(c.col * g.K), static_cast<float>(c.row * g.K)),
                at(static_cast<float>((c.col + 1) * g.K), static_cast<float>((c.row + 1) * g.K)), IM_COL32(0, 255, 255, 255),
                0, 0, 2.0f);
  if (selected) dl->AddRect(at(0, 0), at(grid_w, grid_h), IM_COL32(255, 255, 255, 255), 0, 0, 3.0f);
  if (ImGui::IsItemHovered()) dl->AddRect(at(0, 0), at(grid_w, grid_h), IM_COL32(255, 255, 255, 120), 0, 0, 1.0f);
  return clicked;
}

std::array<float, 4> map_picture(ImVec2 canvas0, ImVec2 canvas1, ImVec2 map0, ImVec2 map1) {
  const ImVec2 bar0 = ImGui::GetItemRectMin(), bar1 = ImGui::GetItemRectMax();
  const float x0 = std::min(std::max(map0.x, canvas0.x), bar0.x), y0 = std::min(std::max(map0.y, canvas0.y), bar0.y);
  const float x1 = std::max(std::min(map1.x, canvas1.x), bar1.x), y1 = std::max(std::min(map1.y, canvas1.y), bar1.y);
  return {std::floor(x0), std::floor(y0), std::ceil(x1) - std::floor(x0), std::ceil(y1) - std::floor(y0)};
}

void draw_image_view(AppState& state, Backend& backend, ViewGeometry& geometry) {
  geometry.valid = false;
  if (!backend.has_image()) {
    ImGui::TextUnformatted("No image loaded.");
    return;
  }
  const PatchGrid& g = backend.grid();
  const int K = g.K;
  const float grid_w = static_cast<float>(g.cols * K), grid_h = static_cast<float>(g.rows * K);

  // Status line: the query, the head, timing.
  const int i = g.index(state.query.col, state.query.row);
  const RowSet& rows = backend.rows();
  const auto row = rows.head(state.main_head);
  std::vector<std::uint8_t> keep(row.size());
  for (size_t j = 0; j < row.size(); ++j) keep[j] = backend.setup().mask.allowed(i, static_cast<int>(j));
  const HeatmapStyle style{state.colormap, state.normalization};
  const ValueRange range = normalization_range(row, keep, state.normalization);
  ImGui::Text("query (%d,%d)  i = %d  %s  head: %s%s", state.query.col, state.query.row, i,
              state.query_pinned ? "[pinned]" : "[follows mouse]",
              std::string(head_name(static_cast<HeadKind>(state.main_head))).c_str(),
              rows.empty[state.main_head] ? "  (every key masked: row is 0)" : "");
  // What the head is, in one line: beside it when it fits, on hover otherwise.
  const std::string summary(head_summary(static_cast<HeadKind>(state.main_head)));
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", summary.c_str());
  ImGui::SameLine();
  if (ImGui::CalcTextSize(summary.c_str()).x <= ImGui::GetContentRegionAvail().x) {
    ImGui::TextDisabled("%s", summary.c_str());
    record_widget("head_summary");
  } else {
    ImGui::NewLine();
  }
  if (state.presentation) {  // for the class: what the map depends on, no developer numbers
    const Settings& a = backend.settings();
    char tau[32];
    std::snprintf(tau, sizeof tau, "%g", static_cast<double>(a.temperature));
    ImGui::Text("mask: %s   tau = %s   codes: %s   K = %d (N = %d)   pins: %zu", std::string(mask_kind_name(a.mask.kind)).c_str(),
                tau, std::string(pos_mode_name(a.pos.mode)).c_str(), K, g.N(), state.pinned.size());
    record_widget("presentation:legend");
    for (size_t n = 0; n < state.pinned.size(); ++n) {  // the pins' outline colours, as a legend
      ImGui::SameLine();
      pinned_swatch(n);
      ImGui::SameLine();
      ImGui::Text("(%d,%d)", state.pinned[n].col, state.pinned[n].row);
    }
  }  // N and K are in the window's title; frame times, the driver and the checks in Panels > Diagnostics

  // An honest scale: a min-max map stretches whatever spread the row has over the whole
  // colormap, so a nearly uniform row is said to be one, with the two ways to see it as it is.
  // A fixed height, flat or not (the note's height at this width), so that the map does not
  // jump while the pointer explores.
  const RowFlatness flat = row_flatness(row, keep);
  char note[256];
  std::snprintf(note, sizeof note,
                "Nearly uniform row: max/min = %.2f, H/log N = %.3f; every weight is close to 1/N (marked on the bar), and "
                "the colours stretch that small spread.",
                flat.max_over_min, flat.entropy_ratio);
  const float note_h = ImGui::CalcTextSize(note, nullptr, false, ImGui::GetContentRegionAvail().x).y;
  ImGui::BeginChild("flatness", ImVec2(0, note_h + ImGui::GetStyle().ItemSpacing.y + ImGui::GetFrameHeightWithSpacing()), false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  if (flat.nearly_uniform && !rows.empty[state.main_head]) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.8f, 0.3f, 1.0f));
    ImGui::TextWrapped("%s", note);
    ImGui::PopStyleColor();
    if (state.normalization == Normalization::MinMax) {
      if (ImGui::SmallButton("absolute scale")) state.normalization = Normalization::Absolute;
      record_widget("flat:absolute");
      ImGui::SameLine();
    }
    if (ImGui::SmallButton("sharpen: tau = 0.05")) state.attention.temperature = 0.05f;
    record_widget("flat:sharpen");
  } else if (flat.n > 0) {
    ImGui::TextDisabled("max/min %s, H/log N = %.3f (1: uniform, 0: one key)",
                        std::isinf(flat.max_over_min) ? "inf" : format_weight(flat.max_over_min).c_str(), flat.entropy_ratio);
  }
  ImGui::EndChild();

  // The canvas: everything left of the colour bar.
  const float bar_space = colour_bar_space();
  ImVec2 avail = ImGui::GetContentRegionAvail();
  avail.x = std::max(avail.x - bar_space, 50.0f);
  avail.y = std::max(avail.y, 50.0f);
  // A map narrower than the room (a tall window, or a wide one at a large UI scale) is centred
  // with its colour bar beside it, not at the window's far edge.
  if (const float map_w = grid_w * std::min(avail.x / grid_w, avail.y / grid_h); map_w < avail.x - 1) {
    ImGui::SetCursorPosX(ImGui::GetCursorPosX() + (avail.x - map_w) * 0.5f);
    avail.x = map_w;
  }
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("canvas", avail, ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonMiddle);
  record_widget("image_canvas");
  const bool hovered = ImGui::IsItemHovered();
  ImGuiIO& io = ImGui::GetIO();

  const float fit = std::min(avail.x / grid_w, avail.y / grid_h);
  const float scale = fit * state.zoom;
  const ImVec2 origin(p0.x + (avail.x - grid_w * scale) * 0.5f + state.pan[0],
                      p0.y + (avail.y - grid_h * scale) * 0.5f + state.pan[1]);
  auto to_screen = [&](float x, float y) { return ImVec2(origin.x + x * scale, origin.y + y * scale); };

  // Zoom about the cursor, pan with the middle button (or Ctrl + left).
  if (hovered && io.MouseWheel != 0) {
    const float old_zoom = state.zoom;
    state.zoom = std::clamp(state.zoom * std::pow(1.15f, io.MouseWheel), 0.25f, 32.0f);
    const float k = state.zoom / old_zoom;
    const ImVec2 centre(p0.x + avail.x * 0.5f, p0.y + avail.y * 0.5f);
    // keep the image point under the cursor where it is
    const float cx = io.MousePos.x - centre.x, cy = io.MousePos.y - centre.y;
    state.pan[0] = cx - (cx - state.pan[0]) * k;
    state.pan[1] = cy - (cy - state.pan[1]) * k;
  }
  if (ImGui::IsItemActive() && (ImGui::IsMouseDragging(ImGuiMouseButton_Middle) ||
                                (io.KeyCtrl && ImGui::IsMouseDragging(ImGuiMouseButton_Left)))) {
    state.pan[0] += io.MouseDelta.x;
    state.pan[1] += io.MouseDelta.y;
  }

  // The patch under the mouse.
  std::optional<Cell> under;
  if (hovered) {
    const float ix = (io.MousePos.x - origin.x) / scale, iy = (io.MousePos.y - origin.y) / scale;
    const int c = static_cast<int>(std::floor(ix / static_cast<float>(K)));
    const int r = static_cast<int>(std::floor(iy / static_cast<float>(K)));
    if (g.contains(c, r)) under = Cell{c, r};
  }
  if (under && !io.KeyCtrl) {
    if (state.paint_mode && state.attention.mask.kind == MaskKind::Painted) {
      if (ImGui::IsMouseDown(ImGuiMouseButton_Left)) {  // paint (Shift erases)
        auto& painted = state.attention.mask.painted;
        const int j = g.index(under->col, under->row);
        const auto it = std::lower_bound(painted.begin(), painted.end(), j);
        if (io.KeyShift && it != painted.end() && *it == j) painted.erase(it);
        if (!io.KeyShift && (it == painted.end() || *it != j)) painted.insert(it, j);
      }
    } else {
      if (!state.query_pinned) state.query = *under;
      if (ImGui::IsItemClicked(ImGuiMouseButton_Left)) {
        if (state.query_pinned && state.query == *under) {
          state.query_pinned = false;  // clicking the pinned patch again lets it follow the mouse
        } else {
          state.query = *under;
          state.query_pinned = true;
        }
      }
    }
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Right)) {  // pin for comparison
      auto it = std::find(state.pinned.begin(), state.pinned.end(), *under);
      if (it == state.pinned.end()) state.pinned.push_back(*under);
      else state.pinned.erase(it);
    }
  }

  // Draw: photo, heat map, mask, grid, outlines.
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(p0, ImVec2(p0.x + avail.x, p0.y + avail.y), true);
  draw_photo(dl, backend, to_screen(0, 0), scale);
  const ImTextureID heat = backend.heatmap(state.main_head, style);
  set_texture_filter(heat, state.bilinear);
  dl->AddImage(heat, to_screen(0, 0), to_screen(grid_w, grid_h), ImVec2(0, 0), ImVec2(1, 1),
               IM_COL32(255, 255, 255, static_cast<int>(state.opacity * 255)));
  if (state.show_mask && state.attention.mask.kind != MaskKind::None)
    dl->AddImage(backend.mask_overlay(), to_screen(0, 0), to_screen(grid_w, grid_h), ImVec2(0, 0), ImVec2(1, 1),
                 IM_COL32(255, 255, 255, 150));
  if (state.show_grid && static_cast<float>(K) * scale >= 5.0f) {
    const ImU32 line = IM_COL32(255, 255, 255, 60);
    for (int c = 0; c <= g.cols; ++c) dl->AddLine(to_screen(static_cast<float>(c * K), 0), to_screen(static_cast<float>(c * K), grid_h), line);
    for (int r = 0; r <= g.rows; ++r) dl->AddLine(to_screen(0, static_cast<float>(r * K)), to_screen(grid_w, static_cast<float>(r * K)), line);
  }
  for (size_t n = 0; n < state.pinned.size(); ++n) {
    const Cell& c = state.pinned[n];
    outline(dl, to_screen(static_cast<float>(c.col * K), static_cast<float>(c.row * K)),
            to_screen(static_cast<float>((c.col + 1) * K), static_cast<float>((c.row + 1) * K)), pinned_colour(n), 2.0f);
  }
  outline(dl, to_screen(static_cast<float>(state.query.col * K), static_cast<float>(state.query.row * K)),
          to_screen(static_cast<float>((state.query.col + 1) * K), static_cast<float>((state.query.row + 1) * K)),
          kQueryColour, 3.0f);
  dl->PopClipRect();

  // Tooltip: the weight under the mouse.
  if (under && !state.presentation) {
    const int j = g.index(under->col, under->row);
    ImGui::BeginTooltip();
    ImGui::Text("key (%d,%d)  j = %d", under->col, under->row, j);
    ImGui::Text("a_ij = %s%s", format_weight(row[static_cast<size_t>(j)]).c_str(), keep[static_cast<size_t>(j)] ? "" : "  (masked)");
    ImGui::EndTooltip();
  }

  // Colour bar with the real weights.
  ImGui::SameLine();
  ImGui::BeginGroup();
  ImGui::TextUnformatted("a_ij");
  colour_bar(state.colormap, state.normalization, range, std::max(avail.y - ImGui::GetTextLineHeightWithSpacing() * 2, 40.0f),
             flat.uniform);
  ImGui::EndGroup();

  geometry = ViewGeometry{origin.x, origin.y, scale, true, state.main_head,
                          map_picture(p0, ImVec2(p0.x + avail.x, p0.y + avail.y), to_screen(0, 0), to_screen(grid_w, grid_h))};
}

}  // namespace attnlab::app
