#pragma once
// Positional codes, eqs. 26.38–26.40 and fig. 26.20.
#include "core/base/settings.hpp"
#include "core/hand_made/tokens.hpp"
#include "core/base/types.hpp"

namespace attnlab {

/// Length of p: 2(P+1) with sines only (16 for the defaults B = 2, P = 7), 4(P+1) with
/// sine–cosine pairs.
int code_length(const PosSpec& spec);

/// The code of one position: p = [p_x; p_y] with p_x = [sin(x), sin(x/B), …, sin(x/B^P)]
/// (eq. 26.38), p_y likewise (26.39); with `sincos`, p_x = [sin(x), cos(x), sin(x/B), cos(x/B), …].
/// x = column, y = row, in patches. Throws Error if B <= 0 or P < 0.
Vector positional_code(float x, float y, const PosSpec& spec);

/// Every token's code: N × code_length(spec), row i for patch (col_of(i), row_of(i)).
Matrix positional_codes(const PatchGrid& grid, const PosSpec& spec);

/// Add mode's fixed projection W_pos (d × code_length), entries N(0, 1/code_length), seeded:
/// T ← T + P W_posᵀ before W_q, W_k, W_v (ViT's way).
Matrix add_mode_projection(int d, const PosSpec& spec, std::uint32_t seed);

/// Checks B > 0, 0 <= P <= 30 and a finite λ; throws Error naming the bad setting.
void validate(const PosSpec& spec);

} // namespace attnlab
