// High-norm tokens (Darcet et al. 2023, "Vision Transformers Need Registers"; SPEC §12): the
// histogram of the patch tokens' norms ||z_l[t]||_2 after the chosen layer, with the threshold
// the user sets (a ratio times the median, core/vit/token_norms.hpp) as a line, how many
// patches are over it, and the prefix tokens' norms (CLS, registers), each a button that makes
// that token the query, so the registers' rows are shown like CLS's.
#include "app/gui/vit/vit_views.hpp"
#include "app/gui/state/setting_widgets.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/translate.hpp"

#include "core/vit/token_norms.hpp"

#include <algorithm>
#include <cstdio>

namespace attnlab::app {
namespace {

constexpr int kBins = 32;
constexpr ImU32 kThresholdColour = IM_COL32(255, 0, 255, 255);  // as the main map's marks (vit_map_source.cpp)
constexpr ImU32 kPrefixColour = IM_COL32(255, 220, 0, 255);

// The bars, the threshold line and a tick per prefix token, in the rest of the panel.
void draw_histogram(const NormHistogram& h, float threshold, const std::vector<float>& prefix, int prefix_query) {
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const float font = ImGui::GetFontSize();
  ImVec2 size = ImGui::GetContentRegionAvail();
  size.x = std::max(size.x, 120.0f);
  size.y = std::max(size.y, font * 5);
  ImGui::InvisibleButton("vit_norm_histogram", size);
  record_widget("vit_norm_histogram");
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float left = p0.x + 4, right = p0.x + size.x - 4, top = p0.y + 2, bottom = p0.y + size.y - font * 1.4f;
  dl->AddRectFilled(ImVec2(left, top), ImVec2(right, bottom), IM_COL32(20, 20, 24, 255));
  const int most = std::max(1, *std::max_element(h.counts.begin(), h.counts.end()));
  const auto bins = static_cast<float>(h.counts.size());
  auto X = [&](float v) { return left + (right - left) * (h.hi > h.lo ? (v - h.lo) / (h.hi - h.lo) : 0.0f); };
  for (std::size_t b = 0; b < h.counts.size(); ++b) {
    if (!h.counts[b]) continue;
    const float x0 = left + (right - left) * static_cast<float>(b) / bins, x1 = left + (right - left) * static_cast<float>(b + 1) / bins;
    const float y = bottom - (bottom - top) * static_cast<float>(h.counts[b]) / static_cast<float>(most);
    const float bar_lo = h.lo + (h.hi - h.lo) * static_cast<float>(b) / bins;
    dl->AddRectFilled(ImVec2(x0 + 1, y), ImVec2(x1 - 1, bottom), bar_lo >= threshold ? kThresholdColour : IM_COL32(120, 170, 255, 255));
  }
  dl->AddLine(ImVec2(X(threshold), top), ImVec2(X(threshold), bottom), kThresholdColour, 2.0f);
  for (std::size_t t = 0; t < prefix.size(); ++t) {  // the prefix tokens under the axis, a triangle each
    const float x = X(prefix[t]), s = font * 0.35f;
    dl->AddTriangleFilled(ImVec2(x, bottom), ImVec2(x - s, bottom + s * 1.6f), ImVec2(x + s, bottom + s * 1.6f),
                          static_cast<int>(t) == prefix_query ? IM_COL32(0, 255, 255, 255) : kPrefixColour);
  }
  char text[48];
  std::snprintf(text, sizeof text, "%.3g", h.lo);
  dl->AddText(ImVec2(left, bottom + font * 0.4f), IM_COL32(200, 200, 200, 255), text);
  std::snprintf(text, sizeof text, "%.3g  ||x||", h.hi);
  dl->AddText(ImVec2(right - ImGui::CalcTextSize(text).x, bottom + font * 0.4f), IM_COL32(200, 200, 200, 255), text);
}

}  // namespace

void draw_vit_norms_view(AppState& state, VitSession& vit, SourceChoice& choice) {
  const VitRun* src = vit.run();
  if (!src) {
    ImGui::TextUnformatted(_("No model loaded."));
    return;
  }
  const SourceGrid g = src->grid();
  const int layer = choice_layer(choice, src->layers());
  const std::vector<float> all = src->token_norms(layer);
  const std::vector<float> prefix(all.begin(), all.begin() + g.prefix), patches(all.begin() + g.prefix, all.end());
  const HighNormTokens high = high_norm_tokens(patches, state.vit_norm_ratio);

  // A wide, short panel (a projector's lower row): the settings in a column at the left, the
  // histogram beside them as tall as the panel; a narrow one: one under the other.
  const ImVec2 room = ImGui::GetContentRegionAvail();
  const float font = ImGui::GetFontSize();
  const bool beside = room.x >= font * 26;
  if (beside) ImGui::BeginChild("vit_norms_settings", ImVec2(std::min(room.x * 0.5f, font * 24), room.y));
  // TRANSLATORS: ||x|| is a token's norm; the layer, then the last layer's number.
  text_wrapped(_("Token norms ||x|| after layer %d (of 0-%d)"), layer, src->layers() - 1);
  // TRANSLATORS: "Model" is the panel's name as the window shows it; LayerNorm is the layer's name (kept).
  help_marker(_("The length of each token's residual stream after this layer, before the final LayerNorm. Trained ViTs "
                "without registers grow a few background patches with norms about ten times the others and use them as "
                "scratch space (Darcet et al. 2023): the histogram then has two modes. Register tokens take over that "
                "job. The layer is the map's (Model panel)."));
  setting_widget(state, "vit.norm_ratio");
  setting_widget(state, "vit.mark_high_norm");
  setting_widget(state, "vit.norms", WidgetPlace{.same_line = true});
  // TRANSLATORS: the patches over the threshold, of all; the ratio ("x": times) the median norm, the median, the threshold.
  text_wrapped(_("%d of %d patches over %.3gx the median %.3g = %.3g"), high.count, g.N(), state.vit_norm_ratio, high.median,
               high.threshold);
  record_widget("vit_high_norm_count");

  // The prefix tokens: each a button that makes it the query (the map shows its row).
  const int query = choice_query(choice, g);
  for (int t = 0; t < g.prefix; ++t) {
    char shown_text[64], label[96];
    std::snprintf(shown_text, sizeof shown_text, "%s %.3g", token_label(g, t).c_str(), prefix[static_cast<std::size_t>(t)]);
    if (t > 0 && button_width(shown_text) > ImGui::GetContentRegionAvail().x)  // a narrow column: "reg0 14.7", as --query names it
      std::snprintf(shown_text, sizeof shown_text, "reg%d %.3g", t - 1, prefix[static_cast<std::size_t>(t)]);
    std::snprintf(label, sizeof label, "%s##norm_prefix%d", shown_text, t);
    if (t > 0) same_line_if_room(button_width(shown_text));
    const bool shown = query == t;
    if (shown) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
    if (ImGui::Button(label)) {
      choice.prefix_token = t;
      state.vit_norms = state.vit_rollout = false;
    }
    if (shown) ImGui::PopStyleColor();
    record_widget("vit_norm_prefix:" + std::to_string(t));
    // TRANSLATORS: A is the attention matrix.
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", _("Show this token's row of A on the map"));
  }

  if (beside) {
    ImGui::EndChild();
    ImGui::SameLine();
  }
  float hi = *std::max_element(all.begin(), all.end());
  hi = std::max(hi, high.threshold) * 1.05f;
  const NormHistogram h = norm_histogram(patches, 0.0f, hi, kBins);
  draw_histogram(h, high.threshold, prefix, query < g.prefix ? query : -1);

  state.report.high_norm_drawn = {{"layer", layer},       {"ratio", state.vit_norm_ratio}, {"median", high.median},
                                  {"threshold", high.threshold}, {"marked", high.indices()}, {"prefix_norms", prefix},
                                  {"histogram", {{"lo", h.lo}, {"hi", h.hi}, {"counts", h.counts}}}};
}

std::unique_ptr<View> make_vit_norms_view() {
  // TRANSLATORS: a tab's short label (the tokens' norms), then the view's title.
  return std::make_unique<VitPassView>(ViewText{"high-norm", N_("Norms"), N_("High-norm tokens")}, draw_vit_norms_view);
}

}  // namespace attnlab::app
