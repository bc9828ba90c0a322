#pragma once
// The GPU attention engine: one object per image and settings, owning the GPU buffers. It
// tokenizes on the GPU, projects every head's Q, K, V, and computes row i of A for all heads
// (never N × N), the full A of a head, T_out = A V and the W_MSA merge, and heat-map textures.
// Only what a change invalidates is recomputed: a new query re-runs the row pass only. The
// query is an argument of every call that needs one (a uniform set per dispatch), never state:
// the engine only remembers which query's rows its row buffer holds.
// Needs a current OpenGL 4.3+ context (HeadlessContext, or the app's window) on this thread.
#include "core/base/colormap.hpp"
#include "core/gpu/gl.hpp"
#include "core/hand_made/hand_made.hpp"
#include "core/hand_made/reference.hpp"

#include <array>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace attnlab {

/// How often each pass has run, so tests can check that a change recomputes only what it must.
struct PassCounts {
  int tokenize = 0, project = 0, row = 0, full = 0, output = 0, heatmap = 0;
};

/// Where the last HandMadeGpuEngine::matrix() call spent its time, in milliseconds of wall time
/// unless said otherwise. The matrix is made in tiles of rows: per tile one dispatch of
/// attend_matrix.comp (e_ij = exp(l_ij − M_i) and S_i), then one copy into the result that also
/// divides by S_i.
struct MatrixTimings {
  /// GPU time of the dispatches from GL_TIME_ELAPSED timer queries (gl::TimerQuery), every tile;
  /// NaN where the context has no timer queries. llvmpipe answers them but counts none of its
  /// compute work (about 0.001 ms per dispatch, Mesa 22.3): use kernel_wall_ms there.
  double kernel_ms = 0;
  /// From each dispatch to the glFinish after it, every tile: the kernel's time as the caller
  /// sees it (on llvmpipe the shader runs on Mesa's threads during this time).
  double kernel_wall_ms = 0;
  /// Reading the finished tiles back: the row sums, and the tile mapped and copied into the
  /// result with the division by S_i (the first touch of the result's memory is here).
  double readback_ms = 0;
  /// CPU set-up besides those: allocating the result (untouched) and the tile buffers.
  double cpu_ms = 0;
  double total_ms = 0;  ///< the whole call
  int tiles = 0;        ///< tiles (dispatches) the matrix took
};

class HandMadeGpuEngine {
 public:
  /// Compiles the shaders. Throws Error if the current context has no compute shaders or a
  /// shader fails (with its name and the driver's log).
  HandMadeGpuEngine();
  /// Compiles the shaders, then set_settings(settings) and set_image(image); throws Error as they do.
  HandMadeGpuEngine(const Image& image, const Settings& settings);
  ~HandMadeGpuEngine();
  HandMadeGpuEngine(const HandMadeGpuEngine&) = delete;
  HandMadeGpuEngine& operator=(const HandMadeGpuEngine&) = delete;

  /// Uploads an image and re-tokenizes. Throws Error (engine unchanged) if the current patch
  /// size does not fit it or it is too large for the GPU.
  void set_image(const Image& image);
  /// Uploads an image with new settings, together: the settings are checked against this image,
  /// never against the one held (a K too small for the large photo shown may suit a small one).
  /// Throws Error (engine unchanged) if they do not fit it or it is too large for the GPU.
  void set_image(const Image& image, const Settings& settings);
  /// Applies settings; throws Error (engine unchanged) if they are invalid for the image.
  void set_settings(const Settings& settings);

  bool has_image() const { return image_w_ > 0; }
  /// True when the image held is width × height and the settings are `settings`: the setup
  /// (make_setup) of such an image is the one held (a video's next frame).
  bool fits(int width, int height, const Settings& settings) const {
    return has_image() && setup_ && width == image_w_ && height == image_h_ && settings == settings_;
  }
  const Settings& settings() const { return settings_; }
  const ModelSetup& setup() const { return *setup_; }
  const PatchGrid& grid() const { return setup_->grid; }
  int N() const { return setup_->grid.N(); }

  /// Row `query` of A for every head (row pass if its buffer holds another query or is stale),
  /// read back: waits for the GPU unless rows_ready(query) said it was done. Throws Error for a
  /// query outside [0, N) or no image.
  const RowSet& rows(int query);
  /// Runs the row pass for `query` unless its buffer already holds that row, and fences it;
  /// nothing is read back (the heat maps colour the rows where they are). rows(query) then
  /// reads them. Throws Error like rows().
  void dispatch_rows(int query);
  /// True when rows(query) will not wait for the GPU: the row pass for `query` has finished
  /// (its fence signalled) or its rows are already read. False while no pass for it has been
  /// dispatched since the last change (or with no image).
  bool rows_ready(int query);
  /// The full A of a head, N × N (eq. 26.20 with τ and the mask: masked weights exactly 0, a
  /// row with no key left all zeros), computed in tiles of rows (8 MiB of A each, fewer rows if
  /// set_matrix_tile_rows says so). Throws Error when N × N floats would exceed
  /// max_matrix_bytes(). Its stage timings: last_matrix_timings().
  Matrix matrix(int head);
  /// Stage timings of the last matrix() call (all zero before the first).
  const MatrixTimings& last_matrix_timings() const { return matrix_timings_; }
  /// Caps the rows per tile of matrix() (0, the default: as many as one storage buffer holds),
  /// so tests can make N not a multiple of the tile. Throws Error for a negative count.
  void set_matrix_tile_rows(int rows);
  /// Image rows [first, first + count) of the pooled A of a head into `image`
  /// (HandMadeModel::pool_matrix_rows; image from empty_block_image(N(), max_side)): two
  /// dispatches of shaders/pool_matrix.comp, the band's row statistics then its pixels, and a
  /// read-back of count × S floats and flags; GPU memory O(N + count·S), never N². Throws
  /// Error for a bad head, image or rows (check_pool_rows) or no image.
  void pool_matrix_rows(int head, Pooling pooling, int first, int count, BlockImage& image);
  /// T_out = A V for a head (eq. 26.21), N × 3, without storing A.
  Matrix output(int head);
  /// Every head's T_out merged by W_MSA (eqs. 26.27–26.28), N × 3. Head outputs already
  /// computed since the last change are not computed again.
  Matrix merged_output();
  /// The head input X = [T | P] as computed on the GPU, N × D.
  Matrix tokens();
  /// A head's Q, K (N × m') and V (N × 3) as computed on the GPU.
  HeadQKV qkv(int head);
  /// Row of A for a query that is not one of the tokens (a question token, eqs. 26.14–26.15):
  /// `x` is a head input row (1 × D, like a row of X = [T | P]); q = W_q' x on the CPU, then
  /// a_j = softmax_j(q·k_j / (τ√m')) on the GPU, unmasked. Returns weights and logits (N each).
  std::pair<std::vector<float>, std::vector<float>> row_for_token(int head, const RowVector& x);
  /// m' of a head (query/key length after the positional mode).
  int head_m(int head);
  /// Heat map of a head's row `query` over the grid: a cols × rows RGBA8 texture, masked keys
  /// transparent, coloured where the row is (the row pass for `query` if its buffer holds
  /// another; nothing read back). One texture per head, valid until the next call for that head
  /// with another query or style, or a change of image or patch size. Throws Error for a head
  /// or query out of range or no image.
  const gl::Texture& heatmap(int query, int head, const HeatmapStyle& style);
  /// Reads heatmap(query, head, style) back as RGBA8, cols × rows × 4 bytes.
  std::vector<std::uint8_t> heatmap_pixels(int query, int head, const HeatmapStyle& style);
  /// Heat map of a head's row `query` into the caller's texture (a pinned query: one texture
  /// per query): the row pass for `query` into buffers of its own, coloured into `out` (made or
  /// resized to cols × rows RGBA8) and the head's row of weights copied to `row` (resized to N
  /// floats), all on the GPU: nothing is read back, and rows() and heatmap() are untouched.
  /// Throws Error for a head or query out of range or no image.
  void heatmap_into(int query, int head, const HeatmapStyle& style, gl::Texture& out, gl::Buffer& row);

  const PassCounts& counts() const { return counts_; }
  /// The largest A matrix() builds (CPU memory), in bytes: 256 MiB, i.e. N up to 8192.
  static constexpr std::size_t max_matrix_bytes() { return HandMadeModel::max_matrix_bytes(); }

 private:
  void rebuild_setup(const Settings& s, int width, int height);
  void install_setup(ModelSetup fresh);
  void ensure_tokens();
  void ensure_qkv();
  void upload_mask();
  void set_attend_params(int mode, int head, int query);  // attend.comp's Params and buffers
  void row_pass(int query, gl::Buffer& rows, gl::Buffer& aux);  // every head's row `query` into rows (+ logits in aux)
  void colour_row(const gl::Buffer& rows, int head, int query, const HeatmapStyle& style, gl::Texture& out);  // colormap.comp
  void ensure_output(int head);  // T_out of a head in gpu_->outputs, once per change
  void set_rows_pass_params(int mode, int head, int row_base, int row_count);  // attend_rows.comp's
  Matrix head_weights_q(int head) const;  // W_q' (m' × D) as the GPU uses it
  struct Buffers;
  std::unique_ptr<Buffers> gpu_;
  Settings settings_;
  std::optional<ModelSetup> setup_;
  int image_w_ = 0, image_h_ = 0;
  void check_query(int query) const;  // throws Error with no image or a query outside [0, N)
  bool tokens_dirty_ = true, qkv_dirty_ = true;
  int rows_query_ = -1;     // the query whose row pass gpu_->rows holds; -1: none, or stale
  bool rows_read_ = false;  // rows_ holds the last row pass's result
  gl::Fence rows_fence_;    // after the last row pass
  RowSet rows_;
  std::array<bool, kHeadCount> outputs_fresh_{};
  PassCounts counts_;
  MatrixTimings matrix_timings_;
  int matrix_tile_rows_ = 0;  // 0: as many rows as fit one storage buffer
};

/// True when two settings give the same tokens X (patch grid, seed, positional code shape
/// and add mode); the GPU engine re-tokenizes only when this is false.
bool same_tokens(const Settings& a, const Settings& b);
/// True when two settings give the same Q, K, V.
bool same_projections(const Settings& a, const Settings& b);

}  // namespace attnlab
