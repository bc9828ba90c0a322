#pragma once
// The CPU reference of attention (Eigen): scores, temperature, masked stable softmax, A, A V.
// The GPU engine implements the same functions and is tested against these.
#include "core/hand_made/mask.hpp"
#include "core/base/types.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace attnlab {

/// Stable softmax of one row (eq. 26.15 / 26.20): subtracts the max over the kept entries,
/// sums in double. `keep[j] == false` gives weight exactly 0. Returns false (and all-zero
/// weights) when no entry is kept: such a row is reported, never NaN.
bool masked_softmax(std::span<const float> logits, std::span<const bool> keep, std::span<float> weights);

/// Plain softmax of every entry (no mask), for exercise 12.4.
std::vector<float> softmax(std::span<const float> logits);

/// Row i of A for one head.
struct RowResult {
  RowVector logits;   ///< s_ij / (τ√m), 1 × N (masked entries hold their logit; weight is 0).
  RowVector weights;  ///< a_ij, 1 × N, sums to 1 unless `empty`.
  bool empty = false; ///< every key was masked for this query.
};

/// a_i = softmax(q_i Kᵀ / (τ √m)) with the mask (eq. 26.20 with temperature). Q, K: N × m.
/// Throws Error if τ <= 0 or i is outside [0,N).
RowResult attention_row(const Matrix& Q, const Matrix& K, int i, float temperature, const Mask& mask);

/// The row for an external query vector q (1 × m) that is not one of the tokens (figs. 26.7,
/// 26.8, eq. 26.14–26.15): no mask.
RowResult attention_row_for(const RowVector& q, const Matrix& K, float temperature);

/// The full A (N × N, eq. 26.20). Rows with every key masked are all zero and listed in
/// `empty_rows` if given.
Matrix attention_matrix(const Matrix& Q, const Matrix& K, float temperature, const Mask& mask,
                        std::vector<int>* empty_rows = nullptr);

/// T_out = A V (eq. 26.21): A is N × N, V is N × v.
Matrix attend(const Matrix& A, const Matrix& V);

/// Multihead merge (eqs. 26.27–26.28): concatenates the heads' T_out (each N × v) into
/// T̄ (N × k·v) and returns T̄ W_MSA.
Matrix merge_heads(const std::vector<Matrix>& outputs, const Matrix& W_MSA);

/// Parameter counts of exercise 12.1 for N tokens of width D with one head of width D.
struct AttentionCost {
  long long qkv_weights;   ///< 3 D²  (Ω_q, Ω_k, Ω_v)
  long long qkv_biases;    ///< 3 D   (β_q, β_k, β_v, each D × 1)
  long long attention_weights;  ///< N² entries a_ij
  long long fc_weights;    ///< D² N² for a dense layer from all DN inputs to all DN outputs
  long long fc_biases;     ///< D N, one per output
};
AttentionCost attention_cost(long long N, long long D);

/// Saturation of a softmax row: the largest weight and the entropy in nats (0 = one-hot,
/// log(kept) = uniform), for the cost panel and exercise 12.4.
struct Saturation {
  float max_weight;
  float entropy;
};
Saturation saturation(std::span<const float> weights);

/// How far a row of A is from uniform over the keys it may attend to, for an honest colour
/// scale (a min–max map stretches a ±10 % spread over the whole colormap). Over the kept keys
/// (keep[j] != 0; `keep` empty: all): n, uniform = 1/n (the weight of every key in a flat row),
/// max_over_min = max a_ij / min a_ij (infinity when a kept weight is 0), entropy_ratio =
/// H / log n with H = −Σ a_ij log a_ij (1 = uniform, 0 = one-hot; 1 when n = 1), and
/// nearly_uniform when max_over_min < kNearlyUniform. A row with no kept key: n = 0, not flat.
struct RowFlatness {
  static constexpr double kNearlyUniform = 2.0;
  int n = 0;
  double uniform = 0;
  double max_over_min = 0;
  double entropy_ratio = 0;
  bool nearly_uniform = false;
};
RowFlatness row_flatness(std::span<const float> row, std::span<const std::uint8_t> keep);

} // namespace attnlab
