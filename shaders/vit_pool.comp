// The classifier's input (timm's global_pool): the cls token's row (mode POOL_TOKEN), or the mean of the
// patch tokens' rows, prefix tokens left out (mode POOL_AVERAGE). One invocation per column d.
layout(local_size_x = 64) in;

layout(std140, binding = 0) uniform Params {
  int T, D, prefix, mode;
};
layout(std430, binding = 1) readonly buffer XBuffer { float X[]; };
layout(std430, binding = 2) writeonly buffer PooledBuffer { float pooled[]; };

void main() {
  int d = int(gl_GlobalInvocationID.x);
  if (d >= D) return;
  if (mode == POOL_TOKEN) {
    pooled[d] = X[d];
    return;
  }
  float s = 0.0;
  for (int t = prefix; t < T; ++t) s += X[t * D + d];
  pooled[d] = s / float(T - prefix);
}
