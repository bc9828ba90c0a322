// One layer's attention (eq. 26.20 with m = D/H): for query token i (work group x) and head h
// (work group y), a_ij = softmax_j(q_i · k_j / √(D/H)), the row max subtracted, written to
// A[h][i][j] (H × T × T, the layer's own buffer, kept for every later read). q, k, v come from
// one buffer QKV (T × 3D: q in columns [0,D), k in [D,2D), v in [2D,3D), head h at h·D/H).
layout(local_size_x = 64) in;

layout(std140, binding = 0) uniform Params {
  int T, D, H;
  float scale;
};
layout(std430, binding = 1) readonly buffer QKVBuffer { float QKV[]; };
layout(std430, binding = 2) buffer ABuffer { float A[]; };

shared float q[256];
shared float partial[64];

void main() {
  int i = int(gl_WorkGroupID.x), h = int(gl_WorkGroupID.y);
  int lid = int(gl_LocalInvocationID.x);
  int dh = D / H;
  for (int c = lid; c < dh; c += 64) q[c] = QKV[i * 3 * D + h * dh + c];
  memoryBarrierShared();
  barrier();
  int row = (h * T + i) * T;
  float m = NEG_INF;
  for (int j = lid; j < T; j += 64) {
    int k = j * 3 * D + D + h * dh;
    float s = 0.0;
    for (int c = 0; c < dh; ++c) s += q[c] * QKV[k + c];
    s *= scale;
    A[row + j] = s;
    m = max(m, s);
  }
  partial[lid] = m;
  memoryBarrierShared();
  barrier();
  for (int s = 32; s > 0; s >>= 1) {
    if (lid < s) partial[lid] = max(partial[lid], partial[lid + s]);
    memoryBarrierShared();
    barrier();
  }
  float row_max = partial[0];
  memoryBarrierShared();  // every read of the max before the sums overwrite it (see vit_layernorm.comp)
  barrier();
  float sum = 0.0;
  for (int j = lid; j < T; j += 64) {
    float e = exp(A[row + j] - row_max);
    A[row + j] = e;
    sum += e;
  }
  partial[lid] = sum;
  memoryBarrierShared();
  barrier();
  for (int s = 32; s > 0; s >>= 1) {
    if (lid < s) partial[lid] += partial[lid + s];
    memoryBarrierShared();
    barrier();
  }
  float inv = 1.0 / partial[0];
  for (int j = lid; j < T; j += 64) A[row + j] *= inv;
}
