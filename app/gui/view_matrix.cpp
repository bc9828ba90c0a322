// Attention matrix (figs. 26.18, 26.21): A of the main head as an image pooled on the GPU (mean or
// max of blocks of weights, never N² values in memory), with the query's
// row outlined and the masked cells black, next to the matrices of a dense fc layer and of a
// k×k convolution over the same tokens in raster order.
#include "app/gui/teaching_view.hpp"
#include "app/gui/setting_widgets.hpp"
#include "app/gui/ui_common.hpp"
#include "app/gui/widget_log.hpp"
#include "core/error.hpp"
#include "core/structure.hpp"

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

namespace attnlab::app {
namespace {

constexpr int kMaxSide = 512;         // the images have at most this many pixels per side
constexpr int kDebounceTokens = 1024; // above this, wait for a change to settle before recomputing
constexpr double kBandBudgetMs = 25;  // pooling A: about this much work per frame, so the UI stays live
constexpr std::uint32_t kFcSeed = 11, kKernelSeed = 5;

using Clock = std::chrono::steady_clock;

std::string mib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024.0));
  return buf;
}

// A picture of a BlockImage (its texture and what it was made from).
struct Picture {
  BlockImage image;
  GuiTexture texture;
  unsigned version = 0;  // bumped when `image` changes
  unsigned drawn = 0;    // the version the texture shows
  HeatmapStyle style{};
  BlockRange range = BlockRange::Whole;
  bool valid() const { return image.side > 0; }
  void upload(Colormap c, Normalization n, BlockRange r, float t_min = 0.0f) {
    if (!valid()) return;
    if (drawn == version && style == HeatmapStyle{c, n} && range == r && texture.id()) return;
    const auto px = block_image_rgb8(image, c, n, r, t_min);
    texture.set(image.side, image.side, 3, px, false);
    // Drawn smaller than its size, the picture is averaged further by mipmaps (no entry is
    // skipped); drawn larger, its pixels stay sharp squares.
    GLint previous = 0;
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &previous);
    glBindTexture(GL_TEXTURE_2D, texture.id());
    glGenerateMipmap(GL_TEXTURE_2D);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR_MIPMAP_LINEAR);
    glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(previous));
    drawn = version;
    style = {c, n};
    range = r;
  }
};

class MatrixView final : public TeachingView {
 public:
  ~MatrixView() override {
    if (scheduler_) scheduler_->cancel_prefix("matrix:");  // its continuation would reach this view
  }
  const char* name() const override { return "matrix"; }
  const char* title() const override { return "Attention matrix"; }
  const char* chapter_reference() const override { return "figs. 26.18, 26.21"; }
  const char* tour_text() const override {
    return "Every row of A is one query's weights over all N keys, so the whole layer is an N x N matrix (eq. 26.20). "
           "Masked cells are black (fig. 26.18). Beside it, an fc layer and a convolution written as matrices over the "
           "same tokens (fig. 26.21): A is dense and changes with the image, fc is dense and fixed, conv is a narrow "
           "band that repeats one small kernel.";
  }
  void draw(AppState& state, HandMadeSession& backend) override;

 private:
  void update_attention(const AppState& state, HandMadeSession& backend);
  void update_structures(HandMadeSession& backend, int conv_side);
  void draw_attention(AppState& state, HandMadeSession& backend, float side);
  void draw_structure(const char* id, const Picture& pic, HandMadeSession& backend, float side, bool conv);
  void draw_properties(HandMadeSession& backend);
  // "<what> A ... 37%" while a picture is under way.
  std::string progress_text(const char* what) const {
    if (!building_ || next_.side < 1) return std::string(what) + " ...";
    return std::string(what) + " ... " + std::to_string(100 * next_row_ / next_.side) + "%";
  }

  // A of the main head, pooled to at most kMaxSide pixels (HandMadeModel::pool_matrix_rows):
  // never N² values, on the GPU as on the CPU. The picture is built a band of image rows per
  // frame (GL stays on this thread), about kBandBudgetMs each, while the last one stays up.
  struct Key {  // what a picture of A depends on
    unsigned generation = 0;  // backend.settings_generation()
    int head = -1;
    int pooling = 0;
    bool operator==(const Key&) const = default;
  };
  Picture a_;
  Key a_key_;                  // what a_ (or a_error_) is for
  std::string a_error_;        // why A is not shown; empty when shown
  bool a_fresh_ = false;       // a_ matches the current settings, head and pooling
  int a_empty_rows_ = 0, a_first_empty_ = -1;
  double a_ms_ = 0;            // time spent pooling a_ (all its bands)
  // The picture under way: its key, image, rows done and the work so far.
  Key next_key_;
  bool building_ = false;
  BlockImage next_;
  int next_row_ = 0;
  int band_rows_ = 1;          // image rows per call, adapted to kBandBudgetMs
  double next_ms_ = 0;
  // Debounce for large N: the key first seen and when.
  Key pending_;
  Clock::time_point pending_since_{};
  // The exact row of A under the mouse (the tooltip's a_ij): row `hover_row_` of every head.
  RowSet hover_;
  unsigned hover_generation_ = 0;
  int pooling_ = 0;  // Pooling: 0 mean, 1 max

  // The fc and conv matrices over the same tokens.
  Picture fc_, conv_;
  int fc_N_ = 0;          // the N that fc_ shows
  int fc_wanted_N_ = 0;   // the N asked of the scheduler (N² hashes take a second at N = 15625)
  std::string fc_error_;  // why the fc picture could not be made
  Scheduler* scheduler_ = nullptr;  // where the fc job went: cancelled when the view goes
  int conv_cols_ = 0, conv_rows_ = 0, conv_k_ = 0, conv_side_ = 0;
  int k_ = 3;  // conv kernel size (odd)
  int range_ = 1;  // 0: colours over the whole matrix, 1: each row stretched on its own (the default,
                   // like the attention map: a masked row with few keys would dwarf all others)
};

// Rows whose every key is masked (their weights are all 0): checked with the mask alone, O(N)
// for the chapter's masks (a query sees itself, or the first kept key), never N².
void count_empty_rows(const Mask& mask, int N, int& count, int& first) {
  count = 0;
  first = -1;
  int hint = -1;
  const auto& keep = mask.key_keep();
  for (int j = 0; j < N && hint < 0; ++j)
    if (keep[static_cast<size_t>(j)]) hint = j;
  for (int i = 0; i < N; ++i) {
    bool any = mask.allowed(i, i) || (hint >= 0 && mask.allowed(i, hint));
    for (int j = 0; j < N && !any; ++j) any = mask.allowed(i, j);
    if (any) continue;
    if (first < 0) first = i;
    ++count;
  }
}

void MatrixView::update_attention(const AppState& state, HandMadeSession& backend) {
  const Key key{backend.settings_generation(), std::clamp(state.hand_made.head.head, 0, kHeadCount - 1), pooling_};
  const int N = backend.grid().N();
  a_fresh_ = key == a_key_;
  if (a_fresh_) {
    building_ = false;
    return;
  }
  // A picture that cannot be made (too large for the GPU, …): its reason instead, for this key.
  auto fail = [&](const Error& e) {
    a_key_ = key;
    a_error_ = e.what();
    a_.image = {};
    building_ = false;
  };
  if (!building_ || !(next_key_ == key)) {
    if (!(pending_ == key)) {
      pending_ = key;
      pending_since_ = Clock::now();
    }
    // While a slider is dragged at large N, keep the last picture until the settings rest.
    // (The very first picture is started at once, also for one-shot renders.)
    if (N > kDebounceTokens && a_key_.head >= 0 && Clock::now() - pending_since_ < std::chrono::milliseconds(300)) return;
    try {
      next_ = empty_block_image(N, kMaxSide);
    } catch (const Error& e) {
      fail(e);
      return;
    }
    next_key_ = key;
    building_ = true;
    next_row_ = 0;
    next_ms_ = 0;
  }
  // One frame's share: bands of image rows until about kBandBudgetMs have gone. The GL work
  // already queued (the last frame's drawing, which a software rasterizer runs only when a
  // read-back forces it) is finished first, so that the bands are sized by their own cost.
  glFinish();
  try {
    const auto t0 = Clock::now();
    double spent = 0;
    while (next_row_ < next_.side && spent < kBandBudgetMs) {
      const int count = std::clamp(band_rows_, 1, next_.side - next_row_);
      const auto t = Clock::now();
      backend.pool_matrix_rows(key.head, static_cast<Pooling>(key.pooling), next_row_, count, next_);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
      next_row_ += count;
      // The next band: as many rows as fit the budget at this band's pace.
      band_rows_ = std::clamp(static_cast<int>(kBandBudgetMs * count / std::max(ms, 0.01)), 1, next_.side);
      spent = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    }
    next_ms_ += spent;
  } catch (const Error& e) {
    fail(e);
    return;
  }
  if (next_row_ < next_.side) return;  // more next frame
  a_.image = std::move(next_);
  ++a_.version;
  a_key_ = key;
  a_error_.clear();
  a_ms_ = next_ms_;
  building_ = false;
  a_fresh_ = true;
  count_empty_rows(backend.setup().mask, N, a_empty_rows_, a_first_empty_);
}

void MatrixView::update_structures(HandMadeSession& backend, int conv_side) {
  const PatchGrid& g = backend.grid();
  const int N = g.N();
  // fc: pure CPU math (no GL), on the scheduler; a new N replaces the job for the old one.
  if (fc_N_ != N && fc_wanted_N_ != N) {
    fc_wanted_N_ = N;
    fc_error_.clear();
    scheduler_ = &backend.scheduler();
    scheduler_->submit<BlockImage>(
        "matrix:fc", [N](const std::atomic<bool>&) { return fc_structure_image(N, kMaxSide, kFcSeed); },
        [this, N](std::future<BlockImage> result) {
          try {
            fc_.image = result.get();
            ++fc_.version;
            fc_N_ = N;
          } catch (const std::exception& e) {
            fc_error_ = e.what();
          }
        });
  }
  // conv: O(N k²), computed at the size it is drawn so that its thin band is never skipped.
  const int cs = std::clamp(conv_side, 16, kMaxSide);
  if (conv_cols_ != g.cols || conv_rows_ != g.rows || conv_k_ != k_ || conv_side_ != cs) {
    conv_.image = conv_structure_image(g, k_, demo_kernel(k_, kKernelSeed), cs);
    ++conv_.version;
    conv_cols_ = g.cols;
    conv_rows_ = g.rows;
    conv_k_ = k_;
    conv_side_ = cs;
  }
}

// Patch p of the photo as a small image (for the hover tooltips).
void patch_image(HandMadeSession& backend, int p, float size) {
  const PatchGrid& g = backend.grid();
  const float W = static_cast<float>(backend.image().width), H = static_cast<float>(backend.image().height);
  const float x0 = static_cast<float>(g.col_of(p) * g.K), y0 = static_cast<float>(g.row_of(p) * g.K);
  ImGui::Image(backend.photo(), ImVec2(size, size), ImVec2(x0 / W, y0 / H),
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

void MatrixView::draw_attention(AppState& state, HandMadeSession& backend, float side) {
  const PatchGrid& g = backend.grid();
  const int N = g.N();
  const int head = std::clamp(state.hand_made.head.head, 0, kHeadCount - 1);
  ImGui::BeginGroup();
  ImGui::Text("A, head %d %s", head, std::string(head_name(static_cast<HeadKind>(head))).c_str());
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (!a_.valid()) {
    ImGui::Dummy(ImVec2(side, side));
    dl->AddRectFilled(p, ImVec2(p.x + side, p.y + side), IM_COL32(40, 40, 44, 255));
    dl->AddRect(p, ImVec2(p.x + side, p.y + side), IM_COL32(120, 120, 120, 255));
    const std::string msg = !a_error_.empty() ? a_error_ : progress_text("computing A");
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
  if (a_fresh_ && img.N == N) outline_row(dl, p, side, img, backend.query());
  if (!a_fresh_)
    dl->AddText(ImVec2(p.x + 8, p.y + 8), IM_COL32(255, 255, 255, 255), progress_text("updating").c_str());

  int i = 0, j = 0;
  if (hovered && a_fresh_ && img.N == N && cell_under_mouse(p, side, N, i, j)) {
    const float px = side / static_cast<float>(img.side);
    const int r = i / img.block, c = j / img.block;
    dl->AddRect(ImVec2(p.x + static_cast<float>(c) * px, p.y + static_cast<float>(r) * px),
                ImVec2(p.x + static_cast<float>(c + 1) * px, p.y + static_cast<float>(r + 1) * px),
                IM_COL32(255, 255, 255, 255));
    // The exact a_ij from row i of A (one row pass for every head, kept while the mouse stays
    // on that row); the pixel itself is the pooled value of its block.
    if (hover_.query != i || hover_generation_ != backend.settings_generation()) {
      hover_ = backend.rows_of(i);
      hover_generation_ = backend.settings_generation();
    }
    const bool allowed = backend.setup().mask.allowed(i, j);
    ImGui::BeginTooltip();
    ImGui::Text("query i = %d, patch (col %d, row %d)", i, g.col_of(i), g.row_of(i));
    ImGui::Text("key   j = %d, patch (col %d, row %d)", j, g.col_of(j), g.row_of(j));
    const float thumb = ImGui::GetTextLineHeight() * 3;
    patch_image(backend, i, thumb);
    ImGui::SameLine();
    ImGui::TextUnformatted("i attends to j:");
    ImGui::SameLine();
    patch_image(backend, j, thumb);
    if (allowed)
      ImGui::Text("a_ij = %s", format_weight(hover_.head(head)[static_cast<size_t>(j)]).c_str());
    else
      ImGui::Text("a_ij = 0 (masked: key j is hidden from query i)");
    if (img.block > 1) {
      ImGui::Text("this pixel: rows %d-%d x columns %d-%d, %s %s%s", img.first(r), img.last(r) - 1, img.first(c),
                  img.last(c) - 1, pooling_name(static_cast<Pooling>(a_key_.pooling)),
                  format_weight(img.value(r, c)).c_str(), img.empty(r, c) ? " (all masked)" : "");
    }
    ImGui::TextDisabled("click: make token i the query");
    ImGui::EndTooltip();
    if (clicked) {
      state.hand_made.cell = Cell{g.col_of(i), g.row_of(i)};
      state.hand_made.query_pinned = true;
    }
  }
  ImGui::EndGroup();
}

void MatrixView::draw_structure(const char* id, const Picture& pic, HandMadeSession& backend, float side, bool conv) {
  const PatchGrid& g = backend.grid();
  const int N = g.N();
  ImGui::BeginGroup();
  if (conv)
    ImGui::Text("conv %dx%d: banded, shared", k_, k_);
  else
    ImGui::TextUnformatted("fc: dense, fixed");
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImGui::InvisibleButton(id, ImVec2(side, side));
  const bool hovered = ImGui::IsItemHovered();
  const bool current = pic.valid() && pic.image.N == N;
  if (pic.valid() && pic.texture.id())
    dl->AddImage(pic.texture.im(), p, ImVec2(p.x + side, p.y + side), ImVec2(0, 0), ImVec2(1, 1),
                 current ? IM_COL32_WHITE : IM_COL32(255, 255, 255, 90));
  if (!current)
    dl->AddText(ImVec2(p.x + 6, p.y + 6), IM_COL32(255, 255, 255, 255), conv || fc_error_.empty() ? "computing ..." : fc_error_.c_str());
  dl->AddRect(ImVec2(p.x - 1, p.y - 1), ImVec2(p.x + side + 1, p.y + side + 1), IM_COL32(120, 120, 120, 255));
  if (pic.valid() && pic.image.N == N) outline_row(dl, p, side, pic.image, backend.query());
  int i = 0, j = 0;
  if (hovered && pic.valid() && pic.image.N == N && cell_under_mouse(p, side, N, i, j)) {
    ImGui::BeginTooltip();
    ImGui::Text("output token i = %d (col %d, row %d), input token j = %d (col %d, row %d)", i, g.col_of(i), g.row_of(i), j,
                g.col_of(j), g.row_of(j));
    if (conv) {
      const int tap = conv_tap(g, k_, i, j);
      if (tap < 0)
        ImGui::TextUnformatted("0: patch j is outside the kernel window around patch i");
      else
        ImGui::Text("kernel tap (row %+d, col %+d): the same weight on every pair of tokens at this offset", tap / k_ - k_ / 2,
                    tap % k_ - k_ / 2);
    } else {
      ImGui::Text("weight %.3f (a stand-in value): every pair of tokens has its own weight", static_cast<double>(fc_weight(i, j, kFcSeed)));
    }
    if (pic.image.block > 1) {
      const int r = i / pic.image.block, c = j / pic.image.block;
      ImGui::Text("this pixel averages %d x %d entries%s", pic.image.last(r) - pic.image.first(r),
                  pic.image.last(c) - pic.image.first(c), pic.image.empty(r, c) ? ", all zero" : "");
    }
    ImGui::EndTooltip();
  }
  ImGui::EndGroup();
}

void MatrixView::draw_properties(HandMadeSession& backend) {
  const PatchGrid& g = backend.grid();
  const long long N = g.N();
  const long long D = backend.tokens().cols();  // width of the head input X = [T | P]
  const Head& h = backend.setup().heads[static_cast<size_t>(std::clamp(a_key_.head, 0, kHeadCount - 1))];
  const long long head_params = h.W_q.size() + h.W_k.size() + h.W_v.size();
  const long long conv_nz = conv_nonzeros(g, k_);
  if (!ImGui::BeginTable("props", 4, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingStretchProp)) return;
  ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn("attention A", ImGuiTableColumnFlags_WidthStretch, 1.2f);
  ImGui::TableSetupColumn("fc", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn("conv", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableHeadersRow();
  auto row = [](const std::string& what, const std::string& a, const std::string& f, const std::string& c) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", what.c_str());
    for (const std::string* s : {&a, &f, &c}) {
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", s->c_str());
    }
  };
  const auto n = [](long long v) { return std::to_string(v); };
  row("entries that can be non-zero", n(N * N) + " (N^2), minus the masked ones", n(N * N) + " (N^2)",
      n(conv_nz) + " (about k^2 N)");
  row("changes with the image?", "yes: computed from Q and K of this input (eq. 26.20)", "no: learned once, fixed",
      "no: learned once, fixed");
  row("learned numbers (D = " + n(D) + ": width of the head input [T | P])", n(head_params) + " in W_q, W_k, W_v of this head; none in A itself",
      n(D * D * N * N) + " (D^2 N^2, exercise 12.1)", n(static_cast<long long>(k_) * k_ * D * D) + " (k^2 D^2, shared by all tokens)");
  row("which inputs reach token i", "every unmasked token", "every token", "only the k x k patches around it");
  ImGui::EndTable();
}

void MatrixView::draw(AppState& state, HandMadeSession& backend) {
  if (!backend.has_image()) {
    ImGui::TextUnformatted("No image loaded.");
    return;
  }
  // A waiting for a slider to rest, or fc on its worker thread: come back at once.
  if (!a_fresh_) state.commands.redraw();
  const PatchGrid& g = backend.grid();
  const int N = g.N();

  // --- controls
  head_combo(state, "head", 11);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9);
  ImGui::Combo("colours", &range_, "whole matrix\0each row\0");
  record_widget("matrix_range");
  help_marker("whole matrix: one colour scale for all of A (the colour bar). each row: every query's row is stretched "
              "between its own smallest and largest weight, as the attention map does; useful when a mask leaves some "
              "rows with few keys and therefore large weights. The colormap and the normalization are the app's.");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5);
  ImGui::Combo("pooling", &pooling_, "mean\0max\0");
  record_widget("matrix_pooling");
  help_marker("When A has more rows than the picture has pixels, each pixel stands for a b x b block of weights: "
              "mean shows their average (the true share of the block, so large blocks look dim), max the largest "
              "weight in the block (a strong key stays visible however small the block's share). Masked weights count "
              "as 0. With one weight per pixel both are a_ij itself.");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
  if (ImGui::SliderInt("conv kernel k", &k_, 1, 15, "%d", ImGuiSliderFlags_AlwaysClamp) && k_ % 2 == 0) ++k_;
  help_marker("Size of the convolution's window in patches (odd). Its matrix has a band of k rows of k entries.");

  update_attention(state, backend);

  const long long NN = static_cast<long long>(N) * N;
  ImGui::Text("N = %d tokens (%d x %d patches of %d px), so every matrix here is %d x %d = %lld entries.", N, g.cols, g.rows,
              g.K, N, N, NN);
  const int b = block_size(N, kMaxSide);
  if (b > 1)
    ImGui::TextWrapped("Too many entries for the screen: A and fc are reduced to %d x %d pixels, each the %s (A) or the "
                       "mean (fc) of a %d x %d block of entries; conv is reduced to the size it is drawn. A block is black "
                       "only when every entry in it is masked (or zero).",
                       (N + b - 1) / b, (N + b - 1) / b, pooling_name(static_cast<Pooling>(pooling_)), b, b);
  else
    ImGui::TextUnformatted("A and fc are shown exactly, one pixel per entry. Black = masked (weight exactly 0) or zero.");

  // --- the three matrices: side by side when the window is wide, else A large with fc and conv
  // stacked beside it
  const ImGuiStyle& st = ImGui::GetStyle();
  const float bar_w = ui_px(12) + ImGui::CalcTextSize("0.000000e-00").x;
  const float avail = ImGui::GetContentRegionAvail().x - 12.0f - 3 * st.ItemSpacing.x - bar_w - 8.0f;
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float by_height = ImGui::GetContentRegionAvail().y - line * 9;
  const bool wide = avail / 3.0f >= 360.0f;
  const float side = std::floor(std::clamp(std::min(wide ? avail / 3.0f : avail / 1.5f, by_height), 96.0f, 1024.0f));
  const float small = wide ? side : std::floor(std::max((side - line - st.ItemSpacing.y) / 2.0f, 48.0f));
  update_structures(backend, static_cast<int>(wide ? side : small));
  // Structure pictures: every non-zero block at least 40% up the colormap, zero blocks black.
  fc_.upload(state.colormap, Normalization::Absolute, BlockRange::Whole, 0.4f);
  conv_.upload(state.colormap, Normalization::Absolute, BlockRange::Whole, 0.4f);
  ImGui::Indent(12.0f);  // room for the query-row marker
  draw_attention(state, backend, side);
  ImGui::SameLine();
  {
    ImGui::BeginGroup();
    ImGui::TextUnformatted(range_ == 1 ? "row i" : "all of A");
    if (a_.valid()) {
      // The colour bar: the whole matrix's range, or the query row's when each row has its own.
      std::vector<std::uint8_t> keep(a_.image.all_zero.size());
      for (size_t t = 0; t < keep.size(); ++t) keep[t] = a_.image.all_zero[t] ? 0 : 1;
      std::span<const float> vals = a_.image.values;
      std::span<const std::uint8_t> kp = keep;
      if (range_ == 1 && a_.image.N == N) {
        const size_t S = static_cast<size_t>(a_.image.side), r = static_cast<size_t>(backend.query() / a_.image.block);
        vals = vals.subspan(r * S, S);
        kp = kp.subspan(r * S, S);
      }
      colour_bar(state.colormap, state.normalization, normalization_range(vals, kp, state.normalization), side);
    } else {
      ImGui::Dummy(ImVec2(bar_w, side));
    }
    ImGui::EndGroup();
  }
  ImGui::SameLine(0.0f, st.ItemSpacing.x + 8.0f);
  if (wide) {
    draw_structure("fc", fc_, backend, side, false);
    ImGui::SameLine(0.0f, st.ItemSpacing.x + 8.0f);
    draw_structure("conv", conv_, backend, side, true);
  } else {
    ImGui::BeginGroup();
    draw_structure("fc", fc_, backend, small, false);
    draw_structure("conv", conv_, backend, small, true);
    ImGui::EndGroup();
  }
  ImGui::Unindent(12.0f);

  // --- what the pictures say
  if (a_.valid()) {
    ImGui::TextDisabled("A pooled once for these settings from its %lld weights without storing them (%s, %.0f ms; the "
                        "full matrix would take %s); the outlined row is query i = %d.",
                        NN, backend.short_name().c_str(), a_ms_, mib(static_cast<double>(NN) * 4).c_str(), backend.query());
    const Mask& mask = backend.setup().mask;
    if (mask.kind() == MaskKind::Window) {
      ImGui::TextWrapped("The local-window mask of radius %d keeps exactly the entries a %dx%d convolution uses, so A gets "
                         "the conv's banded pattern; its values still come from the image.",
                         mask.radius(), 2 * mask.radius() + 1, 2 * mask.radius() + 1);
      if (2 * mask.radius() + 1 <= 15 && k_ != 2 * mask.radius() + 1 &&
          ImGui::SmallButton(("set the conv kernel to k = " + std::to_string(2 * mask.radius() + 1) + " to compare").c_str()))
        k_ = 2 * mask.radius() + 1;
    }
    if (a_empty_rows_ > 0)
      ImGui::TextWrapped("%d row(s) have no key left (first: row %d): the mask hides every key from that query, so its "
                         "weights are all 0 and the row is black.",
                         a_empty_rows_, a_first_empty_);
  }
  ImGui::TextWrapped("Row i of each matrix says how much output token i takes from every input token j. A (eq. 26.20) "
                     "is filled almost everywhere and is recomputed from Q and K for each image; masks turn cells off "
                     "(fig. 26.18; the causal mask keeps j <= i, the lower triangle). The fc layer (eq. 26.6) is just as "
                     "dense but its weights are fixed, whatever the image. The convolution only links neighbouring "
                     "patches: in raster order its entries sit on k groups of k adjacent diagonals (one group per kernel "
                     "row, the groups one grid row apart), and along each diagonal one kernel weight repeats (a "
                     "block-Toeplitz matrix, fig. 26.21). Stand-in values "
                     "are drawn for fc and conv, as no trained weights ship.");
  draw_properties(backend);
}

}  // namespace

std::unique_ptr<TeachingView> make_matrix_view() { return std::make_unique<MatrixView>(); }

}  // namespace attnlab::app
