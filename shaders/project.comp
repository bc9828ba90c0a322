// Q = X W_qᵀ, K = X W_kᵀ, V = X W_vᵀ (eqs. 26.17–26.19) for one head and one of the three,
// one invocation per token. In concat mode the caller's W already carries λ·I over the P
// columns of X, which appends λp to q and k. Each output row has u_stride floats (m rounded up
// to a multiple of 4, the padding 0) so the many-row pass can read q and k as vec4s.
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer XBuffer { float X[]; };        // N × D
layout(std430, binding = 1) readonly buffer WBuffer { float W[]; };        // all heads' matrices
layout(std430, binding = 2) writeonly buffer OutBuffer { float Out[]; };   // all heads' Q, K or V

layout(std140, binding = 0) uniform Params {  // ProjectParams in core/gpu/hand_made_gpu_engine.cpp
  int u_N, u_D, u_m, u_stride, u_w_offset, u_out_offset;
};

void main() {
  int i = int(gl_GlobalInvocationID.x);
  if (i >= u_N) return;
  for (int r = 0; r < u_stride; ++r) {
    float acc = 0.0;
    if (r < u_m) {
      int w = u_w_offset + r * u_D;
      for (int c = 0; c < u_D; ++c) acc += X[i * u_D + c] * W[w + c];
    }
    Out[u_out_offset + i * u_stride + r] = acc;
  }
}
