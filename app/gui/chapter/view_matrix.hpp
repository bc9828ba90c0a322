#pragma once
// The attention-matrix view's parts (view_matrix.cpp draws it, view_matrix_build.cpp builds its
// pictures): A of the main head pooled a band of rows per frame, the fc and conv matrices. Only
// those two files include this header.
#include "app/gui/chapter/teaching_view.hpp"
#include "app/gui/state/memo.hpp"
#include "app/gui/state/setting_widgets.hpp"
#include "app/gui/state/ui_common.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/error.hpp"
#include "core/cnn/resnet.hpp"
#include "core/hand_made/structure.hpp"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <memory>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

namespace attnlab::app::matrix_view {

constexpr int kMaxSide = 512;         // the images have at most this many pixels per side
constexpr int kDebounceTokens = 1024; // above this, wait for a change to settle before recomputing
constexpr double kBandBudgetMs = 25;  // pooling A: about this much work per frame, so the UI stays live
constexpr std::uint32_t kFcSeed = 11, kKernelSeed = 5;

using Clock = std::chrono::steady_clock;

inline std::string mib(double bytes) {
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
  MatrixView()
      : TeachingView({"matrix",
            // TRANSLATORS: a view's window title (and its item in the Chapter menu).
            N_("Attention matrix"),
            // TRANSLATORS: where the view's idea is in the book: figures 26.18 and 26.21. Keep the numbers.
            N_("figs. 26.18, 26.21"),
            // TRANSLATORS: the guided tour's text for the attention-matrix view. A is the attention matrix, N the
            // number of tokens; fc = a fully connected layer, conv = a convolution. Keep the symbols and the
            // equation and figure numbers.
            N_("Every row of A is one query's weights over all N keys, so the whole layer is an N x N matrix (eq. 26.20). "
               "Masked cells are black (fig. 26.18). Beside it, an fc layer and a convolution written as matrices over the "
               "same tokens (fig. 26.21): A is dense and changes with the image, fc is dense and fixed, conv is a narrow "
               "band that repeats one small kernel.")}) {}
  void draw_contents(AppState& state, HandMadeSession& hand_made) override;

 private:
  void update_attention(const AppState& state, HandMadeSession& hand_made);
  void update_structures(HandMadeSession& hand_made, int conv_side);
  void draw_attention(AppState& state, HandMadeSession& hand_made, float side);
  void draw_structure(const char* id, const Picture& pic, HandMadeSession& hand_made, float side, bool conv, int query);
  void draw_properties(HandMadeSession& hand_made);
  // draw_contents' steps, in order (view_matrix.cpp).
  void draw_controls(AppState& state);
  void draw_size_note(const PatchGrid& g) const;
  void draw_matrices(AppState& state, HandMadeSession& hand_made, int query);
  void draw_colour_bar(const AppState& state, int N, int query, float side, float bar_w) const;
  void draw_notes(HandMadeSession& hand_made, int query);
  // "<what> ... 37%" while a picture is under way (`what` translated by the caller).
  std::string progress_text(const char* what) const {
    if (!building_ || next_.side < 1) return std::string(what) + " ...";
    return std::string(what) + " ... " + std::to_string(100 * next_row_ / next_.side) + "%";
  }

  // A of the main head, pooled to at most kMaxSide pixels (HandMadeModel::pool_matrix_rows):
  // never N² values, on the GPU as on the CPU. The picture is built a band of image rows per
  // frame (GL stays on this thread), about kBandBudgetMs each, while the last one stays up.
  struct Key {  // what a picture of A depends on
    unsigned generation = 0;  // hand_made.generation()
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
  // The exact row of A under the mouse (the tooltip's a_ij), every head; key: generation, row.
  Memo<std::pair<unsigned, int>, RowSet> hover_;
  int pooling_ = 0;  // Pooling: 0 mean, 1 max

  // The fc and conv matrices over the same tokens.
  Picture fc_, conv_;
  int fc_N_ = 0;          // the N that fc_ shows
  KeyMemo<int> fc_job_;   // the N asked of the scheduler (N² hashes take a second at N = 15625)
  std::string fc_error_;  // why the fc picture could not be made
  KeyMemo<std::array<int, 7>> conv_key_;  // what conv_ shows: grid columns, rows, k, side in pixels, the kernel's source (model id, channels)
  int k_ = 3;  // conv kernel size (odd)
  // Fig. 26.21 with a real convolution (issue 50): the first convolution (conv1) of the ResNet the
  // CNN view sets beside the ViT (the document's cnn.model), loaded here on the scheduler.
  bool use_cnn_ = false;                      // the conv picture draws conv1's kernel, not the stand-in
  int cnn_out_ = -1, cnn_in_ = 0;             // the (output, input) channel pair; out < 0: sum of |w| over all pairs
  std::shared_ptr<const ResnetModel> cnn_;    // the loaded ResNet (its stem)
  std::filesystem::path cnn_path_, cnn_loading_;  // what cnn_ is, what is being loaded
  std::string cnn_error_;
  void update_cnn(AppState& state, HandMadeSession& hand_made);
  int conv_k() const { return use_cnn_ && cnn_ ? cnn_->stem.k : k_; }  // the conv picture's kernel size
  int range_ = 1;  // 0: colours over the whole matrix, 1: each row stretched on its own (the default,
                   // like the attention map: a masked row with few keys would dwarf all others)
};

// Rows whose every key is masked (their weights are all 0): checked with the mask alone, O(N)
// for the chapter's masks (a query sees itself, or the first kept key), never N².
void count_empty_rows(const Mask& mask, int N, int& count, int& first);

}  // namespace attnlab::app::matrix_view
