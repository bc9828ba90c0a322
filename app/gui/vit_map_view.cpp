// The main map of a loaded ViT: the photo the model saw, the chosen row of A (or the rollout,
// or the token norms) over it, DINO-style mask outlines, the query, and the share of the row
// the patch map leaves out. Hover explores patches; a click picks one as the query.
#include "app/gui/vit_views.hpp"
#include "app/gui/widget_log.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnlab::app {
namespace {

// Outlines around the kept cells of a cols × rows mask: an edge wherever a kept cell meets a
// dropped one or the border.
void mask_outline(ImDrawList* dl, const std::vector<std::uint8_t>& keep, int cols, int rows, ImVec2 origin, float cell_w,
                  float cell_h, ImU32 colour, float inset) {
  auto kept = [&](int c, int r) { return c >= 0 && r >= 0 && c < cols && r < rows && keep[static_cast<std::size_t>(r * cols + c)]; };
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      if (!kept(c, r)) continue;
      const float x0 = origin.x + static_cast<float>(c) * cell_w + inset, y0 = origin.y + static_cast<float>(r) * cell_h + inset;
      const float x1 = origin.x + static_cast<float>(c + 1) * cell_w - inset, y1 = origin.y + static_cast<float>(r + 1) * cell_h - inset;
      if (!kept(c, r - 1)) dl->AddLine(ImVec2(x0, y0), ImVec2(x1, y0), colour, 2.0f);
      if (!kept(c, r + 1)) dl->AddLine(ImVec2(x0, y1), ImVec2(x1, y1), colour, 2.0f);
      if (!kept(c - 1, r)) dl->AddLine(ImVec2(x0, y0), ImVec2(x0, y1), colour, 2.0f);
      if (!kept(c + 1, r)) dl->AddLine(ImVec2(x1, y0), ImVec2(x1, y1), colour, 2.0f);
    }
}

}  // namespace

void draw_vit_map_view(AppState& state, VitSession& vit, ViewGeometry& geometry) {
  geometry.valid = false;
  state.vit_drawn = nullptr;
  const VitSource* src = vit.source();
  if (!src) {
    ImGui::TextUnformatted("No model loaded: open one in the Model tab of the controls.");
    return;
  }
  const SourceGrid g = src->grid();
  const int layer = vit_layer(state, *src), token = vit_query_token(state, *src);
  const int head = std::min(state.vit_head, src->heads() - 1);
  const std::vector<float> values = vit_main_values(state, *src);

  // What the map is, and what it leaves out.
  std::string what;
  if (state.vit_norms) what = "token norms ||x|| after layer " + std::to_string(layer + 1);
  else if (state.vit_rollout)
    what = "rollout up to layer " + std::to_string(layer + 1) + " (" + (head >= 0 ? "mean" : vit_head_label(head)) + "), query " +
           vit_token_label(*src, token);
  else what = "layer " + std::to_string(layer + 1) + " of " + std::to_string(src->layers()) + ", " + vit_head_label(head) +
              ", query " + vit_token_label(*src, token);
  ImGui::TextUnformatted(what.c_str());
  float share = 0;
  if (!state.vit_norms && !state.vit_rollout) {
    share = src->prefix_share(layer, vit_head_choice(head), token);
    ImGui::SameLine();
    ImGui::TextColored(share > 0.5f ? ImVec4(1, 0.75f, 0.3f, 1) : ImVec4(0.7f, 0.7f, 0.7f, 1),
                       "  %.1f %% of this row went to %s (not drawn)", 100.0 * share, g.prefix > 1 ? "CLS and registers" : "CLS");
  }
  // The prefix tokens are not on the grid: with the norms shown, theirs in words beside the
  // patches' median and largest, so the high-norm outliers (and the registers that take them
  // over) show.
  std::vector<float> prefix_norms;
  if (state.vit_norms) {
    const std::vector<float> all = src->token_norms(layer);
    prefix_norms.assign(all.begin(), all.begin() + g.prefix);
    std::string prefix;
    for (int t = 0; t < g.prefix; ++t) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%s %.3g", t ? ", " : "", vit_token_label(*src, t).c_str(),
                    static_cast<double>(prefix_norms[static_cast<size_t>(t)]));
      prefix += buf;
    }
    std::vector<float> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    const auto top = std::max_element(values.begin(), values.end()) - values.begin();
    ImGui::TextColored(ImVec4(0.7f, 0.7f, 0.7f, 1), "not drawn: %s;  patches: median %.3g, largest %.3g at (%d,%d)", prefix.c_str(),
                       static_cast<double>(sorted[sorted.size() / 2]), static_cast<double>(sorted.back()),
                       static_cast<int>(top % g.cols), static_cast<int>(top / g.cols));
  }
  ImGui::TextDisabled("%s   input %d x %d, grid %d x %d, patch %d px%s", vit.file().filename().string().c_str(), src->input_width(),
                      src->input_height(), g.cols, g.rows, src->patch(), vit.busy() ? "   (new maps on the way...)" : "");

  // The canvas, left of the colour bar.
  const float bar_space = colour_bar_space();
  ImVec2 avail = ImGui::GetContentRegionAvail();
  avail.x = std::max(avail.x - bar_space, 50.0f);
  avail.y = std::max(avail.y, 50.0f);
  const float cw = static_cast<float>(g.covered_w), ch = static_cast<float>(g.covered_h);
  if (const float map_w = cw * std::min(avail.x / cw, avail.y / ch); map_w < avail.x - 1) {  // centred, its bar beside it
    ImGui::SetCursorPosX(ImGui::GetCursorPosX() + (avail.x - map_w) * 0.5f);
    avail.x = map_w;
  }
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("vit_canvas", avail, ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  record_widget("vit_canvas");
  const bool hovered = ImGui::IsItemHovered();
  const float scale = std::min(avail.x / cw, avail.y / ch);
  const ImVec2 origin(p0.x + (avail.x - cw * scale) * 0.5f, p0.y + (avail.y - ch * scale) * 0.5f);
  const float cell_w = cw * scale / static_cast<float>(g.cols), cell_h = ch * scale / static_cast<float>(g.rows);

  const ImGuiIO& io = ImGui::GetIO();
  std::optional<Cell> under;
  if (hovered) {
    const int c = static_cast<int>(std::floor((io.MousePos.x - origin.x) / cell_w));
    const int r = static_cast<int>(std::floor((io.MousePos.y - origin.y) / cell_h));
    if (c >= 0 && r >= 0 && c < g.cols && r < g.rows) under = Cell{c, r};
  }
  if (under && !state.vit_norms) {
    if (ImGui::IsItemClicked(ImGuiMouseButton_Left)) {
      state.vit_cell = *under;
      state.vit_token = -1;
      state.query_pinned = true;
    } else if (state.vit_token < 0 && !state.query_pinned) {
      state.vit_cell = *under;  // explores; takes effect next frame
    }
    if (ImGui::IsItemClicked(ImGuiMouseButton_Right)) {  // pin for comparison (or unpin)
      const auto it = std::find(state.vit_pinned.begin(), state.vit_pinned.end(), *under);
      if (it == state.vit_pinned.end()) {
        state.vit_pinned.push_back(*under);
        state.vit_tab = 1;
      } else {
        state.vit_pinned.erase(it);
      }
    }
  }

  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(p0, ImVec2(p0.x + avail.x, p0.y + avail.y), true);
  const std::string key = std::to_string(layer) + "|" + std::to_string(head) + "|" + std::to_string(token) + "|" +
                          (state.vit_norms ? "norms" : state.vit_rollout ? "rollout" : "row");
  const ImTextureID heat = vit_map_texture(vit, state, "main", key, values);
  draw_vit_photo_and_heat(dl, vit, heat, origin, scale, state.opacity);
  if (state.show_grid && cell_w >= 5.0f) {
    const ImU32 line = IM_COL32(255, 255, 255, 50);
    for (int c = 0; c <= g.cols; ++c)
      dl->AddLine(ImVec2(origin.x + static_cast<float>(c) * cell_w, origin.y), ImVec2(origin.x + static_cast<float>(c) * cell_w, origin.y + ch * scale), line);
    for (int r = 0; r <= g.rows; ++r)
      dl->AddLine(ImVec2(origin.x, origin.y + static_cast<float>(r) * cell_h), ImVec2(origin.x + cw * scale, origin.y + static_cast<float>(r) * cell_h), line);
  }
  if (state.vit_masks) {  // one outline per head, the CLS row of this layer (DINO's fig. 3)
    for (int h = 0; h < src->heads(); ++h) {
      const auto keep = vit_mass_mask(src->patch_row(layer, HeadChoice{h, HeadFusion::Mean}, 0), state.vit_mass);
      mask_outline(dl, keep, g.cols, g.rows, origin, cell_w, cell_h, vit_head_colour(h), 1.0f + static_cast<float>(h % 4));
    }
  }
  for (std::size_t n = 0; n < state.vit_pinned.size(); ++n) {  // in the colours of the pinned view's swatches
    const Cell& c = state.vit_pinned[n];
    if (c.col >= g.cols || c.row >= g.rows) continue;
    const ImVec2 a(origin.x + static_cast<float>(c.col) * cell_w, origin.y + static_cast<float>(c.row) * cell_h);
    dl->AddRect(a, ImVec2(a.x + cell_w, a.y + cell_h), pinned_colour(n), 0, 0, 2);
  }
  if (token >= g.prefix) {
    const int j = token - g.prefix, c = j % g.cols, r = j / g.cols;
    const ImVec2 a(origin.x + static_cast<float>(c) * cell_w, origin.y + static_cast<float>(r) * cell_h);
    const ImVec2 b(a.x + cell_w, a.y + cell_h);
    dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), IM_COL32(0, 0, 0, 255), 0, 0, 5);
    dl->AddRect(a, b, IM_COL32(0, 255, 255, 255), 0, 0, 3);
  }
  dl->PopClipRect();

  if (under && !state.presentation) {
    const int j = under->row * g.cols + under->col;
    ImGui::BeginTooltip();
    ImGui::Text("patch (%d,%d)  token %d", under->col, under->row, g.prefix + j);
    ImGui::Text("%s = %s", state.vit_norms ? "||x||" : "a_ij", format_weight(values[static_cast<std::size_t>(j)]).c_str());
    ImGui::EndTooltip();
  }
  if (state.vit_masks) {  // the outlines' legend, on a dark strip over the canvas's top left
    ImDrawList* top = ImGui::GetWindowDrawList();
    float x = p0.x + 4;
    for (int h = 0; h < src->heads(); ++h) {
      const std::string label = "head " + std::to_string(h + 1) + "  ";
      const ImVec2 size = ImGui::CalcTextSize(label.c_str());
      top->AddRectFilled(ImVec2(x - 2, p0.y + 2), ImVec2(x + size.x, p0.y + 4 + size.y), IM_COL32(0, 0, 0, 200));
      top->AddText(ImVec2(x, p0.y + 3), vit_head_colour(h), label.c_str());
      x += size.x;
    }
  }

  ImGui::SameLine();
  ImGui::BeginGroup();
  ImGui::TextUnformatted(state.vit_norms ? "||x||" : "a_ij");
  std::vector<std::uint8_t> keep(values.size(), 1);
  colour_bar(state.colormap, state.normalization, normalization_range(values, keep, state.normalization),
             std::max(avail.y - ImGui::GetTextLineHeightWithSpacing() * 2, 40.0f));
  ImGui::EndGroup();

  geometry = ViewGeometry{origin.x, origin.y, scale, true, 0,
                          map_picture(p0, ImVec2(p0.x + avail.x, p0.y + avail.y), origin,
                                      ImVec2(origin.x + cw * scale, origin.y + ch * scale))};
  state.vit_drawn = {{"model", vit.file().string()},
                     {"sha256", vit.sha256()},
                     {"layer", layer},
                     {"head", head},
                     {"head_label", vit_head_label(head)},
                     {"token", token},
                     {"token_label", vit_token_label(*src, token)},
                     {"shows", state.vit_norms ? "norms" : state.vit_rollout ? "rollout" : "row"},
                     {"prefix_share", share},
                     {"prefix_norms", prefix_norms},
                     {"grid", {{"cols", g.cols}, {"rows", g.rows}, {"prefix", g.prefix}}},
                     {"input", {{"width", src->input_width()}, {"height", src->input_height()}}},
                     {"origin", {origin.x, origin.y}},
                     {"cell", {cell_w, cell_h}},
                     {"values", values}};
}

}  // namespace attnlab::app
