// A ViT's linear layers (docs/MATH.md, "A learned ViT"): C = A Wᵀ for A (M × K, from row
// a_offset/K of its buffer) and W (N × K, PyTorch's Linear layout), then per flag
//   FLAG_BIAS     C += bias (per column),
//   FLAG_GELU     C = C/2 · (1 + erf(C/√2)) (the exact GELU),
//   FLAG_RESIDUAL Out += ls ⊙ C (the residual with layer scale; ls = 1 without it),
// otherwise Out = C, written from float out_offset on, rows of N.
// Tiled: a work group of 16 × 16 invocations makes a 64 × 64 tile of C, each invocation 4 × 4
// outputs; K advances 16 at a time through shared memory.
layout(local_size_x = 16, local_size_y = 16) in;

layout(std140, binding = 0) uniform Params {
  int M, N, K, a_offset, out_offset, flags;
};
layout(std430, binding = 1) readonly buffer ABuffer { float Ain[]; };
layout(std430, binding = 2) readonly buffer WBuffer { float W[]; };
layout(std430, binding = 3) readonly buffer BiasBuffer { float bias[]; };
layout(std430, binding = 4) readonly buffer ScaleBuffer { float ls[]; };
layout(std430, binding = 5) buffer OutBuffer { float Out[]; };

shared float As[16][65];  // [k][row of the tile]
shared float Ws[16][65];  // [k][column of the tile]

// erf(x) after Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7); GLSL has no erf.
float erf_as(float x) {
  float t = 1.0 / (1.0 + 0.3275911 * abs(x));
  float y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t *
                      exp(-x * x);
  return x < 0.0 ? -y : y;
}

void main() {
  int tx = int(gl_LocalInvocationID.x), ty = int(gl_LocalInvocationID.y);
  int tid = ty * 16 + tx;
  int row0 = int(gl_WorkGroupID.y) * 64, col0 = int(gl_WorkGroupID.x) * 64;
  float acc[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0;

  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int e = 0; e < 4; ++e) {
      int idx = tid + e * 256;
      int r = idx >> 4, kk = idx & 15;
      int gk = k0 + kk;
      int gr = row0 + r, gn = col0 + r;
      As[kk][r] = (gr < M && gk < K) ? Ain[a_offset + gr * K + gk] : 0.0;
      Ws[kk][r] = (gn < N && gk < K) ? W[gn * K + gk] : 0.0;
    }
    memoryBarrierShared();
    barrier();
    for (int kk = 0; kk < 16; ++kk) {
      float a0 = As[kk][ty], a1 = As[kk][ty + 16], a2 = As[kk][ty + 32], a3 = As[kk][ty + 48];
      float w0 = Ws[kk][tx], w1 = Ws[kk][tx + 16], w2 = Ws[kk][tx + 32], w3 = Ws[kk][tx + 48];
      acc[0][0] += a0 * w0; acc[0][1] += a0 * w1; acc[0][2] += a0 * w2; acc[0][3] += a0 * w3;
      acc[1][0] += a1 * w0; acc[1][1] += a1 * w1; acc[1][2] += a1 * w2; acc[1][3] += a1 * w3;
      acc[2][0] += a2 * w0; acc[2][1] += a2 * w1; acc[2][2] += a2 * w2; acc[2][3] += a2 * w3;
      acc[3][0] += a3 * w0; acc[3][1] += a3 * w1; acc[3][2] += a3 * w2; acc[3][3] += a3 * w3;
    }
    memoryBarrierShared();
    barrier();
  }

  for (int i = 0; i < 4; ++i) {
    int r = row0 + ty + 16 * i;
    if (r >= M) continue;
    for (int j = 0; j < 4; ++j) {
      int c = col0 + tx + 16 * j;
      if (c >= N) continue;
      float v = acc[i][j];
      if ((flags & FLAG_BIAS) != 0) v += bias[c];
      if ((flags & FLAG_GELU) != 0) v = 0.5 * v * (1.0 + erf_as(v * 0.70710678118654752));
      int o = out_offset + r * N + c;
      if ((flags & FLAG_RESIDUAL) != 0) Out[o] += ls[c] * v;
      else Out[o] = v;
    }
  }
}
