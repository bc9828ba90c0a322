// Positional codes (fig. 26.20, eqs. 26.38–26.40): every dimension of the code p as a small
// image over the patch grid, the query's code p_i, the similarity p_iᵀp_j over the grid, and
// the main head's map in concat mode for a few weights λ (computed on the CPU from the head
// input X that the hand-made session already has, by core's LambdaSweep: no second tokenization).
#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "app/gui/chapter/teaching_view.hpp"
#include "app/gui/maps/map_pictures.hpp"
#include "app/gui/state/memo.hpp"
#include "app/gui/state/setting_widgets.hpp"
#include "core/base/translate.hpp"
#include "core/hand_made/demos.hpp"
#include "core/hand_made/positional.hpp"

namespace attnlab::app {
namespace {

constexpr std::array<float, 5> kLambdas{0.0f, 0.5f, 1.0f, 2.0f, 4.0f};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// The codes of the head input, one picture per dimension; key: generation, N.
struct Codes {
  PosSpec spec;
  Matrix P;  // N × L, the code columns of the head input
  std::vector<GuiTexture> textures;
};

// p_i^T p_j over the grid; key: generation, query, colormap.
struct Similarity {
  std::vector<float> values;
  ValueRange range;
  GuiTexture texture;
};

struct Summary {
  float hi = 0, lo = 0, self = 0;
  bool empty = false;
};

struct LambdaMaps {
  std::array<GuiTexture, kLambdas.size()> textures;
  std::array<Summary, kLambdas.size()> summary{};
};

class PositionalView final : public TeachingView {
 public:
  PositionalView()
      : TeachingView({"positional",
            // TRANSLATORS: a view's window title (and its item in the Chapter menu).
            N_("Positional codes"),
            // TRANSLATORS: where the view's idea is in the book: figure 26.20, equations 26.38 to 26.40. Keep the numbers.
            N_("fig. 26.20, eqs. 26.38-26.40"),
            // TRANSLATORS: the guided tour's text for the positional view. B is the codes' base, lambda their
            // weight, p_i and p_j the positional codes of patches i and j. Keep the symbols and the numbers.
            N_("Attention by itself cannot tell where a patch is. Positional codes give every patch a vector of sines of "
               "its column and row, one wave per power of B (eqs. 26.38-26.40, fig. 26.20). Appended to queries and keys "
               "with weight lambda, they add lambda^2 p_i^T p_j to every score, so near patches gain weight.")}) {}

  void draw_contents(AppState& state, HandMadeSession& hand_made) override;

 private:
  // ---- data, cached on the hand-made session's generation (and what else each depends on)
  void update_codes(HandMadeSession& hand_made);

  // ---- controls: the positional settings, written into the app state (applied next frame)
  void draw_controls(AppState& state);

  // ---- one thumbnail per code dimension, rows = (axis, sin/cos), columns = k
  void draw_code_grid(const PatchGrid& g, int i);

  // ---- p_i as a bar strip (up = positive), with its numbers
  void draw_code_vector(int i);

  // ---- p_iᵀp_j over the grid
  void draw_similarity(AppState& state, HandMadeSession& hand_made, int i);

  // ---- the main head's map for λ in kLambdas, concat mode
  void draw_lambda_row(AppState& state, HandMadeSession& hand_made, int i);

  Memo<std::tuple<unsigned, int>, Codes> codes_;
  // The codes' names for the draw functions (update_codes made them this frame).
  const PosSpec& spec() const { return codes_.last()->spec; }
  const Matrix& codes() const { return codes_.last()->P; }

  Memo<std::tuple<unsigned, int, Colormap>, Similarity> similarity_;

  // The main head's rows for every lambda: the sweep (key: generation, head) and its maps (key:
  // generation, query, head, style).
  Memo<std::tuple<unsigned, int>, LambdaSweep> sweep_;
  Memo<std::tuple<unsigned, int, int, HeatmapStyle>, LambdaMaps> lambda_maps_;
};

void PositionalView::draw_contents(AppState& state, HandMadeSession& hand_made) {
  update_codes(hand_made);
  const int L = static_cast<int>(codes().cols());
  const int i = std::clamp(hand_made_query(state, hand_made.grid()), 0, static_cast<int>(codes().rows()) - 1);
  const PatchGrid& g = hand_made.grid();

  // TRANSLATORS: p is a patch's positional code, p_x and p_y its parts for the column x and the row y; B is the codes'
  // base, k a power of it (0 to P). Keep the symbols and the equation numbers.
  text_wrapped("%s", _("Patch (x, y) = (column, row) gets the code p = [p_x; p_y] (eq. 26.40): p_x holds sin(x / B^k) for k = "
                       "0..P (eq. 26.38), p_y the same for the row (26.39). Each power k is a wave with a period of 2 pi B^k "
                       "patches: k = 0 changes fast, large k changes slowly, so together they tell every place apart."));
  draw_controls(state);
  ImGui::Separator();

  // TRANSLATORS: p is the positional code; "%d x %d" the grid's columns x rows; (%d,%d) the query's (column,row).
  ImGui::Text(_("Every dimension of p over the %d x %d grid (fig. 26.20): black = -1, grey = 0, white = +1; the query (%d,%d) "
                "is outlined."),
      g.cols, g.rows, g.col_of(i), g.row_of(i));
  draw_code_grid(g, i);
  ImGui::Separator();

  // TRANSLATORS: p_i is the query's positional code; i its token index, x and y its column and row.
  text_wrapped(_("The query's code p_i, %d values (i = %d, x = %d, y = %d):"), L, i, g.col_of(i), g.row_of(i));
  draw_code_vector(i);
  ImGui::Separator();

  draw_similarity(state, hand_made, i);
  ImGui::Separator();

  draw_lambda_row(state, hand_made, i);
}

void PositionalView::update_codes(HandMadeSession& hand_made) {
  codes_.get(std::tuple{hand_made.generation(), hand_made.grid().N()}, [&](Codes& c) {
    const Matrix& X = hand_made.tokens();  // [T | P] as the engine (or the reference) computed it
    const int L = static_cast<int>(X.cols()) - TokenLayout::d;
    if (L <= 0) throw Error(_("the head input has no positional code columns"));
    c.spec = hand_made.settings().pos;
    c.P = X.rightCols(L);
    const PatchGrid& g = hand_made.grid();
    c.textures.resize(static_cast<size_t>(L));
    std::vector<float> column(static_cast<size_t>(g.N()));
    for (int n = 0; n < L; ++n) {
      for (int j = 0; j < g.N(); ++j) column[static_cast<size_t>(j)] = c.P(j, n);
      const auto px = colormap_pixels(column, {}, Colormap::Gray, Normalization::MinMax, ValueRange{-1.0f, 1.0f});
      c.textures[static_cast<size_t>(n)].set(g.cols, g.rows, 4, px, false);
    }
  });
}

void PositionalView::draw_controls(AppState& state) {
  // One or two lines as the view's width allows: a widget that does not fit goes to the next.
  const WidgetPlace slider{.scope = "positional", .width_em = 7, .same_line = true};
  setting_widget(state, "pos.B", {.scope = "positional", .width_em = 7});
  setting_widget(state, "pos.P", slider);
  setting_widget(state, "pos.sincos", {.scope = "positional", .same_line = true});
  // TRANSLATORS: the label of the choice how the positional codes enter attention (radio buttons follow).
  ImGui::TextUnformatted(_("codes in attention:"));
  setting_widget(state, "pos.mode", {.scope = "positional", .same_line = true, .radio = true, .label = false, .help = false});
  setting_widget(state, "pos.lambda", slider);
}

void PositionalView::draw_code_grid(const PatchGrid& g, int i) {
  const ImGuiStyle& st = ImGui::GetStyle();
  const float sp = st.ItemSpacing.x * 0.5f;
  const int columns = spec().P + 1, funcs = spec().sincos ? 2 : 1, rows = 2 * funcs;
  const std::string B = fmt("%g", spec().B);
  std::vector<std::string> row_labels;
  for (const char* axis : {"x", "y"}) {
    row_labels.push_back("sin(" + std::string(axis) + "/" + B + "^k)");
    if (spec().sincos) row_labels.push_back("cos(" + std::string(axis) + "/" + B + "^k)");
  }
  float label_w = 0;
  for (const auto& l : row_labels) label_w = std::max(label_w, ImGui::CalcTextSize(l.c_str()).x);
  label_w += st.ItemSpacing.x;
  const float avail = ImGui::GetContentRegionAvail().x;
  const float cell_w = std::clamp((avail - label_w) / static_cast<float>(columns) - sp, ui_px(27), ui_px(118));
  const float aspect = std::clamp(static_cast<float>(g.rows) / static_cast<float>(g.cols), 0.25f, 4.0f);
  const float cell_h = cell_w * aspect;
  const float text_h = ImGui::GetTextLineHeight();
  const float total_w = label_w + static_cast<float>(columns) * (cell_w + sp);
  const float total_h = text_h + st.ItemSpacing.y + static_cast<float>(rows) * (cell_h + sp);
  const bool scroll = total_w > avail;
  ImGui::BeginChild("codes", ImVec2(0, total_h + (scroll ? st.ScrollbarSize : 0.0f) + 4), false,
                    ImGuiWindowFlags_HorizontalScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  for (int k = 0; k < columns; ++k) {  // column headers
    const std::string h = "k=" + std::to_string(k);
    const float x = o.x + label_w + static_cast<float>(k) * (cell_w + sp);
    if (ImGui::CalcTextSize(h.c_str()).x <= cell_w || k % 2 == 0) dl->AddText(ImVec2(x, o.y), dim, h.c_str());
  }
  const float y0 = o.y + text_h + st.ItemSpacing.y;
  const int per_axis = static_cast<int>(codes().cols()) / 2;
  const float qx = (static_cast<float>(g.col_of(i)) + 0.5f) / static_cast<float>(g.cols);
  const float qy = (static_cast<float>(g.row_of(i)) + 0.5f) / static_cast<float>(g.rows);
  for (int r = 0; r < rows; ++r) {
    const float y = y0 + static_cast<float>(r) * (cell_h + sp);
    dl->AddText(ImVec2(o.x, y + cell_h * 0.5f - text_h * 0.5f), text, row_labels[static_cast<size_t>(r)].c_str());
    const int axis = r / funcs, f = r % funcs;
    for (int k = 0; k < columns; ++k) {
      const int n = axis * per_axis + k * funcs + f;  // positional_code()'s order
      if (n >= static_cast<int>(codes_.last()->textures.size())) continue;
      const ImVec2 a(o.x + label_w + static_cast<float>(k) * (cell_w + sp), y), b(a.x + cell_w, a.y + cell_h);
      ImGui::SetCursorScreenPos(a);
      ImGui::InvisibleButton(("dim" + std::to_string(n)).c_str(), ImVec2(cell_w, cell_h));
      dl->AddImage(codes_.last()->textures[static_cast<size_t>(n)].im(), a, b);
      // the query's cell (at least 3 px so it stays visible on fine grids)
      const float hw = std::max(cell_w / static_cast<float>(g.cols), 3.0f) * 0.5f;
      const float hh = std::max(cell_h / static_cast<float>(g.rows), 3.0f) * 0.5f;
      const ImVec2 c(a.x + qx * cell_w, a.y + qy * cell_h);
      dl->AddRect(ImVec2(c.x - hw, c.y - hh), ImVec2(c.x + hw, c.y + hh), IM_COL32(0, 255, 255, 255));
      if (ImGui::IsItemHovered()) {
        dl->AddRect(a, b, IM_COL32(255, 255, 255, 200));
        const double period = 2 * std::numbers::pi * std::pow(static_cast<double>(spec().B), k);
        // TRANSLATORS: p is the positional code; the first %s names the dimension (a formula such as sin(x/10^2));
        // B is the codes' base; the period is measured in patches; the last number is the code's value at the query.
        ImGui::SetTooltip(_("dimension %d of p: %s\nperiod 2 pi B^%d = %.1f patches\nat the query: %+.4f"), n,
                          code_dimension_label(spec(), n).c_str(), k, period, static_cast<double>(codes()(i, n)));
      }
    }
  }
  ImGui::SetCursorScreenPos(o);
  ImGui::Dummy(ImVec2(total_w, total_h));
  ImGui::EndChild();
}

void PositionalView::draw_code_vector(int i) {
  const int L = static_cast<int>(codes().cols()), per_axis = L / 2;
  const float avail = ImGui::GetContentRegionAvail().x;
  const float gap = ui_px(15);
  const float bar = std::clamp((avail - gap) / static_cast<float>(L), 3.0f, ui_px(34));
  const float h = ui_px(79);
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("pvec", ImVec2(bar * static_cast<float>(L) + gap, h + ImGui::GetTextLineHeight() + 2));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float mid = o.y + h * 0.5f;
  dl->AddLine(ImVec2(o.x, mid), ImVec2(o.x + bar * static_cast<float>(L) + gap, mid), IM_COL32(150, 150, 150, 255));
  for (float v : {-1.0f, 1.0f})
    dl->AddLine(ImVec2(o.x, mid - v * (h * 0.5f - 1)),
                ImVec2(o.x + bar * static_cast<float>(L) + gap, mid - v * (h * 0.5f - 1)), IM_COL32(90, 90, 90, 255));
  const float mx = ImGui::GetIO().MousePos.x;
  for (int n = 0; n < L; ++n) {
    const float x = o.x + static_cast<float>(n) * bar + (n >= per_axis ? gap : 0.0f);
    const float v = codes()(i, n);
    const ImU32 col = v >= 0 ? IM_COL32(80, 200, 220, 255) : IM_COL32(240, 150, 60, 255);
    dl->AddRectFilled(ImVec2(x + 0.5f, std::min(mid, mid - v * (h * 0.5f - 1))),
                      ImVec2(x + std::max(bar - 1.0f, 1.5f), std::max(mid, mid - v * (h * 0.5f - 1))), col);
    if (hovered && mx >= x && mx < x + bar)
      ImGui::SetTooltip("p_i[%d] = %s = %+.4f", n, code_dimension_label(spec(), n).c_str(),  // i18n: English (a formula)
                        static_cast<double>(v));
  }
  const float half = static_cast<float>(per_axis) * bar;
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float tw = ImGui::CalcTextSize("p_x").x;
  dl->AddText(ImVec2(o.x + half * 0.5f - tw * 0.5f, o.y + h + 1), dim, "p_x");
  dl->AddText(ImVec2(o.x + half + gap + half * 0.5f - tw * 0.5f, o.y + h + 1), dim, "p_y");
  dl->AddLine(ImVec2(o.x + half + gap * 0.5f, o.y), ImVec2(o.x + half + gap * 0.5f, o.y + h),
              IM_COL32(150, 150, 150, 255));
  if (L <= 32) {
    for (int axis = 0; axis < 2; ++axis) {
      std::string line = axis == 0 ? "p_x = [" : "p_y = [";
      for (int n = axis * per_axis; n < (axis + 1) * per_axis; ++n)
        line += fmt("%+.2f", static_cast<double>(codes()(i, n))) + (n + 1 < (axis + 1) * per_axis ? " " : "]");
      text_wrapped("%s", line.c_str());
    }
  } else {
    ImGui::TextDisabled("%s", _("(hover over a bar for its value)"));
  }
}

void PositionalView::draw_similarity(AppState& state, HandMadeSession& hand_made, int i) {
  const PatchGrid& g = hand_made.grid();
  const Similarity& sim = similarity_.get(std::tuple{hand_made.generation(), i, state.colormap}, [&](Similarity& s) {
    s.values = code_similarity(codes(), i);
    s.range = normalization_range(s.values, {}, Normalization::MinMax);
    s.texture.set(g.cols, g.rows, 4, colormap_pixels(s.values, {}, state.colormap, Normalization::MinMax, s.range), false);
  });
  // TRANSLATORS: p_i^T p_j is the dot product of the positional codes of patches i and j.
  ImGui::TextUnformatted(_("How alike the codes are: p_i^T p_j for every patch j"));
  const float side = std::min(ui_px(295), ImGui::GetContentRegionAvail().x * 0.4f);
  const float scale = side / static_cast<float>(std::max(g.cols, g.rows));
  const ImVec2 size(scale * static_cast<float>(g.cols), scale * static_cast<float>(g.rows));
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("similarity", size);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddImage(sim.texture.im(), o, ImVec2(o.x + size.x, o.y + size.y));
  const ImVec2 qa(o.x + scale * static_cast<float>(g.col_of(i)), o.y + scale * static_cast<float>(g.row_of(i)));
  dl->AddRect(qa, ImVec2(qa.x + std::max(scale, 3.0f), qa.y + std::max(scale, 3.0f)), IM_COL32(0, 255, 255, 255), 0,
              0, 2);
  if (ImGui::IsItemHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int c = std::clamp(static_cast<int>((m.x - o.x) / scale), 0, g.cols - 1);
    const int r = std::clamp(static_cast<int>((m.y - o.y) / scale), 0, g.rows - 1);
    // TRANSLATORS: the patch's (column,row) and the dot product of its positional code p_j with the query's p_i.
    ImGui::SetTooltip(_("patch (%d,%d): p_i^T p_j = %.3f"), c, r,
                      static_cast<double>(sim.values[static_cast<size_t>(g.index(c, r))]));
  }
  ImGui::SameLine();
  colour_bar(state.colormap, Normalization::MinMax, sim.range, size.y);
  ImGui::SameLine();
  ImGui::BeginGroup();
  const float self = sim.values[static_cast<size_t>(i)];
  const auto [lo, hi] = std::minmax_element(sim.values.begin(), sim.values.end());
  ImGui::PushTextWrapPos(0.0f);
  // TRANSLATORS: p_i is the query's positional code; then the smallest and largest p_i^T p_j over the grid.
  text_wrapped(_("p_i^T p_i = |p_i|^2 = %s; over the grid from %s to %s."), format_number(self, 3).c_str(),
               format_number(*lo, 3).c_str(), format_number(*hi, 3).c_str());
  // TRANSLATORS: k is a power of the codes' base B; p_i^T p_j the dot product of two patches' positional codes.
  text_wrapped("%s", _("Nearby patches share their slow waves (large k), so p_i^T p_j changes smoothly over the grid; the fast "
                       "waves (small k) add the ripples."));
  if (spec().sincos)
    // TRANSLATORS: x_i, y_i are patch i's column and row, B the codes' base, p a positional code; %d is |p|^2.
    text_wrapped(_("With sine-cosine pairs, p_i^T p_j = sum over k of cos((x_i - x_j)/B^k) + cos((y_i - y_j)/B^k): it depends "
                   "only on the offset between the patches and is largest, |p|^2 = %d, at the query."),
        static_cast<int>(codes().cols()) / 2);
  else
    // TRANSLATORS: p_j is patch j's positional code. "sine-cosine" names the option of the same name.
    text_wrapped("%s", _("With sines only the map need not peak at the query: |p_j|^2 differs from place to place (at column 0 "
                         "and row 0 the code is all zeros, as sin 0 = 0), so a patch with a longer code can outscore the query "
                         "itself. The sine-cosine option removes this."));
  // TRANSLATORS: "concat" is the positional mode that appends the codes; lambda is their weight; q_i^T k_j the score of
  // query i and key j. Keep the equation numbers.
  text_wrapped("%s", _("In concat mode this number, times lambda^2, is added to every score q_i^T k_j (eq. 26.40 appended to "
                       "eqs. 26.17-26.18)."));
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
}

void PositionalView::draw_lambda_row(AppState& state, HandMadeSession& hand_made, int i) {
  const int head = std::clamp(state.hand_made.head.head, 0, kHeadCount - 1);
  const HeatmapStyle style{state.colormap, state.normalization};
  const LambdaSweep& sweep = sweep_.get(std::tuple{hand_made.generation(), head}, [&] {
    return LambdaSweep(hand_made.setup().heads[static_cast<size_t>(head)], hand_made.tokens(), hand_made.setup(),
                       hand_made.settings());
  });
  const PatchGrid& g = hand_made.grid();
  const LambdaMaps& maps = lambda_maps_.get(std::tuple{hand_made.generation(), i, head, style}, [&](LambdaMaps& m) {
    std::vector<std::uint8_t> keep(static_cast<size_t>(g.N()));
    for (int j = 0; j < g.N(); ++j) keep[static_cast<size_t>(j)] = hand_made.setup().mask.allowed(i, j);
    for (size_t n = 0; n < kLambdas.size(); ++n) {
      const RowResult r = sweep.row(i, kLambdas[n]);
      const std::span<const float> w(r.weights.data(), static_cast<size_t>(g.N()));
      m.textures[n].set(g.cols, g.rows, 4, apply_colormap(w, keep, style.colormap, style.normalization), false);
      float lo = 1, hi = 0;
      for (int j = 0; j < g.N(); ++j)
        if (keep[static_cast<size_t>(j)]) {
          lo = std::min(lo, w[static_cast<size_t>(j)]);
          hi = std::max(hi, w[static_cast<size_t>(j)]);
        }
      m.summary[n] = {hi, lo, w[static_cast<size_t>(i)], r.empty};
    }
  });

  // TRANSLATORS: %s is the head's name (an English identifier); lambda the codes' weight; m' the query's length in concat
  // mode; q_i^T k_j the score, p_i^T p_j the codes' dot product.
  ImGui::Text(_("The %s head's map as lambda grows (concat mode, m' = %d): the score becomes q_i^T k_j + lambda^2 p_i^T p_j."),
      std::string(head_name(static_cast<HeadKind>(head))).c_str(), sweep.m_concat());
  if (hand_made.settings().pos.mode != PosMode::Concat)
    ImGui::TextDisabled("%s", _("(shown in concat mode whatever the current mode is; click a map to switch to it)"));
  else
    // TRANSLATORS: lambda is the positional codes' weight.
    ImGui::TextDisabled("%s", _("(click a map to use its lambda)"));
  const float avail = ImGui::GetContentRegionAvail().x;
  const float sp = ImGui::GetStyle().ItemSpacing.x;
  const float side =
      std::clamp((avail - sp * static_cast<float>(kLambdas.size() - 1)) / static_cast<float>(kLambdas.size()),
                 ui_px(59), ui_px(271));
  const PosSpec& cur = hand_made.settings().pos;
  for (size_t n = 0; n < kLambdas.size(); ++n) {
    if (n) ImGui::SameLine();
    ImGui::BeginGroup();
    ImGui::Text("lambda = %g", static_cast<double>(kLambdas[n]));  // i18n: English (a formula)
    const bool current = cur.mode == PosMode::Concat && std::abs(cur.lambda - kLambdas[n]) < 1e-6f;
    if (map_thumbnail(("lambda" + std::to_string(n)).c_str(), hand_made, maps.textures[n].im(), state,
                          ImVec2(side, side), {Cell{g.col_of(i), g.row_of(i)}}, current)) {
      state.attention.pos.mode = PosMode::Concat;
      state.attention.pos.lambda = kLambdas[n];
    }
    const Summary& s = maps.summary[n];
    if (s.empty) {
      ImGui::TextDisabled("%s", _("all keys masked"));
    } else {
      ImGui::TextDisabled("a_ii %s", format_weight(s.self).c_str());  // i18n: English (a symbol: the query's own weight)
      if (s.lo > 0)
        // TRANSLATORS: the ratio of the largest to the smallest weight of the map.
        ImGui::TextDisabled(_("max/min %s"), format_number(s.hi / s.lo, 3).c_str());
      else
        // TRANSLATORS: the ratio max/min of the map's weights cannot be given: the smallest weight is 0.
        ImGui::TextDisabled("%s", _("max/min: min is 0"));
    }
    ImGui::EndGroup();
  }
  // TRANSLATORS: lambda is the positional codes' weight, m' the query's length, p_i^T p_j the codes' dot product, q_i^T k_j
  // the score from the patches' contents.
  text_wrapped("%s", _("At lambda = 0 the codes carry no weight and the map is the head's content map alone (only m' is "
                       "larger). As lambda grows, lambda^2 p_i^T p_j outweighs q_i^T k_j and the weight gathers where the codes "
                       "are most alike - around the query, whatever the patches look like (with sines only not always on the "
                       "query itself, see the map above)."));
}


}  // namespace

std::unique_ptr<TeachingView> make_positional_view() { return std::make_unique<PositionalView>(); }

}  // namespace attnlab::app
