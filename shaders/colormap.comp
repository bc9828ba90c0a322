// Heat map of one row of values (e.g. row i of A for a head) into an RGBA8 image over the
// patch grid: normalization (min–max, absolute, log) over the kept values, then a colormap
// table. Masked keys become transparent. One work group of 256 invocations.
layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Values { float values[]; };
layout(std430, binding = 1) readonly buffer Table { float lut[]; };    // 256 × RGB
layout(std430, binding = 2) readonly buffer KeepBuffer { uint keep[]; };
layout(rgba8, binding = 0) writeonly uniform image2D u_out;

layout(std140, binding = 0) uniform Params {  // ColormapParams in core/gpu/hand_made_gpu_engine.cpp
  int u_offset, u_count, u_cols, u_norm;
  int u_mask_kind, u_radius, u_query;  // u_query < 0: no mask
};

shared float s_lo[256];
shared float s_hi[256];

bool kept(int j) {
  return u_query < 0 || mask_allowed(u_mask_kind, u_radius, u_cols, u_query, j, keep[j]);
}

float prepared(float v) { return u_norm == NORM_LOG ? (v > 0.0 ? log(v) : NEG_INF) : v; }

void main() {
  uint t = gl_LocalInvocationID.x;
  float lo = uintBitsToFloat(0x7f800000u), hi = NEG_INF;
  for (int j = int(t); j < u_count; j += 256) {
    if (!kept(j)) continue;
    float v = prepared(values[u_offset + j]);
    if (v == NEG_INF) continue;
    lo = min(lo, v);
    hi = max(hi, v);
  }
  s_lo[t] = lo;
  s_hi[t] = hi;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (t < s) {
      s_lo[t] = min(s_lo[t], s_lo[t + s]);
      s_hi[t] = max(s_hi[t], s_hi[t + s]);
    }
    barrier();
  }
  lo = s_lo[0];
  hi = s_hi[0];
  if (u_norm == NORM_ABSOLUTE) lo = 0.0;
  for (int j = int(t); j < u_count; j += 256) {
    ivec2 p = ivec2(j % u_cols, j / u_cols);
    if (!kept(j)) {
      imageStore(u_out, p, vec4(0.0));
      continue;
    }
    float v = prepared(values[u_offset + j]);
    if (v == NEG_INF) v = lo;
    float x = hi > lo ? clamp((v - lo) / (hi - lo), 0.0, 1.0) : 0.0;
    int k = int(round(x * 255.0));
    imageStore(u_out, p, vec4(lut[k * 3], lut[k * 3 + 1], lut[k * 3 + 2], 1.0));
  }
}
