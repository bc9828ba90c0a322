// One row of the attention matrix (eq. 26.20 with temperature τ and a mask), spread over a
// work group (the live view asks for one row at a time; attend_rows.comp does many rows, one
// invocation each):
//   MODE_ROW     : row u_query for every head at once (group = head) → weights and logits;
//   MODE_EXTERNAL: one row of one head for a query vector that is not one of the tokens (a
//                  question token, figs. 26.7–26.8, eqs. 26.14–26.16), unmasked.
// Softmax is stable: the row max over the kept keys is subtracted; masked keys get exactly 0;
// a row with no key left is flagged and written as zeros. Three sweeps over the keys, each
// invocation taking every LOCAL-th key: logits and their max, the sum of exp(l − M), the
// weights; between sweeps one barrier, after which every invocation combines the LOCAL partial
// results itself (two barriers in all: on llvmpipe each barrier switches every invocation of
// the group, and the tree reductions this replaced used 24 of them). 32 invocations a group:
// on llvmpipe, RowAllHeads/Gpu/1024 took 4.4 ms with 256, 1.8 with 128, 0.53 with 32 and
// 0.62 with 8 (attnlab-bench, one quiet run). Q, K and the keep flags are read
// through buffer textures, as in attend_rows.comp (on llvmpipe several times faster than
// storage-buffer loads); q and k rows are padded to `stride` floats (vec4s).
#define LOCAL 32
layout(local_size_x = LOCAL) in;

layout(binding = 1) uniform samplerBuffer u_Q;      // RGBA32F: every head's Q, rows of stride/4 vec4s
layout(binding = 2) uniform samplerBuffer u_K;      // RGBA32F: every head's K, same layout
layout(binding = 4) uniform usamplerBuffer u_keep;  // R32UI: per key, 1 = kept
layout(std430, binding = 3) readonly buffer HeadBuffer { ivec4 heads[]; };  // (q/k offset, m, v offset, row stride)
layout(std430, binding = 5) writeonly buffer OutBuffer { float Out[]; };
layout(std430, binding = 6) writeonly buffer AuxBuffer { float Aux[]; };   // logits (+ empty flags)
layout(std430, binding = 7) readonly buffer QueryBuffer { float q_ext[]; };  // MODE_EXTERNAL: the query (m)

layout(std140, binding = 0) uniform Params {  // AttendParams in core/gpu/hand_made_gpu_engine.cpp
  int u_mode, u_N, u_query, u_head, u_heads, u_cols, u_mask_kind, u_radius;
  float u_temperature;
};

shared float s_max[LOCAL];
shared float s_sum[LOCAL];

int g_qrow, g_vecs, g_offset, g_stride;  // this group's head: q_i's first texel, vec4s per row, layout

// s_ij / (τ √m) for key j.
float logit(int j, float scale) {
  int krow = (g_offset + j * g_stride) / 4;
  float acc = 0.0;
  if (u_mode == MODE_EXTERNAL) {
    for (int c = 0; c < g_vecs; ++c) {
      vec4 k = texelFetch(u_K, krow + c);
      for (int e = 0; e < 4; ++e) {
        int n = c * 4 + e;
        if (n < heads[u_head].y) acc += q_ext[n] * k[e];
      }
    }
  } else {
    for (int c = 0; c < g_vecs; ++c) acc += dot(texelFetch(u_Q, g_qrow + c), texelFetch(u_K, krow + c));
  }
  return acc * scale;
}

// The mask for query i and key j (an external query sees every key).
bool allowed(int i, int j) {
  if (u_mode == MODE_EXTERNAL) return true;
  uint keep_j = (u_mask_kind == MASK_RANDOM || u_mask_kind == MASK_PAINTED) ? texelFetch(u_keep, j).r : 1u;
  return mask_allowed(u_mask_kind, u_radius, u_cols, i, j, keep_j);
}

void main() {
  int h = u_mode == MODE_ROW ? int(gl_WorkGroupID.x) : u_head;
  int i = u_mode == MODE_ROW ? u_query : 0;  // MODE_EXTERNAL: the query vector is q_ext
  int lid = int(gl_LocalInvocationID.x);
  ivec4 info = heads[h];
  g_offset = info.x;
  g_stride = info.w;
  g_vecs = (info.y + 3) / 4;  // padding components are 0 in Q and K
  g_qrow = (g_offset + i * g_stride) / 4;
  float scale = 1.0 / (u_temperature * sqrt(float(info.y)));

  // Sweep 1: logits (all keys, masked ones too, for the views) and the max over kept keys.
  float mx = NEG_INF;
  for (int j = lid; j < u_N; j += LOCAL) {
    float l = logit(j, scale);
    Aux[h * u_N + j] = l;
    if (allowed(i, j)) mx = max(mx, l);
  }
  s_max[lid] = mx;
  barrier();
  mx = NEG_INF;
  for (int t = 0; t < LOCAL; ++t) mx = max(mx, s_max[t]);
  bool empty = mx == NEG_INF;

  // Sweep 2: S = Σ_j exp(l_j − M) over kept keys.
  float sum = 0.0;
  if (!empty)
    for (int j = lid; j < u_N; j += LOCAL)
      if (allowed(i, j)) sum += exp(logit(j, scale) - mx);
  s_sum[lid] = sum;
  barrier();
  sum = 0.0;
  for (int t = 0; t < LOCAL; ++t) sum += s_sum[t];

  // Sweep 3: a_ij = exp(l_j − M) / S, exactly 0 for masked keys.
  float inv = empty ? 0.0 : 1.0 / sum;
  for (int j = lid; j < u_N; j += LOCAL)
    Out[h * u_N + j] = (!empty && allowed(i, j)) ? exp(logit(j, scale) - mx) * inv : 0.0;
  if (lid == 0) Aux[u_heads * u_N + h] = empty ? 1.0 : 0.0;
}
