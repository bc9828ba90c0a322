// Pinned patch queries of the ViT (P or a right click on the map), each one's row in the
// current layer and head side by side, on one shared scale so that they can be compared.
#include "app/gui/vit_views.hpp"
#include "app/gui/widget_log.hpp"

#include <algorithm>

namespace attnlab::app {

void draw_vit_pinned_view(AppState& state, VitSession& vit) {
  const VitSource* src = vit.source();
  if (!src) return;
  const SourceGrid g = src->grid();
  const int layer = vit_layer(state, *src), head = std::min(state.vit_head, src->heads() - 1);
  if (state.vit_pinned.empty()) {
    ImGui::TextWrapped("No pinned queries: press P over the map (or right-click a patch) to pin the query patch; its row "
                       "in the current layer and head then stays here beside the others, on one shared scale.");
    return;
  }
  std::vector<std::vector<float>> rows;
  float hi = 0;
  for (const Cell& c : state.vit_pinned) {
    const Cell cell{std::clamp(c.col, 0, g.cols - 1), std::clamp(c.row, 0, g.rows - 1)};
    rows.push_back(src->patch_row(layer, vit_head_choice(head), g.prefix + cell.row * g.cols + cell.col));
    hi = std::max(hi, *std::max_element(rows.back().begin(), rows.back().end()));
  }
  ImGui::Text("layer %d, %s; one scale for all: 0 to %s", layer + 1, vit_head_label(head).c_str(), format_weight(hi).c_str());
  ImGui::SameLine();
  if (ImGui::SmallButton("unpin all")) state.vit_pinned.clear();
  record_widget("vit_unpin_all");
  const float h = std::max(ImGui::GetContentRegionAvail().y - ImGui::GetTextLineHeightWithSpacing() * 2, 40.0f);
  const float w = h * static_cast<float>(g.covered_w / g.covered_h);
  for (std::size_t n = 0; n < rows.size() && n < state.vit_pinned.size(); ++n) {
    if (n) ImGui::SameLine();
    ImGui::BeginGroup();
    const Cell c = state.vit_pinned[n];
    const std::string id = "vit_pinned:" + std::to_string(c.col) + "," + std::to_string(c.row);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const bool clicked = ImGui::InvisibleButton(id.c_str(), ImVec2(w, h));
    record_widget(id);
    const std::string key = std::to_string(layer) + "|" + std::to_string(head) + "|" + id + "|" + std::to_string(hi);
    const std::vector<float>& row = rows[n];
    const ImTextureID heat = vit.textures().get(id, std::to_string(vit.generation()) + key, g.cols, g.rows, [&] {
      return colormap_pixels(row, {}, state.colormap, Normalization::Absolute, ValueRange{0, hi});
    }, state.bilinear);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float scale = w / static_cast<float>(g.covered_w);
    draw_vit_photo_and_heat(dl, vit, heat, p, scale, std::max(state.opacity, 0.8f));
    const float cw = w / static_cast<float>(g.cols), ch = h / static_cast<float>(g.rows);
    const ImVec2 a(p.x + static_cast<float>(c.col) * cw, p.y + static_cast<float>(c.row) * ch);
    dl->AddRect(a, ImVec2(a.x + cw, a.y + ch), IM_COL32(0, 255, 255, 255), 0, 0, 2);
    ImGui::Text("patch (%d,%d)", c.col, c.row);
    ImGui::EndGroup();
    if (clicked) {  // make it the query of the main map
      state.vit_cell = c;
      state.vit_token = -1;
      state.query_pinned = true;
    }
  }
}

}  // namespace attnlab::app
