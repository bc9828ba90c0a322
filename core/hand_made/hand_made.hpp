#pragma once
// The chapter's hand-made model (six heads over one image, eqs. 26.17–26.28) behind one
// interface with two backends: the GPU engine (core/gpu/hand_made_gpu.hpp) and the Eigen
// reference (make_reference_model, here). The app picks one when it starts and never asks
// which it holds; the query is an argument of every call, not state of the model.
#include "core/base/colormap.hpp"
#include "core/hand_made/reference.hpp"
#include "core/hand_made/structure.hpp"

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace attnlab {

/// How a heat map is coloured.
struct HeatmapStyle {
  Colormap colormap = kDefaultColormap;
  Normalization normalization = Normalization::MinMax;
  bool operator==(const HeatmapStyle&) const = default;
};

/// Row i of A for every head.
struct RowSet {
  int query = -1;
  int N = 0;
  std::vector<float> weights;  ///< kHeadCount × N, head after head: a_ij
  std::vector<float> logits;   ///< kHeadCount × N: s_ij / (τ√m) (also for masked keys)
  std::array<bool, kHeadCount> empty{};  ///< every key masked for this query
  std::span<const float> head(int h) const { return {weights.data() + static_cast<size_t>(h) * N, static_cast<size_t>(N)}; }
  std::span<const float> head_logits(int h) const {
    return {logits.data() + static_cast<size_t>(h) * N, static_cast<size_t>(N)};
  }
};

class HandMadeModel {
 public:
  virtual ~HandMadeModel() = default;

  /// "GPU: <renderer>" or "CPU reference".
  virtual std::string name() const = 0;
  /// "GPU" or "CPU reference", for a view's one-line note of where a number came from.
  virtual std::string short_name() const = 0;

  /// Replaces the image and the settings together. Throws Error (nothing changed) for invalid
  /// settings or a K that does not fit the image.
  virtual void set_image(const Image& image, const Settings& settings) = 0;
  /// Replaces the settings for the same image. Throws Error (nothing changed) if they are
  /// invalid for it or no image is set.
  virtual void set_settings(const Settings& settings) = 0;

  /// Row `query` of A (eq. 26.20 with τ and the mask) for every head. Throws Error for a
  /// query outside [0, N) or no image.
  virtual RowSet rows(int query) = 0;
  /// Starts row `query` for every head without waiting for it (the GPU queues and fences its
  /// pass; the reference has nothing to start); again for the query in flight, nothing. Throws
  /// Error like rows().
  virtual void prepare_rows(int /*query*/) {}
  /// True when rows(query) will return without waiting for the GPU (always for the reference).
  virtual bool rows_ready(int /*query*/) { return true; }
  /// The head input X = [T | P], N × D (TokenLayout, then the positional code).
  virtual Matrix tokens() = 0;
  /// A head's Q, K (N × m') and V (N × 3), eqs. 26.17–26.19.
  virtual HeadQKV qkv(int head) = 0;
  /// T_out = A V of a head (eq. 26.21), N × 3.
  virtual Matrix output(int head) = 0;
  /// The heads' outputs merged by W_MSA (eqs. 26.27–26.28), N × 3.
  virtual Matrix merged_output() = 0;
  /// The full A of a head, N × N. Throws Error when it needs more than max_matrix_bytes().
  virtual Matrix matrix(int head) = 0;
  /// N, the number of tokens of the current image and patch size. Throws Error with no image.
  virtual int N() const = 0;
  /// Image rows [first, first + count) of the pooled A of a head (see pooled_matrix()), written
  /// into `image`, which comes from empty_block_image(N(), max_side) (or an earlier call: the
  /// other rows are left as they are). A UI spreads the work over frames this way; each call
  /// computes the rows' softmax statistics and their blocks, never more than one row band at
  /// a time. Throws Error for a head out of range, no image, an image made for another N, or
  /// rows outside [0, image.side).
  virtual void pool_matrix_rows(int head, Pooling pooling, int first, int count, BlockImage& image) = 0;
  /// A of a head (eq. 26.20 with τ and the mask: a_ij = exp(l_ij − M_i) / S_i with the logits
  /// l_ij = q_i·k_j / (τ√m'), M_i the largest and S_i = Σ_j exp(l_ij − M_i) over the keys that
  /// query i may see, 0 for a masked key) pooled to an S×S image for the screen, S <= max_side:
  /// each pixel the mean or the maximum of a b×b block of a_ij, b = block_size(N, max_side),
  /// all_zero when every cell of the block is masked — the same image as downsample_matrix()
  /// of matrix(head), but never N² values in memory (the GPU reads back S² floats and flags),
  /// so it works for every N, e.g. N = 16 384 (1 GiB as a full matrix). Throws Error for a
  /// head out of range, max_side < 1 or no image.
  BlockImage pooled_matrix(int head, int max_side, Pooling pooling);
  /// Row of A for a token that is not in the image (a question token, eqs. 26.14–26.16): `x`
  /// is 1 × D like a row of tokens(). Returns weights and logits s/(τ√m'), N each, unmasked.
  /// Throws Error for a head out of range or an x of the wrong width.
  virtual std::pair<std::vector<float>, std::vector<float>> row_for_token(int head, const RowVector& x) = 0;

  /// The most memory matrix() may take, in bytes: 256 MiB, i.e. N up to 8192.
  static constexpr std::size_t max_matrix_bytes() { return std::size_t{1} << 28; }
};

/// The checks of HandMadeModel::pool_matrix_rows, shared by its implementations: throws Error
/// for a head outside [0, kHeadCount), an image not made by empty_block_image(N, ·), or image
/// rows [first, first + count) outside [0, image.side).
void check_pool_rows(int N, int head, int first, int count, const BlockImage& image);

/// The Eigen reference as a HandMadeModel: the same numbers as the GPU, slower; what the app
/// uses when the context has no compute shaders.
std::unique_ptr<HandMadeModel> make_reference_model();

}  // namespace attnlab
