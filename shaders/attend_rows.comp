// Many rows of A at once, one invocation per row (no shared memory, no barriers: each
// invocation sweeps its row of keys), for one head:
//   MODE_FULL   : rows u_row_base.. of A (eq. 26.20 with τ and the mask) → a tile of A;
//   MODE_OUTPUT : t_out_i = Σ_j a_ij v_j (eq. 26.21) for every row, never storing A.
// Stable softmax: the row max over the kept keys is subtracted; masked keys get exactly 0; a
// row with no key left is written as zeros. The single-row pass for the live view is in
// attend.comp, which spreads one row over a work group instead.
layout(local_size_x = 64) in;

#define MODE_FULL 1
#define MODE_OUTPUT 2

layout(std430, binding = 0) readonly buffer QBuffer { float Qs[]; };
layout(std430, binding = 1) readonly buffer KBuffer { float Ks[]; };
layout(std430, binding = 2) readonly buffer VBuffer { float Vs[]; };
layout(std430, binding = 3) readonly buffer HeadBuffer { ivec4 heads[]; };  // (q/k offset, m, v offset, 0)
layout(std430, binding = 4) readonly buffer KeepBuffer { uint keep[]; };
layout(std430, binding = 5) buffer OutBuffer { float Out[]; };  // FULL: count × N tile; OUTPUT: heads × N × 3

uniform int u_mode, u_N, u_head, u_row_base, u_row_count;
uniform int u_cols, u_mask_kind, u_radius;
uniform float u_temperature;

void main() {
  int r = int(gl_GlobalInvocationID.x);
  if (r >= u_row_count) return;
  int i = u_row_base + r;
  ivec4 info = heads[u_head];
  int m = info.y;
  float scale = 1.0 / (u_temperature * sqrt(float(m)));
  float q[128];  // m' <= 3 + 4·(30+1) = 127 (P <= 30, see core/positional.cpp)
  for (int c = 0; c < m; ++c) q[c] = Qs[info.x + i * m + c];
  int base = r * u_N;

  float mx = NEG_INF;
  for (int j = 0; j < u_N; ++j) {
    if (!mask_allowed(u_mask_kind, u_radius, u_cols, i, j, keep[j])) {
      if (u_mode == MODE_FULL) Out[base + j] = NEG_INF;
      continue;
    }
    float acc = 0.0;
    for (int c = 0; c < m; ++c) acc += q[c] * Ks[info.x + j * m + c];
    float l = acc * scale;  // s_ij / (τ √m)
    if (u_mode == MODE_FULL) Out[base + j] = l;
    mx = max(mx, l);
  }
  bool empty = mx == NEG_INF;

  if (u_mode == MODE_FULL) {
    float sum = 0.0;
    for (int j = 0; j < u_N; ++j) {
      float l = Out[base + j];
      float e = (empty || l == NEG_INF) ? 0.0 : exp(l - mx);
      Out[base + j] = e;
      sum += e;
    }
    float inv = empty ? 0.0 : 1.0 / sum;
    for (int j = 0; j < u_N; ++j) Out[base + j] *= inv;
    return;
  }

  // MODE_OUTPUT: t_out = Σ_j e_j v_j / Σ_j e_j with e_j = exp(l_j − max).
  float sum = 0.0;
  vec3 acc3 = vec3(0.0);
  if (!empty)
    for (int j = 0; j < u_N; ++j) {
      if (!mask_allowed(u_mask_kind, u_radius, u_cols, i, j, keep[j])) continue;
      float acc = 0.0;
      for (int c = 0; c < m; ++c) acc += q[c] * Ks[info.x + j * m + c];
      float e = exp(acc * scale - mx);
      int v = info.z + j * 3;
      sum += e;
      acc3 += e * vec3(Vs[v], Vs[v + 1], Vs[v + 2]);
    }
  vec3 t = empty ? vec3(0.0) : acc3 / sum;
  int o = (u_head * u_N + i) * 3;
  Out[o] = t.x;
  Out[o + 1] = t.y;
  Out[o + 2] = t.z;
}
