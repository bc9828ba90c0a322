// Multihead merge (eqs. 26.27–26.28): t_out_i = [t_out_i^1, …, t_out_i^k] W_MSA, one
// invocation per token. T_outs holds every head's T_out (N × 3 each, head after head).
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer HeadOutputs { float T_outs[]; };
layout(std430, binding = 1) readonly buffer MergeWeights { float W_MSA[]; };  // (k·3) × 3
layout(std430, binding = 2) writeonly buffer Merged { float T_out[]; };      // N × 3

layout(std140, binding = 0) uniform Params {  // MergeParams in core/gpu/hand_made_gpu_engine.cpp
  int u_N, u_heads;
};

void main() {
  int i = int(gl_GlobalInvocationID.x);
  if (i >= u_N) return;
  for (int r = 0; r < 3; ++r) {
    float acc = 0.0;
    for (int h = 0; h < u_heads; ++h)
      for (int c = 0; c < 3; ++c) acc += T_outs[(h * u_N + i) * 3 + c] * W_MSA[(h * 3 + c) * 3 + r];
    T_out[i * 3 + r] = acc;
  }
}
