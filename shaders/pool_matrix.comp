// The attention matrix A of one head (eq. 26.20 with τ and the mask) pooled to an S×S image for
// the screen, without ever storing its N² weights (HandMadeGpuEngine::pool_matrix_rows). Image
// pixel (r, c) stands for the b×b block of cells with rows [r·b, min(r·b + b, N)) and columns
// [c·b, min(c·b + b, N)), as core/hand_made/structure.hpp's BlockImage. One call covers a band of image
// rows [u_first, u_first + u_count), i.e. matrix rows from u_first·b, in three passes that
// compute every logit l_ij = q_i·k_j / (τ√m) once, with one exp each:
//   POOL_PASS_PARTIAL: one invocation per (matrix row i, column block c): over the block's keys
//     that query i may see, m_ic = max_j l_ij and s_ic = Σ_j exp(l_ij − m_ic) in one sweep
//     (online: s is rescaled when m grows); (−inf, 0) when the mask keeps none of them.
//   POOL_PASS_ROWS: one invocation per matrix row i: the softmax statistics of the whole row,
//     M_i = max_c m_ic and S_i = Σ_c s_ic exp(m_ic − M_i), stored as (M_i, 1/S_i), or (−inf, 0)
//     for a row with no key left.
//   POOL_PASS_IMAGE: one invocation per pixel (r, c): with w_ic = exp(m_ic − M_i)/S_i (the
//     largest a_ij of row i in the block), the block's mean Σ_i s_ic w_ic / cells (= Σ a_ij over
//     its cells, masked cells 0, divided by their count) or its maximum max_i w_ic; flag 1 when
//     no cell of the block is kept (drawn black).
// Q, K and the keep flags are read through the engine's buffer textures (q and k rows padded to
// `stride` floats), as attend_rows.comp does.
layout(local_size_x = 64) in;

layout(binding = 1) uniform samplerBuffer u_Q;     // RGBA32F: every head's Q, rows of stride/4 vec4s
layout(binding = 2) uniform samplerBuffer u_K;     // RGBA32F: every head's K, same layout
layout(binding = 3) uniform usamplerBuffer u_keep; // R32UI: per key, 1 = kept
layout(std430, binding = 4) buffer PartialBuffer { vec2 partial[]; };        // band rows × u_side: (m_ic, s_ic)
layout(std430, binding = 5) buffer StatsBuffer { vec2 stats[]; };            // band rows: (M_i, 1/S_i)
layout(std430, binding = 6) writeonly buffer ValueBuffer { float values[]; };  // u_count × u_side
layout(std430, binding = 7) writeonly buffer FlagBuffer { uint flags[]; };     // u_count × u_side

layout(std140, binding = 0) uniform Params {  // PoolMatrixParams in core/gpu/hand_made_gpu_engine.cpp
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
  int row0 = u_first * u_block;                          // the band's first matrix row
  int rows = min(u_N, (u_first + u_count) * u_block) - row0;  // and its number of matrix rows

  if (u_pass == POOL_PASS_PARTIAL) {
    int c = int(gl_GlobalInvocationID.x), ri = int(gl_GlobalInvocationID.y);
    if (c >= u_side || ri >= rows) return;
    int i = row0 + ri;
    int qrow = (u_qk_offset + i * u_stride) / 4;
    q0 = texelFetch(u_Q, qrow);
    float m = NEG_INF, s = 0.0;
    for (int j = c * u_block; j < min(c * u_block + u_block, u_N); ++j) {
      if (!kept(i, j)) continue;
      float l = score(qrow, j, vecs) * scale;  // s_ij / (τ √m)
      if (l > m) {
        s = s * exp(m - l) + 1.0;  // exp(−inf) = 0 for the first key
        m = l;
      } else {
        s += exp(l - m);
      }
    }
    partial[ri * u_side + c] = vec2(m, s);
    return;
  }

  if (u_pass == POOL_PASS_ROWS) {
    int ri = int(gl_GlobalInvocationID.x);
    if (ri >= rows) return;
    float M = NEG_INF;
    for (int c = 0; c < u_side; ++c) M = max(M, partial[ri * u_side + c].x);
    float S = 0.0;
    if (M != NEG_INF)
      for (int c = 0; c < u_side; ++c) {
        vec2 p = partial[ri * u_side + c];
        if (p.x != NEG_INF) S += p.y * exp(p.x - M);
      }
    stats[ri] = M == NEG_INF ? vec2(NEG_INF, 0.0) : vec2(M, 1.0 / S);
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
    vec2 p = partial[(i - row0) * u_side + c];
    if (p.x == NEG_INF) continue;  // every cell of row i in this block is masked
    any_kept = true;
    vec2 st = stats[i - row0];
    float w = exp(p.x - st.x) * st.y;  // the largest a_ij of row i in the block
    sum += p.y * w;
    big = max(big, w);
  }
  int at = rr * u_side + c;
  values[at] = u_pooling == POOLING_MAX ? big : sum / float((i1 - i0) * (j1 - j0));
  flags[at] = any_kept ? 0u : 1u;
}
