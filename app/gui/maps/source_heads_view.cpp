// Every head's map for the same query (multihead attention, eqs. 26.26–26.28), from any
// MapSource: one layer (the hand-made heads) in rows of two or three with the heads' names and
// largest weights, several (a ViT) as a layers × heads table, first layer at the top. A click
// makes a map the main one.
#include "app/gui/maps/map_source.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace attnlab::app {

bool source_thumbnail(const std::string& id, MapSource& source, const std::function<ImTextureID()>& heat, const AppState& state,
                      ImVec2 size, const std::vector<Cell>& outlines, bool selected) {
  const bool clicked = draw_map_thumbnail(
      id.c_str(), source.info().grid, [&](ImDrawList* dl, ImVec2 origin, float scale) { source.draw_photo(dl, origin, scale); }, heat,
      state, size, outlines, selected, 0.6f);
  record_widget(id);
  return clicked;
}

std::optional<Cell> query_cell(const SourceGrid& grid, int token) {
  if (token < grid.prefix || token >= grid.T()) return std::nullopt;
  return Cell{(token - grid.prefix) % grid.cols, (token - grid.prefix) / grid.cols};
}

void draw_heads_grid(AppState& state, MapSource& source) {
  const SourceInfo info = source.info();
  if (!info.ready) {
    ImGui::TextUnformatted(_("Nothing to show yet."));
    return;
  }
  const SourceGrid g = info.grid;
  SourceChoice& choice = source.choice();
  const int L = info.layers, H = info.heads, query = info.query;
  const float aspect = static_cast<float>(g.covered_h / g.covered_w);
  std::vector<Cell> outline;
  if (const auto c = query_cell(g, query)) outline.push_back(*c);
  // A map of layer l's head h; returns its largest weight when it was drawn (nullopt: scrolled
  // away, or on its way). A click makes it the main map.
  auto thumbnail = [&](int l, int h, const std::string& id, ImVec2 size) {
    const HeadChoice head{h, HeadFusion::Mean};
    const HeadInfo about = source.head_info(l, head);
    std::optional<float> max;
    auto heat = [&] {
      const SourceMap m = source.map(l, head, query);
      max = m.max;
      return m.texture;
    };
    if (source_thumbnail(id, source, heat, state, size, outline, about.shown)) {
      choice.layer = l;
      choice.head = head;
      source.changed(ChoiceChange::MapChosen);
    }
    if (ImGui::IsItemHovered() && !about.tooltip.empty()) ImGui::SetTooltip("%s", about.tooltip.c_str());
    return max;
  };

  if (L == 1) {  // a few heads: large maps with their names and largest weights
    const float avail = ImGui::GetContentRegionAvail().x;
    const float spacing = ImGui::GetStyle().ItemSpacing.x;
    const int columns = avail > ui_px(260) ? 3 : 2;
    const float side = std::max((avail - spacing * static_cast<float>(columns)) / static_cast<float>(columns), 60.0f);
    // A column's texts are cut to its width (a narrow panel: a 1024 px screen, a large UI
    // scale), so that the third column stays inside the panel; the whole text is the tooltip.
    auto fitted = [&](std::string text) {
      if (ImGui::CalcTextSize(text.c_str()).x <= side) return text;
      while (text.size() > 1 && ImGui::CalcTextSize((text + "..").c_str()).x > side) text.pop_back();
      return text + "..";
    };
    for (int h = 0; h < H; ++h) {
      if (h % columns) ImGui::SameLine();
      ImGui::BeginGroup();
      const HeadInfo about = source.head_info(0, HeadChoice{h, HeadFusion::Mean});
      ImGui::TextUnformatted(fitted(std::to_string(h) + " " + about.label).c_str());  // the number its digit key picks
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", about.tooltip.c_str());
      const auto mx = thumbnail(0, h, "head:" + std::to_string(h), ImVec2(side, side));
      const std::string weight = mx ? format_weight(*mx) : "...";
      const std::string masked = mx && *mx == 0 ? _(" (all masked)") : "";
      // TRANSLATORS: the largest attention weight a_ij of the head's row; the next one is its short form.
      const std::string caption = text_format(_("max a_ij %s%s"), weight.c_str(), masked.c_str());
      ImGui::TextDisabled("%s", ImGui::CalcTextSize(caption.c_str()).x <= side
                                    ? caption.c_str()
                                    : fitted(text_format(_("max %s%s"), weight.c_str(), masked.c_str())).c_str());
      ImGui::EndGroup();
    }
  } else {  // many: a layers × heads table of small maps
    text_wrapped(_("query %s; click a map to show it large"), token_label(g, query).c_str());
    const ImGuiStyle& style = ImGui::GetStyle();
    const float label_w = ImGui::CalcTextSize("L00").x + style.ItemSpacing.x;
    const float avail = ImGui::GetContentRegionAvail().x - label_w - style.ScrollbarSize;
    // As wide as the panel allows (a narrow column on a projector: small, but every head inside it).
    const float w = std::clamp((avail - style.ItemSpacing.x * static_cast<float>(H - 1)) / static_cast<float>(H), 10.0f, 240.0f);
    auto column = [&](int h) { return label_w + static_cast<float>(h) * (w + style.ItemSpacing.x) + style.WindowPadding.x; };
    ImGui::Dummy(ImVec2(label_w - style.ItemSpacing.x, 0));
    for (int h = 0; h < H; ++h) {
      ImGui::SameLine(column(h));
      const std::string label = "h" + std::to_string(h);
      if (const auto colour = source.head_info(0, HeadChoice{h, HeadFusion::Mean}).colour) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(*colour), "%s", label.c_str());
      else ImGui::TextUnformatted(label.c_str());
    }
    for (int l = 0; l < L; ++l) {
      ImGui::AlignTextToFramePadding();
      ImGui::Text("L%d", l);
      for (int h = 0; h < H; ++h) {
        ImGui::SameLine(column(h));
        thumbnail(l, h, "head:" + std::to_string(l) + ":" + std::to_string(h), ImVec2(w, w * aspect));
      }
    }
  }
  source.draw_head_settings();
}

}  // namespace attnlab::app
