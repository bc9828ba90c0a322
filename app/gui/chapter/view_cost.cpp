// Cost (exercises 12.1, 12.5): what self-attention costs for the current grid — parameters of
// the Q/K/V projections, the N² attention weights per head, a dense layer for comparison,
// FLOPs and bytes of A — how splitting the width over heads changes it, and how saturated the
// query row's softmax is (max weight, entropy) as the temperature changes.
#include "app/gui/chapter/teaching_view.hpp"
#include "app/gui/state/memo.hpp"
#include "app/gui/state/setting_widgets.hpp"

#include "core/hand_made/step.hpp"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>

namespace attnlab::app {
namespace {

// 1234567 -> "1,234,567".
std::string group(long long v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (size_t n = 0; n < digits.size(); ++n) {
    if (n && (digits.size() - n) % 3 == 0) out += ',';
    out += digits[n];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string group(double v) {
  if (std::abs(v - std::round(v)) < 1e-6 && std::abs(v) < 9e18) return group(static_cast<long long>(std::llround(v)));
  return format_number(v, 4);
}

// Bytes with a binary unit: "1.49 MiB" (exact count below 1 KiB).
std::string bytes(long long b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double x = static_cast<double>(b);
  int u = 0;
  while (x >= 1024.0 && u < 4) {
    x /= 1024.0;
    ++u;
  }
  if (u == 0) return group(b) + " B";
  return format_number(x, 3) + " " + units[u];
}

// Short FLOP count: "2.34 MFLOP".
std::string flops(double f) {
  const char* units[] = {"", "k", "M", "G", "T", "P"};
  int u = 0;
  while (f >= 1000.0 && u < 5) {
    f /= 1000.0;
    ++u;
  }
  return format_number(f, 3) + " " + units[u] + "FLOP";
}

// A wrapped note in the disabled text colour.
void note(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  text_wrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

// A table row: the label `what`, then two texts in columns 1 and 2.
void text_row(const char* what, const std::string& second, const std::string& third) {
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::TextUnformatted(what);
  ImGui::TableSetColumnIndex(1);
  ImGui::TextUnformatted(second.c_str());
  ImGui::TableSetColumnIndex(2);
  ImGui::TextUnformatted(third.c_str());
}

constexpr int kCurvePoints = 76;  // τ from 0.001 to 100, log-spaced

class CostView final : public TeachingView {
 public:
  CostView()
      : TeachingView({"cost",
            // TRANSLATORS: a view's window title (and its item in the Chapter menu): what self-attention costs.
            N_("Cost"),
            // TRANSLATORS: where the view's idea is in the book: exercises 12.1 and 12.5. Keep the numbers.
            N_("exercises 12.1, 12.5"),
            // TRANSLATORS: the guided tour's text for the cost view. N is the number of tokens, D the tokens'
            // width, H the number of heads; Q/K/V the query, key and value projections. Keep the symbols and
            // the exercise numbers.
            N_("Self-attention stores one weight per pair of tokens: N^2 per head, so halving the patch size "
               "multiplies the attention weights by 16, while the Q/K/V projections stay at 3D^2 weights whatever N is "
               "(exercise 12.1). Splitting the width D over H heads keeps the total cost of one wide head (exercise 12.5). "
               "Lower the temperature and watch the query row's softmax saturate.")}) {}

  void draw_contents(AppState& state, HandMadeSession& hand_made) override {
    refresh(state, hand_made);
    const PatchGrid& g = hand_made.grid();
    // TRANSLATORS: N is the number of tokens (grid columns x rows = the total), K the patch size in pixels, d the
    // token's width (TokenLayout is a name in the code: keep it), X = [T | P] the head input (tokens T and positional
    // codes P side by side), H the number of heads, m' the heads' query lengths (a list).
    text_wrapped(_("Now: N = %d x %d = %s tokens (patch K = %d), token width d = %d (TokenLayout), head input X = [T | P] "
                   "of width %d, H = %d heads with m' = %s."),
                       g.cols, g.rows, group(static_cast<long long>(g.N())).c_str(), g.K, TokenLayout::d, x_width_, kHeadCount,
                       m_text_.c_str());
    // Two columns when the window is wide enough, else one after the other.
    const bool wide = ImGui::GetContentRegionAvail().x > 52.0f * ImGui::GetFontSize();
    if (wide && ImGui::BeginTable("layout", 2, ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchSame)) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      exercise_121();
      ImGui::Separator();
      compute_and_memory();
      ImGui::TableSetColumnIndex(1);
      exercise_125(g.N());
      ImGui::Separator();
      saturation_section(state);
      ImGui::EndTable();
    } else {
      ImGui::Separator();
      exercise_121();
      ImGui::Separator();
      compute_and_memory();
      ImGui::Separator();
      exercise_125(g.N());
      ImGui::Separator();
      saturation_section(state);
    }
  }

 private:
  static constexpr ImGuiTableFlags kTable = ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;

  void exercise_121() {
    const CostReport& r = report_;
    // TRANSLATORS: the heading of exercise 12.1 (the book's numbering: keep it). N is the number of tokens, D their width
    // (here equal to the app's token width d).
    text_wrapped(_("Exercise 12.1: one head mapping N tokens of width D = d = %d to N tokens of width D"), TokenLayout::d);
    if (ImGui::BeginTable("ex121", 3, kTable)) {
      ImGui::TableSetupColumn("");
      // TRANSLATORS: a table column: the formula of each count (in N, D, H).
      ImGui::TableSetupColumn(_("formula"));
      // TRANSLATORS: a table column: how many numbers (a count).
      ImGui::TableSetupColumn(_("count"));
      ImGui::TableHeadersRow();
      // TRANSLATORS: the learned weights of the query, key and value projections.
      text_row(_("Q/K/V weights"), "3D^2", group(r.exercise.qkv_weights));
      // TRANSLATORS: the bias vectors of the query, key and value projections.
      text_row(_("Q/K/V biases"), "3D", group(r.exercise.qkv_biases));
      // TRANSLATORS: a_ij are the attention weights; this row counts them for one head.
      text_row(_("a_ij, one head"), "N^2", group(r.exercise.attention_weights));
      // TRANSLATORS: a_ij are the attention weights; this row counts them for all heads.
      text_row(_("a_ij, all heads"), "HN^2", group(r.attention_weights_all));
      // TRANSLATORS: a dense (fully connected) layer for comparison.
      text_row(_("dense layer weights"), "D^2N^2", group(r.exercise.fc_weights));
      text_row(_("dense layer biases"), "DN", group(r.exercise.fc_biases));
      ImGui::EndTable();
    }
    const double ratio = static_cast<double>(r.exercise.fc_weights) / static_cast<double>(std::max(1LL, r.exercise.qkv_weights));
    // TRANSLATORS: Q, K, V are the queries, keys and values; D is the tokens' width, N the number of tokens.
    note(_("Q, K and V are each an affine map of a token: a D x D weight matrix plus a bias vector of length D, so the "
           "biases count 3D (each bias is a vector, not one number). A dense layer from all DN inputs to all DN outputs "
           "has one bias per output: DN."));
    // TRANSLATORS: %s is a whole number with thousands separators (1,234). N is the number of tokens.
    note(text_format(_("The dense layer needs %s times the weights of the Q/K/V projections (N^2/3). Attention does not learn "
                       "its N^2 weights: it computes them from the tokens."),
                     group(static_cast<long long>(std::llround(ratio))).c_str()));
  }

  void compute_and_memory() {
    const CostReport& r = report_;
    // TRANSLATORS: FLOPs = floating-point operations; A is the attention matrix, stored as 32-bit floats.
    text_wrapped("%s", _("Compute and memory of this app's heads (a multiply-add counts as 2 FLOPs; A in float32, 4 bytes)"));
    if (ImGui::BeginTable("flops", 3, kTable)) {
      ImGui::TableSetupColumn("");
      ImGui::TableSetupColumn(_("formula"));
      // TRANSLATORS: a table column: the computed amount (FLOPs or bytes).
      ImGui::TableSetupColumn(_("value"));
      ImGui::TableHeadersRow();
      for (int h = 0; h < kHeadCount; ++h) {
        const std::string what = "Q K^T, " + std::string(head_name(static_cast<HeadKind>(h))) + " (m'=" + std::to_string(m_[h]) + ")";
        text_row(what.c_str(), "2 N^2 m'", flops(static_cast<double>(r.qk_flops[static_cast<size_t>(h)])));
      }
      // TRANSLATORS: the product of queries Q and transposed keys K^T (a formula), for all heads.
      text_row(_("Q K^T, all heads"), "2 N^2 sum m'", flops(static_cast<double>(r.qk_flops_all)));
      // TRANSLATORS: the product of the attention matrix A and the values V, all heads; v = 3 is the values' width.
      text_row(_("A V, all heads (v = 3)"), "2 N^2 v H", flops(static_cast<double>(r.av_flops_all)));
      // TRANSLATORS: the memory of the attention matrix A of one head; the formula "4N^2 bytes": 4 bytes per weight, N tokens.
      text_row(_("A of one head"), _("4N^2 bytes"), bytes(r.a_bytes));
      // TRANSLATORS: the memory of the attention matrices A of all heads; the formula: 4 bytes per weight, H heads, N tokens.
      text_row(_("A of every head"), _("4HN^2 bytes"), bytes(r.a_bytes_all));
      text_row(_("one row per head (heat maps)"), _("4HN bytes"), bytes(r.row_bytes_all));
      ImGui::EndTable();
    }
    // TRANSLATORS: K is the patch size, N the number of tokens, A the attention matrix.
    note(_("Halving K multiplies N by 4, and the attention weights, the FLOPs and the bytes of A by 16."));
  }

  void exercise_125(int N) {
    // TRANSLATORS: the heading of exercise 12.5 (the book's numbering: keep it). H is the number of heads, D the width.
    text_wrapped("%s", _("Exercise 12.5: H heads whose queries, keys and values have width D/H"));
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
    ImGui::InputInt("D", &split_D_);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
    ImGui::InputInt("H", &split_H_);
    split_D_ = std::clamp(split_D_, 1, 100000);
    split_H_ = std::clamp(split_H_, 1, 1024);
    // TRANSLATORS: a button: set D to the app's token width d and H to its 6 heads.
    if (ImGui::SmallButton(_("this app (D = d, H = 6)"))) {
      split_D_ = TokenLayout::d;
      split_H_ = kHeadCount;
    }
    ImGui::SameLine();
    if (ImGui::SmallButton("ViT-Base (D = 768, H = 12)")) {  // i18n: English (a model's name and its numbers)
      split_D_ = 768;
      split_H_ = 12;
    }
    const std::vector<int> split_m(static_cast<size_t>(split_H_), 1);
    const CostReport s = cost_report(N, split_D_, split_m, 3);
    if (ImGui::BeginTable("ex125", 3, kTable)) {
      ImGui::TableSetupColumn("");
      // TRANSLATORS: a table column: heads whose queries, keys and values have width D/H.
      ImGui::TableSetupColumn(_("width D/H"));
      // TRANSLATORS: a table column: heads whose queries, keys and values have the full width D.
      ImGui::TableSetupColumn(_("width D"));
      ImGui::TableHeadersRow();
      const std::string w = format_number(s.head_width, 4);
      const double Nd = static_cast<double>(N);
      // TRANSLATORS: the width of a query q, a key k and a value v.
      text_row(_("q, k, v width"), w, std::to_string(split_D_));
      text_row(_("weights, one head"), group(s.split_qkv_weights_per_head), group(s.exercise.qkv_weights));
      // TRANSLATORS: H is the number of heads.
      text_row(_("weights, H heads"), group(s.split_qkv_weights_all), group(s.full_qkv_weights_all));
      // TRANSLATORS: the floating-point operations of the product Q K^T (queries times transposed keys).
      text_row(_("Q K^T FLOPs, one head"), flops(s.split_qk_flops_per_head), flops(2.0 * Nd * Nd * split_D_));
      text_row(_("Q K^T FLOPs, H heads"), flops(s.split_qk_flops_all), flops(static_cast<double>(s.full_qk_flops_all)));
      // TRANSLATORS: a_ij are the attention weights; H is the number of heads.
      text_row(_("a_ij, H heads"), group(s.attention_weights_all), group(s.attention_weights_all));
      ImGui::EndTable();
    }
    // TRANSLATORS: W_q, W_k, W_v are the query, key and value weights; D the width, H the number of heads, N the number
    // of tokens, A the attention matrix. %s is empty or " (in practice D is chosen divisible by H)".
    note(text_format(_("Weights count W_q, W_k, W_v: each head's W_q takes all D inputs to D/H outputs, so D*D/H weights. "
                       "Over the H heads the narrow heads add up to exactly one head of width D, in weights (3D^2) and in "
                       "Q K^T work (2N^2 D, a multiply-add = 2 FLOPs), so more heads cost nothing extra there%s. What does "
                       "grow with H is the number of N x N matrices A: H N^2 weights."),
                     // TRANSLATORS: inserted into "Weights count W_q, ..." when D is not a multiple of H.
                     split_D_ % split_H_ ? _(" (in practice D is chosen divisible by H)") : ""));
  }

  void refresh(AppState& state, HandMadeSession& hand_made) {
    const int head = std::clamp(state.hand_made.head.head, 0, kHeadCount - 1);
    const RowSet& rows = hand_made.latest_rows(hand_made_query(state, hand_made.grid()));  // row rows.query (a frame late)
    numbers_.update(std::tuple{hand_made.generation(), head, rows.query}, [&] {
      head_ = head;
      query_ = rows.query;
      const int N = hand_made.grid().N();
      m_text_.clear();
      for (int h = 0; h < kHeadCount; ++h) {
        m_[h] = hand_made.qkv(h).m();
        m_text_ += (h ? ", " : "") + std::to_string(m_[h]);
      }
      report_ = cost_report(N, TokenLayout::d, m_, 3);
      x_width_ = static_cast<int>(hand_made.tokens().cols());
      // Saturation of every head's row, and the main head's curve over τ.
      keep_.assign(static_cast<size_t>(N), 1);
      kept_ = 0;
      for (int j = 0; j < N; ++j) {
        keep_[static_cast<size_t>(j)] = hand_made.setup().mask.allowed(query_, j) ? 1 : 0;
        kept_ += keep_[static_cast<size_t>(j)];
      }
      for (int h = 0; h < kHeadCount; ++h) sat_[h] = saturation(rows.head(h));
      empty_ = rows.empty;
      tau_now_ = hand_made.settings().temperature;
      for (int n = 0; n < kCurvePoints; ++n) taus_[n] = std::pow(10.0f, -3.0f + 5.0f * static_cast<float>(n) / (kCurvePoints - 1));
      const auto c = saturation_curve(rows.head_logits(head_), keep_, tau_now_, taus_);
      for (int n = 0; n < kCurvePoints; ++n) {
        curve_h_[n] = c[static_cast<size_t>(n)].entropy;
        curve_max_[n] = c[static_cast<size_t>(n)].max_weight;
      }
    });
  }

  void saturation_section(AppState& state) {
    const double logN = kept_ > 0 ? std::log(static_cast<double>(kept_)) : 0.0;
    text_wrapped(_("Softmax saturation of the query row (token %d)"), query_);
    ImGui::SameLine();
    ImGui::TextDisabled("(?)");
    if (ImGui::IsItemHovered())
      // TRANSLATORS: H is the entropy here (not the number of heads); a_ij the weights; nats: the unit of entropy with
      // the natural logarithm. %d is the number of keys the mask keeps (twice), %.3f its logarithm.
      ImGui::SetTooltip(_("Entropy H = -sum_j a_ij log a_ij (nats). A uniform row over the %d kept keys has H = log %d = %.3f;\n"
                          "a one-hot row has H = 0. exp(H) reads as the number of keys the query effectively averages."),
                        kept_, kept_, logN);
    setting_widget(state, "temperature", {.scope = "cost", .width_em = 14, .help = false});
    ImGui::SameLine();
    if (ImGui::SmallButton("tau = 1")) state.attention.temperature = 1.0f;  // i18n: English (a formula)

    if (ImGui::BeginTable("sat", 5, kTable)) {
      // TRANSLATORS: a table column: the attention head (one of the six).
      ImGui::TableSetupColumn(_("head"));
      // TRANSLATORS: a table column: the largest weight a_ij of the row.
      ImGui::TableSetupColumn(_("max a_ij"));
      // TRANSLATORS: a table column: the row's entropy, written H.
      ImGui::TableSetupColumn(_("entropy H"));
      ImGui::TableSetupColumn("H / log N");  // i18n: English (a formula)
      // TRANSLATORS: a table column: exp(H), the number of keys the query effectively averages.
      ImGui::TableSetupColumn(_("exp(H) keys"));
      ImGui::TableHeadersRow();
      for (int h = 0; h < kHeadCount; ++h) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        if (h == head_)
          // TRANSLATORS: %s is a head's name (an English identifier); "main": the head the image view shows.
          ImGui::TextColored(ImVec4(1.0f, 0.8f, 0.3f, 1.0f), _("%s (main)"), std::string(head_name(static_cast<HeadKind>(h))).c_str());
        else ImGui::TextUnformatted(std::string(head_name(static_cast<HeadKind>(h))).c_str());
        if (empty_[static_cast<size_t>(h)]) {
          ImGui::TableSetColumnIndex(1);
          ImGui::TextDisabled("%s", _("every key masked"));
          continue;
        }
        const Saturation& s = sat_[h];
        ImGui::TableSetColumnIndex(1);
        ImGui::TextUnformatted(format_weight(s.max_weight).c_str());
        ImGui::TableSetColumnIndex(2);
        ImGui::Text("%.4f", static_cast<double>(s.entropy));
        ImGui::TableSetColumnIndex(3);
        ImGui::Text("%.4f", logN > 0 ? static_cast<double>(s.entropy) / logN : 1.0);
        ImGui::TableSetColumnIndex(4);
        ImGui::Text("%s/%d", format_number(std::exp(static_cast<double>(s.entropy)), 4).c_str(), kept_);
      }
      ImGui::EndTable();
    }
    // TRANSLATORS: a_ij are the weights; %d is the number of keys the mask keeps (twice), %s the weight 1/%d.
    note(text_format(_("A uniform row would have max a_ij = 1/%d = %s and entropy log %d = %.4f."), std::max(kept_, 1),
                     format_weight(1.0 / std::max(kept_, 1)).c_str(), std::max(kept_, 1), logN));
    if (kept_ == 0 || empty_[static_cast<size_t>(head_)]) return;
    curve(logN);
  }

  // Entropy and max weight of the main head's row against τ (log axis), from its logits: the
  // scores do not change with τ, only their scale does.
  void curve(double logN) {
    // TRANSLATORS: %s is the head's name (an English identifier); tau is the temperature. The colours name the curves.
    text_wrapped(_("Main head (%s): the entropy (blue) and the max weight (orange) this row would have at other tau"),
                       std::string(head_name(static_cast<HeadKind>(head_))).c_str());
    const float margin = ImGui::CalcTextSize("log N = 9.99").x + 8.0f;
    const float w = std::max(ImGui::GetContentRegionAvail().x - margin, 160.0f), h = 8.0f * ImGui::GetTextLineHeight();
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::Dummy(ImVec2(w + margin, h + ImGui::GetTextLineHeightWithSpacing() * 1.3f));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImU32 frame = ImGui::GetColorU32(ImGuiCol_TextDisabled), text = ImGui::GetColorU32(ImGuiCol_Text);
    dl->AddRect(p, ImVec2(p.x + w, p.y + h), frame);
    auto x_of = [&](float tau) { return p.x + w * std::clamp((std::log10(tau) + 3.0f) / 5.0f, 0.0f, 1.0f); };
    const double top = std::max(logN, 1e-9);
    auto y_h = [&](double e) { return p.y + h - static_cast<float>(h * std::clamp(e / top, 0.0, 1.0)); };
    auto y_m = [&](double m) { return p.y + h - static_cast<float>(h * std::clamp(m, 0.0, 1.0)); };
    // log N line (uniform) and ticks.
    dl->AddLine(ImVec2(p.x, y_h(logN)), ImVec2(p.x + w, y_h(logN)), IM_COL32(120, 200, 255, 90));
    for (float t : {0.001f, 0.01f, 0.1f, 1.0f, 10.0f, 100.0f}) {
      const float x = x_of(t);
      dl->AddLine(ImVec2(x, p.y + h), ImVec2(x, p.y + h + 4), frame);
      char buf[16];
      std::snprintf(buf, sizeof buf, "%g", static_cast<double>(t));
      const float tw = ImGui::CalcTextSize(buf).x;
      dl->AddText(ImVec2(std::clamp(x - tw * 0.5f, p.x, p.x + w - tw), p.y + h + 4), frame, buf);
    }
    for (int n = 1; n < kCurvePoints; ++n) {
      dl->AddLine(ImVec2(x_of(taus_[n - 1]), y_h(curve_h_[n - 1])), ImVec2(x_of(taus_[n]), y_h(curve_h_[n])), IM_COL32(120, 200, 255, 255), 2.0f);
      dl->AddLine(ImVec2(x_of(taus_[n - 1]), y_m(curve_max_[n - 1])), ImVec2(x_of(taus_[n]), y_m(curve_max_[n])), IM_COL32(255, 160, 60, 255),
                  2.0f);
    }
    const float xn = x_of(tau_now_);
    dl->AddLine(ImVec2(xn, p.y), ImVec2(xn, p.y + h), IM_COL32(255, 255, 255, 200), 1.5f);
    char now[48];
    std::snprintf(now, sizeof now, "tau = %s", format_number(tau_now_, 3).c_str());
    dl->AddText(ImVec2(std::min(xn + 4, p.x + w - ImGui::CalcTextSize(now).x - 2), p.y + 2), text, now);
    char lbl[48];
    std::snprintf(lbl, sizeof lbl, "log N = %s", format_number(logN, 3).c_str());
    dl->AddText(ImVec2(p.x + w + 4, y_h(logN) - ImGui::GetTextLineHeight() * 0.5f), IM_COL32(120, 200, 255, 255), lbl);
    dl->AddText(ImVec2(p.x + w + 4, y_m(1.0) + ImGui::GetTextLineHeight() * 0.5f), IM_COL32(255, 160, 60, 255), "max a = 1");
    dl->AddText(ImVec2(p.x + w + 4, p.y + h - ImGui::GetTextLineHeight()), frame, "0");
    if (ImGui::IsMouseHoveringRect(p, ImVec2(p.x + w, p.y + h))) {
      const float t = std::clamp((ImGui::GetIO().MousePos.x - p.x) / w, 0.0f, 1.0f);
      const int n = std::clamp(static_cast<int>(std::lround(t * (kCurvePoints - 1))), 0, kCurvePoints - 1);
      // TRANSLATORS: tau is the temperature; N the number of kept keys; a_ij the weights.
      ImGui::SetTooltip(_("tau = %s: entropy %.4f (log N = %.4f), max a_ij %s"), format_number(taus_[n], 3).c_str(),
                        static_cast<double>(curve_h_[n]), logN, format_weight(curve_max_[n]).c_str());
    }
  }

  // What refresh() made (the members below); key: generation, head, the query of the rows held.
  KeyMemo<std::tuple<unsigned, int, int>> numbers_;
  int head_ = -1, query_ = -1, x_width_ = 0, kept_ = 0;  // query_: the row the numbers are of
  int split_D_ = TokenLayout::d, split_H_ = kHeadCount;
  std::vector<int> m_ = std::vector<int>(kHeadCount, 0);
  std::string m_text_;
  CostReport report_;
  std::vector<std::uint8_t> keep_;
  std::array<Saturation, kHeadCount> sat_{};
  std::array<bool, kHeadCount> empty_{};
  float tau_now_ = 1.0f;
  std::array<float, kCurvePoints> taus_{}, curve_h_{}, curve_max_{};
};

}  // namespace

std::unique_ptr<TeachingView> make_cost_view() { return std::make_unique<CostView>(); }

}  // namespace attnlab::app
