// Tokenization (fig. 26.2, section 26.9.1): the patch grid over the photo, the query patch
// enlarged and unrolled into its 3K² raw values, and the token row X_i = [T_i | P_i] it becomes,
// part by part (TokenLayout). Tokenizing is a convolution with kernel = stride = K (eq. 26.32):
// each row of W_tokenize is one K×K×3 filter, shown at the bottom.
#include "app/gui/chapter/teaching_view.hpp"
#include "app/gui/state/memo.hpp"
#include "core/base/translate.hpp"

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

std::uint8_t to8(float x) { return static_cast<std::uint8_t>(std::lround(std::clamp(x, 0.0f, 1.0f) * 255.0f)); }

std::string numbers(const float* v, int n) {
  std::string s;
  char buf[32];
  for (int c = 0; c < n; ++c) {
    std::snprintf(buf, sizeof buf, "%s%.3f", c ? ", " : "", static_cast<double>(v[c]));
    s += buf;
  }
  return s;
}

// Values as bars up (positive) and down (negative) from a zero line, at the cursor; hovering
// a bar shows its index and value.
void signed_bars(const float* v, int n) {
  float r = 1e-6f;
  for (int c = 0; c < n; ++c) r = std::max(r, std::abs(v[c]));
  const float bw = std::clamp((ImGui::GetContentRegionAvail().x - 4.0f) / static_cast<float>(n), 3.0f, 14.0f);
  const float h = 2.2f * ImGui::GetTextLineHeight();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("bars", ImVec2(bw * static_cast<float>(n), h));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float mid = p.y + h * 0.5f;
  dl->AddRectFilled(p, ImVec2(p.x + bw * static_cast<float>(n), p.y + h), ImGui::GetColorU32(ImGuiCol_FrameBg));
  int hovered = -1;
  if (ImGui::IsItemHovered()) hovered = std::clamp(static_cast<int>((ImGui::GetIO().MousePos.x - p.x) / bw), 0, n - 1);
  for (int c = 0; c < n; ++c) {
    const float x = p.x + bw * static_cast<float>(c);
    const float y = mid - (h * 0.5f - 1.0f) * v[c] / r;
    const ImU32 col = c == hovered ? IM_COL32(255, 240, 160, 255) : v[c] >= 0 ? IM_COL32(230, 160, 40, 255) : IM_COL32(90, 160, 240, 255);
    dl->AddRectFilled(ImVec2(x + 0.5f, std::min(y, mid)), ImVec2(x + bw - 0.5f, std::max(y, mid)), col);
  }
  dl->AddLine(ImVec2(p.x, mid), ImVec2(p.x + bw * static_cast<float>(n), mid), IM_COL32(200, 200, 200, 120));
  if (hovered >= 0)
    // TRANSLATORS: the index and value of one number of a token's part; "scale" is the bars' range, plus or minus %.3g.
    ImGui::SetTooltip(_("value %d of this part: %.4f (scale +-%.3g)"), hovered, static_cast<double>(v[hovered]),
                      static_cast<double>(r));
}

// A wrapped note in the disabled text colour.
void note(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  text_wrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

class TokenizationView final : public TeachingView {
 public:
  TokenizationView()
      : TeachingView({"tokenization",
            // TRANSLATORS: a view's window title (and its item in the Chapter menu): cutting the photo into tokens.
            N_("Tokenization"),
            // TRANSLATORS: where the view's idea is in the book: figure 26.2, section 26.9.1. Keep the numbers.
            N_("fig. 26.2, section 26.9.1"),
            // TRANSLATORS: the guided tour's text for the tokenization view. N is the number of tokens, K the
            // patch size in pixels (K x K patches, 3K^2 numbers each). Keep the symbols and the numbers.
            N_("Before attention, the photo becomes N tokens: it is cut into K x K patches, each patch is unrolled into "
               "3K^2 numbers, and a linear map turns those numbers into a short token vector (fig. 26.2). Applying the "
               "same map to every patch is a convolution whose kernel and stride are both K (eq. 26.32). Click a patch "
               "to see its numbers.")}) {}

  void draw_contents(AppState& state, HandMadeSession& hand_made) override {
    refresh(hand_made, hand_made_query(state, hand_made.grid()));
    const PatchGrid& g = hand_made.grid();
    const int i = i_;
    const int K = g.K;
    // TRANSLATORS: "%d x %d" is the grid's columns x rows; K the patch size in pixels; N the number of tokens. %s is
    // ", the last row/column padded with 0" or ", the remainder cropped".
    text_wrapped(_("The photo is cut into a %d x %d grid of K x K patches (K = %d pixels%s): N = %d tokens, numbered "
                   "row by row. Click a patch to make it the query."),
                 g.cols, g.rows, K,
                 // TRANSLATORS: inserted into "The photo is cut into ...": how the image's edge is handled.
                 g.edge == EdgeMode::Pad ? _(", the last row/column padded with 0") : _(", the remainder cropped"), g.N());

    // --- the grid, the enlarged patch and its unrolled pixels, side by side
    const float avail = ImGui::GetContentRegionAvail().x;
    const float box = std::clamp(avail * 0.38f, 120.0f, 420.0f);
    grid_picture(state, hand_made, box);
    ImGui::SameLine();
    ImGui::BeginGroup();
    const bool padded = (g.col_of(i) + 1) * K > g.image_width || (g.row_of(i) + 1) * K > g.image_height;
    // TRANSLATORS: the patch's token index and (column,row), then its pixels' x and y ranges; the last %s is "" or
    // " (past the image edge: 0)".
    ImGui::Text(_("patch %d = (%d,%d): pixels x %d..%d, y %d..%d%s"), i, g.col_of(i), g.row_of(i), g.col_of(i) * K,
                g.col_of(i) * K + K - 1, g.row_of(i) * K, g.row_of(i) * K + K - 1, padded ? _(" (past the image edge: 0)") : "");
    const float side = std::min(box * 0.62f, std::max(avail - box - 30.0f, 60.0f) * 0.45f);
    ImGui::Image(patch_tex_.im(), ImVec2(side, side));
    ImGui::SameLine();
    ImGui::BeginGroup();
    {  // one text, drawn a line at a time as two items
      // TRANSLATORS: a caption in two short lines (keep the line break): the patch's pixels unrolled, one pixel row per
      // line; r g b are the colour channels.
      const std::string unrolled = _("unrolled: each line is one\npixel row, values r g b r g b ...");
      for (size_t at = 0; at <= unrolled.size();) {
        const size_t end = std::min(unrolled.find('\n', at), unrolled.size());
        ImGui::TextDisabled("%s", unrolled.substr(at, end - at).c_str());
        at = end + 1;
      }
    }
    const float strip_w = std::max(std::min(avail - box - side - 40.0f, side * 3.0f), 40.0f);
    ImGui::Image(strip_tex_.im(), ImVec2(strip_w, side * std::min(1.0f, strip_w / (3.0f * side)) ));
    ImGui::EndGroup();
    ImGui::EndGroup();

    // --- the raw token
    ImGui::Separator();
    const int L = static_cast<int>(raw_.size());
    // TRANSLATORS: x_i is the raw token of patch i; K the patch size in pixels.
    text_wrapped(_("Raw token x_i = the patch's pixels vectorized: 3K^2 = 3 x %d x %d = %d values in [0,1]"), K, K, L);
    text_wrapped("x_i = (%s%s)", numbers(raw_.data(), std::min(L, 12)).c_str(), L > 12 ? ", ..." : "");
    // TRANSLATORS: r, g, b are the colour channels; (0,0) and (1,0) pixel positions (x,y).
    note(_("order: r, g, b of pixel (0,0), then of pixel (1,0), ... along the first pixel row, then the next row"));
    ImGui::PlotLines("##raw", raw_.data(), L, 0, nullptr, 0.0f, 1.0f, ImVec2(ImGui::GetContentRegionAvail().x, 3.0f * ImGui::GetTextLineHeight()));

    // --- the feature token
    ImGui::Separator();
    // TRANSLATORS: X = [T | P] is the head input: the tokens T and the positional codes P side by side; d the token's width.
    text_wrapped(_("The token: row i of the head input X = [T | P], %d values (d = %d for T, then %d for P)"),
                 static_cast<int>(x_.size()),
                TokenLayout::d, static_cast<int>(x_.size()) - TokenLayout::d);
    const ImGuiTableFlags tf = ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
    if (ImGui::BeginTable("token", 4, tf)) {
      // TRANSLATORS: a table column: a part of the token (its symbol: c, g, r, p).
      ImGui::TableSetupColumn(_("part"));
      // TRANSLATORS: a table column: the part's columns in the token (from..to).
      ImGui::TableSetupColumn(_("columns"));
      // TRANSLATORS: a table column: what the part holds (a description).
      ImGui::TableSetupColumn(_("what"));
      // TRANSLATORS: a table column: the part's numbers.
      ImGui::TableSetupColumn(_("values"), ImGuiTableColumnFlags_WidthStretch);
      ImGui::TableHeadersRow();
      for (const TokenPart& part : token_parts(static_cast<int>(x_.size()) - TokenLayout::d)) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::TextUnformatted(part.symbol.c_str());
        ImGui::TableSetColumnIndex(1);
        ImGui::Text("%d..%d", part.begin, part.begin + part.count - 1);
        ImGui::TableSetColumnIndex(2);
        ImGui::TextUnformatted(part.what.c_str());  // translated by token_parts()
        ImGui::TableSetColumnIndex(3);
        const float* v = x_.data() + part.begin;
        if (part.begin == TokenLayout::kColour && hand_made.settings().pos.mode != PosMode::Add) {
          const ImVec2 p = ImGui::GetCursorScreenPos();
          const float s = ImGui::GetTextLineHeight();
          ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + s, p.y + s), IM_COL32(to8(v[0]), to8(v[1]), to8(v[2]), 255));
          ImGui::Dummy(ImVec2(s, s));
          ImGui::SameLine();
        }
        if (part.count <= 4) {
          ImGui::TextUnformatted(numbers(v, part.count).c_str());
        } else {
          ImGui::PushID(part.begin);
          signed_bars(v, part.count);
          ImGui::PopID();
        }
      }
      ImGui::EndTable();
    }
    if (hand_made.settings().pos.mode == PosMode::Add) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.75f, 0.4f, 1.0f));
      // TRANSLATORS: 'add' is the positional mode of that name; d the token's width, W_pos the codes' weights, T the
      // tokens, P the positional codes, c the mean colour part.
      text_wrapped("%s", _("Positional mode 'add': the code has been mapped to d values by W_pos and added to T, so the T "
                           "parts above include P W_pos^T (and c is no longer exactly the mean colour)."));
      ImGui::PopStyleColor();
    } else {
      char d[32];
      std::snprintf(d, sizeof d, "%.2g", r_diff_);
      // i18n: English (the check's name and result go into the exported report's JSON, export.cpp)
      state.report.checks["tokenization: W_tokenize x_i from the raw pixels vs the engine's r"] =
          std::string("largest difference ") + d + " (token " + std::to_string(i) + ", " + hand_made.name() + ")";
      // TRANSLATORS: r and p are parts of the token; W_tokenize the tokenizing weights, x_i the raw token, X the head input,
      // q and k the queries and keys; "concat" is the positional mode of that name.
      note(_("The r part above is W_tokenize x_i, worked here from the raw pixels. The p part is in X for every positional "
             "mode: the position heads read it, and in concat mode it is appended to every q and k."));
    }

    // --- the convolution
    ImGui::Separator();
    // TRANSLATORS: W_tokenize is the tokenizing weights' matrix; K the patch size in pixels; C_in and C_out the
    // convolution's input and output channels; r, c, c/|c| and g are parts of the token. Keep the symbols and the numbers.
    text_wrapped(_("Tokenizing is a convolution (eq. 26.32, section 26.9.1): each of the %d rows of W_tokenize, reshaped to "
                   "K x K x 3, is one filter with kernel size K, and the filter moves K pixels at a time (stride = K), so "
                   "the windows tile the image without overlap and output position (col,row) is exactly the token of "
                   "that patch. C_in = 3 colour channels, C_out = %d channels of r. The hand-made parts c, c/|c| and g "
                   "are fixed functions of the same K x K window."),
                 TokenLayout::kRandomDims, TokenLayout::kRandomDims);
    // TRANSLATORS: %d filters (rows) of W_tokenize, the tokenizing weights; K is the patch size in pixels.
    note(text_format(_("The %d filters of W_tokenize, each K x K x 3 (grey = 0; more red, green or blue = a positive weight on "
                       "that channel):"),
                     TokenLayout::kRandomDims));
    const float fs = std::clamp((ImGui::GetContentRegionAvail().x - 8.0f * 15) / 16.0f, 16.0f, 64.0f);
    for (int n = 0; n < TokenLayout::kRandomDims; ++n) {
      if (n) ImGui::SameLine();
      const float u0 = static_cast<float>(n) / TokenLayout::kRandomDims, u1 = static_cast<float>(n + 1) / TokenLayout::kRandomDims;
      ImGui::Image(filters_tex_.last()->im(), ImVec2(fs, fs), ImVec2(u0, 0), ImVec2(u1, 1));
      if (ImGui::IsItemHovered())
        // TRANSLATORS: r_%d is one number of the token's r part: a row of W_tokenize times the raw token x_i.
        ImGui::SetTooltip(_("filter %d: r_%d = (row %d of W_tokenize) . x_i = %.4f"), n, n, n,
                          static_cast<double>(x_[static_cast<size_t>(TokenLayout::kRandom + n)]));
    }
  }

 private:
  // Rebuilds the query's numbers and textures when the image, settings or query change.
  void refresh(HandMadeSession& hand_made, int query) {
    const PatchGrid& g = hand_made.grid();
    token_.update(std::tuple{hand_made.generation(), query}, [&] {
      i_ = query;
      const Image& img = hand_made.image();
      const RowVector raw = raw_token(img, g, i_);
      raw_.assign(raw.data(), raw.data() + raw.size());
      const Matrix& X = hand_made.tokens();
      x_.assign(X.row(i_).data(), X.row(i_).data() + X.cols());
      const RowVector r = project_patch(raw, hand_made.setup().W_tokenize);
      r_diff_ = 0;
      for (int n = 0; n < TokenLayout::kRandomDims; ++n)
        r_diff_ = std::max(r_diff_, std::abs(static_cast<double>(r[n]) - static_cast<double>(x_[static_cast<size_t>(TokenLayout::kRandom + n)])));
      const int K = g.K;
      std::vector<std::uint8_t> px(static_cast<size_t>(K) * K * 3), strip(static_cast<size_t>(K) * 3 * K * 3, 0);
      for (size_t n = 0; n < px.size(); ++n) px[n] = to8(raw_[n]);
      patch_tex_.set(K, K, 3, px, false);
      // The unrolled strip: value n of pixel row y sits at (n, y), shown in its own channel's colour.
      for (int y = 0; y < K; ++y)
        for (int n = 0; n < 3 * K; ++n) {
          const size_t at = (static_cast<size_t>(y) * 3 * K + static_cast<size_t>(n)) * 3;
          strip[at + static_cast<size_t>(n % 3)] = to8(raw_[static_cast<size_t>(y) * 3 * K + static_cast<size_t>(n)]);
        }
      strip_tex_.set(3 * K, K, 3, strip, false);
    });
    filters_tex_.get(hand_made.generation(), [&](GuiTexture& filters) {
      const Matrix& W = hand_made.setup().W_tokenize;  // R × 3K²
      const int K = g.K, R = static_cast<int>(W.rows());
      const float mx = std::max(W.cwiseAbs().maxCoeff(), 1e-12f);
      std::vector<std::uint8_t> px(static_cast<size_t>(R) * K * K * 3);
      for (int n = 0; n < R; ++n)
        for (int y = 0; y < K; ++y)
          for (int x = 0; x < K; ++x)
            for (int c = 0; c < 3; ++c)
              px[((static_cast<size_t>(y) * R * K) + static_cast<size_t>(n) * K + static_cast<size_t>(x)) * 3 + static_cast<size_t>(c)] =
                  to8(0.5f + 0.5f * W(n, (y * K + x) * 3 + c) / mx);
      filters.set(R * K, K, 3, px, false);
    });
  }

  // The photo in a `box` square with the patch grid and the query outlined; click picks a patch.
  void grid_picture(AppState& state, HandMadeSession& hand_made, float box) {
    const PatchGrid& g = hand_made.grid();
    const float gw = static_cast<float>(g.cols * g.K), gh = static_cast<float>(g.rows * g.K);
    const float scale = std::min(box / gw, box / gh);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const bool clicked = ImGui::InvisibleButton("grid", ImVec2(gw * scale, gh * scale));
    const bool hovered = ImGui::IsItemHovered();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    auto at = [&](float x, float y) { return ImVec2(p.x + x * scale, p.y + y * scale); };
    dl->AddRectFilled(at(0, 0), at(gw, gh), IM_COL32(0, 0, 0, 255));
    const Image& img = hand_made.image();
    const float W = static_cast<float>(img.width), H = static_cast<float>(img.height);
    // In Crop mode only the grid's part of the photo is shown; in Pad mode the padding stays black.
    const float sx = std::min(gw, W), sy = std::min(gh, H);
    dl->AddImage(hand_made.photo(), at(0, 0), at(sx, sy), ImVec2(0, 0), ImVec2(sx / W, sy / H));
    const float cell = static_cast<float>(g.K) * scale;
    if (cell >= 4.0f) {
      const ImU32 line = IM_COL32(255, 255, 255, cell >= 10.0f ? 90 : 45);
      for (int c = 1; c < g.cols; ++c) dl->AddLine(at(static_cast<float>(c * g.K), 0), at(static_cast<float>(c * g.K), gh), line);
      for (int r = 1; r < g.rows; ++r) dl->AddLine(at(0, static_cast<float>(r * g.K)), at(gw, static_cast<float>(r * g.K)), line);
    }
    auto outline = [&](int col, int row, ImU32 colour) {
      const ImVec2 a = at(static_cast<float>(col * g.K), static_cast<float>(row * g.K));
      const ImVec2 b = at(static_cast<float>((col + 1) * g.K), static_cast<float>((row + 1) * g.K));
      dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), colour, 0, 0, 2.0f);
    };
    outline(g.col_of(i_), g.row_of(i_), IM_COL32(0, 255, 255, 255));
    if (hovered) {
      const ImVec2 m = ImGui::GetIO().MousePos;
      const int col = std::clamp(static_cast<int>((m.x - p.x) / cell), 0, g.cols - 1);
      const int row = std::clamp(static_cast<int>((m.y - p.y) / cell), 0, g.rows - 1);
      outline(col, row, IM_COL32(255, 255, 255, 160));
      // TRANSLATORS: the patch's (column,row) and its token index.
      ImGui::SetTooltip(_("patch (%d,%d), token %d"), col, row, g.index(col, row));
      if (clicked) {
        state.hand_made.cell = Cell{col, row};
        state.hand_made.query_pinned = true;
      }
    }
  }

  // The query's numbers and pictures (the members below); key: generation, query.
  KeyMemo<std::tuple<unsigned, int>> token_;
  int i_ = 0;
  std::vector<float> raw_, x_;
  double r_diff_ = 0;
  GuiTexture patch_tex_, strip_tex_;
  Memo<unsigned, GuiTexture> filters_tex_;  // W_tokenize's rows as K × K pictures; key: generation
};

}  // namespace

std::unique_ptr<TeachingView> make_tokenization_view() { return std::make_unique<TokenizationView>(); }

}  // namespace attnlab::app
