// Step by step (figs. 26.8, 26.10): one row of attention for the current query and main head,
// taken apart — q_i, the scores s_ij = q_i·k_j, the scaled scores, the softmax weights as a
// sorted bar chart with the top patches, the arithmetic for one key, and the weighted sum of
// values that gives t_out. The numbers come from the hand-made session (GPU engine or CPU reference):
// its Q, K, V and its row of A; core/hand_made/step.hpp redoes the arithmetic to show every stage.
#include "app/gui/chapter/teaching_view.hpp"
#include "app/gui/state/memo.hpp"
#include "app/gui/state/setting_widgets.hpp"
#include "app/gui/state/ui_text.hpp"

#include "core/hand_made/step.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

namespace attnlab::app {
namespace {

constexpr int kMaxBars = 40;

// Six significant digits, the step view's one number format (format_number).
std::string n6(double v) { return format_number(v, 6); }

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string vec_text(const float* v, int n, int show) {
  std::string s = "(";
  for (int c = 0; c < std::min(n, show); ++c) s += (c ? ", " : "") + format_number(static_cast<double>(v[c]), 4);
  // TRANSLATORS: ends a vector's values when not all are shown; %d is how many more values there are.
  if (n > show) s += text_format(_(", ... %d more"), n - show);
  return s + ")";
}

// A wrapped note in the disabled text colour.
void note(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  text_wrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

// A wrapped warning in orange.
void warn(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.75f, 0.4f, 1.0f));
  text_wrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

ImU32 colour_of(const float* c) {
  auto b = [](float x) { return static_cast<int>(std::lround(std::clamp(x, 0.0f, 1.0f) * 255.0f)); };
  return IM_COL32(b(c[0]), b(c[1]), b(c[2]), 255);
}

// A colour swatch at the cursor, `side` pixels square, with a thin frame.
void swatch(const float* c, float side) {
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p, ImVec2(p.x + side, p.y + side), colour_of(c));
  dl->AddRect(p, ImVec2(p.x + side, p.y + side), IM_COL32(160, 160, 160, 255));
  ImGui::Dummy(ImVec2(side, side));
}

// Draws patch j of the photo into the square [p, p + side): the crop's uv range on the photo
// texture; in Pad mode the part outside the image stays black.
void draw_patch(ImDrawList* dl, HandMadeSession& hand_made, int j, ImVec2 p, float side) {
  const PatchGrid& g = hand_made.grid();
  const Image& img = hand_made.image();
  dl->AddRectFilled(p, ImVec2(p.x + side, p.y + side), IM_COL32(0, 0, 0, 255));
  const int x0 = g.col_of(j) * g.K, y0 = g.row_of(j) * g.K;
  const int x1 = std::min(x0 + g.K, img.width), y1 = std::min(y0 + g.K, img.height);
  if (x1 <= x0 || y1 <= y0) return;
  const float s = side / static_cast<float>(g.K);
  const float W = static_cast<float>(img.width), H = static_cast<float>(img.height);
  dl->AddImage(hand_made.photo(), p, ImVec2(p.x + s * static_cast<float>(x1 - x0), p.y + s * static_cast<float>(y1 - y0)),
               ImVec2(static_cast<float>(x0) / W, static_cast<float>(y0) / H),
               ImVec2(static_cast<float>(x1) / W, static_cast<float>(y1) / H));
}

class StepView final : public TeachingView {
 public:
  StepView()
      : TeachingView({"step",
            // TRANSLATORS: a view's window title (and its item in the Chapter menu).
            N_("Step by step"),
            // TRANSLATORS: where the view's idea is in the book: figures 26.8 and 26.10 of chapter 26. Keep the numbers.
            N_("figs. 26.8, 26.10"),
            // TRANSLATORS: the guided tour's text for the step view. q_i (a query vector), tau (the temperature),
            // m (the query's length) and t_out (the output token) are the chapter's symbols: keep them, and
            // keep the equation and figure numbers.
            N_("Follow one query through the layer: its vector q_i is compared with every key by a dot product, the "
               "scores are divided by tau*sqrt(m), the softmax turns them into weights that sum to 1, and the weights "
               "mix the values into the new token t_out (eqs. 26.20-26.22, figs. 26.8 and 26.10). Hover a bar to see "
               "the arithmetic for that key.")}) {}

  void draw_contents(AppState& state, HandMadeSession& hand_made) override;

 private:
  void head_selector(AppState& state);

  // Recomputes the breakdown when the image, settings, the query's rows or head changed: for
  // the query whose rows have arrived (the previous one for the frame until `query`'s come), so
  // the engine's row and the one redone here are always the same query's.
  void refresh(HandMadeSession& hand_made, int query);

  void bar_chart(AppState& state, HandMadeSession& hand_made);

  // The stages of fig. 26.10 for the top keys, one row per key; hovering a row details it.
  void stage_table(HandMadeSession& hand_made);

  void key_detail(HandMadeSession& hand_made);

  void weighted_sum_section(HandMadeSession& hand_made);

  int head_ = 0, key_ = -1, hovered_ = -1, bars_ = 16;
  bool stretch_ = false;
  // What refresh() made (b_ … s_hi_ below); key: generation, head, the query of the rows held.
  KeyMemo<std::tuple<unsigned, int, int>> breakdown_;
  StepBreakdown b_;
  std::vector<float> engine_w_, engine_logits_;
  std::vector<int> top_;
  RowVector engine_t_, uniform_t_;
  double max_diff_ = 0, s_lo_ = 0, s_hi_ = 0;
};

void StepView::draw_contents(AppState& state, HandMadeSession& hand_made) {
  hovered_ = -1;
  head_selector(state);
  refresh(hand_made, hand_made_query(state, hand_made.grid()));
  // i18n: English (the check's name and result go into the exported report's JSON, export.cpp)
  state.report.checks["step: softmax redone from Q and K vs the engine's a_ij"] =
      "largest difference " + fmt("%.2g", max_diff_) + " (query " + std::to_string(b_.i) + ", " + hand_made.name() + ")";
  const PatchGrid& g = hand_made.grid();
  const int i = b_.i;
  const float line = ImGui::GetTextLineHeightWithSpacing();

  // --- 1. the query
  ImGui::Separator();
  // TRANSLATORS: a section heading of the step view. i is the query's token index, N the number of tokens;
  // (%d,%d) is the patch's (column,row), "%d x %d" the grid's columns x rows. Keep "eq. 26.17"'s number.
  text_wrapped(_("1. The query (eq. 26.17): token i = %d, patch (%d,%d) of a %d x %d grid, N = %d"), i, g.col_of(i), g.row_of(i),
              g.cols, g.rows, g.N());
  {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float side = 3.0f * line;
    draw_patch(ImGui::GetWindowDrawList(), hand_made, i, p, side);
    ImGui::Dummy(ImVec2(side, side));
    ImGui::SameLine();
    ImGui::BeginGroup();
    // TRANSLATORS: q_i is the query vector, W_q the query weights, t_i the token; m' is the query's length; %s lists its values.
    text_wrapped(_("q_i = W_q t_i, m' = %d values: %s"), b_.m, vec_text(b_.q.data(), b_.m, 24).c_str());
    // TRANSLATORS: v_i is the query token's value vector; %s lists its numbers.
    text_wrapped(_("its own value v_i (the patch's mean colour) = %s"),
                       vec_text(hand_made.qkv(head_).V.row(i).data(), static_cast<int>(hand_made.qkv(head_).V.cols()), 8).c_str());
    ImGui::EndGroup();
  }

  // --- 2. scores and scaling over every key
  ImGui::Separator();
  // TRANSLATORS: a section heading. s_ij is the score of query i and key j, q_i . k_j their dot product, tau the
  // temperature, m' the query's length; %d is the number of keys, then the numbers tau, sqrt(m') and their product.
  text_wrapped(_("2. Scores s_ij = q_i . k_j for all %d keys (eq. 26.22), then divided by tau*sqrt(m') = %s x %s = %s"),
              g.N(), n6(b_.temperature).c_str(), n6(std::sqrt(static_cast<double>(b_.m))).c_str(), n6(b_.divisor).c_str());
  if (b_.kept > 0) {
    // TRANSLATORS: the range of the scores s_ij, then of the scaled scores (divided by tau*sqrt(m')), then the largest
    // scaled score among the keys the mask keeps. Keep the leading spaces (an indent).
    text_wrapped(_("   s_ij ranges over [%s, %s]; scaled over [%s, %s]; largest scaled (kept) = %s"), n6(s_lo_).c_str(),
                       n6(s_hi_).c_str(), n6(s_lo_ / b_.divisor).c_str(), n6(s_hi_ / b_.divisor).c_str(), n6(b_.row_max).c_str());
  }
  if (b_.kept < g.N())
    // TRANSLATORS: "%d of %d keys": how many of all the keys; %s is the mask's name as the settings call it
    // (an English word, e.g. "causal", "window").
    warn(text_format(_("%d of %d keys are masked for this query (%s mask): they get weight exactly 0."), g.N() - b_.kept, g.N(),
                     std::string(mask_kind_name(hand_made.settings().mask.kind)).c_str()));

  // --- 3. the softmax weights, sorted
  ImGui::Separator();
  // TRANSLATORS: a section heading. a_ij is the weight of key j for query i, scaled_ij the scaled score, max the row's
  // largest scaled score; the formula may keep its English symbols. "largest first": the weights are sorted.
  text_wrapped("%s", _("3. Softmax (eq. 26.20): a_ij = exp(scaled_ij - max) / sum_j exp(scaled_ij - max), largest first"));
  if (b_.empty) {
    // TRANSLATORS: t_out is the output token (the chapter's symbol); NaN = not a number.
    warn(_("Every key is masked for this query: the row has no weights (reported, never NaN) and there is no t_out. "
           "The scores below are still defined; pick another query or another mask to see a softmax."));
  } else {
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
    // TRANSLATORS: a slider: how many bars (weights) the bar chart shows.
    ImGui::SliderInt(_("bars"), &bars_, 5, kMaxBars);
    ImGui::SameLine();
    ImGui::Checkbox(_("stretch the bars"), &stretch_);
    ImGui::SameLine();
    ImGui::TextDisabled("(?)");
    if (ImGui::IsItemHovered())
      // TRANSLATORS: the tooltip of "stretch the bars". a_ij is a weight, tau the temperature.
      ImGui::SetTooltip("%s", _("Off: bar height is proportional to a_ij (axis from 0). On: the axis starts just below the smallest\n"
                                "weight shown, so nearly equal weights (tau = 1 on a flat row) show their differences."));
    bar_chart(state, hand_made);
    note(_("hover a bar or a thumbnail for its arithmetic; click a thumbnail to make that patch the query"));
    const std::string stages = ui_id(_("every stage for these keys (table)"), "every stage for these keys (table)");  // i18n: English (id)
    if (ImGui::TreeNode(stages.c_str())) {
      stage_table(hand_made);
      ImGui::TreePop();
    }
  }

  // --- 4. one key in detail
  ImGui::Separator();
  if (hovered_ >= 0) key_ = hovered_;
  if (key_ < 0 || key_ >= g.N()) key_ = top_.empty() ? i : top_.front();
  // TRANSLATORS: a section heading; fig. 26.10 of the book draws the arithmetic for one key in a grey box.
  ImGui::TextUnformatted(_("4. One key in detail (fig. 26.10's grey box):"));
  ImGui::SameLine();
  // TRANSLATORS: a button: show the key with the largest weight.
  if (ImGui::SmallButton(_("largest")) && !top_.empty()) key_ = top_.front();
  ImGui::SameLine();
  // TRANSLATORS: a button: show the query's own key (key index j equal to query index i).
  if (ImGui::SmallButton(_("itself (j = i)"))) key_ = i;
  ImGui::SameLine();
  int cell[2] = {g.col_of(key_), g.row_of(key_)};
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
  // TRANSLATORS: two number fields: the key patch's column and row in the grid.
  if (ImGui::DragInt2(_("key (col,row)"), cell, 0.1f, 0, std::max(g.cols, g.rows) - 1)) {
    cell[0] = std::clamp(cell[0], 0, g.cols - 1);
    cell[1] = std::clamp(cell[1], 0, g.rows - 1);
    key_ = g.index(cell[0], cell[1]);
  }
  key_detail(hand_made);

  // --- 5. the weighted sum of values
  if (b_.empty) return;
  ImGui::Separator();
  weighted_sum_section(hand_made);
  if (hovered_ >= 0) key_ = hovered_;  // a term of the sum was hovered: detail it next frame
}

void StepView::head_selector(AppState& state) {
  head_ = std::clamp(state.hand_made.head.head, 0, kHeadCount - 1);
  setting_widget(state, "hand_made.head", {.scope = "step", .width_em = 10});
  ImGui::SameLine();
  // TRANSLATORS: "keys 0-5": the keyboard keys 0 to 5 choose the head.
  ImGui::TextDisabled("%s", _("(the image view's main head; keys 0-5)"));
}

void StepView::refresh(HandMadeSession& hand_made, int query) {
  const RowSet& rows = hand_made.latest_rows(query);
  breakdown_.update(std::tuple{hand_made.generation(), head_, rows.query}, [&] {
    const HeadQKV& h = hand_made.qkv(head_);
    b_ = step_breakdown(h.Q, h.K, h.V, rows.query, hand_made.settings().temperature, hand_made.setup().mask);
    const auto w = rows.head(head_);
    engine_w_.assign(w.begin(), w.end());
    const auto l = rows.head_logits(head_);
    engine_logits_.assign(l.begin(), l.end());
    top_ = top_keys(engine_w_, b_.keep, kMaxBars);
    engine_t_ = weighted_sum(engine_w_, h.V);
    std::vector<float> flat(engine_w_.size(), 0.0f);
    for (size_t j = 0; j < flat.size(); ++j)
      if (b_.keep[j]) flat[j] = 1.0f / static_cast<float>(std::max(b_.kept, 1));
    uniform_t_ = weighted_sum(flat, h.V);
    max_diff_ = 0;
    for (size_t j = 0; j < engine_w_.size(); ++j)
      max_diff_ = std::max(max_diff_, std::abs(static_cast<double>(engine_w_[j]) - static_cast<double>(b_.weight[j])));
    s_lo_ = s_hi_ = 0;
    if (!b_.score.empty()) {
      const auto [lo, hi] = std::minmax_element(b_.score.begin(), b_.score.end());
      s_lo_ = *lo;
      s_hi_ = *hi;
    }
  });
}

void StepView::bar_chart(AppState& state, HandMadeSession& hand_made) {
  const int n = std::min(bars_, static_cast<int>(top_.size()));
  if (n <= 0) return;
  const float avail = ImGui::GetContentRegionAvail().x;
  const float label_w = ImGui::CalcTextSize("0.00000000").x + 8.0f;
  const float right_w = ImGui::CalcTextSize(_("1/N kept")).x + 8.0f;  // room for the uniform line's label
  const float col_w = std::clamp((avail - label_w - right_w) / static_cast<float>(n), 14.0f, 72.0f);
  const float bar_h = 7.0f * ImGui::GetTextLineHeight();
  const float thumb = col_w - 2.0f;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float top_w = engine_w_[static_cast<size_t>(top_.front())];
  const float last_w = engine_w_[static_cast<size_t>(top_[static_cast<size_t>(n - 1)])];
  // Stretched: the axis starts a little below the smallest bar shown, so small differences show.
  const float lo = !stretch_ ? 0.0f : top_w > last_w ? std::max(0.0f, last_w - 0.15f * (top_w - last_w)) : last_w * 0.98f;
  const float span = std::max(top_w - lo, 1e-30f);
  const float x_bars = origin.x + label_w;
  const float base = origin.y + bar_h;
  auto y_of = [&](float w) { return base - bar_h * std::clamp((w - lo) / span, 0.0f, 1.0f); };

  // Axis and labels: the largest weight at the top, the axis start at the bottom.
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  dl->AddLine(ImVec2(x_bars - 2, origin.y), ImVec2(x_bars - 2, base), dim);
  dl->AddLine(ImVec2(x_bars - 2, base), ImVec2(x_bars + col_w * static_cast<float>(n), base), dim);
  dl->AddText(ImVec2(origin.x, origin.y - 2), text, format_number(static_cast<double>(top_w), 6).c_str());
  dl->AddText(ImVec2(origin.x, base - ImGui::GetTextLineHeight()), dim, format_number(static_cast<double>(lo), 6).c_str());
  for (int r = 0; r < n; ++r) {
    const int j = top_[static_cast<size_t>(r)];
    const float w = engine_w_[static_cast<size_t>(j)];
    const float x = x_bars + col_w * static_cast<float>(r);
    ImGui::SetCursorScreenPos(ImVec2(x, origin.y));
    ImGui::PushID(j);
    const bool clicked = ImGui::InvisibleButton("bar", ImVec2(col_w, bar_h + thumb + 4));
    const bool hov = ImGui::IsItemHovered();
    ImGui::PopID();
    if (hov) hovered_ = j;
    const bool sel = j == key_;
    const ImU32 fill = hov ? IM_COL32(255, 220, 120, 255) : sel ? IM_COL32(255, 170, 60, 255) : IM_COL32(230, 120, 40, 255);
    dl->AddRectFilled(ImVec2(x + 1, y_of(w)), ImVec2(x + col_w - 1, base), fill);
    draw_patch(dl, hand_made, j, ImVec2(x + 1, base + 3), thumb);
    if (hov || sel)
      dl->AddRect(ImVec2(x, base + 2), ImVec2(x + col_w, base + 4 + thumb), hov ? IM_COL32(255, 255, 255, 255) : IM_COL32(255, 170, 60, 255),
                  0, 0, 2.0f);
    if (j == b_.i) dl->AddText(ImVec2(x + 2, base + 3), IM_COL32(0, 255, 255, 255), "i");
    if (clicked) {
      state.hand_made.cell = Cell{hand_made.grid().col_of(j), hand_made.grid().row_of(j)};
      state.hand_made.query_pinned = true;
    }
  }
  // The uniform weight 1/N_kept, what a flat row (tau -> infinity) would give.
  const float uniform = 1.0f / static_cast<float>(b_.kept);
  if (uniform >= lo && uniform <= top_w) {
    const float y = y_of(uniform);
    for (float x = x_bars; x < x_bars + col_w * static_cast<float>(n); x += 8.0f)
      dl->AddLine(ImVec2(x, y), ImVec2(std::min(x + 4.0f, x_bars + col_w * static_cast<float>(n)), y), IM_COL32(120, 200, 255, 255));
    dl->AddText(ImVec2(x_bars + col_w * static_cast<float>(n) + 4, y - ImGui::GetTextLineHeight() * 0.5f), IM_COL32(120, 200, 255, 255),
                // TRANSLATORS: a label on the bar chart's line at the uniform weight: 1 over the number of keys the mask keeps.
                b_.kept == hand_made.grid().N() ? "1/N" : _("1/N kept"));
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x, base + thumb + 8));
  ImGui::Dummy(ImVec2(label_w + col_w * static_cast<float>(n), 0));
}

void StepView::stage_table(HandMadeSession& hand_made) {
  const PatchGrid& g = hand_made.grid();
  const HeadQKV& h = hand_made.qkv(head_);
  const int n = std::min(bars_, static_cast<int>(top_.size()));
  const ImGuiTableFlags tf = ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                             ImGuiTableFlags_ScrollY;
  const float height = ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(std::min(n, 10) + 1) + 4.0f;
  if (!ImGui::BeginTable("stages", 7, tf, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  // TRANSLATORS: a table column: the key's patch (index j) in the grid. The other columns are formulas.
  const char* patch_j = _("patch j");
  for (const char* c : {"#", patch_j, "s_ij = q.k", "/ (tau sqrt m')", "exp(. - max)", "a_ij", "a_ij v_j"}) ImGui::TableSetupColumn(c);
  ImGui::TableHeadersRow();
  for (int r = 0; r < n; ++r) {
    const int j = top_[static_cast<size_t>(r)];
    const auto J = static_cast<size_t>(j);
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    char id[32];
    std::snprintf(id, sizeof id, "%d##stage%d", r + 1, j);
    ImGui::Selectable(id, j == key_, ImGuiSelectableFlags_SpanAllColumns);
    if (ImGui::IsItemHovered()) hovered_ = j;
    ImGui::TableSetColumnIndex(1);
    ImGui::Text("(%d,%d)%s", g.col_of(j), g.row_of(j), j == b_.i ? " = i" : "");
    ImGui::TableSetColumnIndex(2);
    ImGui::TextUnformatted(n6(b_.score[J]).c_str());
    ImGui::TableSetColumnIndex(3);
    ImGui::TextUnformatted(n6(b_.scaled[J]).c_str());
    ImGui::TableSetColumnIndex(4);
    ImGui::TextUnformatted(n6(b_.exp_term[J]).c_str());
    ImGui::TableSetColumnIndex(5);
    ImGui::TextUnformatted(format_weight(engine_w_[J]).c_str());
    ImGui::TableSetColumnIndex(6);
    std::vector<float> contrib(static_cast<size_t>(h.V.cols()));
    for (size_t c = 0; c < contrib.size(); ++c) contrib[c] = engine_w_[J] * h.V(j, static_cast<Eigen::Index>(c));
    ImGui::TextUnformatted(vec_text(contrib.data(), static_cast<int>(contrib.size()), 3).c_str());
  }
  ImGui::EndTable();
}

void StepView::key_detail(HandMadeSession& hand_made) {
  const PatchGrid& g = hand_made.grid();
  const int j = key_;
  const auto J = static_cast<size_t>(j);
  const HeadQKV& h = hand_made.qkv(head_);
  const float side = 4.0f * ImGui::GetTextLineHeightWithSpacing();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  draw_patch(ImGui::GetWindowDrawList(), hand_made, j, p, side);
  ImGui::Dummy(ImVec2(side, side));
  ImGui::SameLine();
  ImGui::BeginGroup();
  // TRANSLATORS: j is the key's token index; (%d,%d) the patch's (column,row); the last %s is empty or "  (the query itself)".
  ImGui::Text(_("key j = %d, patch (%d,%d)%s"), j, g.col_of(j), g.row_of(j), j == b_.i ? _("  (the query itself)") : "");
  text_wrapped("k_j = W_k t_j = %s", vec_text(h.K.row(j).data(), b_.m, 24).c_str());
  // s_ij as a sum of products, written out when m is small.
  std::string terms;
  const int shown = std::min(b_.m, 4);
  for (int c = 0; c < shown; ++c)
    terms += (c ? " + " : "") + format_number(static_cast<double>(b_.q[c]), 4) + "*" + format_number(static_cast<double>(h.K(j, c)), 4);
  // TRANSLATORS: ends a written-out sum of products; %d is how many products it has in all.
  if (b_.m > shown) terms += text_format(_(" + ... (%d products)"), b_.m);
  text_wrapped("s_ij = q_i . k_j = %s = %s", terms.c_str(), n6(b_.score[J]).c_str());
  // TRANSLATORS: "scaled" is the scaled score; s_ij the score, tau the temperature, m' the query's length. The last
  // number is the same value as the attention engine computed it.
  text_wrapped(_("scaled = s_ij / (tau*sqrt(m')) = %s / %s = %s   (engine's logit: %s)"), n6(b_.score[J]).c_str(),
              n6(b_.divisor).c_str(), n6(b_.scaled[J]).c_str(), n6(engine_logits_[J]).c_str());
  if (!b_.keep[J]) {
    // TRANSLATORS: a_ij is the key's weight, t_out the output token; %s is the weight the attention engine computed.
    warn(text_format(_("This key is masked for query i: it is left out of the softmax, so a_ij = 0 exactly (engine: %s) and it "
                       "adds nothing to t_out."),
                     format_weight(engine_w_[J]).c_str()));
  } else {
    // TRANSLATORS: "scaled" is the key's scaled score, "max" the row's largest scaled score.
    ImGui::Text(_("exp(scaled - max) = exp(%s - %s) = %s"), n6(b_.scaled[J]).c_str(), n6(b_.row_max).c_str(), n6(b_.exp_term[J]).c_str());
    // TRANSLATORS: the softmax's denominator: the sum of exp(scaled - max) over the keys the mask keeps.
    ImGui::Text(_("row sum over the %d kept keys = %s"), b_.kept, n6(b_.row_sum).c_str());
    // TRANSLATORS: a_ij is the key's weight; the last %s is the weight the attention engine computed.
    ImGui::Text(_("a_ij = %s / %s = %s   (engine's a_ij: %s)"), n6(b_.exp_term[J]).c_str(), n6(b_.row_sum).c_str(), format_weight(b_.weight[J]).c_str(),
                format_weight(engine_w_[J]).c_str());
    const auto rank = std::find(top_.begin(), top_.end(), j);
    if (rank != top_.end())
      // TRANSLATORS: the key's place when the weights are sorted, largest first; "uniform": the weight every key would
      // get if all weights were equal (1 over the number of kept keys).
      ImGui::TextDisabled(_("rank %d of %d kept keys; uniform would be 1/%d = %s"), static_cast<int>(rank - top_.begin()) + 1, b_.kept,
                          b_.kept, format_weight(1.0 / b_.kept).c_str());
    else
      ImGui::TextDisabled(_("uniform would be 1/%d = %s"), b_.kept, format_weight(1.0 / b_.kept).c_str());
  }
  ImGui::EndGroup();
}

void StepView::weighted_sum_section(HandMadeSession& hand_made) {
  const HeadQKV& h = hand_made.qkv(head_);
  const int v = static_cast<int>(h.V.cols());
  // TRANSLATORS: a section heading. t_out is the output token, a_ij the weights, v_j the values (the chapter's symbols).
  text_wrapped("%s", _("5. The weighted sum of values (eq. 26.21, fig. 26.8): t_out = sum_j a_ij v_j"));
  // TRANSLATORS: v_j is key j's value, W_v the value weights, t_j the token, t_out the output token.
  note(_("v_j = W_v t_j is the patch's mean colour for every head here, so t_out is a colour too."));
  const float sw = ImGui::GetTextLineHeight() * 1.4f;
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  const float line_w = ImGui::GetContentRegionAvail().x;
  float x = 0;  // width used on the current line
  // Puts the next item of width `w` on the same line when it fits.
  auto flow = [&](float w) {
    if (x > 0 && x + spacing + w <= line_w) {
      ImGui::SameLine();
      x += spacing + w;
    } else {
      x = w;
    }
  };
  const int terms = std::min(6, static_cast<int>(top_.size()));
  double shown = 0;
  for (int r = 0; r < terms; ++r) {
    const int j = top_[static_cast<size_t>(r)];
    const float w = engine_w_[static_cast<size_t>(j)];
    shown += w;
    const std::string label = std::string(r ? "+ " : "") + format_weight(w) + " x";
    flow(ImGui::CalcTextSize(label.c_str()).x + (v == 3 ? spacing + sw : 0.0f));
    ImGui::BeginGroup();
    ImGui::TextUnformatted(label.c_str());
    if (v == 3) {
      ImGui::SameLine();
      swatch(h.V.row(j).data(), sw);
    } else {
      ImGui::SameLine();
      ImGui::TextUnformatted(vec_text(h.V.row(j).data(), v, 4).c_str());
    }
    ImGui::EndGroup();
    if (ImGui::IsItemHovered()) {
      hovered_ = j;
      // TRANSLATORS: the key patch's (column,row), its weight a_ij and its value v_j.
      ImGui::SetTooltip(_("key (%d,%d): a_ij = %s, v_j = %s"), hand_made.grid().col_of(j), hand_made.grid().row_of(j),
                        format_weight(w).c_str(), vec_text(h.V.row(j).data(), v, 8).c_str());
    }
  }
  const int rest = b_.kept - terms;
  if (rest > 0) {
    const std::string more =
        // TRANSLATORS: ends the written-out weighted sum: %d terms not shown, and the sum of their weights.
        text_format(_("+ %d more terms (weights adding up to %s)"), rest, n6(std::max(0.0, 1.0 - shown)).c_str());
    flow(ImGui::CalcTextSize(more.c_str()).x);
    ImGui::TextUnformatted(more.c_str());
  }
  ImGui::Text("= t_out = %s", vec_text(engine_t_.data(), v, 8).c_str());  // i18n: English (a formula)
  if (v == 3) {
    ImGui::SameLine();
    swatch(engine_t_.data(), sw);
    // The two limits of the temperature: a flat row averages every kept value, a one-hot row
    // copies the best key's value.
    // TRANSLATORS: the first of three pieces on one line, each followed by a colour swatch: "limits: tau -> infinity
    // gives the plain average of the kept v_j [swatch], tau -> 0 the top key's v_j [swatch], the query's own v_i [swatch]".
    // tau is the temperature, v_j the values.
    ImGui::TextUnformatted(_("limits: tau -> infinity gives the plain average of the kept v_j"));
    ImGui::SameLine();
    swatch(uniform_t_.data(), sw);
    ImGui::SameLine(0.0f, 2.0f);
    // TRANSLATORS: the second piece of "limits: ..." (see there), after a colour swatch.
    ImGui::TextUnformatted(_(", tau -> 0 the top key's v_j"));
    ImGui::SameLine();
    swatch(h.V.row(top_.front()).data(), sw);
    ImGui::SameLine(0.0f, 2.0f);
    // TRANSLATORS: the third piece of "limits: ..." (see there), after a colour swatch.
    ImGui::TextUnformatted(_(", the query's own v_i"));
    ImGui::SameLine();
    swatch(h.V.row(b_.i).data(), sw);
  }
  // TRANSLATORS: A is the attention matrix, V the values, Q and K the queries and keys. "View > Diagnostics" is
  // the menu item (translate it as the View menu does).
  note(_("t_out uses the row of A and the values V of the attention engine; the arithmetic above redoes the softmax from "
         "its Q and K (how closely the two agree: View > Diagnostics)."));
}


}  // namespace

std::unique_ptr<TeachingView> make_step_view() { return std::make_unique<StepView>(); }

}  // namespace attnlab::app
