#pragma once
// The patch grid and tokenization (fig. 26.2, section 26.9.1, eq. 26.32).
#include "core/base/budget.hpp"
#include "core/io/image.hpp"
#include "core/base/settings.hpp"
#include "core/base/types.hpp"

#include <string>
#include <span>
#include <array>
#include <cstddef>
#include <cstdint>

namespace attnlab {

/// Largest number of tokens N accepted (the row path is specified up to 16 384; a little room).
inline constexpr int kMaxTokens = 65536;

/// Largest patch size K accepted: 3·K² (a raw token's values) must fit a 32-bit int, as the
/// shaders count it. (The memory budget refuses far smaller K on most machines.)
inline constexpr int kMaxPatch = 26754;

/// The grid of K×K patches over a W×H image. Tokens are numbered in raster order:
/// i = row·cols + col, row 0 at the top (docs/MATH.md, "Pixels, patches, tokens"). Patch (col,row) covers pixels
/// x ∈ [col·K, col·K+K), y ∈ [row·K, row·K+K); in Pad mode pixels outside the image are 0.
struct PatchGrid {
  int K = 0;              ///< Patch side in pixels.
  int cols = 0, rows = 0; ///< Grid size in patches (W/K, H/K cropped, or rounded up in Pad mode).
  int image_width = 0, image_height = 0;
  EdgeMode edge = EdgeMode::Crop;

  int N() const { return cols * rows; }
  int index(int col, int row) const { return row * cols + col; }
  int col_of(int i) const { return i % cols; }
  int row_of(int i) const { return i / cols; }
  bool contains(int col, int row) const { return col >= 0 && row >= 0 && col < cols && row < rows; }
};

/// Makes the grid. Throws Error when K < 1 or K > kMaxPatch, when K is larger than the image in
/// Crop mode (no whole patch fits), or when N would exceed kMaxTokens.
PatchGrid make_grid(int width, int height, int K, EdgeMode edge);

/// Token index of (col,row), or Error naming the grid size when it is outside.
int token_at(const PatchGrid& grid, int col, int row);

/// Bytes the hand-made pipeline allocates for `grid` at its peak, in size_t with checked
/// multiplication (SIZE_MAX when it overflows): W_tokenize (16 × 3K², three copies: CPU, staged,
/// GPU), the raw tokens (N × 3K²), the padded picture (cols·K × rows·K × 3) and N × 256 floats
/// of tokens, codes and per-head vectors. The matrix view (N × N) is checked where it is made.
std::size_t hand_made_bytes(const PatchGrid& grid);

/// The hand-made pipeline's own ceiling, in bytes, under the memory budget: it is rebuilt on every
/// slider move and drawn at interactive speed, and a patch larger than the photo shows nothing
/// new. W_tokenize alone (3 copies of 16 × 3K² floats) passes 512 MiB at K ≈ 960, which takes
/// some 5 s to make on one core; K = 3000 padded needed 5.3 GB and 50 s before issue 38, under a
/// default budget (a quarter of RAM) that held it.
inline constexpr std::uint64_t kHandMadeLimitBytes = std::uint64_t{512} << 20;

/// Refuses a grid whose hand_made_bytes() exceed min(`budget` (at least kAlwaysAllowedBytes),
/// kHandMadeLimitBytes), before anything is allocated: throws Error, one line naming K, the MiB
/// needed, the limit that refused it (the memory budget or the pipeline's own ceiling) and the
/// largest K that fits this image.
void check_hand_made_budget(const PatchGrid& grid, std::uint64_t budget);

/// Raw tokens: N × 3K², each row the patch's pixels vectorized in raster order with channels
/// interleaved (r,g,b of pixel (0,0), then pixel (1,0), …). Values in [0,1].
Matrix raw_tokens(const Image& img, const PatchGrid& grid);

/// Mean colour tokens: N × 3, the average RGB over the patch's pixels that lie inside the
/// image (in Pad mode the padding does not darken edge patches). Values in [0,1].
Matrix mean_colours(const Image& img, const PatchGrid& grid);

/// Unit mean colour: each row of `mean` divided by its length (fig. 26.12's query/key
/// features). A black patch (length < 1e-12) gets the grey direction (1,1,1)/√3.
Matrix unit_rows(const Matrix& mean);

/// Texture features: N × 3 per patch, from the luminance Y = (r+g+b)/3 and its forward
/// differences inside the patch (gx = Y(x+1,y)−Y(x,y), gy = Y(x,y+1)−Y(x,y), both pixels in
/// the image): with J the mean structure tensor (Jxx, Jyy, Jxy),
/// g = [ sqrt(Jxx+Jyy), (Jxx−Jyy)/(Jxx+Jyy+ε), 2Jxy/(Jxx+Jyy+ε) ], ε = 1e-6:
/// gradient energy, then orientation (horizontal vs vertical stripes, diagonal). 0 for K = 1.
Matrix texture_features(const Image& img, const PatchGrid& grid);

/// A seeded Gaussian matrix rows×cols with entries N(0, scale²) (std::mt19937 + Box–Muller
/// implemented here, so the numbers are the same on every platform).
Matrix seeded_gaussian(Eigen::Index rows, Eigen::Index cols, std::uint32_t seed, float scale);

/// W_tokenize for the random projection tokens: R × 3K², entries N(0, 1/(3K²)).
Matrix tokenize_projection(int K, int R, std::uint32_t seed);

/// Column layout of the feature token T (N × d) every head reads from:
/// T = [ c (mean colour, 3) | ĉ (unit mean colour, 3) | g (texture, 3) | r (random proj., R) ].
struct TokenLayout {
  static constexpr int kColour = 0, kUnitColour = 3, kTexture = 6, kRandom = 9;
  static constexpr int kRandomDims = 16;  ///< R
  static constexpr int d = kRandom + kRandomDims;  ///< token width d = 25
};

/// T (N × TokenLayout::d) for the image: see TokenLayout. `seed` picks W_tokenize.
Matrix make_tokens(const Image& img, const PatchGrid& grid, std::uint32_t seed);

/// One value per patch as CSV in the grid's layout: `grid.rows` lines of `grid.cols` values
/// (enough digits to read back the same float), e.g. row i of A as `attnlab row` prints it.
std::string grid_csv(std::span<const float> values, const PatchGrid& grid);

} // namespace attnlab
