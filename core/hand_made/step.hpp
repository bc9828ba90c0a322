#pragma once
// The numbers behind three teaching views, kept in core so tests can check them without a
// window:
// - one row of attention taken apart key by key (figs. 26.8, 26.10; eqs. 26.20–26.22);
// - the parameter, FLOP and memory counts of exercises 12.1 and 12.5, and how saturated the
//   softmax of a row is as the temperature changes;
// - the tokenization of one patch (fig. 26.2, section 26.9.1, eq. 26.32).
#include "core/hand_made/attention.hpp"
#include "core/io/image.hpp"
#include "core/hand_made/mask.hpp"
#include "core/hand_made/tokens.hpp"
#include "core/base/types.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace attnlab {

// ---------------------------------------------------------------------------------------------
// Step by step (figs. 26.8, 26.10)

/// Every intermediate value of row i of A for one head. Vectors indexed by the key j have N
/// entries. Sums and exponentials are taken in double, like masked_softmax(), so `weight`
/// equals attention_row()'s weights to float rounding.
struct StepBreakdown {
  int i = 0;                ///< The query token.
  int m = 0;                ///< Query/key length m' (columns of Q and K).
  float temperature = 1;    ///< τ.
  double divisor = 1;       ///< τ·√m: every score is divided by this (eq. 26.20 with τ).
  RowVector q;              ///< q_i, 1 × m (row i of Q).
  std::vector<float> score;   ///< s_ij = q_iᵀ k_j (eq. 26.22), also for masked keys.
  std::vector<float> scaled;  ///< s_ij / (τ√m): the logits, also for masked keys.
  std::vector<std::uint8_t> keep;  ///< 1 = key j may be attended to, 0 = masked.
  int kept = 0;             ///< Number of keys kept by the mask.
  double row_max = 0;       ///< Largest `scaled` over the kept keys (0 when none is kept).
  std::vector<double> exp_term;  ///< exp(scaled_j − row_max) for kept keys, 0 for masked ones.
  double row_sum = 0;       ///< Σ_j exp_term_j, the softmax's denominator (0 when none kept).
  std::vector<float> weight;  ///< a_ij = exp_term_j / row_sum; exactly 0 for masked keys.
  bool empty = false;       ///< Every key is masked: all weights are 0 and t_out is 0.
  RowVector t_out;          ///< t_out,i = Σ_j a_ij v_j (eq. 26.21 for row i), 1 × v.
};

/// Takes row i of softmax(Q Kᵀ / (τ√m)) (eq. 26.20 with temperature τ and the mask) apart,
/// and forms the weighted sum of values. Q, K: N × m; V: N × v; i in [0,N); τ > 0 and finite.
/// Throws Error when i is outside [0,N), τ is not > 0, or the shapes disagree.
/// Cost: O(N·(m+v)); never builds N × N.
StepBreakdown step_breakdown(const Matrix& Q, const Matrix& K, const Matrix& V, int i, float temperature,
                             const Mask& mask);

/// Indices of the kept keys (keep[j] != 0; `keep` empty = all kept) sorted by weight, largest
/// first, ties by smaller j; at most `count` of them (count <= 0 gives none). `weights` and a
/// non-empty `keep` must have the same length (Error otherwise).
std::vector<int> top_keys(std::span<const float> weights, std::span<const std::uint8_t> keep, int count);

/// t = Σ_j a_j v_j: one row of T_out = A V (eq. 26.21). `a` has N entries, V is N × v; the
/// result is 1 × v, summed in double. Throws Error when N does not match V's rows.
RowVector weighted_sum(std::span<const float> a, const Matrix& V);

// ---------------------------------------------------------------------------------------------
// Cost (exercises 12.1, 12.5) and saturation

/// Counts for N tokens of width D and heads of query/key lengths m_h (one per head), value
/// width v. Multiply-adds count as 2 FLOPs (one multiply and one add). Bytes are float32.
struct CostReport {
  long long N = 0, D = 0, H = 0, v = 0;
  /// Exercise 12.1 for one head of width D: 3D² weights, 3D biases, N² attention weights,
  /// D²N² weights and DN biases for a dense layer (see attention_cost()).
  AttentionCost exercise;
  long long attention_weights_all = 0;  ///< H·N²: one N × N matrix A per head.
  std::vector<long long> qk_flops;      ///< Per head: Q Kᵀ is N²·m_h multiply-adds = 2N²m_h FLOPs.
  long long qk_flops_all = 0;           ///< Sum over the heads.
  long long av_flops_all = 0;           ///< A V over the heads: 2N²v FLOPs each.
  long long a_bytes = 0;                ///< One head's A in float32: 4N² bytes.
  long long a_bytes_all = 0;            ///< Every head's A: 4HN² bytes.
  long long row_bytes_all = 0;          ///< One row per head (what the app's row path keeps): 4HN.
  // Exercise 12.5: H heads whose queries, keys and values have width D/H instead of D.
  double head_width = 0;                ///< D/H (not always a whole number).
  double split_qkv_weights_per_head = 0;  ///< 3·D·(D/H): W_q, W_k, W_v are (D/H) × D each.
  double split_qkv_weights_all = 0;       ///< H times that = 3D², the same as one head of width D.
  double split_qk_flops_per_head = 0;     ///< 2N²·(D/H).
  double split_qk_flops_all = 0;          ///< 2N²D, the same as one head of width D.
  long long full_qkv_weights_all = 0;     ///< H heads of full width D: 3HD² weights.
  long long full_qk_flops_all = 0;        ///< and 2HN²D FLOPs for the Q Kᵀ products.
};

/// Fills CostReport. N >= 0, D >= 0, v >= 0, every m_h >= 0; Error otherwise. H = m.size()
/// (0 heads gives zero per-head totals and head_width 0).
CostReport cost_report(long long N, long long D, std::span<const int> m, long long v);

/// The saturation (max weight, entropy in nats) a row would have at temperature `tau`, from
/// its logits computed at `tau_now` (logits scale as 1/τ, so they are multiplied by
/// tau_now/tau). `keep` empty = all kept, else the same length as `logits`. Masked keys get
/// weight 0. One value per entry of `taus`; every τ must be > 0 (Error otherwise). A row with
/// nothing kept gives {0, 0}.
std::vector<Saturation> saturation_curve(std::span<const float> logits, std::span<const std::uint8_t> keep,
                                         float tau_now, std::span<const float> taus);

// ---------------------------------------------------------------------------------------------
// Tokenization (fig. 26.2, section 26.9.1)

/// The raw token of patch i: its pixels vectorized exactly like row i of raw_tokens()
/// (1 × 3K², channels interleaved, pixel rows from the top, padding 0). Throws Error when i
/// is outside [0,N). Cost O(K²), unlike raw_tokens() which builds every patch.
RowVector raw_token(const Image& img, const PatchGrid& grid, int i);

/// r = W_tokenize x for one raw token x (1 × 3K²) and W_tokenize (R × 3K²): the random
/// projection part of the feature token, which is the tokenizing convolution of eq. 26.32
/// (kernel = stride = K, one output channel per row of W_tokenize) evaluated at one patch.
/// Returns 1 × R. Throws Error when x's width is not W_tokenize's column count.
RowVector project_patch(const RowVector& x, const Matrix& W_tokenize);

/// One named block of columns of the head input X = [T | P] (see TokenLayout).
struct TokenPart {
  std::string symbol;  ///< "c", "c/|c|", "g", "r", "p" (ASCII and Latin-1 only: the UI font has no more)
  std::string what;    ///< A few words on what the block holds.
  int begin = 0, count = 0;
};
/// The blocks of X for a positional code of `code_len` values (>= 0): c, ĉ, g, r from
/// TokenLayout, then p (omitted when code_len is 0). They tile [0, d + code_len) in order.
std::vector<TokenPart> token_parts(int code_len);

} // namespace attnlab
