// One row of the attention matrix (eq. 26.20 with temperature τ and a mask), spread over a
// work group of 256 invocations (the live view asks for one row at a time; attend_rows.comp
// does many rows, one invocation each):
//   MODE_ROW     : row u_query for every head at once (group = head) → weights and logits;
//   MODE_EXTERNAL: one row of one head for a query vector that is not one of the tokens (a
//                  question token, figs. 26.7–26.8, eqs. 26.14–26.16), unmasked.
// Softmax is stable: the row max over the kept keys is subtracted; masked keys get exactly 0;
// a row with no key left is flagged and written as zeros.
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer QBuffer { float Qs[]; };   // every head's Q (N × m_h)
layout(std430, binding = 1) readonly buffer KBuffer { float Ks[]; };   // every head's K (N × m_h)
layout(std430, binding = 3) readonly buffer HeadBuffer { ivec4 heads[]; };  // (q/k offset, m, v offset, row stride)
layout(std430, binding = 4) readonly buffer KeepBuffer { uint keep[]; };    // per key, 1 = kept
layout(std430, binding = 5) writeonly buffer OutBuffer { float Out[]; };
layout(std430, binding = 6) writeonly buffer AuxBuffer { float Aux[]; };   // MODE_ROW/EXTERNAL: logits (+ empty flags)
layout(std430, binding = 7) readonly buffer QueryBuffer { float q_ext[]; };  // MODE_EXTERNAL: the query (m)

layout(std140, binding = 0) uniform Params {  // AttendParams in core/gpu/engine.cpp
  int u_mode, u_N, u_query, u_head, u_heads, u_cols, u_mask_kind, u_radius;
  float u_temperature;
};

shared float s_red[256];

float logit(int h, int i, int j, float scale) {
  ivec4 info = heads[h];
  int m = info.y, stride = info.w;
  float acc = 0.0;
  if (u_mode == MODE_EXTERNAL)
    for (int c = 0; c < m; ++c) acc += q_ext[c] * Ks[info.x + j * stride + c];
  else
    for (int c = 0; c < m; ++c) acc += Qs[info.x + i * stride + c] * Ks[info.x + j * stride + c];
  return acc * scale;  // s_ij / (τ √m)
}

float reduce_max(float v) {
  uint t = gl_LocalInvocationID.x;
  s_red[t] = v;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (t < s) s_red[t] = max(s_red[t], s_red[t + s]);
    barrier();
  }
  float r = s_red[0];
  barrier();
  return r;
}

float reduce_sum(float v) {
  uint t = gl_LocalInvocationID.x;
  s_red[t] = v;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (t < s) s_red[t] += s_red[t + s];
    barrier();
  }
  float r = s_red[0];
  barrier();
  return r;
}

// The mask for query i and key j (an external query sees every key).
bool allowed(int i, int j) {
  return u_mode == MODE_EXTERNAL || mask_allowed(u_mask_kind, u_radius, u_cols, i, j, keep[j]);
}

void main() {
  int h, i;
  if (u_mode == MODE_ROW) {
    h = int(gl_WorkGroupID.x);
    i = u_query;
  } else {
    h = u_head;
    i = 0;  // unused: the query vector is q_ext
  }
  int lid = int(gl_LocalInvocationID.x);
  float scale = 1.0 / (u_temperature * sqrt(float(heads[h].y)));

  float mx = NEG_INF;
  for (int j = lid; j < u_N; j += 256)
    if (allowed(i, j)) mx = max(mx, logit(h, i, j, scale));
  mx = reduce_max(mx);
  bool empty = mx == NEG_INF;

  float sum = 0.0;
  if (!empty)
    for (int j = lid; j < u_N; j += 256)
      if (allowed(i, j)) sum += exp(logit(h, i, j, scale) - mx);
  sum = reduce_sum(sum);

  for (int j = lid; j < u_N; j += 256) {
    float l = logit(h, i, j, scale);
    Out[h * u_N + j] = (!empty && allowed(i, j)) ? exp(l - mx) / sum : 0.0;
    Aux[h * u_N + j] = l;
  }
  if (lid == 0) Aux[u_heads * u_N + h] = empty ? 1.0 : 0.0;
}
