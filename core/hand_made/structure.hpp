#pragma once
// The structure of the layer matrices of fig. 26.21 and the pictures the matrix and output
// views draw: the attention matrix A (eq. 26.20, masked as in fig. 26.18) reduced to an image,
// the matrix of a dense fc layer over tokens (eq. 26.6, exercise 12.1), the banded
// block-Toeplitz matrix of a k×k convolution over the patch grid, and T_out = A V (eq. 26.21)
// as 8-bit colours. Pure CPU math: no GL, no UI.
#include "core/base/colormap.hpp"
#include "core/hand_made/mask.hpp"
#include "core/hand_made/tokens.hpp"
#include "core/base/types.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace attnlab {

/// An N×N matrix over the tokens shown as an S×S image: image pixel (r,c) stands for the
/// b×b block of matrix cells with rows [r·b, min(r·b+b, N)) and columns [c·b, min(c·b+b, N))
/// (blocks on the last row/column may be smaller). b = 1 (S = N) keeps every cell.
struct BlockImage {
  int N = 0;      ///< side of the matrix (tokens)
  int block = 1;  ///< b, matrix cells per image pixel along each axis
  int side = 0;   ///< S = ceil(N / b)
  /// S×S, row-major: the mean of the block's cells (masked or structurally zero cells count
  /// with their value, 0, so this is the true mean of the matrix over the block).
  std::vector<float> values;
  /// S×S: 1 when EVERY cell of the block is masked (for A) or zero (for a structure matrix);
  /// such blocks are drawn black. A block with a single kept cell has 0 here.
  std::vector<std::uint8_t> all_zero;

  float value(int r, int c) const { return values[static_cast<size_t>(r) * side + c]; }
  bool empty(int r, int c) const { return all_zero[static_cast<size_t>(r) * side + c] != 0; }
  /// First matrix row (or column) of image row (or column) r, and one past the last.
  int first(int r) const { return r * block; }
  int last(int r) const { return r * block + block < N ? r * block + block : N; }
};

/// How a block of matrix cells becomes one pixel of a BlockImage: the mean of its cells (the
/// true average, masked cells counted as 0) or the largest of them (masked cells count as 0,
/// and no weight is negative, so a block shows its strongest weight however small its share).
enum class Pooling { Mean, Max };
inline constexpr int kPoolingCount = 2;
/// "mean" or "max".
const char* pooling_name(Pooling pooling);

/// The block side b = ceil(N / max_side) that fits N cells into at most max_side pixels
/// (1 when N <= max_side: exact). Throws Error when N < 1 or max_side < 1.
int block_size(int N, int max_side);

/// Reduces A (N×N, row-major, N² values: a_ij at i·N + j, eq. 26.20) to at most
/// max_side × max_side pixels by pooling b×b blocks (block_size()): their mean (the default)
/// or their maximum. `mask` (may be null: nothing masked) marks the cells with
/// mask->allowed(i, j) == false; all_zero is set only when every cell of a block is masked.
/// Throws Error when A.size() != N² or N < 1.
BlockImage downsample_matrix(std::span<const float> A, int N, int max_side, const Mask* mask,
                             Pooling pooling = Pooling::Mean);

/// The S×S image of an N×N matrix before any of its rows is pooled: block b =
/// block_size(N, max_side), S = ceil(N / b), every value 0 and every block all_zero. What
/// pool_block_row() (and HandMadeModel::pool_matrix_rows) fill one image row at a time.
/// Throws Error like block_size().
BlockImage empty_block_image(int N, int max_side);

/// Pools image row r of `img` from matrix rows img.first(r) .. img.last(r) − 1, given as
/// `rows` ((last − first) × N floats, row-major, a_ij at (i − first)·N + j): each pixel (r, c)
/// becomes the mean or the maximum of its block, all_zero when mask (may be null) keeps no cell
/// of it. So an N×N matrix can be pooled a band of rows at a time, never holding N² values.
/// Mean sums in double. Throws Error when r is outside [0, S) or rows has the wrong size.
void pool_block_row(BlockImage& img, int r, std::span<const float> rows, const Mask* mask, Pooling pooling);

/// Convolution over the patch grid (fig. 26.21, "conv"): a k×k kernel (k odd, r = (k−1)/2)
/// centred on token i, zero padding at the grid's edges, same output grid. Token j is in the
/// window of token i when |col_j − col_i| <= r and |row_j − row_i| <= r. Returns the kernel
/// tap that weights j for output i, (row_j − row_i + r)·k + (col_j − col_i + r) in [0, k²),
/// or −1 when the matrix entry (i,j) is zero. i, j in [0, N). Throws Error when k is even or
/// < 1.
int conv_tap(const PatchGrid& grid, int k, int i, int j);
inline bool conv_nonzero(const PatchGrid& grid, int k, int i, int j) { return conv_tap(grid, k, i, j) >= 0; }

/// The conv layer written as a matrix W_conv (N×N, rows = output tokens, columns = input
/// tokens, raster order): W_conv(i,j) = kernel[conv_tap(i,j)] or 0, one value per pair of
/// tokens (with D-dimensional tokens each entry would be a D×D block). Seen as grid.rows ×
/// grid.rows blocks of grid.cols × grid.cols cells, only the 2r+1 central block diagonals are
/// non-zero, each block is banded with bandwidth r and constant along its diagonals, and
/// every block diagonal repeats one block (block-Toeplitz with Toeplitz blocks; for k = 3,
/// block tridiagonal with tridiagonal blocks). `kernel` has k² weights,
/// row-major. Throws Error for a bad k, a kernel of the wrong size, or N > 4096 (use
/// conv_structure_image() for large grids).
Matrix conv_matrix(const PatchGrid& grid, int k, std::span<const float> kernel);

/// The number of non-zero entries of W_conv (conv_matrix()) for any grid: each output token
/// counts the window positions inside the grid; this is separable, so it is the product of a
/// sum over columns and a sum over rows, about k²N for large grids (3×3 grid, k = 3: 49).
/// Throws Error for a bad k.
long long conv_nonzeros(const PatchGrid& grid, int k);

/// True when M (N×N with N = rows·cols) is block-Toeplitz with Toeplitz blocks for a grid of
/// `cols` columns: M(i,j) depends only on (row_j − row_i, col_j − col_i), i.e. every block
/// (R, R') equals block (R+1, R'+1) and inside each block every diagonal is constant. Exact
/// comparison. Throws Error when M is not square or its size is not a multiple of cols.
bool is_block_toeplitz(const Matrix& M, int cols);

/// A fixed k×k kernel for the pictures: k² seeded values in [0.35, 1] (non-zero so that the
/// band is visible; the values only tell the taps apart). Throws Error for a bad k.
std::vector<float> demo_kernel(int k, std::uint32_t seed);

/// A fixed stand-in weight of a dense fc layer over tokens (eq. 26.6): a hash of (i, j, seed)
/// mapped to [0.35, 1]. Every entry is a separate weight; with D-dimensional tokens each
/// entry stands for a D×D block, D²N² weights in all (exercise 12.1).
float fc_weight(int i, int j, std::uint32_t seed);

/// W_conv (see conv_matrix()) reduced like downsample_matrix(), for any grid size: the cost
/// is O(N·k²), never N². all_zero marks blocks without a single tap.
BlockImage conv_structure_image(const PatchGrid& grid, int k, std::span<const float> kernel, int max_side);

/// The dense fc matrix (fc_weight(), N×N) reduced like downsample_matrix(). No block is
/// ever empty. The cost is O(N²) cheap hashes: about a second at N = 15625 on a slow machine,
/// so callers with a UI should run it off their UI thread for large N (it is thread-safe).
BlockImage fc_structure_image(int N, int max_side, std::uint32_t seed);

/// How a BlockImage's values map to colours: the normalization over the whole matrix (every
/// non-empty block) or separately for each image row (each query's row stretched on its own,
/// as the image view does).
enum class BlockRange { Whole, EachRow };

/// RGB8 pixels (S×S×3, rows from the top) of a BlockImage: each non-empty block's value is
/// normalized (normalization_range / normalize_value of colormap.hpp over the non-empty
/// blocks, of the matrix or of the row) and coloured with colormap_rgb8; when all those
/// values are equal (a flat range, e.g. row 0 of a causal A holds the single weight 1) they
/// take the top colour. Empty blocks (all_zero) are black (0,0,0). `t_min` in [0,1) lifts the
/// non-empty blocks into [t_min, 1] of the colormap (t' = t_min + (1 − t_min)·t), so that a
/// sparse structure averaged over large blocks stays visible against the black empty ones;
/// 0 keeps the colours faithful to a colour bar.
std::vector<std::uint8_t> block_image_rgb8(const BlockImage& img, Colormap c, Normalization n, BlockRange range,
                                           float t_min = 0.0f);

/// 8-bit RGB (N×3 bytes, row i = token i) of three columns of a token matrix: M(i, first_col
/// + ch) in [0,1] → round(255·v), clamped (non-finite → 0). Used for T_out = A V (eq. 26.21,
/// V = mean colours, so each row is a colour), the merged output (eq. 26.28) and the input
/// mean colours (columns TokenLayout::kColour of T). Throws Error when M has fewer than
/// first_col + 3 columns or first_col < 0.
std::vector<std::uint8_t> colours_rgb8(const Matrix& M, int first_col = 0);

}  // namespace attnlab
