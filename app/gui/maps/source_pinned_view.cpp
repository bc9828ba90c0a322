// Pinned queries, from any MapSource: the main map's layer and head for several query patches
// side by side (the chapter's fig. 26.12 shows three queries on the safari photo), each with
// its largest weight. Right-click a patch on the map (or press P) to pin it.
#include "app/gui/maps/map_source.hpp"
#include "app/gui/maps/view.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/translate.hpp"

#include <algorithm>

namespace attnlab::app {

void draw_pinned_maps(AppState& state, MapSource& source) {
  const SourceInfo info = source.info();
  if (!info.ready) return;
  const SourceGrid g = info.grid;
  SourceChoice& choice = source.choice();
  std::vector<Cell>& pinned = choice.pins;
  std::erase_if(pinned, [&](const Cell& c) { return c.col < 0 || c.row < 0 || c.col >= g.cols || c.row >= g.rows; });
  if (pinned.empty()) {
    if (!state.ui.pinned_note.empty()) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.8f, 0.3f, 1.0f));
      text_wrapped("%s", state.ui.pinned_note.c_str());
      ImGui::PopStyleColor();
    }
    text_wrapped("%s", _("Right-click patches on the map to pin them here, or pin the current query:"));
  }
  const auto current = query_cell(g, info.query);
  ImGui::BeginDisabled(!current);
  // TRANSLATORS: the same button's label, long to short (the longest that fits is shown); P is its key.
  if (ImGui::Button(fitting_label({_("pin the current query (P)"), _("pin the query (P)"), _("pin (P)")})) && current &&
      std::find(pinned.begin(), pinned.end(), *current) == pinned.end())
    pinned.push_back(*current);
  ImGui::EndDisabled();
  record_widget("pinned:pin");
  // TRANSLATORS: a button: unpin every pinned query.
  same_line_if_room(button_width(_("clear")));
  if (ImGui::Button(_("clear"))) pinned.clear();
  record_widget("pinned:clear");
  if (!pinned.empty()) state.ui.pinned_note.clear();

  const int layer = choice_layer(choice, info.layers);
  const HeadChoice head = choice_head(choice, info.heads);
  std::vector<int> queries;
  for (const Cell& c : pinned) queries.push_back(g.prefix + c.row * g.cols + c.col);
  source.keep_pinned(queries);
  ImGui::SameLine();  // what every map shows: the main map's layer and head
  ImGui::TextDisabled("%s%s", info.layers > 1 ? text_format(_("layer %d, "), layer).c_str() : "",
                      source.head_info(layer, head).label.c_str());
  const float h = std::max(ImGui::GetContentRegionAvail().y - ImGui::GetTextLineHeightWithSpacing() * 2, 60.0f);
  const float w = h * static_cast<float>(g.covered_w / g.covered_h);
  for (std::size_t n = 0; n < pinned.size(); ++n) {
    const Cell c = pinned[n];
    const int query = queries[n];
    if (n) ImGui::SameLine();
    ImGui::BeginGroup();
    // The outline's colour on the main map, the patch and the row's largest weight (each pinned map is coloured from its own row, as the main map is).
    pinned_swatch(n);
    ImGui::SameLine();
    const SourceMap m = source.map(layer, head, query);
    // TRANSLATORS: a pinned patch (column,row) and the largest attention weight a_ij of its row.
    ImGui::Text(_("(%d,%d) max a_ij %s"), c.col, c.row, m.max ? format_weight(*m.max).c_str() : "...");
    const std::string id = "pinned:" + std::to_string(c.col) + "," + std::to_string(c.row);
    if (source_thumbnail(id, source, [&] { return m.texture; }, state, ImVec2(w, h), {c}, false)) {
      choice.cell = c;  // click a pinned map: make it the query, and keep it
      choice.prefix_token = -1;
      choice.query_pinned = true;
    }
    ImGui::EndGroup();
  }
}

// The view (view.hpp): rows of A only, so every source offers it.
class PinnedView final : public View {
 public:
  PinnedView() : View(ViewText{"pinned", N_("Pinned"), N_("Pinned queries")}, kNeedRows) {}
  void draw(ViewSource& s) override {
    if (s.map.info().ready) draw_pinned_maps(s.state, s.map);
    else ImGui::TextDisabled("%s", _("No attention yet: the pinned queries show once the source has run."));
  }
};

std::unique_ptr<View> make_pinned_view() { return std::make_unique<PinnedView>(); }

}  // namespace attnlab::app
