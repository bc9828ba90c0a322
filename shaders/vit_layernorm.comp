// LayerNorm over each token (docs/MATH.md, "A learned ViT"): y = (x − mean)/√(var + ε) · w + b,
// mean and variance over the D values of the row (variance with 1/D, two passes). One work
// group per row.
layout(local_size_x = 64) in;

layout(std140, binding = 0) uniform Params {
  int T, D;
  float eps;
};
layout(std430, binding = 1) readonly buffer XBuffer { float X[]; };
layout(std430, binding = 2) readonly buffer WeightBuffer { float w[]; };
layout(std430, binding = 3) readonly buffer BiasBuffer { float b[]; };
layout(std430, binding = 4) writeonly buffer YBuffer { float Y[]; };

shared float partial[64];

float reduce_sum(float v) {
  int lid = int(gl_LocalInvocationID.x);
  partial[lid] = v;
  memoryBarrierShared();
  barrier();
  for (int s = 32; s > 0; s >>= 1) {
    if (lid < s) partial[lid] += partial[lid + s];
    memoryBarrierShared();
    barrier();
  }
  float total = partial[0];
  // Every invocation has read the total before the next reduction writes over it (without the
  // shared-memory barrier llvmpipe may move the read past barrier()).
  memoryBarrierShared();
  barrier();
  return total;
}

void main() {
  int t = int(gl_WorkGroupID.x);
  int lid = int(gl_LocalInvocationID.x);
  int base = t * D;
  float s = 0.0;
  for (int d = lid; d < D; d += 64) s += X[base + d];
  float mean = reduce_sum(s) / float(D);
  float q = 0.0;
  for (int d = lid; d < D; d += 64) {
    float c = X[base + d] - mean;
    q += c * c;
  }
  float inv = 1.0 / sqrt(reduce_sum(q) / float(D) + eps);  // not inversesqrt: llvmpipe gives it ~1e-4 relative error
  for (int d = lid; d < D; d += 64) Y[base + d] = (X[base + d] - mean) * inv * w[d] + b[d];
}
