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
// with AVX2). There (Mesa 22), a storage-buffer or shared-memory load whose address is not a
// constant is a loop over the lanes, while a buffer-texture fetch is one gather: so A and W are
// both read through buffer textures (RGBA32F), a vec4 of K at a time, and each invocation makes
// a 4 × 4 micro-tile of C: per vec4 step 8 fetches feed 64 multiply-adds. No shared memory, no
// barriers. A work group makes 4 rows × (GEMM_LX · 4) columns: column n = group.x · GEMM_LX · 4
// + c · GEMM_LX + lane, row = group.y · 4 + r. Textures have no 128 MiB limit, so only Out is
// bound in chunks of rows.
#ifndef GEMM_LX
#define GEMM_LX 16
#endif
layout(local_size_x = GEMM_LX) in;

layout(std140, binding = 0) uniform Params {  // GemmParams in core/gpu/vit_engine.cpp
  int M, N, K4, lda, ldw, ldo, a_offset, out_offset, flags;
};
layout(binding = 1) uniform samplerBuffer u_W;  // RGBA32F over W: row n at texel n · ldw/4
layout(binding = 2) uniform samplerBuffer u_A;  // RGBA32F over A: row r at texel a_offset/4 + r · lda/4
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

// The micro-tile is written out (no arrays: llvmpipe keeps a dynamically indexed array in
// memory, one lane at a time).
#define ROW(r) float acc##r##0 = 0.0, acc##r##1 = 0.0, acc##r##2 = 0.0, acc##r##3 = 0.0; \
  int arow##r = a4 + min(row0 + r, M - 1) * lda4;
#define COL(c) int n##c = col0 + c * GEMM_LX; int wrow##c = min(n##c, N - 1) * ldw4;
#define FMA_ROW(r) { vec4 a = texelFetch(u_A, arow##r + k); \
  acc##r##0 += dot(a, w0); acc##r##1 += dot(a, w1); acc##r##2 += dot(a, w2); acc##r##3 += dot(a, w3); }
#define STORE_COL(c) if (n##c < N) { \
    float b = (flags & FLAG_BIAS) != 0 ? bias[n##c] : 0.0, s = (flags & FLAG_RESIDUAL) != 0 ? ls[n##c] : 1.0; \
    store(row0, n##c, acc0##c, b, s); store(row0 + 1, n##c, acc1##c, b, s); \
    store(row0 + 2, n##c, acc2##c, b, s); store(row0 + 3, n##c, acc3##c, b, s); \
    store(row0 + 4, n##c, acc4##c, b, s); store(row0 + 5, n##c, acc5##c, b, s); \
    store(row0 + 6, n##c, acc6##c, b, s); store(row0 + 7, n##c, acc7##c, b, s); }

void store(int row, int n, float v, float b, float s) {
  if (row >= M) return;
  v += b;
  if ((flags & FLAG_GELU) != 0) v = 0.5 * v * (1.0 + erf_as(v * 0.70710678118654752));
  int o = out_offset + row * ldo + n;
  if ((flags & FLAG_RESIDUAL) != 0) Out[o] += s * v;
  else Out[o] = v;
}

void main() {
  int lane = int(gl_LocalInvocationID.x);
  int row0 = int(gl_WorkGroupID.y) * 8;
  int col0 = int(gl_WorkGroupID.x) * GEMM_LX * 4 + lane;
  int lda4 = lda / 4, ldw4 = ldw / 4, a4 = a_offset / 4;
  // Rows past M and columns past N read the last one and are not written.
  ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6) ROW(7)
  COL(0) COL(1) COL(2) COL(3)
  for (int k = 0; k < K4; ++k) {
    vec4 w0 = texelFetch(u_W, wrow0 + k), w1 = texelFetch(u_W, wrow1 + k), w2 = texelFetch(u_W, wrow2 + k),
         w3 = texelFetch(u_W, wrow3 + k);
    FMA_ROW(0) FMA_ROW(1) FMA_ROW(2) FMA_ROW(3) FMA_ROW(4) FMA_ROW(5) FMA_ROW(6) FMA_ROW(7)
  }
  STORE_COL(0) STORE_COL(1) STORE_COL(2) STORE_COL(3)
}
