#pragma once
// The numbers behind three teaching views, on the CPU (Eigen), no GL and no UI:
// - positional codes (fig. 26.20, eqs. 26.38–26.40): the similarity p_iᵀp_j of two codes and
//   the rows of A in concat mode for any weight λ;
// - the permutation demo (section 26.8, eqs. 26.29–26.31, fig. 26.15, exercise 12.3): a seeded
//   shuffle of an image's patches and how far attention is from moving along with it;
// - the question token (figs. 26.7–26.8, eqs. 26.11–26.16): an external query built from a
//   colour, and the output token with the chapter's "count" dimension.
#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/hand_made/attention.hpp"
#include "core/base/colormap.hpp"
#include "core/hand_made/heads.hpp"
#include "core/io/image.hpp"
#include "core/hand_made/mask.hpp"
#include "core/hand_made/reference.hpp"
#include "core/base/settings.hpp"
#include "core/hand_made/tokens.hpp"
#include "core/base/types.hpp"

namespace attnlab {

// ---------------------------------------------------------------- positional codes

/// p_iᵀ p_j for every token j (eq. 26.40's codes compared by a dot product, as a concat-mode
/// score does). `P` is N × L, one code per row (positional_codes(), or the right-hand columns
/// of the head input X); i in [0,N). Returns N unitless values; p_iᵀp_i = |p_i|² <= L.
/// Throws Error when P has no rows or columns or i is outside [0,N).
std::vector<float> code_similarity(const Matrix& P, int i);

/// Name of dimension n of p for `spec` (eqs. 26.38–26.39, in the order positional_code()
/// writes them): "sin(x)", "sin(x/2)", "sin(x/2^3)", "cos(y/1.5^2)"… with B written out.
/// Throws Error when n is outside [0, code_length(spec)).
std::string code_dimension_label(const PosSpec& spec, int n);

/// Rows of A for one head in concat mode at any weight λ without tokenizing again: q'_i =
/// [q_i; λp_i], k'_j = [k_j; λp_j], m' = m + L, so the score is
///   s'_ij = q_iᵀk_j + λ² p_iᵀp_j  and  a_i = masked softmax_j(s'_ij / (τ√m'))  (eq. 26.20).
/// Built from a head input X = [T | P] (N × D, as Reference::X() or the GPU's tokens()); in Add
/// mode the projection P W_posᵀ that was added to T is taken out again first, so the result is
/// what Reference gives for the same settings with pos.mode = Concat and pos.lambda = λ.
class LambdaSweep {
 public:
  /// `head`: one of setup.heads (W_q, W_k are m × D); `settings`: those X was made with (their
  /// positional mode says whether T carries P W_posᵀ; τ and the mask come from them too).
  /// Throws Error when X's shape does not match the setup (N rows, D = d + L columns).
  LambdaSweep(const Head& head, const Matrix& X, const ModelSetup& setup, const Settings& settings);

  int N() const { return static_cast<int>(Q_.rows()); }
  /// m' = m + L: the query/key length in concat mode (independent of λ).
  int m_concat() const { return static_cast<int>(Q_.cols() + P_.cols()); }
  /// Row i of A at weight λ (any finite λ; λ = 0 leaves the codes out but keeps m'). The mask
  /// of the settings applies; a fully masked row comes back `empty` with zero weights.
  /// Throws Error when i is outside [0,N) or λ is not finite.
  RowResult row(int i, float lambda) const;

 private:
  Matrix Q_, K_, P_;
  Mask mask_;
  float temperature_;
};

// ---------------------------------------------------------------- permutation

/// A seeded permutation π of {0, …, n−1}: π[m] is the original token placed at position m.
/// Fisher–Yates driven by std::mt19937 with an unbiased bounded draw written here (not
/// std::shuffle), so one seed gives the same shuffle with every standard library.
/// Throws Error when n < 0.
std::vector<int> seeded_permutation(int n, std::uint32_t seed);

/// The inverse π⁻¹: inv[π[m]] = m, i.e. where original token i went. Throws Error when `perm`
/// is not a permutation of {0, …, size−1}.
std::vector<int> inverse_permutation(std::span<const int> perm);

/// The image with its K×K patches moved as the tokens are (eq. 26.30's permute(), applied to
/// the pixels): patch m of the result is patch π[m] of `image`, grid positions in raster order.
/// Pixels outside the grid (the right/bottom remainder that Crop drops) are left as they are.
/// Throws Error when `grid` was not made for this image's size, when perm is not a
/// permutation of the N tokens, or when the grid has partial patches (Pad mode with W or H not
/// a multiple of K: a partial patch cannot move to an inner place).
Image permute_patches(const Image& image, const PatchGrid& grid, std::span<const int> perm);

/// Values given per position of the shuffled grid, put back in the original order:
/// out[π[m]] = values[m] ("undoing the shuffle"). Throws Error when the sizes differ or perm is
/// not a permutation.
std::vector<float> undo_permutation(std::span<const float> values, std::span<const int> perm);

/// Largest |a_ij − a^π_{π⁻¹(i) π⁻¹(j)}| over the keys j: row i of A on the original image
/// against the row of the same patch on the shuffled image, undone (weights are unitless; a
/// flat row has weights near 1/N). 0 up to float rounding when attention is permutation
/// equivariant (eq. 26.30: no positional codes, no mask, heads that do not read p).
/// `original` and `shuffled` must be References of an image and of permute_patches() of it
/// with the same settings. Throws Error when their N or perm's size differ or i is outside.
float row_difference(const Reference& original, const Reference& shuffled, std::span<const int> perm, int head,
                     int query);

/// The same for the output tokens: max over n and the 3 channels of
/// |T_out[n] − T_out^π[π⁻¹(n)]| (eq. 26.21; values are colours in [0,1] for every head).
/// Costs two passes of N rows (N² m' multiply–adds each), so it checks `cancel` (if given)
/// between rows and returns nothing when it was set. Throws Error like row_difference().
std::optional<float> output_difference(const Reference& original, const Reference& shuffled, std::span<const int> perm,
                                       int head, const std::atomic<bool>* cancel = nullptr);

struct PermutationReadout {
  std::vector<int> perm;        ///< π: seeded_permutation(N, seed)
  int moved_query = 0;          ///< where the query patch lands in the shuffled image: π⁻¹(i)
  float row_difference = 0;     ///< see row_difference()
  float output_difference = 0;  ///< see output_difference()
};

/// The whole demo for one image: shuffles its patches with seeded_permutation(N, seed), runs
/// the CPU reference on both images with `settings`, and compares row `query` of `head` and
/// every output token after undoing the shuffle. Throws Error for bad settings, a head outside
/// [0, kHeadCount), a query outside the grid, or a grid with partial patches.
PermutationReadout permutation_readout(const Image& image, const Settings& settings, int head, int query,
                                       std::uint32_t seed);

// ---------------------------------------------------------------- question token

/// The head input row x (1 × D) of a question token that asks for a colour (figs. 26.7–26.8):
/// c = `colour` (RGB, any finite values, nominally [0,1]) at TokenLayout::kColour, its unit
/// direction ĉ = c/|c| at kUnitColour (black gets (1,1,1)/√3, as unit_rows() does), and zeros
/// elsewhere: no texture, no random features and no position (its code part is 0).
/// Throws Error when D < TokenLayout::d or a channel is not finite.
RowVector question_token(const std::array<float, 3>& colour, int D);

/// Row of A for the question x against the image's keys on the CPU (eqs. 26.14–26.15):
/// q = W_q' x with W_q' = query_key_weights() of the head (concat mode appends λ·0), then
/// a_j = softmax_j(qᵀk_j / (τ√m')), unmasked. Throws Error when x's width is not D or the head
/// is outside [0, kHeadCount).
RowResult question_row(const Reference& ref, int head, const RowVector& x);

/// An output token with the chapter's extra "count" dimension: t_out = [colour; count].
struct QuestionAnswer {
  std::array<float, 3> colour{};  ///< Σ_j a_j v_j (RGB for the preset heads' values)
  float count = 0;                ///< Σ_j a_j · 1
};

/// The output token of eq. 26.16 summed over the tokens, with the chapter's extra constant
/// dimension: every value v_j (a row of V, N × 3) gets a 1 appended, so
///   t_out = Σ_j a_j [v_j; 1] = [Σ_j a_j v_j ; Σ_j a_j]   (sums in double).
/// The count is 1 (up to rounding) for softmax weights (a row of A sums to 1) and the number
/// of matched tokens for 0/1 weights (fig. 26.7's counting question). Weights are unitless,
/// N of them.
/// Throws Error when weights.size() != V.rows() or V does not have 3 columns.
QuestionAnswer output_with_count(std::span<const float> weights, const Matrix& V);

/// 0/1 weights: 1 where scores[j] >= threshold, else 0 (the chapter's idealised weights for a
/// counting question, fig. 26.7, where matched tokens get weight 1 and the softmax is left out
/// as in fig. 26.8). A NaN score never matches.
std::vector<float> match_weights(std::span<const float> scores, float threshold);

}  // namespace attnlab
