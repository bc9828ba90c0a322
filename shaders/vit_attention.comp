// One layer's attention, fused (eqs. 26.20–26.21 with m = D/H): for query token i and head h,
// a_ij = softmax_j(q_i · k_j / √m) and o_i = Σ_j a_ij v_j, never storing a row of A. Like the CPU
// path (core/vit/vit_cpu.cpp) per block of queries, but the softmax is taken online over blocks of
// KEY_BLOCK keys (the running max, Σ exp and Σ exp·v rescaled when the max grows).
// The same sweep sums the mean attention distance's row term (the ViT paper's fig. 7):
// for a patch query i, Σ_j a_ij ‖c_i − c_j‖ over patch keys j (c = patch centres in input
// pixels: `patch_px` · (column, row) of the raster grid of `cols` columns), written to
// row_dist[h·T + i] (0 for prefix queries); vit_distance_sum.comp sums it per head.
//
// q, k, v come from one buffer QKV (T rows of `ld` floats: q in columns [0,D), k in [D,2D),
// v in [2D,3D), head h at h·m); m = HEAD_DIM (a multiple of 4, compiled in). One invocation per
// (query, head): queries q_first + x (x < q_count) of work group column x, head = group y. On
// llvmpipe the lanes are queries, so every key's k_j and v_j is the same load for all of them,
// an imageLoad from the RGBA32F image buffer over QKV (on llvmpipe, Mesa 22, a storage-buffer
// load is a loop over the lanes and a texelFetch a function call; an image load is an inline
// gather). q_i (pre-scaled by `scale`) and the
// running output stay in registers. O: rows of `ldo` floats from float `o_offset` of the bound
// range, row 0 being query q_first.
#ifndef HEAD_DIM
#define HEAD_DIM 64
#endif
#ifndef KEY_BLOCK
#define KEY_BLOCK 16
#endif
#ifndef ATT_LX
#define ATT_LX 8
#endif
#define M4 (HEAD_DIM / 4)
layout(local_size_x = ATT_LX) in;

layout(std140, binding = 0) uniform Params {  // AttentionParams in core/gpu/vit_engine.cpp
  int T, D, ld, q_first, q_count, o_offset, ldo, prefix, cols;
  float patch_px, scale;
};
layout(binding = 1) uniform samplerBuffer u_QKV;  // RGBA32F over QKV
layout(binding = 1, rgba32f) readonly restrict uniform imageBuffer u_KV;  // the same QKV buffer
#define KV_AT(t) imageLoad(u_KV, t)
layout(std430, binding = 2) writeonly buffer OBuffer { float O[]; };
layout(std430, binding = 3) writeonly buffer DistBuffer { float row_dist[]; };

const float kLow = -3.0e38;  // below every score; exp(kLow − max) = 0

void main() {
  int x = int(gl_GlobalInvocationID.x), h = int(gl_WorkGroupID.y);
  int i = q_first + min(x, q_count - 1);  // lanes past the chunk repeat its last query, unwritten
  int ld4 = ld / 4;
  vec4 q[M4], o[M4];
  int qbase = (i * ld + h * HEAD_DIM) / 4;
  for (int c = 0; c < M4; ++c) {
    q[c] = texelFetch(u_QKV, qbase + c) * scale;
    o[c] = vec4(0.0);
  }
  int p = max(i - prefix, 0);
  float qx = float(p % cols), qy = float(p / cols);
  float run_max = kLow, sum = 0.0, dist = 0.0;
  int kcol = (D + h * HEAD_DIM) / 4, vcol = (2 * D + h * HEAD_DIM) / 4;
  for (int j0 = 0; j0 < T; j0 += KEY_BLOCK) {
    float s[KEY_BLOCK];
    float block_max = kLow;
    for (int jj = 0; jj < KEY_BLOCK; ++jj) {
      int j = min(j0 + jj, T - 1);
      int kb = j * ld4 + kcol;
      float acc = 0.0;
      for (int c = 0; c < M4; ++c) acc += dot(q[c], KV_AT(kb + c));
      s[jj] = j0 + jj < T ? acc : kLow;
      block_max = max(block_max, s[jj]);
    }
    float new_max = max(run_max, block_max);
    float corr = exp(run_max - new_max);
    sum *= corr;
    dist *= corr;
    for (int c = 0; c < M4; ++c) o[c] *= corr;
    run_max = new_max;
    for (int jj = 0; jj < KEY_BLOCK; ++jj) {
      int j = min(j0 + jj, T - 1);
      float e = exp(s[jj] - new_max);
      sum += e;
      int vb = j * ld4 + vcol;
      for (int c = 0; c < M4; ++c) o[c] += e * KV_AT(vb + c);
      if (j >= prefix) {
        int pk = j - prefix;
        float dx = qx - float(pk % cols), dy = qy - float(pk / cols);
        dist += e * (patch_px * sqrt(dx * dx + dy * dy));
      }
    }
  }
  if (x >= q_count) return;
  float inv = 1.0 / sum;
  int ob = o_offset + x * ldo + h * HEAD_DIM;
  for (int c = 0; c < M4; ++c) {
    vec4 v = o[c] * inv;
    O[ob + 4 * c] = v.x;
    O[ob + 4 * c + 1] = v.y;
    O[ob + 4 * c + 2] = v.z;
    O[ob + 4 * c + 3] = v.w;
  }
  row_dist[h * T + i] = i >= prefix ? dist * inv : 0.0;
}
