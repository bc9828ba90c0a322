// The chapter's hand-made heads as a MapSource (map_source.hpp): HandMadeSession's model, the
// document's hand_made choice (query, head, pins). The current query's maps are the engine's
// colormap pass over its rows (HandMadeSession::heatmap), another query's the same pass into a texture
// of its own (pinned_map); the numbers the CPU shows arrive the frame after, from a fence.
#include "app/gui/sessions/hand_made_session.hpp"
#include "app/gui/maps/map_source.hpp"
#include "app/gui/maps/map_pictures.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/translate.hpp"

#include "core/hand_made/attention.hpp"
#include "core/hand_made/hand_made_source.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnlab::app {
namespace {

// The label the Controls show for choice number `n` of the setting at `path` (its field table's
// choices, translated by setting_ref); `name` (the setting's saved name) when the table has none.
std::string choice_label(AppState& state, std::string_view path, int n, std::string_view name) {
  const std::vector<std::string> choices = setting_ref(state, path).ui.choices;
  return n >= 0 && n < static_cast<int>(choices.size()) ? choices[static_cast<size_t>(n)] : std::string(name);
}

}  // namespace

SourceInfo HandMadeMapSource::info() const {
  SourceInfo out;
  out.empty_text = _("No image loaded.");
  out.ready = hand_made_.has_image();
  if (out.ready) {
    out.grid = hand_made_source_grid(hand_made_.grid());
    out.query = hand_made_query(state_, hand_made_.grid());
  }
  out.layers = 1;
  out.heads = kHeadCount;
  return out;
}

HeadInfo HandMadeMapSource::head_info(int layer, HeadChoice head) const {
  const auto kind = static_cast<HeadKind>(std::clamp(head.head, 0, kHeadCount - 1));
  return HeadInfo{std::string(head_name(kind)), std::string(head_summary(kind)), std::nullopt,
                  layer == 0 && head.head >= 0 && head.head == state_.hand_made.head.head};
}

void HandMadeMapSource::draw_photo(ImDrawList* dl, ImVec2 origin, float scale) { app::draw_photo(dl, hand_made_, origin, scale); }

SourceMap HandMadeMapSource::map(int, HeadChoice head, int query) {
  const HeatmapStyle style{state_.colormap, state_.normalization};
  if (query != hand_made_query(state_, hand_made_.grid()))
    return SourceMap{hand_made_.pinned_map(query, head.head, style), hand_made_.pinned_map_max(query)};
  // While the pointer moves, the previous query's rows until the new ones have arrived (a frame
  // later): the number lags the map by a frame rather than blinking.
  // The largest weight is read before heatmap(): the CPU painter asks for the exact rows, which
  // replaces the lagging ones this span points into.
  const auto row = hand_made_.latest_rows(query).head(head.head);
  const float largest = row.empty() ? 0.0f : *std::max_element(row.begin(), row.end());
  return SourceMap{hand_made_.heatmap(query, head.head, style), largest};
}

void HandMadeMapSource::keep_pinned(const std::vector<int>& queries) { hand_made_.keep_pinned(queries); }

// The custom head: s_ij = c_i^T W_q^T W_k c_j (eq. 26.24); its two 3 × 3 matrices, edited here.
void HandMadeMapSource::draw_head_settings() {
  ImGui::Separator();
  // TRANSLATORS: s_ij is the logit of query i and key j, c the token's colour, W_q and W_k the head's 3 x 3 matrices.
  text_wrapped("%s", _("custom head: s_ij = c_i^T W_q^T W_k c_j (eq. 26.24), c = unit mean colour"));
  // Two matrices side by side where the panel is wide enough, one under the other where not
  // (a narrow panel: a small screen, a large UI scale); never wider than the panel.
  const float avail = ImGui::GetContentRegionAvail().x;
  const float width = std::min(ImGui::GetFontSize() * 10, avail);
  auto edit = [&](const char* label, std::array<float, 9>& W) {
    ImGui::PushID(label);
    ImGui::Text("%s", label);
    for (int r = 0; r < 3; ++r) {
      ImGui::PushID(r);
      ImGui::SetNextItemWidth(width);
      ImGui::DragFloat3("", &W[static_cast<size_t>(r) * 3], 0.02f, -4.0f, 4.0f, "%.2f");
      record_widget(std::string(label) + ":" + std::to_string(r));
      ImGui::PopID();
    }
    ImGui::PopID();
  };
  ImGui::BeginGroup();
  edit("W_q", state_.attention.custom.W_q);
  ImGui::EndGroup();
  if (avail >= 2 * width + ImGui::GetStyle().ItemSpacing.x) ImGui::SameLine();
  ImGui::BeginGroup();
  edit("W_k", state_.attention.custom.W_k);
  ImGui::EndGroup();
  // The buttons' labels short enough for a narrow panel, one under the other when they do not fit.
  const ImGuiStyle& st = ImGui::GetStyle();
  auto button_w = [&](const char* label) { return ImGui::CalcTextSize(label).x + st.FramePadding.x * 2 + st.ItemSpacing.x; };
  // TRANSLATORS: a button: set W_q and W_k to the identity matrix.
  if (ImGui::Button(_("identity"))) state_.attention.custom = CustomHead{};
  record_widget("custom_identity");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", _("W_q = W_k = I: the colour head"));
  same_line_if_room(button_w(_("only red/green")));
  if (ImGui::Button(_("only red/green"))) {
    state_.attention.custom = CustomHead{};
    state_.attention.custom.W_q[8] = state_.attention.custom.W_k[8] = 0.0f;
  }
  record_widget("custom_red_green");
}

// The main map: the main head's row (the previous query's numbers until the new row has
// arrived, the map itself the engine's colormap pass for the current query).
MainMap HandMadeMapSource::main_map(const SourceChoice& choice) {
  const int head = std::clamp(choice.head.head, 0, kHeadCount - 1);
  const int i = hand_made_query(state_, hand_made_.grid());
  const RowSet& rows = hand_made_.latest_rows(i);
  const auto row = rows.head(head);
  MainMap map;
  map.layer = 0;
  map.head = HeadChoice{head, HeadFusion::Mean};
  map.query = i;
  map.values.assign(row.begin(), row.end());
  map.keep.resize(row.size());
  for (std::size_t j = 0; j < row.size(); ++j) map.keep[j] = hand_made_.setup().mask.allowed(i, static_cast<int>(j));
  map.flat = row_flatness(row, map.keep);  // the colour bar's mark, and the header's note
  map.uniform = map.flat.uniform;
  map.row_empty = rows.empty[static_cast<std::size_t>(head)];
  // Last: without compute shaders the painter asks for the exact rows, which replaces the
  // lagging ones `rows` and `row` point into.
  map.texture = hand_made_.heatmap(i, head, HeatmapStyle{state_.colormap, state_.normalization});
  return map;
}

// Status line (the query, the head), the head in one line, the presentation's legend, and an
// honest word on a nearly uniform row.
void HandMadeMapSource::draw_map_header(const MainMap& map) {
  const PatchGrid& g = hand_made_.grid();
  const SourceChoice& c = state_.hand_made;
  const auto kind = static_cast<HeadKind>(map.head.head);
  // TRANSLATORS: the query patch (column,row), its token index i, "[pinned]" or "[follows mouse]", the head's number and name.
  text_wrapped(_("query (%d,%d)  i = %d  %s  head %d: %s%s"), g.col_of(map.query), g.row_of(map.query), map.query,
               c.query_pinned ? _("[pinned]") : _("[follows mouse]"), map.head.head, std::string(head_name(kind)).c_str(),
               map.row_empty ? _("  (every key masked: row is 0)") : "");
  // What the head is, in one line: beside it when it fits, on hover otherwise.
  const std::string summary(head_summary(kind));
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", summary.c_str());
  ImGui::SameLine();
  if (ImGui::CalcTextSize(summary.c_str()).x <= ImGui::GetContentRegionAvail().x) {
    ImGui::TextDisabled("%s", summary.c_str());
    record_widget("head_summary");
  } else {
    ImGui::NewLine();
  }
  if (state_.presentation) {  // for the class: what the map depends on, no developer numbers
    const Settings& a = hand_made_.settings();
    const std::string tau = format_number(a.temperature, 3);
    const std::string mask = choice_label(state_, "mask.kind", static_cast<int>(a.mask.kind), mask_kind_name(a.mask.kind));  // i18n: English (a setting's path)
    const std::string codes = choice_label(state_, "pos.mode", static_cast<int>(a.pos.mode), pos_mode_name(a.pos.mode));  // i18n: English (a setting's path)
    // TRANSLATORS: a legend: the mask's kind, the temperature tau, the positional codes' mode, K = patch size in pixels,
    // N = number of tokens, the number of pinned queries.
    ImGui::Text(_("mask: %s   tau = %s   codes: %s   K = %d (N = %d)   pins: %zu"), mask.c_str(), tau.c_str(), codes.c_str(), g.K,
                g.N(), c.pins.size());
    record_widget("presentation:legend");
    for (size_t n = 0; n < c.pins.size(); ++n) {  // the pins' outline colours, as a legend
      ImGui::SameLine();
      pinned_swatch(n);
      ImGui::SameLine();
      ImGui::Text("(%d,%d)", c.pins[n].col, c.pins[n].row);
    }
  }  // N and K are in the window's title; frame times, the driver and the checks in View > Diagnostics

  // An honest scale: a min-max map stretches whatever spread the row has over the whole
  // colormap, so a nearly uniform row is said to be one (the why in its tooltip), with the two
  // ways to see it as it is. One line's height, flat or not, so that the map does not jump while
  // the pointer explores, and the map keeps the room (a paragraph here cost a projector's map
  // a fifth of its height, issue 47).
  const RowFlatness& flat = map.flat;
  const ImGuiStyle& st = ImGui::GetStyle();
  ImGui::BeginChild("flatness", ImVec2(0, ImGui::GetFrameHeightWithSpacing()), false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  if (flat.nearly_uniform && !map.row_empty) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.8f, 0.3f, 1.0f));
    ImGui::AlignTextToFramePadding();
    // TRANSLATORS: max/min is the ratio of the row's largest weight to its smallest.
    ImGui::Text(_("Nearly uniform row: max/min %s"), format_number(flat.max_over_min, 3).c_str());
    ImGui::PopStyleColor();
    if (ImGui::IsItemHovered())
      // TRANSLATORS: H is the row's entropy, N the number of tokens.
      ImGui::SetTooltip(_("max/min = %s, H/log N = %s: every weight is close to 1/N (marked on the bar), and the colours stretch "
                          "that small spread."),
                        format_number(flat.max_over_min, 3).c_str(), format_number(flat.entropy_ratio, 3).c_str());
    record_widget("flat:note");
    auto small_w = [&](const char* label) { return ImGui::CalcTextSize(label).x + st.FramePadding.x * 2 + st.ItemSpacing.x; };
    if (state_.normalization == Normalization::MinMax) {
      ImGui::SameLine();
      if (ImGui::GetContentRegionAvail().x >= small_w(_("absolute scale"))) {
        if (ImGui::SmallButton(_("absolute scale"))) state_.normalization = Normalization::Absolute;
        record_widget("flat:absolute");
      }
    }
    ImGui::SameLine();
    // TRANSLATORS: a button that sets the temperature tau to 0.05.
    if (ImGui::GetContentRegionAvail().x >= small_w(_("sharpen: tau = 0.05"))) {
      if (ImGui::SmallButton(_("sharpen: tau = 0.05"))) state_.attention.temperature = 0.05f;
      record_widget("flat:sharpen");
    }
  } else if (flat.n > 0) {
    ImGui::AlignTextToFramePadding();
    // TRANSLATORS: max/min is the ratio of the row's largest weight to its smallest; H is its entropy, N the number of tokens.
    ImGui::TextDisabled(_("max/min %s, H/log N = %s (1: uniform, 0: one key)"),
                        std::isinf(flat.max_over_min) ? "inf" : format_number(flat.max_over_min, 4).c_str(),  // i18n: English (∞)
                        format_number(flat.entropy_ratio, 3).c_str());
  }
  ImGui::EndChild();
}

// Painting the painted mask (section 26.10): left-drag paints keys, Shift erases.
bool HandMadeMapSource::paint(Cell cell, bool down, bool erase) {
  if (!state_.ui.paint_mode || state_.attention.mask.kind != MaskKind::Painted) return false;
  if (down) {
    auto& painted = state_.attention.mask.painted;
    const int j = hand_made_.grid().index(cell.col, cell.row);
    const auto it = std::lower_bound(painted.begin(), painted.end(), j);
    if (erase && it != painted.end() && *it == j) painted.erase(it);
    if (!erase && (it == painted.end() || *it != j)) painted.insert(it, j);
  }
  return true;
}

// The keys the mask hides from the query, darkened.
void HandMadeMapSource::draw_overlays(const MainMap&, ImDrawList* dl, ImVec2 origin, float scale, ImVec2) {
  if (!state_.show_mask || state_.attention.mask.kind == MaskKind::None) return;
  const SourceGrid g = hand_made_source_grid(hand_made_.grid());
  dl->AddImage(hand_made_.mask_overlay(hand_made_query(state_, hand_made_.grid())), origin,
               ImVec2(origin.x + static_cast<float>(g.covered_w) * scale, origin.y + static_cast<float>(g.covered_h) * scale),
               ImVec2(0, 0), ImVec2(1, 1), IM_COL32(255, 255, 255, 150));
}

}  // namespace attnlab::app
