// Attention matrix (figs. 26.18, 26.21): A of the main head as an image pooled on the GPU (mean or
// max of blocks of weights, never N² values in memory), with the query's
// row outlined and the masked cells black, next to the matrices of a dense fc layer and of a
// k×k convolution over the same tokens in raster order.
#include "app/gui/chapter/view_matrix.hpp"

#include "core/base/translate.hpp"

namespace attnlab::app {
namespace matrix_view {
namespace {

// Patch p of the photo as a small image (for the hover tooltips).
void patch_image(HandMadeSession& hand_made, int p, float size) {
  const PatchGrid& g = hand_made.grid();
  const float W = static_cast<float>(hand_made.image().width), H = static_cast<float>(hand_made.image().height);
  const float x0 = static_cast<float>(g.col_of(p) * g.K), y0 = static_cast<float>(g.row_of(p) * g.K);
  ImGui::Image(hand_made.photo(), ImVec2(size, size), ImVec2(x0 / W, y0 / H),
               ImVec2((x0 + static_cast<float>(g.K)) / W, (y0 + static_cast<float>(g.K)) / H));
}

// Outline of the query's row (and a marker on the left) over a square image at p.
void outline_row(ImDrawList* dl, ImVec2 p, float side, const BlockImage& img, int query) {
  const float px = side / static_cast<float>(img.side);
  const float y0 = p.y + static_cast<float>(query / img.block) * px;
  const float y1 = y0 + std::max(px, 1.0f);
  dl->AddRect(ImVec2(p.x - 1, y0 - 1), ImVec2(p.x + side + 1, y1 + 1), IM_COL32(0, 255, 255, 255), 0, 0, 2.0f);
  const float m = std::max(5.0f, px);
  const float yc = (y0 + y1) * 0.5f;
  dl->AddTriangleFilled(ImVec2(p.x - 3 - m, yc - m * 0.6f), ImVec2(p.x - 3, yc), ImVec2(p.x - 3 - m, yc + m * 0.6f),
                        IM_COL32(0, 255, 255, 255));
}

// The matrix cell (i, j) under the mouse over a square image of `side` pixels at p.
bool cell_under_mouse(ImVec2 p, float side, int N, int& i, int& j) {
  const ImVec2 m = ImGui::GetIO().MousePos;
  const float fx = (m.x - p.x) / side, fy = (m.y - p.y) / side;
  if (!(fx >= 0 && fx < 1 && fy >= 0 && fy < 1)) return false;
  i = std::clamp(static_cast<int>(fy * static_cast<float>(N)), 0, N - 1);
  j = std::clamp(static_cast<int>(fx * static_cast<float>(N)), 0, N - 1);
  return true;
}

// A pooling's name as the view shows it: pooling_name()'s word, translated.
const char* pooling_text(Pooling pooling) {
  // TRANSLATORS: how a block of weights is reduced to one pixel: their largest ("max") or their average ("mean").
  return pooling == Pooling::Max ? tr_c("pooling", "max") : tr_c("pooling", "mean");
}

// A combo box after the previous control, `width_em` font sizes wide, recorded as `widget`,
// with its help marker.
void combo_with_help(const char* label, int* value, const char* items, float width_em, const char* widget, const char* help) {
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * width_em);
  ImGui::Combo(label, value, items);
  record_widget(widget);
  help_marker(help);
}

}  // namespace

void MatrixView::draw_attention(AppState& state, HandMadeSession& hand_made, float side) {
  const PatchGrid& g = hand_made.grid();
  const int N = g.N();
  const int head = std::clamp(state.hand_made.head.head, 0, kHeadCount - 1);
  ImGui::BeginGroup();
  // TRANSLATORS: the picture's caption: A is the attention matrix; %d the head's number, %s its name (an English identifier).
  ImGui::Text(_("A, head %d %s"), head, std::string(head_name(static_cast<HeadKind>(head))).c_str());
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (!a_.valid()) {
    ImGui::Dummy(ImVec2(side, side));
    dl->AddRectFilled(p, ImVec2(p.x + side, p.y + side), IM_COL32(40, 40, 44, 255));
    dl->AddRect(p, ImVec2(p.x + side, p.y + side), IM_COL32(120, 120, 120, 255));
    // TRANSLATORS: A is the attention matrix (being computed; a percentage may follow).
    const std::string msg = !a_error_.empty() ? a_error_ : progress_text(_("computing A"));
    dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(p.x + 8, p.y + 8), ImGui::GetColorU32(ImGuiCol_Text),
                msg.c_str(), nullptr, side - 16);
    ImGui::EndGroup();
    return;
  }
  const BlockRange range = range_ == 1 ? BlockRange::EachRow : BlockRange::Whole;
  a_.upload(state.colormap, state.normalization, range);
  const BlockImage& img = a_.image;
  const bool clicked = ImGui::InvisibleButton("A", ImVec2(side, side));
  const bool hovered = ImGui::IsItemHovered();
  record_widget("matrix_A");
  dl->AddImage(a_.texture.im(), p, ImVec2(p.x + side, p.y + side), ImVec2(0, 0), ImVec2(1, 1),
               a_fresh_ ? IM_COL32_WHITE : IM_COL32(255, 255, 255, 110));
  dl->AddRect(ImVec2(p.x - 1, p.y - 1), ImVec2(p.x + side + 1, p.y + side + 1), IM_COL32(120, 120, 120, 255));
  if (a_fresh_ && img.N == N) outline_row(dl, p, side, img, hand_made_query(state, g));
  if (!a_fresh_)
    // TRANSLATORS: over the old picture while the new one is computed (a percentage may follow).
    dl->AddText(ImVec2(p.x + 8, p.y + 8), IM_COL32(255, 255, 255, 255), progress_text(_("updating")).c_str());

  int i = 0, j = 0;
  if (hovered && a_fresh_ && img.N == N && cell_under_mouse(p, side, N, i, j)) {
    const float px = side / static_cast<float>(img.side);
    const int r = i / img.block, c = j / img.block;
    dl->AddRect(ImVec2(p.x + static_cast<float>(c) * px, p.y + static_cast<float>(r) * px),
                ImVec2(p.x + static_cast<float>(c + 1) * px, p.y + static_cast<float>(r + 1) * px),
                IM_COL32(255, 255, 255, 255));
    // The exact a_ij from row i of A (one row pass for every head, kept while the mouse stays
    // on that row); the pixel itself is the pooled value of its block.
    const RowSet& hover = hover_.get(std::pair{hand_made.generation(), i}, [&] { return hand_made.rows_of(i); });
    const bool allowed = hand_made.setup().mask.allowed(i, j);
    ImGui::BeginTooltip();
    // TRANSLATORS: i is the query's token index; col and row its patch's column and row. The next line ("key   j = ...")
    // is aligned under this one.
    ImGui::Text(_("query i = %d, patch (col %d, row %d)"), i, g.col_of(i), g.row_of(i));
    // TRANSLATORS: j is the key's token index; the spaces align it under "query i = ...".
    ImGui::Text(_("key   j = %d, patch (col %d, row %d)"), j, g.col_of(j), g.row_of(j));
    const float thumb = ImGui::GetTextLineHeight() * 3;
    patch_image(hand_made, i, thumb);
    ImGui::SameLine();
    // TRANSLATORS: between the pictures of patch i (the query) and patch j (the key).
    ImGui::TextUnformatted(_("i attends to j:"));
    ImGui::SameLine();
    patch_image(hand_made, j, thumb);
    if (allowed)
      ImGui::Text("a_ij = %s", format_weight(hover.head(head)[static_cast<size_t>(j)]).c_str());  // i18n: English (a formula)
    else
      // TRANSLATORS: a_ij is the weight of key j for query i.
      ImGui::TextUnformatted(_("a_ij = 0 (masked: key j is hidden from query i)"));
    if (img.block > 1) {
      // TRANSLATORS: the block of A a pixel stands for (rows and columns from-to), then the pooling ("mean" or "max"),
      // its value, and "" or " (all masked)".
      ImGui::Text(_("this pixel: rows %d-%d x columns %d-%d, %s %s%s"), img.first(r), img.last(r) - 1, img.first(c),
                  img.last(c) - 1, pooling_text(static_cast<Pooling>(a_key_.pooling)),
                  format_weight(img.value(r, c)).c_str(), img.empty(r, c) ? _(" (all masked)") : "");
    }
    ImGui::TextDisabled("%s", _("click: make token i the query"));
    ImGui::EndTooltip();
    if (clicked) {
      state.hand_made.cell = Cell{g.col_of(i), g.row_of(i)};
      state.hand_made.query_pinned = true;
    }
  }
  ImGui::EndGroup();
}

void MatrixView::draw_structure(const char* id, const Picture& pic, HandMadeSession& hand_made, float side, bool conv,
                                int query) {
  const PatchGrid& g = hand_made.grid();
  const int N = g.N();
  ImGui::BeginGroup();
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + side);  // the label wraps within its picture's width
  if (conv && use_cnn_ && cnn_)
    // TRANSLATORS: a picture's caption: conv = the convolution, %dx%d its kernel size; conv1 is the ResNet's first
    // convolution (a name). %s is "sum of |w|" (w: the kernel's weights) or "channel %d from %d".
    text_wrapped(_("conv %dx%d: the ResNet's conv1, %s"), cnn_->stem.k, cnn_->stem.k,
                 cnn_out_ < 0 ? _("sum of |w|")
                              // TRANSLATORS: the output channel, then the input channel (r, g or b as 0, 1, 2) of a convolution.
                              : text_format(_("channel %d from %d"), cnn_out_, cnn_in_).c_str());
  else if (conv)
    // TRANSLATORS: a picture's caption: conv = a convolution with a %dx%d kernel; its matrix is a band, its weights shared.
    text_wrapped(_("conv %dx%d: banded, shared"), k_, k_);
  else
    // TRANSLATORS: a picture's caption: fc = a fully connected (dense) layer, its weights fixed.
    wrap_text(_("fc: dense, fixed"));
  ImGui::PopTextWrapPos();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImGui::InvisibleButton(id, ImVec2(side, side));
  const bool hovered = ImGui::IsItemHovered();
  const bool current = pic.valid() && pic.image.N == N;
  if (pic.valid() && pic.texture.id())
    dl->AddImage(pic.texture.im(), p, ImVec2(p.x + side, p.y + side), ImVec2(0, 0), ImVec2(1, 1),
                 current ? IM_COL32_WHITE : IM_COL32(255, 255, 255, 90));
  if (!current)
    dl->AddText(ImVec2(p.x + 6, p.y + 6), IM_COL32(255, 255, 255, 255),
                conv || fc_error_.empty() ? _("computing ...") : fc_error_.c_str());
  dl->AddRect(ImVec2(p.x - 1, p.y - 1), ImVec2(p.x + side + 1, p.y + side + 1), IM_COL32(120, 120, 120, 255));
  if (pic.valid() && pic.image.N == N) outline_row(dl, p, side, pic.image, query);
  int i = 0, j = 0;
  if (hovered && pic.valid() && pic.image.N == N && cell_under_mouse(p, side, N, i, j)) {
    ImGui::BeginTooltip();
    // TRANSLATORS: i and j are token indices; col and row a patch's column and row in the grid.
    ImGui::Text(_("output token i = %d (col %d, row %d), input token j = %d (col %d, row %d)"), i, g.col_of(i), g.row_of(i), j,
                g.col_of(j), g.row_of(j));
    if (conv) {
      const int kc = conv_k(), tap = conv_tap(g, kc, i, j);
      if (tap < 0)
        ImGui::TextUnformatted(_("0: patch j is outside the kernel window around patch i"));
      else
        // TRANSLATORS: a kernel tap is one weight of the convolution's kernel; row and col its offset from the centre.
        ImGui::Text(_("kernel tap (row %+d, col %+d): the same weight on every pair of tokens at this offset"), tap / kc - kc / 2,
                    tap % kc - kc / 2);
    } else {
      ImGui::Text(_("weight %.3f (a stand-in value): every pair of tokens has its own weight"),
                  static_cast<double>(fc_weight(i, j, kFcSeed)));
    }
    if (pic.image.block > 1) {
      const int r = i / pic.image.block, c = j / pic.image.block;
      // TRANSLATORS: a block of %d x %d matrix entries; the last %s is "" or ", all zero".
      ImGui::Text(_("this pixel averages %d x %d entries%s"), pic.image.last(r) - pic.image.first(r),
                  pic.image.last(c) - pic.image.first(c), pic.image.empty(r, c) ? _(", all zero") : "");
    }
    ImGui::EndTooltip();
  }
  ImGui::EndGroup();
}

void MatrixView::draw_properties(HandMadeSession& hand_made) {
  const PatchGrid& g = hand_made.grid();
  const long long N = g.N();
  const long long D = hand_made.tokens().cols();  // width of the head input X = [T | P]
  const Head& h = hand_made.setup().heads[static_cast<size_t>(std::clamp(a_key_.head, 0, kHeadCount - 1))];
  const long long head_params = h.W_q.size() + h.W_k.size() + h.W_v.size();
  const long long conv_nz = conv_nonzeros(g, conv_k());
  if (!ImGui::BeginTable("props", 4, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingStretchProp)) return;
  ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  // TRANSLATORS: a table column: the attention matrix A.
  ImGui::TableSetupColumn(_("attention A"), ImGuiTableColumnFlags_WidthStretch, 1.2f);
  // TRANSLATORS: a table column: fc = a fully connected (dense) layer (an abbreviation).
  ImGui::TableSetupColumn(_("fc"), ImGuiTableColumnFlags_WidthStretch, 1.0f);
  // TRANSLATORS: a table column: conv = a convolution (an abbreviation).
  ImGui::TableSetupColumn(_("conv"), ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableHeadersRow();
  auto row = [](const std::string& what, const std::string& a, const std::string& f, const std::string& c) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    text_wrapped("%s", what.c_str());
    for (const std::string* s : {&a, &f, &c}) {
      ImGui::TableNextColumn();
      text_wrapped("%s", s->c_str());
    }
  };
  const auto n = [](long long v) { return std::to_string(v); };
  // TRANSLATORS: a table's row: how many matrix entries can be non-zero. %lld is a count; N is the number of tokens,
  // k the convolution's kernel size.
  row(_("entries that can be non-zero"),
      // TRANSLATORS: %lld is a count of matrix entries, N^2 (N the number of tokens).
      text_format(_("%lld (N^2), minus the masked ones"), N * N), n(N * N) + " (N^2)",
      // TRANSLATORS: a count of matrix entries; k is the convolution's kernel size, N the number of tokens.
      text_format(_("%lld (about k^2 N)"), conv_nz));
  // TRANSLATORS: a table's row and its answers; Q and K are the queries and keys.
  row(_("changes with the image?"), _("yes: computed from Q and K of this input (eq. 26.20)"), _("no: learned once, fixed"),
      _("no: learned once, fixed"));
  // TRANSLATORS: a table's row: how many learned weights. D is the width of the head input X = [T | P] (tokens T and
  // positional codes P).
  row(text_format(_("learned numbers (D = %lld: width of the head input [T | P])"), D),
      // TRANSLATORS: %lld is a count; W_q, W_k, W_v are the head's query, key and value weights; A the attention matrix.
      text_format(_("%lld in W_q, W_k, W_v of this head; none in A itself"), head_params),
      // TRANSLATORS: %lld is a count; D the width, N the number of tokens. Keep the exercise's number.
      text_format(_("%lld (D^2 N^2, exercise 12.1)"), D * D * N * N),
      // TRANSLATORS: %lld is a count; k the kernel size, D the width.
      text_format(_("%lld (k^2 D^2, shared by all tokens)"), static_cast<long long>(conv_k()) * conv_k() * D * D));
  // TRANSLATORS: a table's row and its answers for A, fc and conv; k is the convolution's kernel size.
  row(_("which inputs reach token i"), _("every unmasked token"), _("every token"), _("only the k x k patches around it"));
  ImGui::EndTable();
}

void MatrixView::draw_contents(AppState& state, HandMadeSession& hand_made) {
  // A waiting for a slider to rest, or fc on its worker thread: come back at once.
  if (!a_fresh_) state.commands.redraw();
  const int query = hand_made_query(state, hand_made.grid());
  draw_controls(state);
  update_cnn(state, hand_made);
  update_attention(state, hand_made);
  draw_size_note(hand_made.grid());
  draw_matrices(state, hand_made, query);
  draw_notes(hand_made, query);
  draw_properties(hand_made);
}

// The head, the colour range, the pooling and the conv kernel's size.
void MatrixView::draw_controls(AppState& state) {
  setting_widget(state, "hand_made.head", {.scope = "matrix", .width_em = 11});
  // The combos' items, "\0"-separated (translated each frame: the language may change).
  // TRANSLATORS: the choices of the "colours" list: one colour scale for the whole matrix, or one for each row.
  const std::string ranges = std::string(_("whole matrix")) + '\0' + _("each row") + '\0';
  const std::string poolings = std::string(pooling_text(Pooling::Mean)) + '\0' + pooling_text(Pooling::Max) + '\0';
  // TRANSLATORS: a list's label: how the matrix's weights are turned into colours.
  combo_with_help(_("colours"), &range_, ranges.c_str(), 9, "matrix_range",
                  // TRANSLATORS: the help of "colours"; "whole matrix" and "each row" are its choices (translate them
                  // alike). A is the attention matrix.
                  _("whole matrix: one colour scale for all of A (the colour bar). each row: every query's row is stretched "
                    "between its own smallest and largest weight, as the attention map does; useful when a mask leaves some "
                    "rows with few keys and therefore large weights. The colormap and the normalization are the app's."));
  // TRANSLATORS: a list's label: how a block of weights becomes one pixel ("mean" or "max").
  combo_with_help(_("pooling"), &pooling_, poolings.c_str(), 5, "matrix_pooling",
                  // TRANSLATORS: the help of "pooling"; "mean" and "max" are its choices (translate them alike). A is the
                  // attention matrix, b the block's side, a_ij a weight.
                  _("When A has more rows than the picture has pixels, each pixel stands for a b x b block of weights: "
                    "mean shows their average (the true share of the block, so large blocks look dim), max the largest "
                    "weight in the block (a strong key stays visible however small the block's share). Masked weights count "
                    "as 0. With one weight per pixel both are a_ij itself."));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
  ImGui::BeginDisabled(use_cnn_ && cnn_);
  // TRANSLATORS: a slider: the convolution's kernel size, written k.
  if (ImGui::SliderInt(_("conv kernel k"), &k_, 1, 15, "%d", ImGuiSliderFlags_AlwaysClamp) && k_ % 2 == 0) ++k_;
  ImGui::EndDisabled();
  help_marker(_("Size of the convolution's window in patches (odd). Its matrix has a band of k rows of k entries."));
  // Fig. 26.21 with a real convolution: the ResNet the ViT views' CNN tab sets (cnn.model).
  ImGui::BeginDisabled(state.cnn_model.empty());
  // TRANSLATORS: a checkbox: draw the conv matrix from the ResNet's first convolution (conv1 is its name).
  ImGui::Checkbox(_("the ResNet's conv1"), &use_cnn_);
  record_widget("matrix_cnn_conv1");
  ImGui::EndDisabled();
  ImGui::SameLine();
  help_marker(state.cnn_model.empty()
                  // TRANSLATORS: "CNN" is the name of a tab of the ViT views (translate it as that tab does).
                  ? _("Set a ResNet in the ViT views' CNN tab (a random ResNet-18 or a checkpoint): its first convolution then "
                      "draws the conv matrix here instead of the stand-in kernel.")
                  // TRANSLATORS: conv1 is the ResNet's first convolution (a name); w are its kernel's weights.
                  : _("The conv matrix from the first convolution (conv1, its batch norm folded) of the CNN tab's ResNet, "
                      "applied with stride 1 over this grid of tokens: one (output, input) channel pair, or the sum of |w| "
                      "over all pairs. Its band is the kernel's size, whatever the weights: locality is in the structure."));
  if (use_cnn_ && cnn_) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
    // TRANSLATORS: a slider: the convolution's output channel; at its lowest it shows "all (sum |w|)": the sum of the
    // kernel weights' magnitudes over all channels.
    ImGui::SliderInt(_("out channel"), &cnn_out_, -1, cnn_->stem.out - 1, cnn_out_ < 0 ? _("all (sum |w|)") : "%d",
                     ImGuiSliderFlags_AlwaysClamp);
    if (cnn_out_ >= 0) {
      ImGui::SameLine();
      ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5);
      // TRANSLATORS: a slider: the convolution's input channel (0, 1, 2 = red, green, blue).
      ImGui::SliderInt(_("in (RGB)"), &cnn_in_, 0, cnn_->stem.in - 1, "%d", ImGuiSliderFlags_AlwaysClamp);
    }
  } else if (use_cnn_ && !cnn_loading_.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", _("loading the ResNet ..."));
    state.commands.redraw();
  } else if (use_cnn_ && !cnn_error_.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.45f, 1.0f), "%s", cnn_error_.c_str());
  }
}

// N, the matrices' size, and how they are reduced to the screen.
void MatrixView::draw_size_note(const PatchGrid& g) const {
  const int N = g.N();
  const long long NN = static_cast<long long>(N) * N;
  // TRANSLATORS: N is the number of tokens; the grid's columns x rows, the patch size in pixels, then N x N and its product.
  text_wrapped(_("N = %d tokens (%d x %d patches of %d px), so every matrix here is %d x %d = %lld entries."), N, g.cols, g.rows,
              g.K, N, N, NN);
  const int b = block_size(N, kMaxSide);
  if (b > 1)
    // TRANSLATORS: A is the attention matrix, fc the fully connected layer's, conv the convolution's. The %s is the
    // pooling: "mean" or "max" (as translated for the "pooling" list).
    text_wrapped(_("Too many entries for the screen: A and fc are reduced to %d x %d pixels, each the %s (A) or the "
                   "mean (fc) of a %d x %d block of entries; conv is reduced to the size it is drawn. A block is black "
                   "only when every entry in it is masked (or zero)."),
                 (N + b - 1) / b, (N + b - 1) / b, pooling_text(static_cast<Pooling>(pooling_)), b, b);
  else
    // TRANSLATORS: A is the attention matrix, fc the fully connected layer's matrix.
    ImGui::TextUnformatted(_("A and fc are shown exactly, one pixel per entry. Black = masked (weight exactly 0) or zero."));
}

// The three matrices: side by side when the window is wide, else A large with fc and conv
// stacked beside it; A's colour bar between them.
void MatrixView::draw_matrices(AppState& state, HandMadeSession& hand_made, int query) {
  const int N = hand_made.grid().N();
  const ImGuiStyle& st = ImGui::GetStyle();
  const float bar_w = ui_px(12) + ImGui::CalcTextSize("0.000000e-00").x;
  const float avail = ImGui::GetContentRegionAvail().x - 12.0f - 3 * st.ItemSpacing.x - bar_w - 8.0f;
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float by_height = ImGui::GetContentRegionAvail().y - line * 9;
  const bool wide = avail / 3.0f >= 360.0f;
  const float side = std::floor(std::clamp(std::min(wide ? avail / 3.0f : avail / 1.5f, by_height), 96.0f, 1024.0f));
  const float small = wide ? side : std::floor(std::max((side - line - st.ItemSpacing.y) / 2.0f, 48.0f));
  update_structures(hand_made, static_cast<int>(wide ? side : small));
  // Structure pictures: every non-zero block at least 40% up the colormap, zero blocks black.
  fc_.upload(state.colormap, Normalization::Absolute, BlockRange::Whole, 0.4f);
  conv_.upload(state.colormap, Normalization::Absolute, BlockRange::Whole, 0.4f);
  ImGui::Indent(12.0f);  // room for the query-row marker
  draw_attention(state, hand_made, side);
  ImGui::SameLine();
  draw_colour_bar(state, N, query, side, bar_w);
  ImGui::SameLine(0.0f, st.ItemSpacing.x + 8.0f);
  if (wide) {
    draw_structure("fc", fc_, hand_made, side, false, query);
    ImGui::SameLine(0.0f, st.ItemSpacing.x + 8.0f);
    draw_structure("conv", conv_, hand_made, side, true, query);
  } else {
    ImGui::BeginGroup();
    draw_structure("fc", fc_, hand_made, small, false, query);
    draw_structure("conv", conv_, hand_made, small, true, query);
    ImGui::EndGroup();
  }
  ImGui::Unindent(12.0f);
}

// The colour bar: the whole matrix's range, or the query row's when each row has its own.
void MatrixView::draw_colour_bar(const AppState& state, int N, int query, float side, float bar_w) const {
  ImGui::BeginGroup();
  // TRANSLATORS: the colour bar's caption: the range of the query's row i, or of the whole attention matrix A.
  ImGui::TextUnformatted(range_ == 1 ? _("row i") : _("all of A"));
  if (a_.valid()) {
    std::vector<std::uint8_t> keep(a_.image.all_zero.size());
    for (size_t t = 0; t < keep.size(); ++t) keep[t] = a_.image.all_zero[t] ? 0 : 1;
    std::span<const float> vals = a_.image.values;
    std::span<const std::uint8_t> kp = keep;
    if (range_ == 1 && a_.image.N == N) {
      const size_t S = static_cast<size_t>(a_.image.side), r = static_cast<size_t>(query / a_.image.block);
      vals = vals.subspan(r * S, S);
      kp = kp.subspan(r * S, S);
    }
    colour_bar(state.colormap, state.normalization, normalization_range(vals, kp, state.normalization), side);
  } else {
    ImGui::Dummy(ImVec2(bar_w, side));
  }
  ImGui::EndGroup();
}

// What the pictures say: the cost of A, the window mask's band, the empty rows, fc and conv.
void MatrixView::draw_notes(HandMadeSession& hand_made, int query) {
  const int N = hand_made.grid().N();
  const long long NN = static_cast<long long>(N) * N;
  if (a_.valid()) {
    // TRANSLATORS: A is the attention matrix; the first %s is the engine that computed it (a name), the second an amount
    // of memory (e.g. "12.5 MiB"); i is the query's token index.
    ImGui::TextDisabled(_("A pooled once for these settings from its %lld weights without storing them (%s, %.0f ms; the "
                          "full matrix would take %s); the outlined row is query i = %d."),
                        NN, hand_made.short_name().c_str(), a_ms_, mib(static_cast<double>(NN) * 4).c_str(), query);
    const Mask& mask = hand_made.setup().mask;
    if (mask.kind() == MaskKind::Window) {
      // TRANSLATORS: radius in patches; %dx%d is a convolution's kernel size; A is the attention matrix.
      text_wrapped(_("The local-window mask of radius %d keeps exactly the entries a %dx%d convolution uses, so A gets "
                     "the conv's banded pattern; its values still come from the image."),
                         mask.radius(), 2 * mask.radius() + 1, 2 * mask.radius() + 1);
      if (2 * mask.radius() + 1 <= 15 && k_ != 2 * mask.radius() + 1 &&
          // TRANSLATORS: a button; k is the convolution's kernel size.
          ImGui::SmallButton(text_format(_("set the conv kernel to k = %d to compare"), 2 * mask.radius() + 1).c_str()))
        k_ = 2 * mask.radius() + 1;
    }
    if (a_empty_rows_ > 0)
      // TRANSLATORS: %d rows of the attention matrix (a count), then the first one's number.
      text_wrapped(tr_n("%d row(s) have no key left (first: row %d): the mask hides every key from that query, so its "
                        "weights are all 0 and the row is black.",
                        "%d row(s) have no key left (first: row %d): the mask hides every key from that query, so its "
                        "weights are all 0 and the row is black.",
                        a_empty_rows_),
                   a_empty_rows_, a_first_empty_);
  }
  // TRANSLATORS: i and j are token indices; A is the attention matrix, Q and K the queries and keys; fc the fully connected
  // layer, conv the convolution, k its kernel size; conv1 is the ResNet's first convolution (a name); "CNN" is a tab of
  // the ViT views. Keep the equation and figure numbers.
  text_wrapped("%s", _("Row i of each matrix says how much output token i takes from every input token j. A (eq. 26.20) "
                       "is filled almost everywhere and is recomputed from Q and K for each image; masks turn cells off "
                       "(fig. 26.18; the causal mask keeps j <= i, the lower triangle). The fc layer (eq. 26.6) is just as "
                       "dense but its weights are fixed, whatever the image. The convolution only links neighbouring "
                       "patches: in raster order its entries sit on k groups of k adjacent diagonals (one group per kernel "
                       "row, the groups one grid row apart), and along each diagonal one kernel weight repeats (a "
                       "block-Toeplitz matrix, fig. 26.21). Stand-in values "
                       "are drawn for fc, and for conv unless the ResNet's conv1 is on (set a ResNet in the ViT views' CNN tab)."));
}

}  // namespace matrix_view

std::unique_ptr<TeachingView> make_matrix_view() { return std::make_unique<matrix_view::MatrixView>(); }

}  // namespace attnlab::app
