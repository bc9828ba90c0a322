// The full attention matrix of one head (eq. 26.20 with τ and the mask), rows u_row_base ..
// u_row_base + u_row_count − 1 into a tile of u_row_count × N floats, one invocation per row.
// Each invocation sweeps its row of keys twice: the max M of the kept logits, then
// e_j = exp(l_j − M) written once per weight with the row sum S = Σ e_j into row_sums; the
// caller finishes a_ij = e_ij / S_i as it copies the tile out (one pass over the tile, which it
// has to make anyway). Masked keys get exactly 0; a row with no key left is zeros with S = 0.
//
// Why it is written this way (measured on llvmpipe, see tests/bench/bench_attention.cpp):
//  - The key loop is uniform across the invocations (all at the same j), so K is one
//    texelFetch per key for the whole SIMD batch; a work group per row with invocations along
//    the keys (contiguous writes) measured 2-3 times slower: its barriers and per-lane gathers
//    cost more than the strided writes it saves.
//  - llvmpipe runs both sides of a branch whose condition is uniform, so a loop that asks the
//    mask rule for a kind known only at run time pays for every kind's test at every key (the
//    window's integer divisions above all): 5 times the time of the unmasked loop; and a loop
//    with an `if (m > 4)` inside pays for the wide case's extra fetches at every key too (40%
//    more CPU time for m = 3). Each sweep is therefore written once per mask kind and width
//    with both constants (sweep_max/sweep_exp below take them as literals, so the compiler
//    folds mask_allowed down to that kind's test and drops the unused width), and only the
//    loop of the case in use has live invocations; the others exit at once.
//  - Logits are in base 2 (q is scaled by log2(e) / (τ √m) once), so each weight costs one exp2.
layout(local_size_x = 64) in;

layout(binding = 1) uniform samplerBuffer u_Q;     // RGBA32F: every head's Q, rows of stride/4 vec4s
layout(binding = 2) uniform samplerBuffer u_K;     // RGBA32F: every head's K, same layout
layout(binding = 4) uniform usamplerBuffer u_keep; // R32UI: per key, 1 = kept
layout(std430, binding = 5) writeonly buffer OutBuffer { float Out[]; };       // the tile, row-major
layout(std430, binding = 6) writeonly buffer SumBuffer { float row_sums[]; };  // S per tile row (0: empty row)

layout(std140, binding = 0) uniform Params {  // AttendMatrixParams in core/gpu/hand_made_gpu_engine.cpp
  int u_N, u_row_base, u_row_count;
  int u_qk_offset, u_m, u_stride;  // in floats; offset and stride are multiples of 4
  int u_cols, u_mask_kind, u_radius;
  float u_temperature;
};

int i;        // this invocation's query row
int qrow;     // its first texel in u_Q
int vecs;     // texels per q or k row (stride / 4)
float scale;  // log2(e) / (τ √m)
vec4 q0;      // the first four components of q_i times scale (m <= 4 for most heads)

// log2(e) · s_ij / (τ √m), or −inf when the mask (of constant `kind`) drops key j for query i.
// `wide` (a constant too): q and k have more than four components (m > 4).
float logit2(int kind, bool wide, int j) {
  uint keep_j = (kind == MASK_RANDOM || kind == MASK_PAINTED) ? texelFetch(u_keep, j).r : 1u;
  if (!mask_allowed(kind, u_radius, u_cols, i, j, keep_j)) return NEG_INF;
  int krow = (u_qk_offset + j * u_stride) / 4;
  float acc = dot(q0, texelFetch(u_K, krow));
  if (wide) {
    float rest = 0.0;
    for (int c = 1; c < vecs; ++c) rest += dot(texelFetch(u_Q, qrow + c), texelFetch(u_K, krow + c));
    acc += rest * scale;
  }
  return acc;
}

// The row max of the kept logits (−inf when none is kept).
float sweep_max(int kind, bool wide) {
  float M = NEG_INF;
  for (int j = 0; j < u_N; ++j) M = max(M, logit2(kind, wide, j));
  return M;
}

// Writes e_j = exp2(l_j − M) (0 for masked keys) at Out[base + j]; returns their sum.
float sweep_exp(int kind, bool wide, float M, int base) {
  float S = 0.0;
  for (int j = 0; j < u_N; ++j) {
    float l = logit2(kind, wide, j);
    float e = l == NEG_INF ? 0.0 : exp2(l - M);
    Out[base + j] = e;
    S += e;
  }
  return S;
}

// Both sweeps for one mask kind and width, literals at each use below.
#define ROW_FOR(KIND, WIDE)                                  \
  if (u_mask_kind == KIND && (vecs > 1) == WIDE) {            \
    float M = sweep_max(KIND, WIDE);                         \
    if (M == NEG_INF) {                                      \
      for (int j = 0; j < u_N; ++j) Out[base + j] = 0.0;     \
      row_sums[r] = 0.0;                                     \
    } else {                                                 \
      row_sums[r] = sweep_exp(KIND, WIDE, M, base);          \
    }                                                        \
  }
#define ROW_FOR_KIND(KIND) ROW_FOR(KIND, false) ROW_FOR(KIND, true)

void main() {
  int r = int(gl_GlobalInvocationID.x);
  if (r >= u_row_count) return;
  i = u_row_base + r;
  vecs = u_stride / 4;
  qrow = (u_qk_offset + i * u_stride) / 4;
  scale = 1.4426950408889634 / (u_temperature * sqrt(float(u_m)));
  q0 = texelFetch(u_Q, qrow) * scale;
  int base = r * u_N;
  ROW_FOR_KIND(MASK_NONE)
  ROW_FOR_KIND(MASK_CAUSAL)
  ROW_FOR_KIND(MASK_STRICT)
  ROW_FOR_KIND(MASK_WINDOW)
  ROW_FOR_KIND(MASK_RANDOM)
  ROW_FOR_KIND(MASK_PAINTED)
}
