// The attention matrix A of one head (eq. 26.20 with τ and the mask) pooled to an S×S image for
// the screen, without ever storing its N² weights (AttentionEngine::pool_matrix_rows). Image
// pixel (r, c) stands for the b×b block of cells with rows [r·b, min(r·b + b, N)) and columns
// [c·b, min(c·b + b, N)), as core/structure.hpp's BlockImage. One call covers a band of image
// rows [u_first, u_first + u_count) in two passes:
//   POOL_PASS_STATS: one invocation per matrix row i of the band: the softmax statistics over
//     the keys query i may see, M_i = max_j l_ij and S_i = Σ_j exp(l_ij − M_i), in one sweep
//     (online: S is rescaled when M grows, so no exp overflows); stored as (M_i, 1/S_i), or
//     (−inf, 0) for a row with no key left.
//   POOL_PASS_IMAGE: one invocation per pixel of the band: over the block's cells,
//     a_ij = exp(l_ij − M_i)/S_i for kept keys and exactly 0 for masked ones, the mean (the sum
//     over the block's cells, masked ones included, divided by their count) or the maximum;
//     flag 1 when no cell of the block is kept (drawn black).
// l_ij = q_i·k_j / (τ√m) as attend_rows.comp computes it; Q, K and the keep flags are read
// through the engine's buffer textures (q and k rows padded to `stride` floats).
layout(local_size_x = 64) in;

layout(binding = 1) uniform samplerBuffer u_Q;     // RGBA32F: every head's Q, rows of stride/4 vec4s
layout(binding = 2) uniform samplerBuffer u_K;     // RGBA32F: every head's K, same layout
layout(binding = 3) uniform usamplerBuffer u_keep; // R32UI: per key, 1 = kept
layout(std430, binding = 5) buffer StatsBuffer { vec2 stats[]; };            // per matrix row of the band
layout(std430, binding = 6) writeonly buffer ValueBuffer { float values[]; };  // u_count × u_side
layout(std430, binding = 7) writeonly buffer FlagBuffer { uint flags[]; };     // u_count × u_side

layout(std140, binding = 0) uniform Params {  // PoolMatrixParams in core/gpu/engine.cpp
  int u_pass, u_N, u_block, u_side, u_first, u_count, u_pooling;
  int u_qk_offset, u_m, u_stride;  // in floats; offset and stride are multiples of 4
  int u_cols, u_mask_kind, u_radius;
  float u_temperature;
};

vec4 q0;  // the first four components of q_i, kept in registers (m <= 4 for most heads)

float score(int qrow, int j, int vecs) {
  int krow = (u_qk_offset + j * u_stride) / 4;
  float acc = dot(q0, texelFetch(u_K, krow));
  for (int c = 1; c < vecs; ++c) acc += dot(texelFetch(u_Q, qrow + c), texelFetch(u_K, krow + c));
  return acc;
}

bool kept(int i, int j) {
  uint keep_j = (u_mask_kind == MASK_RANDOM || u_mask_kind == MASK_PAINTED) ? texelFetch(u_keep, j).r : 1u;
  return mask_allowed(u_mask_kind, u_radius, u_cols, i, j, keep_j);
}

void main() {
  int vecs = u_stride / 4;
  float scale = 1.0 / (u_temperature * sqrt(float(u_m)));
  int row0 = u_first * u_block;  // the band's first matrix row

  if (u_pass == POOL_PASS_STATS) {
    int i = row0 + int(gl_GlobalInvocationID.x);
    if (i >= min(u_N, (u_first + u_count) * u_block)) return;
    int qrow = (u_qk_offset + i * u_stride) / 4;
    q0 = texelFetch(u_Q, qrow);
    float M = NEG_INF, S = 0.0;
    for (int j = 0; j < u_N; ++j) {
      if (!kept(i, j)) continue;
      float l = score(qrow, j, vecs) * scale;  // s_ij / (τ √m)
      if (l > M) {
        S = S * exp(M - l) + 1.0;  // exp(−inf) = 0 for the first key
        M = l;
      } else {
        S += exp(l - M);
      }
    }
    stats[i - row0] = M == NEG_INF ? vec2(NEG_INF, 0.0) : vec2(M, 1.0 / S);
    return;
  }

  // POOL_PASS_IMAGE: pixel (r, c) of the band.
  int c = int(gl_GlobalInvocationID.x), rr = int(gl_GlobalInvocationID.y);
  if (c >= u_side || rr >= u_count) return;
  int r = u_first + rr;
  int i0 = r * u_block, i1 = min(i0 + u_block, u_N);
  int j0 = c * u_block, j1 = min(j0 + u_block, u_N);
  float sum = 0.0, big = 0.0;  // a_ij >= 0, masked cells are 0
  bool any_kept = false;
  for (int i = i0; i < i1; ++i) {
    vec2 st = stats[i - row0];
    if (st.y == 0.0) continue;  // no key left for query i: every cell of the row is masked
    int qrow = (u_qk_offset + i * u_stride) / 4;
    q0 = texelFetch(u_Q, qrow);
    for (int j = j0; j < j1; ++j) {
      if (!kept(i, j)) continue;
      any_kept = true;
      float a = exp(score(qrow, j, vecs) * scale - st.x) * st.y;
      sum += a;
      big = max(big, a);
    }
  }
  int at = rr * u_side + c;
  values[at] = u_pooling == POOLING_MAX ? big : sum / float((i1 - i0) * (j1 - j0));
  flags[at] = any_kept ? 0u : 1u;
}
