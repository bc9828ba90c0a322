// A ViT's linear layers (docs/MATH.md, "A learned ViT"): C = A Wᵀ for A (M × K) and W (N × K,
// PyTorch's Linear layout), then per flag
//   FLAG_BIAS     C += bias (per column),
//   FLAG_GELU     C = C/2 · (1 + erf(C/√2)) (the exact GELU),
//   FLAG_RESIDUAL Out += ls ⊙ C (the residual with layer scale; ls = 1 without it),
// otherwise Out = C.
//
// Layout: rows of A start every `lda` floats from float `a_offset` of the bound range, rows of
// W every `ldw` floats, rows of Out every `ldo` floats from `out_offset`; lda, ldw, a_offset are
// multiples of 4 and the padding columns [K, lda) of A and [K, ldw) of W hold zeros, so K is
// walked a vec4 at a time up to K4 = ceil(K/4).
//
// Register tiling for llvmpipe, which runs the invocations of a work group as SIMD lanes (8 wide
// with AVX2): a load whose address is the same for every lane is one scalar load and a
// broadcast, a storage-buffer load whose address differs per lane is a loop over the lanes,
// and a buffer-texture fetch is a gather. So every invocation of a work group shares the same
// GEMM_ROWS rows of A (uniform vec4 loads from the storage buffer), and each invocation owns
// GEMM_COLS columns of W, fetched a vec4 at a time from a buffer texture: per vec4 step,
// GEMM_ROWS uniform loads and GEMM_COLS fetches feed 4·GEMM_ROWS·GEMM_COLS multiply-adds.
// No shared memory, no barriers. A work group makes GEMM_ROWS rows × (GEMM_LX · GEMM_COLS)
// columns: column n = group.x · GEMM_LX · GEMM_COLS + c · GEMM_LX + lane.
#ifndef GEMM_ROWS
#define GEMM_ROWS 8
#endif
#ifndef GEMM_COLS
#define GEMM_COLS 2
#endif
#ifndef GEMM_LX
#define GEMM_LX 32
#endif
layout(local_size_x = GEMM_LX) in;

layout(std140, binding = 0) uniform Params {  // GemmParams in core/gpu/vit_engine.cpp
  int M, N, K4, lda, ldw, ldo, a_offset, out_offset, flags;
};
layout(std430, binding = 1) readonly buffer ABuffer { vec4 A4[]; };
layout(binding = 1) uniform samplerBuffer u_W;  // RGBA32F over W: row n at texel n · ldw/4
layout(std430, binding = 3) readonly buffer BiasBuffer { float bias[]; };
layout(std430, binding = 4) readonly buffer ScaleBuffer { float ls[]; };
layout(std430, binding = 5) buffer OutBuffer { float Out[]; };

// erf(x) after Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7); GLSL has no erf.
float erf_as(float x) {
  float t = 1.0 / (1.0 + 0.3275911 * abs(x));
  float y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t *
                      exp(-x * x);
  return x < 0.0 ? -y : y;
}

void main() {
  int lane = int(gl_LocalInvocationID.x);
  int row0 = int(gl_WorkGroupID.y) * GEMM_ROWS;
  int col0 = int(gl_WorkGroupID.x) * GEMM_LX * GEMM_COLS + lane;
  int lda4 = lda / 4, ldw4 = ldw / 4, a4 = a_offset / 4;
  // Rows past M read the last row (uniform, in range) and are not written.
  int arow[GEMM_ROWS];
  for (int r = 0; r < GEMM_ROWS; ++r) arow[r] = a4 + min(row0 + r, M - 1) * lda4;
  int wrow[GEMM_COLS];
  for (int c = 0; c < GEMM_COLS; ++c) wrow[c] = min(col0 + c * GEMM_LX, N - 1) * ldw4;
  float acc[GEMM_ROWS][GEMM_COLS];
  for (int r = 0; r < GEMM_ROWS; ++r)
    for (int c = 0; c < GEMM_COLS; ++c) acc[r][c] = 0.0;

  for (int k = 0; k < K4; ++k) {
    vec4 w[GEMM_COLS];
    for (int c = 0; c < GEMM_COLS; ++c) w[c] = texelFetch(u_W, wrow[c] + k);
    for (int r = 0; r < GEMM_ROWS; ++r) {
      vec4 a = A4[arow[r] + k];
      for (int c = 0; c < GEMM_COLS; ++c) acc[r][c] += dot(a, w[c]);
    }
  }

  for (int c = 0; c < GEMM_COLS; ++c) {
    int n = col0 + c * GEMM_LX;
    if (n >= N) continue;
    float b = (flags & FLAG_BIAS) != 0 ? bias[n] : 0.0;
    float s = (flags & FLAG_RESIDUAL) != 0 ? ls[n] : 1.0;
    for (int r = 0; r < GEMM_ROWS; ++r) {
      if (row0 + r >= M) break;
      float v = acc[r][c] + b;
      if ((flags & FLAG_GELU) != 0) v = 0.5 * v * (1.0 + erf_as(v * 0.70710678118654752));
      int o = out_offset + (row0 + r) * ldo + n;
      if ((flags & FLAG_RESIDUAL) != 0) Out[o] += s * v;
      else Out[o] = v;
    }
  }
}
