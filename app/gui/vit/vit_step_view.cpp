// One head's attention row of a real ViT worked step by step for the current query
// (VitRun::head_step; eqs. 26.17-26.20 of the chapter as a ViT layer computes them): the
// query vector q_i, the scores s_ij = q_i . k_j / sqrt(m), the softmax with its max and Z, and
// the keys that received the most weight, each with its score, exp(s - max) and a_ij. A fused
// choice (mean, max, min of heads) has no single softmax: the view says so and works head 1.
#include "app/gui/vit/vit_views.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnlab::app {

void draw_vit_step_view(VitSession& vit, const SourceChoice& choice) {
  const VitRun* src = vit.run();
  if (!src) {
    ImGui::TextUnformatted(_("No model loaded."));
    return;
  }
  const int layer = choice_layer(choice, src->layers()), token = choice_query(choice, src->grid());
  const HeadChoice chosen = choice_head(choice, src->heads());
  const int head = chosen.head >= 0 ? chosen.head : 0;
  const VitHeadStep step = src->head_step(layer, head, token);
  const int T = static_cast<int>(step.weights.size());

  if (chosen.head < 0)
    // TRANSLATORS: %s is a fusion of heads ("mean of heads", "max of heads").
    ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), _("The map shows the %s, which has no single softmax; worked here: head 0."),
                       head_choice_label(chosen).c_str());
  // TRANSLATORS: the layer, the head, the query token's label, its index, then T, the number of tokens.
  ImGui::Text(_("Layer %d, head %d, query %s (token %d of T = %d)."), layer, head, token_label(src->grid(), token).c_str(),
              token, T);

  // 1. The query vector.
  std::string q;
  for (int k = 0; k < std::min(step.m, 6); ++k) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.3f", k ? ", " : "", static_cast<double>(step.q[static_cast<size_t>(k)]));
    q += buf;
  }
  if (step.m > 6) q += ", ...";
  // TRANSLATORS: the chapter's symbols: q_i the query vector, x_i the token, W_q, b_q, W_k the layer's weights; m = D/H the
  // dimension of a head (D the tokens' dimension, H the heads); then the first values of q_i.
  text_wrapped(_("1. q_i = LayerNorm(x_i) W_q + b_q, m = D/H = %d values: (%s). Each key k_j is made the same way with W_k "
                 "(eqs. 26.17, 26.18)."),
               step.m, q.c_str());

  // 2. Scores and softmax.
  const auto [lo, hi] = std::minmax_element(step.scores.begin(), step.scores.end());
  // TRANSLATORS: the chapter's symbols: s_ij the scores, q_i the query, k_j a key, m a head's dimension; then sqrt(m), the
  // number of keys, the lowest and the highest score.
  text_wrapped(_("2. Scores s_ij = q_i . k_j / sqrt(m) = q_i . k_j / %s, for all %d keys: from %s to %s."),
               format_number(std::sqrt(static_cast<double>(step.m)), 4).c_str(), T, format_number(*lo, 4).c_str(), format_number(*hi, 4).c_str());
  const double sum = std::accumulate(step.weights.begin(), step.weights.end(), 0.0);
  // TRANSLATORS: the chapter's symbols: a_ij the weights, s_ij the scores, Z the softmax's denominator; then the highest
  // score, Z, and the row's sum.
  text_wrapped(_("3. Softmax (eq. 26.20): a_ij = exp(s_ij - %s) / Z with Z = sum_j exp(s_ij - max) = %s; the row sums to %s."),
               format_number(step.max_score, 4).c_str(), format_number(step.Z, 4).c_str(), format_number(sum, 6).c_str());

  // The keys with the most weight.
  std::vector<int> order(static_cast<size_t>(T));
  std::iota(order.begin(), order.end(), 0);
  const int shown = std::min(T, 10);
  std::partial_sort(order.begin(), order.begin() + shown, order.end(),
                    [&](int a, int b) { return step.weights[static_cast<size_t>(a)] > step.weights[static_cast<size_t>(b)]; });
  double top = 0;
  for (int n = 0; n < shown; ++n) top += step.weights[static_cast<size_t>(order[static_cast<size_t>(n)])];
  ImGui::Text(_("The %d keys with the most weight (%.1f %% of the row):"), shown, 100.0 * top);
  if (ImGui::BeginTable("vit_step", 5, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit)) {
    // TRANSLATORS: a table's column: the key token j.
    ImGui::TableSetupColumn(_("key j"));
    ImGui::TableSetupColumn("s_ij");
    ImGui::TableSetupColumn("exp(s_ij - max)");
    ImGui::TableSetupColumn("a_ij");
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    const float best = step.weights[static_cast<size_t>(order[0])];
    for (int n = 0; n < shown; ++n) {
      const auto j = static_cast<size_t>(order[static_cast<size_t>(n)]);
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%s", token_label(src->grid(), static_cast<int>(j)).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%.4f", static_cast<double>(step.scores[j]));
      ImGui::TableNextColumn();
      ImGui::Text("%.4f", std::exp(static_cast<double>(step.scores[j] - step.max_score)));
      ImGui::TableNextColumn();
      ImGui::Text("%.5f", static_cast<double>(step.weights[j]));
      ImGui::TableNextColumn();
      const ImVec2 p = ImGui::GetCursorScreenPos();
      const float w = ImGui::GetContentRegionAvail().x * step.weights[j] / std::max(best, 1e-12f);
      ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + w, p.y + ImGui::GetTextLineHeight()), IM_COL32(240, 170, 40, 255));
      ImGui::Dummy(ImVec2(1, ImGui::GetTextLineHeight()));
    }
    ImGui::EndTable();
  }
}

std::unique_ptr<View> make_vit_step_view() {
  // TRANSLATORS: a tab's short label, then the view's title: one row of attention worked step by step.
  return std::make_unique<VitPassView>(ViewText{"step", N_("Step by step"), N_("One row step by step")},
                                       [](AppState&, VitSession& vit, SourceChoice& choice) { draw_vit_step_view(vit, choice); });
}

}  // namespace attnlab::app
