// Pinned queries: the main head's maps for several query patches side by side (the chapter's
// fig. 26.12 shows three queries on the safari photo). Right-click a patch to pin it.
#include "app/gui/views.hpp"

#include <algorithm>

namespace attnlab::app {

void draw_pinned_view(AppState& state, Backend& backend) {
  if (!backend.has_image()) return;
  if (state.pinned.empty()) {
    ImGui::TextWrapped("Right-click patches on the photo to pin them here, or pin the current query:");
  }
  if (ImGui::Button("pin the current query (P)")) {
    if (std::find(state.pinned.begin(), state.pinned.end(), state.query) == state.pinned.end()) state.pinned.push_back(state.query);
  }
  ImGui::SameLine();
  if (ImGui::Button("clear")) state.pinned.clear();

  const auto& g = backend.grid();
  const HeatmapStyle style{state.colormap, state.normalization};
  const float h = std::max(ImGui::GetContentRegionAvail().y - ImGui::GetTextLineHeightWithSpacing() * 2, 60.0f);
  std::erase_if(state.pinned, [&](const Cell& c) { return !g.contains(c.col, c.row); });
  for (size_t n = 0; n < state.pinned.size(); ++n) {
    const Cell c = state.pinned[n];
    const ImTextureID map = backend.heatmap_for(g.index(c.col, c.row), state.main_head, style);
    if (n) ImGui::SameLine();
    ImGui::BeginGroup();
    ImGui::Text("(%d,%d)", c.col, c.row);
    if (map_thumbnail(("pin" + std::to_string(n)).c_str(), backend, map, state, ImVec2(h, h), {c}, false)) {
      state.query = c;  // click a pinned map: make it the query
      state.query_pinned = true;
    }
    ImGui::EndGroup();
  }
}

}  // namespace attnlab::app
