// Many rows of A at once for one head, one invocation per row (each sweeps its row of keys):
//   MODE_OUTPUT : t_out_i = Σ_j a_ij v_j (eq. 26.21) for every row, never storing A.
// (The full A is attend_matrix.comp's.) MODE_OUTPUT takes the softmax online: one sweep keeps
// the running max M, Σ exp(l − M) and Σ exp(l − M) v_j, rescaled when M grows.
// Masked keys get exactly 0; a row with no key left gives zeros. Q, K, V and the keep
// flags are read through buffer textures (on llvmpipe the texture path is several times faster
// than storage-buffer loads); q and k rows are padded to `stride` floats (vec4s). The single
// row of the live view is in attend.comp.
layout(local_size_x = 64) in;

layout(binding = 1) uniform samplerBuffer u_Q;     // RGBA32F: every head's Q, rows of stride/4 vec4s
layout(binding = 2) uniform samplerBuffer u_K;     // RGBA32F: every head's K, same layout
layout(binding = 3) uniform samplerBuffer u_V;     // RGB32F: every head's V, N texels per head
layout(binding = 4) uniform usamplerBuffer u_keep; // R32UI: per key, 1 = kept
layout(std430, binding = 5) writeonly buffer OutBuffer { float Out[]; };  // OUTPUT: heads × N × 3

layout(std140, binding = 0) uniform Params {  // AttendRowsParams in core/gpu/hand_made_gpu_engine.cpp
  int u_mode, u_N, u_head, u_row_base, u_row_count;
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
  int r = int(gl_GlobalInvocationID.x);
  if (r >= u_row_count) return;
  int i = u_row_base + r;
  int vecs = u_stride / 4;
  int qrow = (u_qk_offset + i * u_stride) / 4;
  float scale = 1.0 / (u_temperature * sqrt(float(u_m)));
  q0 = texelFetch(u_Q, qrow);

  if (u_mode == MODE_OUTPUT) {
    // One sweep: running max M and sum S of exp(l − M), and Σ exp(l − M) v_j.
    float M = NEG_INF, S = 0.0;
    vec3 acc = vec3(0.0);
    for (int j = 0; j < u_N; ++j) {
      if (!kept(i, j)) continue;
      float l = score(qrow, j, vecs) * scale;  // s_ij / (τ √m)
      vec3 v = texelFetch(u_V, u_head * u_N + j).rgb;
      if (l > M) {
        float shrink = exp(M - l);  // 0 when M was −inf
        S = S * shrink + 1.0;
        acc = acc * shrink + v;
        M = l;
      } else {
        float e = exp(l - M);
        S += e;
        acc += e * v;
      }
    }
    vec3 t = M == NEG_INF ? vec3(0.0) : acc / S;
    int o = (u_head * u_N + i) * 3;
    Out[o] = t.x;
    Out[o + 1] = t.y;
    Out[o + 2] = t.z;
  }
}
