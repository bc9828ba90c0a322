// One layer's attention output (eq. 26.21 per head): O[i][h·D/H + c] = Σ_j A[h][i][j] v_j[c],
// v_j from QKV's columns [2D, 3D). One invocation per output value (x: column d, y: token i).
layout(local_size_x = 64) in;

layout(std140, binding = 0) uniform Params {
  int T, D, H;
};
layout(std430, binding = 1) readonly buffer QKVBuffer { float QKV[]; };
layout(std430, binding = 2) readonly buffer ABuffer { float A[]; };
layout(std430, binding = 3) writeonly buffer OBuffer { float O[]; };

void main() {
  int d = int(gl_GlobalInvocationID.x), i = int(gl_WorkGroupID.y);
  if (d >= D) return;
  int h = d / (D / H);
  int row = (h * T + i) * T;
  float acc = 0.0;
  for (int j = 0; j < T; ++j) acc += A[row + j] * QKV[j * 3 * D + 2 * D + d];
  O[i * D + d] = acc;
}
