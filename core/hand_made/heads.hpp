#pragma once
// The preset heads of multihead self-attention (eqs. 26.17–26.19, 26.22–26.28). No trained
// weights ship, so each head is built from hand-designed features of the token T.
#include "core/base/settings.hpp"
#include "core/base/types.hpp"

#include <string>
#include <vector>

namespace attnlab {

/// One head. Every head reads the same input X = [T | P] (N × D, D = d + code_length): the
/// feature token T (see TokenLayout) and the positional codes P. Q = X W_qᵀ, K = X W_kᵀ,
/// V = X W_vᵀ (eqs. 26.17–26.19): W_q, W_k are m × D, W_v is v × D (v = 3: every head's
/// value is the patch's mean colour, so T_out can be drawn as an image).
struct Head {
  HeadKind kind = HeadKind::Colour;
  std::string name;
  Matrix W_q, W_k, W_v;
  int m() const { return static_cast<int>(W_q.rows()); }
};

/// The six preset heads, in HeadKind order:
/// - colour: q = k = ĉ (unit mean colour), m = 3 (fig. 26.12);
/// - position: q = k = p, the positional code, m = code_length;
/// - colour+position: q = k = [ĉ; ½p], m = 3 + code_length;
/// - texture: q = k = [10·energy, orientation₁, orientation₂] from g, m = 3;
/// - random: q = W_q r, k = W_k r with seeded Gaussian 8 × R matrices (entries N(0,1/R)), m = 8
///   (what an untrained ViT's projections do);
/// - custom: q = W_q ĉ, k = W_k ĉ with the user's 3×3 matrices, m = 3.
/// `code_len` is the width of P (code_length of the settings' PosSpec).
std::vector<Head> make_heads(int code_len, const Settings& settings);

/// Per-head projections with the positional mode applied: Q, K (N × m'), V (N × 3).
struct HeadQKV {
  Matrix Q, K, V;
  int m() const { return static_cast<int>(Q.cols()); }
};

/// Q = X W_qᵀ etc. for one head; in Concat mode λP is appended to Q and K (m' = m + code_len).
/// X is N × D as above (in Add mode the caller has already added P W_posᵀ to its T part).
HeadQKV project(const Head& head, const Matrix& X, const Matrix& P, const PosSpec& pos);

/// A head's W_q or W_k as applied to X in the positional mode: in Concat mode the rows
/// λ·[0 | I] over the P columns of X are appended, so W' x = [W x; λp] (m' = m + code_len);
/// otherwise W itself. project() gives the same Q and K.
Matrix query_key_weights(const Matrix& W, const PosSpec& pos, int code_len);

/// W_MSA for merging k heads of value width v (eq. 26.28): (k·v) × v, the average of the heads'
/// outputs, so the merged token is again a colour.
Matrix merge_weights(int heads, int v);

} // namespace attnlab
