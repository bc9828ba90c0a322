// Output tokens (eqs. 26.21, 26.26-26.28): T_out = A V of every head painted over the patch
// grid. Every head's value v_j is patch j's mean colour, so row i of T_out is a colour: the
// average colour of the image as patch i's attention weighs it. Next to the heads: the input
// colours (T's first three columns) and the merge by W_MSA.
#include "app/gui/chapter/teaching_view.hpp"
#include "app/gui/state/memo.hpp"
#include "app/gui/state/setting_widgets.hpp"
#include "app/gui/state/ui_common.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/hand_made/attention.hpp"
#include "core/base/error.hpp"
#include "core/hand_made/structure.hpp"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <string>

namespace attnlab::app {
namespace {

constexpr int kTiles = kHeadCount + 2;  // input, the heads, merged
constexpr int kInputTile = 0, kMergedTile = kHeadCount + 1;
// Each head's T_out costs N² work: above this many tokens it is computed only on request
// (at N = 15625 it takes minutes on a software renderer).
constexpr int kAutoTokens = 2500;
constexpr int kDebounceTokens = 1024;  // above this, wait for a change to settle before recomputing

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

class OutputView final : public TeachingView {
 public:
  OutputView()
      : TeachingView({"output",
            // TRANSLATORS: a view's window title (and its item in the Chapter menu): the tokens attention outputs.
            N_("Output tokens"),
            // TRANSLATORS: where the view's idea is in the book: equations 26.21 and 26.28. Keep the numbers.
            N_("eqs. 26.21, 26.28"),
            // TRANSLATORS: the guided tour's text for the output view. T_out (the output tokens), A (the attention
            // matrix), V (the values) and W_MSA (the heads' merging weights) are the chapter's symbols: keep them
            // and the equation numbers.
            N_("What attention hands on: T_out = A V (eq. 26.21). Each head's value is the patch's mean colour, so every "
               "output token is a colour, the image's colours averaged with the query's weights. Each head gives its own "
               "picture; W_MSA merges them (eqs. 26.27-26.28).")}) {}
  void draw_contents(AppState& state, HandMadeSession& hand_made) override;

 private:
  void update(HandMadeSession& hand_made);
  void upload(int t);
  // draw_contents' steps, in order.
  void draw_controls(AppState& state);
  void draw_request(AppState& state, int N, bool all);
  struct Hovered {
    int tile = -1, token = -1;
  };
  Hovered draw_tiles(AppState& state, HandMadeSession& hand_made, int sel);
  void draw_tile_tooltip(const PatchGrid& g, Hovered hovered) const;
  void draw_numbers(HandMadeSession& hand_made, int sel, bool all);
  std::string tile_label(int t) const;
  bool current(int t) const { return done_[static_cast<size_t>(t)]; }

  // What each picture shows, for the session's generation that generation_ last saw: N × 3
  // colours (c_i or t_out_i). A new generation marks them all stale (done_); the old pictures
  // stay, dimmed, until remade head by head.
  KeyMemo<unsigned> generation_;
  std::array<Matrix, kTiles> colours_;
  std::array<bool, kTiles> done_{};  // colours_[t] is for the current generation
  std::array<GuiTexture, kTiles> textures_;
  std::array<std::pair<int, int>, kTiles> tex_grid_{};  // cols, rows of each texture
  Clock::time_point changed_at_{};
  bool requested_ = false;  // the user asked for the outputs of a large grid (for this generation)
  bool stretch_ = false, stretched_ = false;  // display only: spread each picture over 0..1
  bool shown_any_ = false;
  double ms_per_entry_ = 0;  // measured cost of one head's T_out per N² (for the estimate)
  double ms_ = 0;  // time spent on the heads' T_out for this generation
  std::string error_;
};

std::string OutputView::tile_label(int t) const {
  // TRANSLATORS: a picture's caption: the input tokens' mean colours; T is the tokens' matrix.
  if (t == kInputTile) return _("input: mean colours (T)");
  // TRANSLATORS: a picture's caption: the heads' outputs T_out merged by the weights W_MSA (symbols: keep them).
  if (t == kMergedTile) return _("merged: T_out W_MSA");
  return std::to_string(t - 1) + " " + std::string(head_name(static_cast<HeadKind>(t - 1)));
}

void OutputView::upload(int t) {
  const Matrix& M = colours_[static_cast<size_t>(t)];
  std::vector<std::uint8_t> px;
  if (stretch_) {  // display only: one linear map per picture, the same for r, g and b
    Matrix c = M;
    const float lo = c.minCoeff(), hi = c.maxCoeff();
    if (hi > lo) c = (c.array() - lo) / (hi - lo);
    px = colours_rgb8(c);
  } else {
    px = colours_rgb8(M);
  }
  const auto& [cols, rows] = tex_grid_[static_cast<size_t>(t)];
  textures_[static_cast<size_t>(t)].set(cols, rows, 3, px, false);
}

void OutputView::update(HandMadeSession& hand_made) {
  const PatchGrid& g = hand_made.grid();
  const int N = g.N();
  generation_.update(hand_made.generation(), [&] {  // new image or settings: every picture is stale (the old ones stay, dimmed)
    done_.fill(false);
    requested_ = false;
    error_.clear();
    ms_ = 0;
    changed_at_ = Clock::now();
  });
  if (stretch_ != stretched_) {
    stretched_ = stretch_;
    for (int t = 0; t < kTiles; ++t)
      if (current(t)) upload(t);
  }
  auto install = [&](int t, Matrix colours) {
    colours_[static_cast<size_t>(t)] = std::move(colours);
    tex_grid_[static_cast<size_t>(t)] = {g.cols, g.rows};
    done_[static_cast<size_t>(t)] = true;
    upload(t);
  };
  try {
    if (!current(kInputTile)) install(kInputTile, hand_made.tokens().middleCols(TokenLayout::kColour, 3));
    if (N > kAutoTokens && !requested_) return;
    // While a slider is dragged at large N, keep the old pictures until the settings rest.
    if (N > kDebounceTokens && shown_any_ && ms_since(changed_at_) < 300) return;
    // A few heads per frame, so the window stays responsive; everything at once the first time
    // (and in one-shot renders).
    const auto t0 = Clock::now();
    const double budget = shown_any_ || requested_ ? 250.0 : 1e12;
    for (int h = 0; h < kHeadCount && ms_since(t0) < budget; ++h) {
      if (current(1 + h)) continue;
      const auto th = Clock::now();
      install(1 + h, hand_made.output(h));  // T_out = A V, N × 3 (eq. 26.21)
      ms_ += ms_since(th);
      ms_per_entry_ = ms_since(th) / (static_cast<double>(N) * N);
    }
    bool heads = true;
    for (int h = 0; h < kHeadCount; ++h) heads = heads && current(1 + h);
    if (heads && !current(kMergedTile)) {
      // Eqs. 26.27-26.28 on the heads' outputs just read: [T_out^1 ... T_out^k] W_MSA. The same
      // numbers as hand_made.merged_output(), without running every head's N² pass a second time.
      std::vector<Matrix> outs(colours_.begin() + 1, colours_.begin() + 1 + kHeadCount);
      install(kMergedTile, merge_heads(outs, hand_made.setup().W_MSA));
      shown_any_ = true;
    }
  } catch (const Error& e) {
    error_ = e.what();
  }
}

void OutputView::draw_contents(AppState& state, HandMadeSession& hand_made) {
  // Pictures still to make (spread over frames, or waiting for a slider to rest): come back at once.
  if (std::any_of(done_.begin(), done_.end(), [](bool d) { return !d; }) && (requested_ || hand_made.grid().N() <= kAutoTokens))
    state.commands.redraw();
  draw_controls(state);
  update(hand_made);
  if (!error_.empty()) {
    text_wrapped("%s", error_.c_str());
    return;
  }
  bool all = true;
  for (int t = 0; t < kTiles; ++t) all = all && current(t);
  draw_request(state, hand_made.grid().N(), all);
  const int sel = hand_made_query(state, hand_made.grid());
  draw_tile_tooltip(hand_made.grid(), draw_tiles(state, hand_made, sel));
  draw_numbers(hand_made, sel, all);
}

// The text, the temperature and the display-only stretch.
void OutputView::draw_controls(AppState& state) {
  // TRANSLATORS: t_out_i is output token i, a_ij the weights, v_j the values, T_out = A V the outputs as a matrix product
  // (A the attention matrix, V the values), W_MSA the heads' merging weights. Keep the symbols and equation numbers.
  text_wrapped("%s", _("Each picture paints patch i with an output token. For a head, t_out_i = sum over j of a_ij v_j "
                       "(eq. 26.21, T_out = A V), and v_j is patch j's mean colour, so t_out_i is the colour of the whole "
                       "image averaged with query i's weights. The merged picture concatenates the heads (eq. 26.27) and "
                       "multiplies by W_MSA (eq. 26.28), here the average of the heads."));
  setting_widget(state, "temperature", {.scope = "output", .width_em = 12, .help = false});
  // TRANSLATORS: the temperature's help. "Controls" is the panel's name (translate it as the View menu does); A is the
  // attention matrix.
  help_marker(_("The same setting as in Controls. At 1 a row of A is nearly flat, so each output is close to the image's "
                "average colour; lower it and every patch takes the colour of the patches it attends to most."));
  ImGui::SameLine();
  if (ImGui::SmallButton("tau = 0.05")) state.attention.temperature = 0.05f;  // i18n: English (a formula)
  ImGui::SameLine();
  if (ImGui::SmallButton("tau = 1")) state.attention.temperature = 1.0f;  // i18n: English (a formula)
  ImGui::SameLine();
  ImGui::Checkbox(_("stretch contrast"), &stretch_);
  // TRANSLATORS: the help of "stretch contrast"; r, g and b are the colour channels.
  help_marker(_("Display only: spreads each picture's darkest to brightest value over the full range (one linear map per "
                "picture, the same for r, g and b), so small differences between outputs become visible. The numbers "
                "below are never stretched."));
}

// Above kAutoTokens: the button that asks for T_out, with an estimate; the flat rows' hint.
void OutputView::draw_request(AppState& state, int N, bool all) {
  if (N > kAutoTokens && !requested_ && !all) {
    const double n2 = static_cast<double>(N) * N;
    // TRANSLATORS: %d is the number of tokens N (a large number); T_out are a head's output tokens.
    text_wrapped(tr_n("%d tokens: each head's T_out needs N^2 = %s weights, so it is computed only when asked.",
                      "%d tokens: each head's T_out needs N^2 = %s weights, so it is computed only when asked.",
                      N),
                 N, format_number(n2, 4).c_str());
    if (ms_per_entry_ > 0)
      // TRANSLATORS: %.0f is a time in seconds ("s"), %d the number of heads.
      ImGui::TextDisabled(_("Estimate from the last run: about %.0f s for the %d heads."), ms_per_entry_ * n2 * kHeadCount / 1000.0,
                          kHeadCount);
    else
      ImGui::TextDisabled("%s",
                          // TRANSLATORS: llvmpipe is the name of a software OpenGL renderer.
                          _("On a software renderer (llvmpipe) this can take minutes; the heads are computed one at a time."));
    if (ImGui::Button(_("compute the output tokens"))) requested_ = true;
    record_widget("output_compute");
  }
  if (state.attention.temperature >= 0.5f && !stretch_ && all) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    // TRANSLATORS: A is the attention matrix, tau the temperature.
    text_wrapped("%s", _("At this temperature the rows of A are nearly flat: every output is close to the image's mean "
                         "colour. Lower tau, or stretch the contrast, to see the differences."));
    ImGui::PopStyleColor();
  }
}

// The pictures, as many per line as fit, the query outlined; a click makes a patch the query.
OutputView::Hovered OutputView::draw_tiles(AppState& state, HandMadeSession& hand_made, int sel) {
  const PatchGrid& g = hand_made.grid();
  const int N = g.N();
  const ImGuiStyle& st = ImGui::GetStyle();
  const float avail = ImGui::GetContentRegionAvail().x;
  const float min_tile = ui_px(150);
  const int per_line = std::clamp(static_cast<int>((avail + st.ItemSpacing.x) / (min_tile + st.ItemSpacing.x)), 1, 4);
  float tile_w = std::floor((avail - st.ItemSpacing.x * static_cast<float>(per_line - 1)) / static_cast<float>(per_line));
  const float aspect = static_cast<float>(g.rows * g.K) / static_cast<float>(g.cols * g.K);
  float tile_h = std::floor(tile_w * aspect);
  // Leave room for the numbers below when the window is short (the pictures keep their aspect).
  const int lines_of_tiles = (kTiles + per_line - 1) / per_line;
  const float room = (ImGui::GetContentRegionAvail().y - ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(13 + lines_of_tiles)) /
                     static_cast<float>(lines_of_tiles);
  if (tile_h > room) {
    tile_h = std::floor(std::max(room, 64.0f));
    tile_w = std::floor(tile_h / aspect);
  }
  Hovered hovered;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float cw = tile_w / static_cast<float>(g.cols), ch = tile_h / static_cast<float>(g.rows);
  for (int t = 0; t < kTiles; ++t) {
    if (t % per_line) ImGui::SameLine();
    ImGui::BeginGroup();
    const std::string label = tile_label(t);
    ImGui::TextUnformatted(label.c_str());
    if (t > kInputTile && t < kMergedTile && ImGui::IsItemHovered())
      // TRANSLATORS: %d is the head's number; T_out = A V: output tokens = attention matrix times values.
      ImGui::SetTooltip(_("head %d: T_out = A V (eq. 26.21)"), t - 1);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const bool clicked = ImGui::InvisibleButton(("tile" + std::to_string(t)).c_str(), ImVec2(tile_w, tile_h));
    if (t == 1) record_widget("output_head0");
    const bool fresh = current(t);
    const auto& tex = textures_[static_cast<size_t>(t)];
    if (tex.id())
      dl->AddImage(tex.im(), p, ImVec2(p.x + tile_w, p.y + tile_h), ImVec2(0, 0), ImVec2(1, 1),
                   fresh ? IM_COL32_WHITE : IM_COL32(255, 255, 255, 90));
    else
      dl->AddRectFilled(p, ImVec2(p.x + tile_w, p.y + tile_h), IM_COL32(40, 40, 44, 255));
    if (fresh) {
      const float x0 = p.x + static_cast<float>(g.col_of(sel)) * cw, y0 = p.y + static_cast<float>(g.row_of(sel)) * ch;
      dl->AddRect(ImVec2(x0 - 1, y0 - 1), ImVec2(x0 + cw + 1, y0 + ch + 1), IM_COL32(0, 255, 255, 255), 0, 0, 2.0f);
    } else {
      dl->AddText(ImVec2(p.x + 4, p.y + 4), IM_COL32(255, 255, 255, 255),
                  N > kAutoTokens && !requested_ ? _("not computed") : _("computing ..."));
    }
    if (t == 1 + state.hand_made.head.head)
      dl->AddRect(ImVec2(p.x - 2, p.y - 2), ImVec2(p.x + tile_w + 2, p.y + tile_h + 2), IM_COL32(255, 255, 255, 200), 0, 0, 1.0f);
    if (ImGui::IsItemHovered() && fresh) {
      const ImVec2 m = ImGui::GetIO().MousePos;
      const int c = std::clamp(static_cast<int>((m.x - p.x) / cw), 0, g.cols - 1);
      const int r = std::clamp(static_cast<int>((m.y - p.y) / ch), 0, g.rows - 1);
      hovered = {t, g.index(c, r)};
      if (clicked) {
        state.hand_made.cell = Cell{c, r};
        state.hand_made.query_pinned = true;
      }
    }
    ImGui::EndGroup();
  }
  return hovered;
}

// The hovered patch's colour in the hovered picture.
void OutputView::draw_tile_tooltip(const PatchGrid& g, Hovered hovered) const {
  if (hovered.tile < 0) return;
  const Matrix& M = colours_[static_cast<size_t>(hovered.tile)];
  ImGui::BeginTooltip();
  ImGui::Text("%s", tile_label(hovered.tile).c_str());
  // TRANSLATORS: i is the patch's token index; col and row its column and row in the grid.
  ImGui::Text(_("patch i = %d (col %d, row %d)"), hovered.token, g.col_of(hovered.token), g.row_of(hovered.token));
  ImGui::Text("%s = (%.4f, %.4f, %.4f)", hovered.tile == kInputTile ? "c_i" : "t_out_i",  // i18n: English (symbols)
              static_cast<double>(M(hovered.token, 0)),
              static_cast<double>(M(hovered.token, 1)), static_cast<double>(M(hovered.token, 2)));
  ImGui::TextDisabled("%s", _("click: read this patch's numbers below (and make it the query)"));
  ImGui::EndTooltip();
}

// The numbers of the selected patch: its output token in every picture.
void OutputView::draw_numbers(HandMadeSession& hand_made, int sel, bool all) {
  const PatchGrid& g = hand_made.grid();
  const int N = g.N();
  ImGui::Spacing();
  // TRANSLATORS: i is the patch's token index; col and row its column and row in the grid.
  text_wrapped(_("Patch i = %d (col %d, row %d), the query: its output token in every picture"), sel, g.col_of(sel),
               g.row_of(sel));
  const auto& empty = hand_made.latest_rows(sel).empty;
  if (ImGui::BeginTable("tout", 6, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) {
    ImGui::TableSetupColumn("");
    // TRANSLATORS: a table column: a colour swatch.
    ImGui::TableSetupColumn(_("colour"));
    ImGui::TableSetupColumn("r");
    ImGui::TableSetupColumn("g");
    ImGui::TableSetupColumn("b");
    // TRANSLATORS: a table column: a remark on the row.
    ImGui::TableSetupColumn(_("note"));
    ImGui::TableHeadersRow();
    const bool have_input = current(kInputTile);
    for (int t = 0; t < kTiles; ++t) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      // TRANSLATORS: a table's row: the input token's mean colour c_i (a symbol).
      ImGui::TextUnformatted(t == kInputTile ? _("input c_i") : tile_label(t).c_str());
      if (!current(t)) {
        ImGui::TableNextColumn();
        ImGui::TextDisabled("-");
        continue;
      }
      const RowVector v = colours_[static_cast<size_t>(t)].row(sel);
      ImGui::TableNextColumn();
      const ImVec4 col(std::clamp(v[0], 0.0f, 1.0f), std::clamp(v[1], 0.0f, 1.0f), std::clamp(v[2], 0.0f, 1.0f), 1.0f);
      ImGui::ColorButton(("##sw" + std::to_string(t)).c_str(), col, ImGuiColorEditFlags_NoTooltip,
                         ImVec2(ImGui::GetFontSize() * 2.5f, ImGui::GetFontSize()));
      for (int k = 0; k < 3; ++k) {
        ImGui::TableNextColumn();
        ImGui::Text("%.4f", static_cast<double>(v[k]));
      }
      ImGui::TableNextColumn();
      if (t > kInputTile && t < kMergedTile && empty[static_cast<size_t>(t - 1)])
        // TRANSLATORS: t_out is the output token.
        ImGui::TextUnformatted(_("no key left for this query: t_out = 0"));
      else if (t == kMergedTile && std::all_of(empty.begin(), empty.end(), [](bool e) { return e; }))
        ImGui::TextUnformatted(_("no head has a key for this query: 0"));
      else if (t != kInputTile && have_input)
        ImGui::Text("|t_out - c_i| = %.4f",  // i18n: English (a formula)
                    static_cast<double>((v - colours_[kInputTile].row(sel)).norm()));
    }
    ImGui::EndTable();
  }
  if (all)
    // TRANSLATORS: %d tokens (a count); %s is the engine that computed them (a name); ms = milliseconds; %d heads.
    ImGui::TextDisabled(tr_n("%d tokens; outputs computed once per change of image or settings (%s, %.0f ms for the %d heads).",
                             "%d tokens; outputs computed once per change of image or settings (%s, %.0f ms for the %d heads).",
                             N),
                        N,
                        hand_made.short_name().c_str(), ms_, kHeadCount);
}

}  // namespace

std::unique_ptr<TeachingView> make_output_view() { return std::make_unique<OutputView>(); }

}  // namespace attnlab::app
