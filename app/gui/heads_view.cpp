// The heads view: every head's map for the same query, side by side (multihead attention,
// eqs. 26.26–26.28). Click a thumbnail to make it the main map; edit the custom head's W_q, W_k.
#include "app/gui/views.hpp"
#include "app/gui/widget_log.hpp"

#include <cmath>

namespace attnlab::app {

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

void draw_heads_view(AppState& state, Backend& backend) {
  if (!backend.has_image()) return;
  const HeatmapStyle style{state.colormap, state.normalization};
  const float avail = ImGui::GetContentRegionAvail().x;
  const int columns = avail > ui_px(260) ? 3 : 2;
  const float side = std::max((avail - ImGui::GetStyle().ItemSpacing.x * static_cast<float>(columns)) / static_cast<float>(columns), 60.0f);
  const RowSet& rows = backend.rows();
  for (int h = 0; h < kHeadCount; ++h) {
    if (h % columns) ImGui::SameLine();
    ImGui::BeginGroup();
    const auto row = rows.head(h);
    float mx = 0;
    for (float w : row) mx = std::max(mx, w);
    ImGui::Text("%d %s", h, std::string(head_name(static_cast<HeadKind>(h))).c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", std::string(head_summary(static_cast<HeadKind>(h))).c_str());
    if (map_thumbnail(("head" + std::to_string(h)).c_str(), backend, backend.heatmap(h, style), state, ImVec2(side, side),
                      {state.query}, h == state.main_head))
      state.main_head = h;
    record_widget("head:" + std::to_string(h));
    ImGui::TextDisabled("max a_ij %s%s", format_weight(mx).c_str(), rows.empty[h] ? " (all masked)" : "");
    ImGui::EndGroup();
  }

  ImGui::Separator();
  ImGui::TextUnformatted("custom head: s_ij = c_i^T W_q^T W_k c_j (eq. 26.24), c = unit mean colour");
  auto edit = [&](const char* label, std::array<float, 9>& W) {
    ImGui::PushID(label);
    ImGui::Text("%s", label);
    for (int r = 0; r < 3; ++r) {
      ImGui::PushID(r);
      ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
      ImGui::DragFloat3("", &W[static_cast<size_t>(r) * 3], 0.02f, -4.0f, 4.0f, "%.2f");
      record_widget(std::string(label) + ":" + std::to_string(r));
      ImGui::PopID();
    }
    ImGui::PopID();
  };
  ImGui::BeginGroup();
  edit("W_q", state.attention.custom.W_q);
  ImGui::EndGroup();
  ImGui::SameLine();
  ImGui::BeginGroup();
  edit("W_k", state.attention.custom.W_k);
  ImGui::EndGroup();
  if (ImGui::Button("identity (= colour head)")) state.attention.custom = CustomHead{};
  record_widget("custom_identity");
  ImGui::SameLine();
  if (ImGui::Button("only red/green")) {
    state.attention.custom = CustomHead{};
    state.attention.custom.W_q[8] = state.attention.custom.W_k[8] = 0.0f;
  }
  record_widget("custom_red_green");
}

}  // namespace attnlab::app
