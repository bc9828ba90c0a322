// The mean attention distance of one layer (the ViT paper's fig. 7) from vit_attention.comp's
// row terms: out[out_index + h] = (Σ over patch queries i of row_dist[h·T + i]) / (T − prefix),
// summed in double. One invocation per head.
layout(local_size_x = 16) in;

layout(std140, binding = 0) uniform Params {  // DistanceSumParams in core/gpu/vit_engine.cpp
  int T, H, prefix, out_index;
};
layout(std430, binding = 1) readonly buffer RowBuffer { float row_dist[]; };
layout(std430, binding = 2) buffer OutBuffer { float out_dist[]; };

void main() {
  int h = int(gl_GlobalInvocationID.x);
  if (h >= H) return;
  double s = 0.0;
  for (int i = prefix; i < T; ++i) s += double(row_dist[h * T + i]);
  out_dist[out_index + h] = float(s / double(max(T - prefix, 1)));
}
