// The classifier's input (timm's global_pool): the cls token's row (mode POOL_TOKEN), or the mean of the
// patch tokens' rows, prefix tokens left out (mode POOL_AVERAGE). X is read from its buffer
// texture (rows of `ld` floats); one invocation per column d.
layout(local_size_x = 64) in;

layout(std140, binding = 0) uniform Params {  // PoolParams in core/gpu/vit_engine.cpp
  int T, D, ld, prefix, mode;
};
layout(binding = 1) uniform samplerBuffer u_X;  // R32F over X
layout(std430, binding = 2) writeonly buffer PooledBuffer { float pooled[]; };

void main() {
  int d = int(gl_GlobalInvocationID.x);
  if (d >= D) return;
  if (mode == POOL_TOKEN) {
    pooled[d] = texelFetch(u_X, d).x;
    return;
  }
  float s = 0.0;
  for (int t = prefix; t < T; ++t) s += texelFetch(u_X, t * ld + d).x;
  pooled[d] = s / float(T - prefix);
}
