// Pinned queries: the main head's maps for several query patches side by side (the chapter's
// fig. 26.12 shows three queries on the safari photo). Right-click a patch to pin it.
#include "app/gui/views.hpp"

#include <algorithm>

namespace attnlab::app {

void draw_pinned_view(AppState& state, Backend& backend) {
  if (!backend.has_image()) return;
  if (state.pinned.empty()) {
    if (!state.pinned_note.empty()) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.8f, 0.3f, 1.0f));
      ImGui::TextWrapped("%s", state.pinned_note.c_str());
      ImGui::PopStyleColor();
    }
    ImGui::TextWrapped("Right-click patches on the photo to pin them here, or pin the current query:");
  }
  if (ImGui::Button("pin the current query (P)")) {
    if (std::find(state.pinned.begin(), state.pinned.end(), state.query) == state.pinned.end()) state.pinned.push_back(state.query);
  }
  ImGui::SameLine();
  if (ImGui::Button("clear")) state.pinned.clear();

  if (!state.pinned.empty()) state.pinned_note.clear();
  const auto& g = backend.grid();
  const HeatmapStyle style{state.colormap, state.normalization};
  const float h = std::max(ImGui::GetContentRegionAvail().y - ImGui::GetTextLineHeightWithSpacing() * 2, 60.0f);
  std::erase_if(state.pinned, [&](const Cell& c) { return !g.contains(c.col, c.row); });
  std::vector<int> pinned_queries;
  for (const Cell& c : state.pinned) pinned_queries.push_back(g.index(c.col, c.row));
  backend.keep_pinned(pinned_queries);
  for (size_t n = 0; n < state.pinned.size(); ++n) {
    const Cell c = state.pinned[n];
    const ImTextureID map = backend.heatmap_for(g.index(c.col, c.row), state.main_head, style);
    if (n) ImGui::SameLine();
    ImGui::BeginGroup();
    // The outline's colour on the main map, the patch, the head and the row's largest weight
    // (each pinned map has its own scale, from its own row).
    pinned_swatch(n);
    ImGui::SameLine();
    // The largest weight comes from the GPU a frame after the map (read once its fence has signalled).
    const auto max = backend.heatmap_for_max(g.index(c.col, c.row));
    ImGui::Text("(%d,%d) %s, max a_ij %s", c.col, c.row, std::string(head_name(static_cast<HeadKind>(state.main_head))).c_str(),
                max ? format_weight(*max).c_str() : "...");
    if (map_thumbnail(("pin" + std::to_string(n)).c_str(), backend, map, state, ImVec2(h, h), {c}, false)) {
      state.query = c;  // click a pinned map: make it the query
      state.query_pinned = true;
    }
    ImGui::EndGroup();
  }
}

}  // namespace attnlab::app
