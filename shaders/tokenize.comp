// Tokenization (fig. 26.2, eq. 26.32) and positional codes (eqs. 26.38–26.40), one invocation
// per patch. Writes the head input X = [T | P] (N × D, row-major) with the layout of
// attnlab::TokenLayout: T = [c (mean colour) | ĉ (unit mean colour) | g (texture) | r (random
// projection of the raw patch)], then P. In add mode T += W_pos p (ViT's way).
layout(local_size_x = 64) in;

layout(binding = 0) uniform sampler2D u_image;  // RGB32F, texel (x, y), y = 0 at the top
layout(std430, binding = 0) buffer XBuffer { float X[]; };
// W_tokenize (R × 3K²) transposed, four of its rows to a vec4: weight (k, n) is
// W_tok[n * R4 + k / 4][k % 4], so a pixel's channel reads its R weights as R/4 vec4 loads.
layout(std430, binding = 1) readonly buffer WTokBuffer { vec4 W_tok[]; };
layout(std430, binding = 2) readonly buffer WPosBuffer { float W_pos[]; };  // d × np

layout(std140, binding = 0) uniform Params {  // TokenizeParams in core/gpu/hand_made_gpu_engine.cpp
  int u_N, u_cols, u_K, u_width, u_height, u_P, u_sincos, u_add;
  float u_B;
};

const int d = TOKEN_D;          // 25
const int R = RANDOM_DIMS;      // 16
const int COLOUR = 0, UNIT = 3, TEXTURE = 6, RANDOM = 9;
#if RANDOM_DIMS % 4 != 0
#error "the random projection's dimensions come four to a vec4"
#endif
const int R4 = R / 4;

float luminance(int x, int y) {
  vec3 c = texelFetch(u_image, ivec2(x, y), 0).rgb;
  return (c.r + c.g + c.b) / 3.0;
}

void main() {
  int i = int(gl_GlobalInvocationID.x);
  if (i >= u_N) return;
  int K = u_K;
  int x0 = (i % u_cols) * K, y0 = (i / u_cols) * K;
  int np = (u_sincos != 0 ? 4 : 2) * (u_P + 1);
  int D = d + np;
  int base = i * D;

  // Mean colour over the pixels inside the image; random projection r = W_tok x_raw over the
  // whole patch (padding is 0 and adds nothing).
  vec3 sum = vec3(0.0);
  int count = 0;
  vec4 r[R4];
  for (int q = 0; q < R4; ++q) r[q] = vec4(0.0);
  for (int py = 0; py < K; ++py) {
    int y = y0 + py;
    if (y >= u_height) break;
    vec3 row_sum = vec3(0.0);
    for (int px = 0; px < K; ++px) {
      int x = x0 + px;
      if (x >= u_width) break;
      vec3 c = texelFetch(u_image, ivec2(x, y), 0).rgb;
      row_sum += c;
      ++count;
      int w = (py * K + px) * 3 * R4;
      for (int q = 0; q < R4; ++q) r[q] += W_tok[w + q] * c.r + W_tok[w + R4 + q] * c.g + W_tok[w + 2 * R4 + q] * c.b;
    }
    sum += row_sum;
  }
  vec3 mean = count > 0 ? sum / float(count) : vec3(0.0);
  float len = length(mean);
  vec3 unit = len < 1e-12 ? vec3(inversesqrt(3.0)) : mean / len;

  // Texture: mean structure tensor of the forward differences inside the patch.
  int x1 = min(x0 + K, u_width) - 1, y1 = min(y0 + K, u_height) - 1;
  float jxx = 0.0, jyy = 0.0, jxy = 0.0;
  int pairs = 0;
  for (int y = y0; y < y1; ++y) {
    float l = luminance(x0, y);  // carried along the row: two reads a pixel, not three
    for (int x = x0; x < x1; ++x) {
      float right = luminance(x + 1, y);
      float gx = right - l, gy = luminance(x, y + 1) - l;
      jxx += gx * gx;
      jyy += gy * gy;
      jxy += gx * gy;
      ++pairs;
      l = right;
    }
  }
  vec3 g = vec3(0.0);
  if (pairs > 0) {
    jxx /= float(pairs);
    jyy /= float(pairs);
    jxy /= float(pairs);
    float tr = jxx + jyy;
    g = vec3(sqrt(tr), (jxx - jyy) / (tr + 1e-6), 2.0 * jxy / (tr + 1e-6));
  }

  // Positional code p = [p_x; p_y] for (col, row), written after T.
  float coord[2] = float[2](float(i % u_cols), float(i / u_cols));
  int per_axis = np / 2;
  for (int axis = 0; axis < 2; ++axis) {
    int n = base + d + axis * per_axis;
    for (int k = 0; k <= u_P; ++k) {
      float arg = coord[axis] / pow(u_B, float(k));
      X[n++] = sin(arg);
      if (u_sincos != 0) X[n++] = cos(arg);
    }
  }

  float t[d];
  for (int c = 0; c < 3; ++c) {
    t[COLOUR + c] = mean[c];
    t[UNIT + c] = unit[c];
    t[TEXTURE + c] = g[c];
  }
  for (int k = 0; k < R; ++k) t[RANDOM + k] = r[k / 4][k % 4];
  if (u_add != 0) {  // t ← t + W_pos p
    for (int c = 0; c < d; ++c) {
      float acc = 0.0;
      for (int n = 0; n < np; ++n) acc += W_pos[c * np + n] * X[base + d + n];
      t[c] += acc;
    }
  }
  for (int c = 0; c < d; ++c) X[base + c] = t[c];
}
