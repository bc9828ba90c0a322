// The layer × head grid: for the current query, one small map per layer (rows, first at the
// top) and head (columns), each on its own scale; a click makes it the main map.
#include "app/gui/vit_views.hpp"
#include "app/gui/widget_log.hpp"

#include <algorithm>

namespace attnlab::app {

void draw_vit_grid_view(AppState& state, VitSession& vit) {
  const VitSource* src = vit.source();
  if (!src) {
    ImGui::TextUnformatted("No model loaded.");
    return;
  }
  const SourceGrid g = src->grid();
  const int token = vit_query_token(state, *src), L = src->layers(), H = src->heads();
  const int current_layer = vit_layer(state, *src);
  ImGui::Text("query %s; each map on its own scale; click one to show it large", vit_token_label(*src, token).c_str());
  const ImGuiStyle& style = ImGui::GetStyle();
  const float label_w = ImGui::CalcTextSize("L00").x + style.ItemSpacing.x;
  const float avail = ImGui::GetContentRegionAvail().x - label_w - style.ScrollbarSize;
  const float aspect = static_cast<float>(g.covered_h / g.covered_w);
  const float w = std::clamp((avail - style.ItemSpacing.x * static_cast<float>(H - 1)) / static_cast<float>(H), 24.0f, 240.0f);
  const ImVec2 size(w, w * aspect);

  ImGui::Dummy(ImVec2(label_w - style.ItemSpacing.x, 0));
  for (int h = 0; h < H; ++h) {
    ImGui::SameLine(label_w + static_cast<float>(h) * (w + style.ItemSpacing.x) + style.WindowPadding.x);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(vit_head_colour(h)), "h%d", h + 1);
  }
  for (int l = 0; l < L; ++l) {
    ImGui::AlignTextToFramePadding();
    ImGui::Text("L%d", l + 1);
    for (int h = 0; h < H; ++h) {
      ImGui::SameLine(label_w + static_cast<float>(h) * (w + style.ItemSpacing.x) + style.WindowPadding.x);
      const std::string id = "vit_grid:" + std::to_string(l) + ":" + std::to_string(h);
      const ImVec2 p = ImGui::GetCursorScreenPos();
      const bool clicked = ImGui::InvisibleButton(id.c_str(), size);
      record_widget(id);
      if (!ImGui::IsItemVisible()) continue;  // scrolled away: no texture made
      const std::vector<float> row = src->patch_row(l, HeadChoice{h, HeadFusion::Mean}, token);
      const ImTextureID heat = vit_map_texture(vit, state, id, std::to_string(token), row);
      ImDrawList* dl = ImGui::GetWindowDrawList();
      draw_vit_photo_and_heat(dl, vit, heat, p, size.x / static_cast<float>(g.covered_w), std::max(state.opacity, 0.8f));
      const bool selected = l == current_layer && h == state.vit_head && !state.vit_rollout && !state.vit_norms;
      if (selected || ImGui::IsItemHovered())
        dl->AddRect(p, ImVec2(p.x + size.x, p.y + size.y), selected ? IM_COL32(0, 255, 255, 255) : IM_COL32(255, 255, 255, 160), 0, 0,
                    selected ? 3.0f : 1.0f);
      if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::Text("layer %d, head %d: mean distance %.1f px", l + 1, h + 1, src->distance()(l, h));
        ImGui::EndTooltip();
      }
      if (clicked) {
        state.vit_layer = l;
        state.vit_head = h;
        state.vit_rollout = false;
        state.vit_norms = false;
      }
    }
  }
}

}  // namespace attnlab::app
