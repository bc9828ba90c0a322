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
// with AVX2). There (Mesa 22), a storage-buffer or shared-memory load is a loop over the lanes;
// a buffer-texture fetch is one gather but a function call (every live register spilled around
// it); an image load of an RGBA32F image buffer is the same gather inline. So A and W are both
// read with imageLoad, a vec4 of K at a time, and each invocation makes a GEMM_ROWS × GEMM_COLS
// micro-tile of C: per vec4 step GEMM_ROWS + GEMM_COLS loads feed GEMM_ROWS · GEMM_COLS vec4
// dot products. No shared memory, no barriers. A work group makes GEMM_ROWS rows ×
// (GEMM_LX · GEMM_COLS) columns: column n = group.x · GEMM_LX · GEMM_COLS + c · GEMM_LX + lane,
// row = group.y · GEMM_ROWS + r. Image buffers have no 128 MiB limit, so only Out is bound in
// chunks of rows.
#ifndef GEMM_LX
#define GEMM_LX 8
#endif
#ifndef GEMM_ROWS
#define GEMM_ROWS 16  // 8 or 16
#endif
#ifndef GEMM_COLS
#define GEMM_COLS 8  // 4 or 8
#endif
layout(local_size_x = GEMM_LX) in;

layout(std140, binding = 0) uniform Params {  // GemmParams in core/gpu/vit_engine.cpp
  int M, N, K4, lda, ldw, ldo, a_offset, out_offset, flags;
};
layout(binding = 1, rgba32f) readonly restrict uniform imageBuffer u_W;  // W: row n at texel n · ldw/4
layout(binding = 2, rgba32f) readonly restrict uniform imageBuffer u_A;  // A: row r at texel a_offset/4 + r · lda/4
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

void store(int row, int n, float v, float b, float s) {
  if (row >= M) return;
  v += b;
  if ((flags & FLAG_GELU) != 0) v = 0.5 * v * (1.0 + erf_as(v * 0.70710678118654752));
  int o = out_offset + row * ldo + n;
  if ((flags & FLAG_RESIDUAL) != 0) Out[o] += s * v;
  else Out[o] = v;
}

// The micro-tile is written out (no arrays: llvmpipe keeps a dynamically indexed array in
// memory, one lane at a time). ROWS(X) / COLS(X) list the tile's rows and columns;
// X_R(X, c) / X_C(X, r) every (r, c) of a column / row.
#if GEMM_ROWS == 16
#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#define X_R(X, c) X(0, c) X(1, c) X(2, c) X(3, c) X(4, c) X(5, c) X(6, c) X(7, c) \
  X(8, c) X(9, c) X(10, c) X(11, c) X(12, c) X(13, c) X(14, c) X(15, c)
#else
#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define X_R(X, c) X(0, c) X(1, c) X(2, c) X(3, c) X(4, c) X(5, c) X(6, c) X(7, c)
#endif
#if GEMM_COLS == 8
#define COLS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define X_C(X, r) X(r, 0) X(r, 1) X(r, 2) X(r, 3) X(r, 4) X(r, 5) X(r, 6) X(r, 7)
#else
#define COLS(X) X(0) X(1) X(2) X(3)
#define X_C(X, r) X(r, 0) X(r, 1) X(r, 2) X(r, 3)
#endif

#define DECL_ACC(r, c) float acc##r##_##c = 0.0;
#define DECL_ROW(r) X_C(DECL_ACC, r)
#define DECL_COL(c) int n##c = col0 + c * GEMM_LX; int wrow##c = min(n##c, N - 1) * ldw4;
#define FETCH_W(c) vec4 w##c = imageLoad(u_W, wrow##c + k);
#define FMA_ONE(r, c) acc##r##_##c += dot(a, w##c);
#define FMA_ROW(r) { vec4 a = A_ROW(r); X_C(FMA_ONE, r) }
#define STORE_ONE(r, c) store(row0 + r, n##c, acc##r##_##c, b, s);
#define STORE_COL(c) if (n##c < N) { \
    float b = (flags & FLAG_BIAS) != 0 ? bias[n##c] : 0.0, s = (flags & FLAG_RESIDUAL) != 0 ? ls[n##c] : 1.0; \
    X_R(STORE_ONE, c) }

#define DECL_AROW(r) int arow##r = a4 + min(row0 + r, M - 1) * lda4;
#define A_ROW(r) imageLoad(u_A, arow##r + k)

void main() {
  int lane = int(gl_LocalInvocationID.x);
  int row0 = int(gl_WorkGroupID.y) * GEMM_ROWS;
  int col0 = int(gl_WorkGroupID.x) * GEMM_LX * GEMM_COLS + lane;
  int lda4 = lda / 4, ldw4 = ldw / 4, a4 = a_offset / 4;
  // Rows past M and columns past N read the last one and are not written.
  ROWS(DECL_ROW)
  COLS(DECL_COL)
  ROWS(DECL_AROW)
  for (int k = 0; k < K4; ++k) {
    COLS(FETCH_W)
    ROWS(FMA_ROW)
  }
  COLS(STORE_COL)
}
