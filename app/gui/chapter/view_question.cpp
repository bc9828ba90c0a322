// Question token (figs. 26.7, 26.8, eqs. 26.11–26.16): a colour the user picks becomes a query
// from outside the image. Its head input x (core question_token) goes through the hand-made session's
// row_for_token (GPU or CPU), giving where it attends; the output token t_out = Σ a_j v_j and the
// chapter's extra constant dimension (the "count") come from core output_with_count.
#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "app/gui/chapter/teaching_view.hpp"
#include "app/gui/maps/map_pictures.hpp"
#include "app/gui/state/memo.hpp"
#include "core/base/translate.hpp"
#include "core/hand_made/demos.hpp"

namespace attnlab::app {
namespace {

// The heads whose query reads the colour part of x (the others would see only zeros).
constexpr std::array<HeadKind, 3> kColourHeads{HeadKind::Colour, HeadKind::ColourPosition, HeadKind::Custom};

void swatch(const char* id, const std::array<float, 3>& c, float side) {
  ImGui::ColorButton(
      id, ImVec4(std::clamp(c[0], 0.0f, 1.0f), std::clamp(c[1], 0.0f, 1.0f), std::clamp(c[2], 0.0f, 1.0f), 1),
      ImGuiColorEditFlags_NoTooltip | ImGuiColorEditFlags_NoDragDrop, ImVec2(side, side));
}

// The question's row: its token x, q, the weights and scores, the softmax answer; key:
// generation, colour, head.
struct Row {
  RowVector x, q;
  std::vector<float> weights, scores;
  float smin = 0, smax = 0;
  QuestionAnswer soft;
};

// The soft and hard answers' pictures; key: the row's, the style and the threshold.
struct Pictures {
  float threshold = 0;  // a patch matches when s_j >= threshold
  GuiTexture soft_tex, hard_tex;
  ValueRange range;
  std::vector<float> hard;
  QuestionAnswer hard_answer;
};

class QuestionView final : public TeachingView {
 public:
  QuestionView()
      : TeachingView({"question",
            // TRANSLATORS: a view's window title (and its item in the Chapter menu): a token that asks a question.
            N_("Question token"),
            // TRANSLATORS: where the view's idea is in the book: figures 26.7 and 26.8. Keep the numbers.
            N_("figs. 26.7, 26.8"),
            // TRANSLATORS: the guided tour's text for the question view. Keep the equation numbers.
            N_("A query does not have to come from the image. Pick a colour: it becomes a question token whose query is "
               "matched against every patch's key (eqs. 26.14-26.15); the answer is the weighted sum of the values "
               "(26.16). The chapter adds a constant 1 to every value so that the answer can also count.")}) {}

  void draw_contents(AppState& state, HandMadeSession& hand_made) override {
    // TRANSLATORS: N is the number of patches; x the question's input, c its colour, q its query, W_q the query weights,
    // k_j a patch's key, s_j its score. Keep the symbols and the equation numbers.
    text_wrapped("%s", _("The question is a token of its own, not one of the N patches (figs. 26.7-26.8). Its input x holds the "
                         "colour c and its direction c/|c| and zeros everywhere else: no texture, no features, no place. The "
                         "head turns it into a query q = W_q x (eq. 26.11), scores every patch's key, s_j = q^T k_j (26.14), "
                         "takes the softmax (26.15) and sums the values with those weights (26.16)."));
    draw_controls(hand_made, hand_made_query(state, hand_made.grid()));
    update(state, hand_made);
    ImGui::Separator();
    draw_softmax_answer(state, hand_made);
    ImGui::Separator();
    draw_count(state, hand_made);
  }

 private:
  void draw_controls(HandMadeSession& hand_made, int i) {
    // Within the view's width at any UI scale: the label on its own line, the button and the
    // radio buttons on the next line when they do not fit.
    // TRANSLATORS: the label of a colour picker: the question's colour, written c.
    ImGui::TextUnformatted(_("question colour c"));
    ImGui::SetNextItemWidth(std::min(ImGui::GetFontSize() * 16, ImGui::GetContentRegionAvail().x));
    ImGui::ColorEdit3("##question colour c", colour_.data(), ImGuiColorEditFlags_Float);
    const PatchGrid& g = hand_made.grid();
    const ImGuiStyle& st = ImGui::GetStyle();
    const char* use_query = _("use the query patch's colour");
    same_line_if_room(ImGui::CalcTextSize(use_query).x + st.FramePadding.x * 2 + st.ItemSpacing.x);
    if (ImGui::Button(use_query)) colour_ = patch_colour(hand_made, i);
    if (ImGui::IsItemHovered())
      // TRANSLATORS: (%d,%d) is the patch's (column,row).
      ImGui::SetTooltip(_("the mean colour of patch (%d,%d), the image view's query"), g.col_of(i), g.row_of(i));
    // TRANSLATORS: the label of the attention head's choice (radio buttons with the heads' names follow).
    ImGui::TextUnformatted(_("head:"));
    for (HeadKind h : kColourHeads) {
      const std::string name(head_name(h));
      same_line_if_room(ImGui::GetFrameHeight() + st.ItemInnerSpacing.x + ImGui::CalcTextSize(name.c_str()).x + st.ItemSpacing.x);
      ImGui::RadioButton(name.c_str(), &head_, static_cast<int>(h));
    }
    // TRANSLATORS: "colour", "colour+position" and "custom" are the heads' names (English identifiers, shown as they are);
    // x is the question's input, c its colour, q its query, p a positional code, W_q the query weights.
    help_marker(_("Only these heads read the colour part of x. colour: q = c/|c| (fig. 26.12); colour+position: q = [c/|c|; "
                  "p/2] with p = 0 for the question; custom: q = W_q c/|c| with the matrix of the heads view."));
  }

  static std::array<float, 3> patch_colour(const HandMadeSession& hand_made, int i) {
    // The mean over the patch's pixels inside the image (as core's mean_colours does). Not taken
    // from tokens(): in add mode those columns also carry the added code.
    const Image& img = hand_made.image();
    const PatchGrid& g = hand_made.grid();
    double sum[3] = {0, 0, 0};
    int count = 0;
    for (int y = g.row_of(i) * g.K; y < std::min((g.row_of(i) + 1) * g.K, img.height); ++y)
      for (int x = g.col_of(i) * g.K; x < std::min((g.col_of(i) + 1) * g.K, img.width); ++x) {
        for (int c = 0; c < 3; ++c) sum[c] += img.at(x, y, c);
        ++count;
      }
    std::array<float, 3> out{};
    for (int c = 0; c < 3; ++c) out[static_cast<size_t>(c)] = count ? static_cast<float>(sum[c] / count) : 0.0f;
    return out;
  }

  void update(AppState& state, HandMadeSession& hand_made) {
    const HeatmapStyle style{state.colormap, state.normalization};
    const unsigned generation = hand_made.generation();
    const Row& r = row_.get(std::tuple{generation, colour_, head_}, [&](Row& w) {
      const Matrix& X = hand_made.tokens();
      w.x = question_token(colour_, static_cast<int>(X.cols()));
      auto [weights, logits] = hand_made.row_for_token(head_, w.x);
      w.weights = std::move(weights);
      const HeadQKV& qkv = hand_made.qkv(head_);
      const float to_score = hand_made.settings().temperature * std::sqrt(static_cast<float>(qkv.m()));
      w.scores.resize(logits.size());
      for (size_t j = 0; j < logits.size(); ++j) w.scores[j] = logits[j] * to_score;  // s_j = q^T k_j
      const Matrix Wq = query_key_weights(hand_made.setup().heads[static_cast<size_t>(head_)].W_q, hand_made.settings().pos,
                                          static_cast<int>(hand_made.setup().P.cols()));
      w.q = w.x * Wq.transpose();
      w.soft = output_with_count(w.weights, qkv.V);
      const auto [lo, hi] = std::minmax_element(w.scores.begin(), w.scores.end());
      w.smin = *lo;
      w.smax = *hi;
    });
    const float threshold = r.smax - delta_;
    pictures_.get(std::tuple{generation, colour_, head_, style, threshold}, [&](Pictures& p) {
      const PatchGrid& g = hand_made.grid();
      p.threshold = threshold;
      p.soft_tex.set(g.cols, g.rows, 4, apply_colormap(r.weights, {}, style.colormap, style.normalization), false);
      p.range = normalization_range(r.weights, {}, style.normalization);
      p.hard = match_weights(r.scores, threshold);
      p.hard_answer = output_with_count(p.hard, hand_made.qkv(head_).V);
      std::vector<std::uint8_t> px(static_cast<size_t>(g.N()) * 4, 0);
      for (size_t j = 0; j < p.hard.size(); ++j)
        if (p.hard[j] == 0.0f) px[j * 4 + 3] = 255;  // unmatched: darkened; matched: the photo shows
      p.hard_tex.set(g.cols, g.rows, 4, px, false);
    });
  }

  void draw_softmax_answer(AppState& state, HandMadeSession& hand_made) {
    const PatchGrid& g = hand_made.grid();
    const float side = std::clamp(ImGui::GetContentRegionAvail().x * 0.35f, ui_px(148), ui_px(418));
    ImGui::BeginGroup();
    // TRANSLATORS: a_j are the question's weights over the patches; %s is the head's name (an English identifier).
    ImGui::Text(_("where the question attends: a_j (%s head)"),
                std::string(head_name(static_cast<HeadKind>(head_))).c_str());
    map_thumbnail("question_map", hand_made, pictures().soft_tex.im(), state, ImVec2(side, side), {}, false);
    ImGui::EndGroup();
    ImGui::SameLine();
    ImGui::BeginGroup();
    ImGui::TextUnformatted(" ");
    colour_bar(state.colormap, state.normalization, pictures().range,
               side * static_cast<float>(g.rows) / static_cast<float>(std::max(g.rows, g.cols)));
    ImGui::EndGroup();
    ImGui::SameLine();
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(0.0f);
    std::string q = "q = W_q x = [";
    for (Eigen::Index n = 0; n < std::min<Eigen::Index>(asked_row().q.size(), 6); ++n) q += (n ? ", " : "") + format_short(asked_row().q[n]);
    q += asked_row().q.size() > 6
             // TRANSLATORS: ends the list of q's values when not all are shown: %ld is how many values q has; "the code
             // part": the positional code's columns of q.
             ? text_format(_(", ... ]  (%ld values; the code part is 0)"), static_cast<long>(asked_row().q.size()))
             : std::string("]");
    wrap_text(q);
    const auto best = std::max_element(asked_row().weights.begin(), asked_row().weights.end());
    const int jb = static_cast<int>(best - asked_row().weights.begin());
    // TRANSLATORS: the largest weight, at the patch (column,row); 1/N is the uniform weight (N the number of patches).
    text_wrapped(_("largest weight %s at patch (%d,%d); 1/N = %s"), format_weight(*best).c_str(), g.col_of(jb),
                g.row_of(jb), format_weight(1.0 / g.N()).c_str());
    ImGui::Spacing();
    // TRANSLATORS: t_out is the output token, a_j the weights, [v_j; 1] a patch's value with a constant 1 appended.
    wrap_text(_("the output token t_out = sum_j a_j [v_j; 1]:"));
    swatch("##tout", asked_row().soft.colour, ImGui::GetFrameHeight() * 2);
    ImGui::SameLine();
    ImGui::BeginGroup();
    // TRANSLATORS: the colour part of t_out (its first three numbers); the spaces align the formula with the next line's.
    text_wrapped(_("colour part  sum_j a_j v_j = (%.4f, %.4f, %.4f)"), static_cast<double>(asked_row().soft.colour[0]),
                static_cast<double>(asked_row().soft.colour[1]), static_cast<double>(asked_row().soft.colour[2]));
    // TRANSLATORS: the count part of t_out (its constant dimension); the spaces align it with the line above.
    text_wrapped(_("count part   sum_j a_j * 1 = %.6f"), static_cast<double>(asked_row().soft.count));
    ImGui::EndGroup();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    // TRANSLATORS: v_j is a patch's value, V = T W_v^T the values as tokens T times the value weights. %s is "" or
    // "; in add mode it also carries the added code".
    text_wrapped(_("v_j = the patch's mean colour (V = T W_v^T, eq. 26.13)%s"),
                 // TRANSLATORS: "add" is the positional mode that adds the codes to the tokens.
                 hand_made.settings().pos.mode == PosMode::Add ? _("; in add mode it also carries the added code") : "");
    ImGui::PopStyleColor();
    ImGui::Spacing();
    text_wrapped("%s", _("The colour part is an average of the patches' colours, pulled towards the ones that match the "
                         "question. The count part always reads 1: the softmax makes the weights add up to 1, so a softmax "
                         "answer is an average and cannot say how many patches matched."));
    if (hand_made.settings().pos.mode == PosMode::Concat)
      // TRANSLATORS: "Concat" is the positional mode that appends the codes; lambda their weight, p_j a patch's code.
      text_wrapped("%s", _("Concat mode: the question has no place, so its code is 0 and lambda p_j adds nothing to its scores."));
    else if (hand_made.settings().pos.mode == PosMode::Add)
      // TRANSLATORS: "Add" is the positional mode that adds the codes to the tokens.
      text_wrapped("%s", _("Add mode: the keys carry their place mixed into every feature, so the scores also vary with the "
                           "place."));
    if (hand_made.settings().mask.kind != MaskKind::None) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
      wrap_text(_("The mask is not used: it is defined between image tokens, and the question is not one."));
      ImGui::PopStyleColor();
    }
    ImGui::PopTextWrapPos();
    ImGui::EndGroup();
  }

  void draw_count(AppState& state, HandMadeSession& hand_made) {
    ImGui::TextUnformatted(_("Counting, as in fig. 26.7: weight 1 on each matching patch, 0 elsewhere (no softmax)"));
    // TRANSLATORS: t_out is the output token; n a number of patches; s_j = q^T k_j a patch's score; delta the slider of
    // that name (a symbol). Keep the figure numbers.
    text_wrapped("%s", _("The chapter gives every value one extra dimension that is always 1, so that part of t_out is just the "
                         "sum of the weights. In its hand-made example (figs. 26.7-26.8 leave the softmax out) a counting "
                         "question puts weight 1 on every patch it is about: the sum is how many there are. A colour question "
                         "puts 1/n on each of n patches: the colour part is their average and the count part reads 1. Here a "
                         "patch 'matches' when its score s_j = q^T k_j is within delta of the best score."));
    const float range = std::max(asked_row().smax - asked_row().smin, 2e-6f);
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 18);
    ImGui::SliderFloat("delta", &delta_, 1e-6f, range, "%.6f", ImGuiSliderFlags_Logarithmic);  // i18n: English (a symbol)
    delta_ = std::clamp(delta_, 0.0f, range);
    // TRANSLATORS: the help of the slider "delta". "colour" is a head's name; s_j a patch's score.
    help_marker(_("Logarithmic: the scores crowd near the top. For the colour head s_j is the cosine between the question's "
                  "colour and the patch's, so delta = 0.002 means 'within about 3.6 degrees of the best match'."));
    update(state, hand_made);  // delta may have changed the threshold
    const PatchGrid& g = hand_made.grid();
    const int n = static_cast<int>(std::lround(pictures().hard_answer.count));
    ImGui::SameLine();
    // TRANSLATORS: s_j is a patch's score, %.6f the threshold; then how many of all the patches match.
    ImGui::Text(_("match if s_j >= %.6f: %d of %d patches"), static_cast<double>(pictures().threshold), n, g.N());

    const float side = std::clamp(ImGui::GetContentRegionAvail().x * 0.3f, ui_px(148), ui_px(369));
    ImGui::BeginGroup();
    map_thumbnail("question_matches", hand_made, pictures().hard_tex.im(), state, ImVec2(side, side), {}, false);
    ImGui::TextDisabled("%s", _("matching patches bright, the rest darkened"));
    ImGui::EndGroup();
    ImGui::SameLine();
    ImGui::BeginGroup();
    std::array<float, 3> mean{};
    if (n > 0)
      for (size_t c = 0; c < 3; ++c) mean[c] = pictures().hard_answer.colour[c] / static_cast<float>(n);
    const float sw = ImGui::GetFrameHeight();
    if (ImGui::BeginTable("answers", 4, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
      // TRANSLATORS: a table column: the weights a_j given to the patches.
      ImGui::TableSetupColumn(_("weights a_j"));
      // TRANSLATORS: a table column: the count part of the answer, the sum of the weights a_j.
      ImGui::TableSetupColumn(_("count part: sum a_j * 1"));
      // TRANSLATORS: a table column: the colour part of the answer, the weighted sum of the values v_j.
      ImGui::TableSetupColumn(_("colour part: sum a_j v_j"));
      // TRANSLATORS: a table column: a colour swatch.
      ImGui::TableSetupColumn(_("colour"));
      ImGui::TableHeadersRow();
      auto row = [&](const char* what, const std::string& count, const std::array<float, 3>& c, const char* id,
                     bool show) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(what);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(count.c_str());
        ImGui::TableNextColumn();
        ImGui::Text("(%.4f, %.4f, %.4f)", static_cast<double>(c[0]), static_cast<double>(c[1]),
                    static_cast<double>(c[2]));
        ImGui::TableNextColumn();
        if (show) swatch(id, c, sw);
      };
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6f", static_cast<double>(asked_row().soft.count));
      // TRANSLATORS: a table's row: the weights from the softmax.
      row(_("softmax (eq. 26.15)"), buf, asked_row().soft.colour, "##s", true);
      // TRANSLATORS: a table's row: weight 1 on each matching patch (the counting question).
      row(_("1 on matches (count)"), std::to_string(n), pictures().hard_answer.colour, "##h", false);
      // TRANSLATORS: table rows: weight 1/n on each of the n matching patches (the colour question), or none matches.
      row(n > 0 ? _("1/n on matches (colour)") : _("1/n: no match"), n > 0 ? "1" : "0", mean, "##m", n > 0);
      ImGui::EndTable();
    }
    ImGui::PushTextWrapPos(0.0f);
    // TRANSLATORS: %d is the number of matching patches (their colours are summed).
    text_wrapped(tr_n("With weights of 1 the colour part is a sum of %d colours (no colour to show); divided by the count it is the "
                      "average of the last row. The constant dimension counts only when the weights are not normalized: after the "
                      "softmax of eq. 26.15 it always reads 1.",
                      "With weights of 1 the colour part is a sum of %d colours (no colour to show); divided by the count it is the "
                      "average of the last row. The constant dimension counts only when the weights are not normalized: after the "
                      "softmax of eq. 26.15 it always reads 1.",
                      n),
                 n);
    ImGui::PopTextWrapPos();
    ImGui::EndGroup();
  }

  static std::string format_short(float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(v));
    return buf;
  }

  std::array<float, 3> colour_{0.80f, 0.62f, 0.36f};  // a giraffe-like tan
  int head_ = static_cast<int>(HeadKind::Colour);
  float delta_ = 0.002f;  // a patch matches when s_j >= (largest score) - delta_

  Memo<std::tuple<unsigned, std::array<float, 3>, int>, Row> row_;
  const Row& asked_row() const { return *row_.last(); }  // update made it this frame
  Memo<std::tuple<unsigned, std::array<float, 3>, int, HeatmapStyle, float>, Pictures> pictures_;
  const Pictures& pictures() const { return *pictures_.last(); }
};

}  // namespace

std::unique_ptr<TeachingView> make_question_view() { return std::make_unique<QuestionView>(); }

}  // namespace attnlab::app
