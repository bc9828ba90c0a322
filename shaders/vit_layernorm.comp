// LayerNorm over each token (docs/MATH.md, "A learned ViT"): y = (x − mean)/√(var + ε) · w + b,
// mean and variance over the D values of the row (variance with 1/D, two passes); and, where
// norm_offset ≥ 0, the row's Euclidean norm ‖x‖ (the token norms a VitPass keeps) written to
// norms[norm_offset + r]. Rows x_first + r for r < rows, read from the buffer texture (rows of
// `ld` floats, D and ld multiples of 4); y written (when write_y ≠ 0) to rows of `ld` floats
// from float y_offset of the bound range. One invocation per row: on llvmpipe the lanes are
// rows, so w[d] and b[d] are uniform loads and no barrier is needed.
layout(local_size_x = 8) in;

layout(std140, binding = 0) uniform Params {  // LayerNormParams in core/gpu/vit_engine.cpp
  int rows, D, ld, x_first, y_offset, norm_offset, write_y;
  float eps;
};
layout(binding = 1) uniform samplerBuffer u_X;  // RGBA32F over X
layout(std430, binding = 2) readonly buffer WeightBuffer { float w[]; };
layout(std430, binding = 3) readonly buffer BiasBuffer { float b[]; };
layout(std430, binding = 4) writeonly buffer YBuffer { float Y[]; };
layout(std430, binding = 5) writeonly buffer NormBuffer { float norms[]; };

void main() {
  int r = int(gl_GlobalInvocationID.x);
  if (r >= rows) return;
  int base = (x_first + r) * ld / 4, D4 = D / 4;
  vec4 s = vec4(0.0), sq = vec4(0.0);
  for (int c = 0; c < D4; ++c) {
    vec4 x = texelFetch(u_X, base + c);
    s += x;
    sq += x * x;
  }
  if (norm_offset >= 0) norms[norm_offset + r] = sqrt(sq.x + sq.y + sq.z + sq.w);
  if (write_y == 0) return;
  float mean = (s.x + s.y + s.z + s.w) / float(D);
  vec4 q = vec4(0.0);
  for (int c = 0; c < D4; ++c) {
    vec4 x = texelFetch(u_X, base + c) - mean;
    q += x * x;
  }
  float inv = 1.0 / sqrt((q.x + q.y + q.z + q.w) / float(D) + eps);  // not inversesqrt: llvmpipe gives it ~1e-4 relative error
  int yb = y_offset + r * ld;
  for (int c = 0; c < D4; ++c) {
    vec4 x = (texelFetch(u_X, base + c) - mean) * inv;
    int d = 4 * c;
    Y[yb + d] = x.x * w[d] + b[d];
    Y[yb + d + 1] = x.y * w[d + 1] + b[d + 1];
    Y[yb + d + 2] = x.z * w[d + 2] + b[d + 2];
    Y[yb + d + 3] = x.w * w[d + 3] + b[d + 3];
  }
}
