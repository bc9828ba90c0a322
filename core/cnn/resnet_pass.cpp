// A ResNet's forward and backward passes on the CPU (core/cnn/resnet.hpp; docs/MATH.md, "A
// ResNet beside the ViT"). Every convolution is im2col and one sgemm, split among the CPU path's
// threads by output positions (or by output channels where a map has few positions); its
// backward for the input is the transposed product and col2im, split by input channels so that
// no two threads add into the same value.
#include "core/cnn/resnet.hpp"

#include "core/base/blas.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/vit/vit.hpp"
#include "core/vit/vit_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace attnlab {

namespace {

using Map = FeatureMap;
using vit_kernels::default_threads;
using vit_kernels::parallel_ranges;
using vit_kernels::parallel_rows;
using vit_kernels::parallel_tasks;

Map make_map(int channels, int height, int width, int count = 1) {
  Map m;
  m.channels = channels;
  m.height = height;
  m.width = width;
  m.count = count;
  m.v.resize(channels, static_cast<Eigen::Index>(count) * height * width);
  return m;
}

void check_stop(const std::atomic<bool>* stop) {
  if (stop && stop->load(std::memory_order_relaxed)) throw Error(_("cancelled"));
}

// A 3×3 convolution of stride 1 by Winograd's F(2×2, 3×3) (Lavin & Gray 2016; docs/MATH.md): the
// output in 2×2 tiles, each from its 4×4 input tile d as Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d B)]A, the ⊙ summed
// over input channels as 16 products U_ξν (out × in) · V_ξν (in × tiles). 2.25× fewer
// multiplications than im2col's product. y starts at b (+ add) and ReLU follows, as below.
Map conv_winograd(const CnnConv& c, const Map& x, bool relu, int threads, std::vector<float>& buf, const Map* add) {
  if (x.count != 1) throw Error(_("Winograd's convolution takes one image at a time"));
  const int H = x.height, W = x.width, th = (H + 1) / 2, tw = (W + 1) / 2, T = th * tw;
  const std::size_t vsize = static_cast<std::size_t>(16) * c.in * T, msize = static_cast<std::size_t>(16) * c.out * T;
  buf.resize(vsize + msize);
  float* V = buf.data();          // 16 × in × T
  float* M = buf.data() + vsize;  // 16 × out × T
  // V = Bᵀ d B per channel and tile, Bᵀ = [1 0 −1 0; 0 1 1 0; 0 −1 1 0; 0 1 0 −1].
  parallel_rows(c.in, threads, [&](int first, int count) {
    for (int ch = first; ch < first + count; ++ch) {
      const float* plane = x.v.data() + static_cast<std::size_t>(ch) * H * W;
      for (int ty = 0; ty < th; ++ty)
        for (int tx = 0; tx < tw; ++tx) {
          float d[4][4];
          for (int i = 0; i < 4; ++i) {
            const int y = 2 * ty - 1 + i;
            for (int j = 0; j < 4; ++j) {
              const int xx = 2 * tx - 1 + j;
              d[i][j] = (y >= 0 && y < H && xx >= 0 && xx < W) ? plane[y * W + xx] : 0.0f;
            }
          }
          float t[4][4];  // Bᵀ d
          for (int j = 0; j < 4; ++j) {
            t[0][j] = d[0][j] - d[2][j];
            t[1][j] = d[1][j] + d[2][j];
            t[2][j] = d[2][j] - d[1][j];
            t[3][j] = d[1][j] - d[3][j];
          }
          const std::size_t at = static_cast<std::size_t>(ch) * T + static_cast<std::size_t>(ty) * tw + tx;
          const std::size_t step = static_cast<std::size_t>(c.in) * T;
          for (int i = 0; i < 4; ++i) {  // (Bᵀ d) B
            float* v = V + static_cast<std::size_t>(i * 4) * step + at;
            v[0] = t[i][0] - t[i][2];
            v[step] = t[i][1] + t[i][2];
            v[2 * step] = t[i][2] - t[i][1];
            v[3 * step] = t[i][1] - t[i][3];
          }
        }
    }
  });
  // M_ξν = U_ξν · V_ξν: 16 products, shared among the threads.
  parallel_tasks(16, threads, [&](int e, int) {
    blas::sgemm(false, false, c.out, T, c.in, 1.0f, c.winograd.data() + static_cast<std::size_t>(e) * c.out * c.in, c.in,
                V + static_cast<std::size_t>(e) * c.in * T, T, 0.0f, M + static_cast<std::size_t>(e) * c.out * T, T);
  });
  // y = Aᵀ m A per tile, Aᵀ = [1 1 1 0; 0 1 −1 −1], + b (+ add), ReLU.
  Map y = make_map(c.out, H, W);
  if (add && (add->channels != c.out || add->height != H || add->width != W)) throw Error(_("a residual of the wrong shape"));
  parallel_rows(c.out, threads, [&](int first, int count) {
    const std::size_t step = static_cast<std::size_t>(c.out) * T;
    for (int o = first; o < first + count; ++o) {
      float* out = y.v.data() + static_cast<std::size_t>(o) * H * W;
      const float* res = add ? add->v.data() + static_cast<std::size_t>(o) * H * W : nullptr;
      const float b = c.b[o];
      for (int ty = 0; ty < th; ++ty)
        for (int tx = 0; tx < tw; ++tx) {
          const float* m = M + static_cast<std::size_t>(o) * T + static_cast<std::size_t>(ty) * tw + tx;
          float s[4][2];  // m A
          for (int i = 0; i < 4; ++i) {
            const float m0 = m[(i * 4) * step], m1 = m[(i * 4 + 1) * step], m2 = m[(i * 4 + 2) * step], m3 = m[(i * 4 + 3) * step];
            s[i][0] = m0 + m1 + m2;
            s[i][1] = m1 - m2 - m3;
          }
          for (int j = 0; j < 2; ++j) {
            const float r0 = s[0][j] + s[1][j] + s[2][j], r1 = s[1][j] - s[2][j] - s[3][j];
            const int xx = 2 * tx + j;
            if (xx >= W) continue;
            for (int i = 0; i < 2; ++i) {
              const int yy = 2 * ty + i;
              if (yy >= H) continue;
              float v = (i == 0 ? r0 : r1) + b;
              if (res) v += res[yy * W + xx];
              out[yy * W + xx] = relu ? std::max(v, 0.0f) : v;
            }
          }
        }
    }
  });
  return y;
}

// im2col: the input under each of the convolution's Ho·Wo output positions, one row per weight
// (channel, ky, kx), in.k·k rows of Ho·Wo columns into `cols` (zeros where the kernel hangs over
// the padding).
void im2col(const CnnConv& c, const Map& x, int threads, std::vector<float>& cols) {
  const int Ho = c.out_size(x.height), Wo = c.out_size(x.width), n = Ho * Wo, ikk = c.in * c.k * c.k;
  const std::size_t N = static_cast<std::size_t>(x.count) * static_cast<std::size_t>(n);  // every image's columns, side by side
  cols.resize(static_cast<std::size_t>(ikk) * N);
  parallel_rows(c.in, threads, [&](int first, int count) {
    for (int ch = first; ch < first + count; ++ch)
    for (int image = 0; image < x.count; ++image) {
      const float* plane = x.v.data() + (static_cast<std::size_t>(ch) * x.count + image) * x.height * x.width;
      for (int ky = 0; ky < c.k; ++ky)
        for (int kx = 0; kx < c.k; ++kx) {
          float* row = cols.data() + (static_cast<std::size_t>((ch * c.k + ky) * c.k + kx)) * N + static_cast<std::size_t>(image) * n;
          // The output columns whose input column ix = ox·stride − pad + kx is inside: [lo, hi).
          const int shift = kx - c.pad;
          const int lo = std::min(Wo, std::max(0, (-shift + c.stride - 1) / c.stride));
          const int hi = std::max(lo, std::min(Wo, (x.width - 1 - shift) / c.stride + 1));
          for (int oy = 0; oy < Ho; ++oy) {
            const int iy = oy * c.stride - c.pad + ky;
            float* out = row + static_cast<std::size_t>(oy) * Wo;
            if (iy < 0 || iy >= x.height) {
              std::fill(out, out + Wo, 0.0f);
              continue;
            }
            const float* in = plane + static_cast<std::size_t>(iy) * x.width + shift;
            std::fill(out, out + lo, 0.0f);
            if (c.stride == 1) std::copy(in + lo, in + hi, out + lo);
            else
              for (int ox = lo; ox < hi; ++ox) out[ox] = in[ox * c.stride];
            std::fill(out + hi, out + Wo, 0.0f);
          }
        }
    }
  });
}

// y = W ⊛ x + b (+ `add`, a residual of y's shape, when not null; then ReLU when `relu`):
// im2col into `cols` (in·k·k × Ho·Wo; not needed for a 1×1 convolution of stride 1), then y
// filled with b (+ add) and W · cols added onto it (sgemm's β = 1: no pass that zeroes y first).
Map conv_forward(const CnnConv& c, const Map& x, bool relu, int threads, std::vector<float>& cols, const Map* add = nullptr) {
  if (c.winograd.size() > 0 && x.count == 1) return conv_winograd(c, x, relu, threads, cols, add);
  const int Ho = c.out_size(x.height), Wo = c.out_size(x.width), n = x.count * Ho * Wo, ikk = c.in * c.k * c.k;
  Map y = make_map(c.out, Ho, Wo, x.count);
  const float* B = x.v.data();
  if (c.k != 1 || c.stride != 1) {
    im2col(c, x, threads, cols);
    B = cols.data();
  }
  float* Y = y.v.data();
  if (add && (add->channels != c.out || add->height != Ho || add->width != Wo || add->count != x.count)) throw Error(_("a residual of the wrong shape"));
  auto start = [&](int o0, int o1, int j0, int j1) {  // b (+ add) where the product will be added
    for (int o = o0; o < o1; ++o) {
      const std::size_t at = static_cast<std::size_t>(o) * n + j0;
      Eigen::Map<Eigen::ArrayXf> r(Y + at, j1 - j0);
      if (add) r = Eigen::Map<const Eigen::ArrayXf>(add->v.data() + at, j1 - j0) + c.b[o];
      else r.setConstant(c.b[o]);
    }
  };
  auto finish = [&](int o0, int o1, int j0, int j1) {  // ReLU
    if (relu)
      for (int o = o0; o < o1; ++o) {
        Eigen::Map<Eigen::ArrayXf> r(Y + static_cast<std::size_t>(o) * n + j0, j1 - j0);
        r = r.max(0.0f);
      }
  };
  if (n >= 64 * threads) {
    parallel_ranges(n, threads, 16, [&](int first, int size) {
      start(0, c.out, first, first + size);
      blas::sgemm(false, false, c.out, size, ikk, 1.0f, c.W.data(), ikk, B + first, n, 1.0f, Y + first, n);
      finish(0, c.out, first, first + size);
    });
  } else {
    parallel_ranges(c.out, threads, 8, [&](int first, int size) {
      start(first, first + size, 0, n);
      blas::sgemm(false, false, size, n, ikk, 1.0f, c.W.data() + static_cast<std::size_t>(first) * ikk, ikk, B, n, 1.0f,
                  Y + static_cast<std::size_t>(first) * n, n);
      finish(first, first + size, 0, n);
    });
  }
  return y;
}

// ∂/∂x of a convolution whose input was `height` × `width`: Wᵀ·dy, then col2im.
Map conv_backward(const CnnConv& c, const Map& dy, int height, int width, int threads, std::vector<float>& cols) {
  const int n = dy.count * dy.height * dy.width, ikk = c.in * c.k * c.k;
  Map dx = make_map(c.in, height, width, dy.count);
  const bool direct = c.k == 1 && c.stride == 1;
  float* D = direct ? dx.v.data() : nullptr;
  if (!direct) {
    cols.resize(static_cast<std::size_t>(ikk) * static_cast<std::size_t>(n));
    D = cols.data();
  }
  if (n >= 64 * threads) {
    parallel_ranges(n, threads, 16, [&](int first, int size) {
      blas::sgemm(true, false, ikk, size, c.out, 1.0f, c.W.data(), ikk, dy.v.data() + first, n, 0.0f, D + first, n);
    });
  } else {
    parallel_ranges(ikk, threads, 8, [&](int first, int size) {
      blas::sgemm(true, false, size, n, c.out, 1.0f, c.W.data() + first, ikk, dy.v.data(), n, 0.0f,
                  D + static_cast<std::size_t>(first) * n, n);
    });
  }
  if (direct) return dx;
  dx.v.setZero();
  const int per = dy.height * dy.width;  // one image's output positions
  parallel_rows(c.in, threads, [&](int first, int count) {
    for (int ch = first; ch < first + count; ++ch)
    for (int image = 0; image < dy.count; ++image) {
      float* plane = dx.v.data() + (static_cast<std::size_t>(ch) * dy.count + image) * height * width;
      for (int ky = 0; ky < c.k; ++ky)
        for (int kx = 0; kx < c.k; ++kx) {
          const float* row = cols.data() + (static_cast<std::size_t>((ch * c.k + ky) * c.k + kx)) * n + static_cast<std::size_t>(image) * per;
          for (int oy = 0; oy < dy.height; ++oy) {
            const int iy = oy * c.stride - c.pad + ky;
            if (iy < 0 || iy >= height) continue;
            float* out = plane + static_cast<std::size_t>(iy) * width;
            const float* in = row + static_cast<std::size_t>(oy) * dy.width;
            for (int ox = 0; ox < dy.width; ++ox) {
              const int ix = ox * c.stride - c.pad + kx;
              if (ix >= 0 && ix < width) out[ix] += in[ox];
            }
          }
        }
    }
  });
  return dx;
}

// The parameters' gradient of a convolution whose input was x and whose output's gradient is
// dy, added to g: dW += dy · colsᵀ (cols = im2col(x)), db += Σ over positions of dy.
void conv_parameter_gradient(const CnnConv& c, const Map& x, const Map& dy, CnnConvGradient& g, int threads, std::vector<float>& cols) {
  const int n = dy.count * dy.height * dy.width, ikk = c.in * c.k * c.k;
  const float* B = x.v.data();
  if (c.k != 1 || c.stride != 1) {
    im2col(c, x, threads, cols);
    B = cols.data();
  }
  blas::sgemm(false, true, c.out, ikk, n, 1.0f, dy.v.data(), n, B, n, 1.0f, g.dW.data(), ikk);
  g.db += dy.v.rowwise().sum().transpose();
}

// torch.nn.MaxPool2d(3, stride 2, padding 1): each output the largest of its window (padding
// never wins); `arg` keeps where it came from (the first largest, as torch).
constexpr int kPool = 3, kPoolStride = 2, kPoolPad = 1;

Map max_pool(const Map& x, std::vector<int>& arg, int threads) {
  const int Ho = (x.height + 2 * kPoolPad - kPool) / kPoolStride + 1, Wo = (x.width + 2 * kPoolPad - kPool) / kPoolStride + 1;
  Map y = make_map(x.channels, Ho, Wo, x.count);
  arg.resize(static_cast<std::size_t>(x.channels) * x.count * Ho * Wo);
  // Each (channel, image) plane alone; `arg` is the winner's place in its plane.
  parallel_rows(x.channels * x.count, threads, [&](int first, int count) {
    for (int ch = first; ch < first + count; ++ch) {
      const float* in = x.v.data() + static_cast<std::size_t>(ch) * x.height * x.width;
      for (int oy = 0; oy < Ho; ++oy)
        for (int ox = 0; ox < Wo; ++ox) {
          float best = -std::numeric_limits<float>::infinity();
          int where = -1;
          // The window clipped to the input (the padding never wins), rows then columns as torch scans it.
          const int y0 = std::max(0, oy * kPoolStride - kPoolPad), y1 = std::min(x.height, oy * kPoolStride - kPoolPad + kPool);
          const int x0 = std::max(0, ox * kPoolStride - kPoolPad), x1 = std::min(x.width, ox * kPoolStride - kPoolPad + kPool);
          for (int iy = y0; iy < y1; ++iy)
            for (int ix = x0; ix < x1; ++ix) {
              const float v = in[iy * x.width + ix];
              if (v > best || where < 0) best = v, where = iy * x.width + ix;
            }
          const std::size_t o = (static_cast<std::size_t>(ch) * Ho + oy) * Wo + ox;
          y.v.data()[o] = best;
          arg[o] = where;
        }
    }
  });
  return y;
}

Map max_pool_backward(const Map& dy, const std::vector<int>& arg, int height, int width, int threads) {
  Map dx = make_map(dy.channels, height, width, dy.count);
  dx.v.setZero();
  const int n = dy.height * dy.width;
  parallel_rows(dy.channels * dy.count, threads, [&](int first, int count) {
    for (int ch = first; ch < first + count; ++ch) {
      float* out = dx.v.data() + static_cast<std::size_t>(ch) * height * width;
      for (int j = 0; j < n; ++j) out[arg[static_cast<std::size_t>(ch) * n + j]] += dy.v.data()[static_cast<std::size_t>(ch) * n + j];
    }
  });
  return dx;
}

// g ⊙ (a > 0), in place: the ReLU's backward from its output a.
void relu_backward(Map& g, const Map& a) {
  g.v = (a.v.array() > 0.0f).select(g.v, 0.0f);
}

// What a block's backward needs: its input and output, and its inner ReLUs' outputs.
struct BlockTape {
  Map h1, h2;  // after conv1's and (Bottleneck) conv2's ReLU
};

// out = ReLU(F(x) + shortcut(x)); the tape filled when `tape` is not null.
Map block_forward(const ResnetBlock& b, const Map& x, BlockTape* tape, int threads, std::vector<float>& cols) {
  Map h1 = conv_forward(b.conv1, x, true, threads, cols);
  // The shortcut first; the last convolution of the branch added onto it, then the ReLU.
  Map shortcut;
  if (b.downsample) shortcut = conv_forward(*b.downsample, x, false, threads, cols);
  const Map* residual = b.downsample ? &shortcut : &x;
  Map out, h2;
  if (b.bottleneck()) {
    h2 = conv_forward(b.conv2, h1, true, threads, cols);
    out = conv_forward(b.conv3, h2, true, threads, cols, residual);
  } else {
    out = conv_forward(b.conv2, h1, true, threads, cols, residual);
  }
  if (tape) {
    tape->h1 = std::move(h1);
    tape->h2 = std::move(h2);
  }
  return out;
}

// From ∂/∂out to ∂/∂x; with `grads` (the block's convolutions' in resnet_convs() order: conv1,
// conv2, conv3 when a Bottleneck, downsample when it has one) their parameters' gradients added too.
Map block_backward(const ResnetBlock& b, const Map& x, const Map& out, const BlockTape& tape, Map g, int threads,
                   std::vector<float>& cols, CnnConvGradient* grads = nullptr) {
  relu_backward(g, out);
  Map dh1;
  if (b.bottleneck()) {
    if (grads) conv_parameter_gradient(b.conv3, tape.h2, g, grads[2], threads, cols);
    Map dh2 = conv_backward(b.conv3, g, tape.h2.height, tape.h2.width, threads, cols);
    relu_backward(dh2, tape.h2);
    if (grads) conv_parameter_gradient(b.conv2, tape.h1, dh2, grads[1], threads, cols);
    dh1 = conv_backward(b.conv2, dh2, tape.h1.height, tape.h1.width, threads, cols);
  } else {
    if (grads) conv_parameter_gradient(b.conv2, tape.h1, g, grads[1], threads, cols);
    dh1 = conv_backward(b.conv2, g, tape.h1.height, tape.h1.width, threads, cols);
  }
  relu_backward(dh1, tape.h1);
  if (grads) conv_parameter_gradient(b.conv1, x, dh1, grads[0], threads, cols);
  Map dx = conv_backward(b.conv1, dh1, x.height, x.width, threads, cols);
  if (b.downsample) {
    if (grads) conv_parameter_gradient(*b.downsample, x, g, grads[b.bottleneck() ? 3 : 2], threads, cols);
    dx.v += conv_backward(*b.downsample, g, x.height, x.width, threads, cols).v;
  } else {
    dx.v += g.v;
  }
  return dx;
}

Map input_map(const CnnInput& input) {
  Map m;
  m.channels = 3;
  m.height = input.height;
  m.width = input.width;
  m.v = input.x;
  return m;
}

std::vector<float> classify(const ResnetModel& model, const Map& last) {
  const Eigen::VectorXf pooled = last.v.rowwise().mean();
  const Eigen::VectorXf logits = model.W_fc * pooled + model.b_fc.transpose();
  return {logits.data(), logits.data() + logits.size()};
}

// The forward pass through `blocks` blocks (all: the logits too), every block's tape kept when
// `tapes` is not null.
struct Forward {
  Map stem;                 // after conv1, bn1 and ReLU
  std::vector<int> pool_arg;
  Map pooled;               // after the max pool: block 0's input
  std::vector<Map> outs;
  std::vector<BlockTape> tapes;
  std::vector<float> logits;
};

Forward run_forward(const ResnetModel& model, const Map& input, int blocks, bool keep, int threads, const std::atomic<bool>* stop) {
  Forward f;
  std::vector<float> cols;
  f.stem = conv_forward(model.stem, input, true, threads, cols);
  f.pooled = max_pool(f.stem, f.pool_arg, threads);
  if (!keep) f.stem = Map();
  if (keep) f.tapes.resize(static_cast<std::size_t>(blocks));
  for (int i = 0; i < blocks; ++i) {
    check_stop(stop);
    const Map& x = i == 0 ? f.pooled : f.outs.back();
    f.outs.push_back(block_forward(model.blocks[static_cast<std::size_t>(i)], x, keep ? &f.tapes[static_cast<std::size_t>(i)] : nullptr,
                                   threads, cols));
  }
  if (blocks == static_cast<int>(model.blocks.size()) && input.count == 1) f.logits = classify(model, f.outs.back());
  return f;
}

std::int64_t floats_of(const CnnConv& c, int h, int w) {
  return static_cast<std::int64_t>(c.out) * c.out_size(h) * c.out_size(w);
}

int threads_or_default(int threads) { return threads > 0 ? threads : default_threads(); }

}  // namespace

std::int64_t ResnetPass::bytes() const {
  std::int64_t n = static_cast<std::int64_t>(logits.size());
  for (const FeatureMap& m : blocks) n += m.v.size();
  return n * static_cast<std::int64_t>(sizeof(float));
}

std::int64_t resnet_pass_bytes(const ResnetModel& model, int width, int height) {
  // The activations kept (stem, pool, each block's inner maps and output), their gradients as
  // large again, and the largest im2col buffer.
  int h = model.stem.out_size(height), w = model.stem.out_size(width);
  std::int64_t kept = floats_of(model.stem, height, width), cols = static_cast<std::int64_t>(model.stem.in) * model.stem.k * model.stem.k * h * w;
  h = (h + 2 * kPoolPad - kPool) / kPoolStride + 1;
  w = (w + 2 * kPoolPad - kPool) / kPoolStride + 1;
  kept += static_cast<std::int64_t>(model.stem.out) * h * w;
  for (const ResnetBlock& b : model.blocks) {
    const CnnConv* convs[] = {&b.conv1, &b.conv2, b.bottleneck() ? &b.conv3 : nullptr};
    for (const CnnConv* c : convs) {
      if (!c) continue;
      cols = std::max(cols, static_cast<std::int64_t>(c->in) * c->k * c->k * c->out_size(h) * c->out_size(w));
      kept += floats_of(*c, h, w);
      const int h2 = c->out_size(h), w2 = c->out_size(w);
      h = h2;
      w = w2;
    }
  }
  return (2 * kept + 2 * cols) * static_cast<std::int64_t>(sizeof(float));
}

void resnet_check_budget(const ResnetModel& model, const CnnInput& input, std::int64_t budget) {
  const std::int64_t need = resnet_pass_bytes(model, input.width, input.height);
  if (need <= budget) return;
  const int side = std::min(input.width, input.height);
  const int fits = std::max(32, static_cast<int>(side * std::sqrt(static_cast<double>(budget) / static_cast<double>(need))) - 1);
  throw Error(text_format(
      // TRANSLATORS: "a 640x480 input needs ..."; MiB: mebibytes; --resize is a command-line option, %5$d pixels.
      _("a %dx%d input needs %lld MiB for the ResNet's pass, over the memory budget of %lld MiB: give --resize %d or less"),
      input.width, input.height, static_cast<long long>(need >> 20), static_cast<long long>(budget >> 20), fits));
}

std::array<int, 2> resnet_map_size(const ResnetModel& model, int block, int width, int height) {
  int w = (model.stem.out_size(width) + 2 * kPoolPad - kPool) / kPoolStride + 1;
  int h = (model.stem.out_size(height) + 2 * kPoolPad - kPool) / kPoolStride + 1;
  for (int i = 0; i <= block && i < static_cast<int>(model.blocks.size()); ++i) {
    const ResnetBlock& b = model.blocks[static_cast<std::size_t>(i)];
    const CnnConv& strided = b.bottleneck() ? b.conv2 : b.conv1;  // the block's one stride
    w = strided.out_size(w);
    h = strided.out_size(h);
  }
  return {w, h};
}

CnnInput cnn_input(const ResnetArchitecture& arch, const Image& image, int resize) {
  if (resize < 0) throw Error(_("--resize must be positive"));
  if (image.empty()) throw Error(_("the image has no pixels"));
  const Image scaled = resize > 0 ? vit_scaled_image(image, resize) : image;
  if (scaled.width < 16 || scaled.height < 16)
    throw Error(text_format(_("the image is %dx%d pixels: a ResNet needs at least 16x16"), scaled.width, scaled.height));
  CnnInput in;
  in.width = scaled.width;
  in.height = scaled.height;
  in.x.resize(3, static_cast<Eigen::Index>(in.width) * in.height);
  for (int c = 0; c < 3; ++c) {
    const auto ci = static_cast<std::size_t>(c);
    for (int y = 0; y < in.height; ++y)
      for (int x = 0; x < in.width; ++x) in.x(c, y * in.width + x) = (scaled.at(x, y, c) - arch.mean[ci]) / arch.std[ci];
  }
  return in;
}

ResnetPass resnet_forward(const ResnetModel& model, const CnnInput& input, std::int64_t budget, int threads,
                          const std::atomic<bool>* stop) {
  resnet_check_budget(model, input, budget);
  Forward f = run_forward(model, input_map(input), static_cast<int>(model.blocks.size()), false, threads_or_default(threads), stop);
  ResnetPass pass;
  pass.blocks = std::move(f.outs);
  pass.logits = std::move(f.logits);
  return pass;
}

CnnGradients resnet_gradients(const ResnetModel& model, const CnnInput& input, const CnnGradientTarget& target,
                              std::int64_t budget, int threads, const std::atomic<bool>* stop) {
  threads = threads_or_default(threads);
  const int B = static_cast<int>(model.blocks.size());
  const bool klass = target.block < 0;
  if (klass && model.arch.classes == 0) throw Error(_("this ResNet has no classifier"));
  if (klass && target.klass != CnnGradientTarget::kTopClass && (target.klass < 0 || target.klass >= model.arch.classes))
    throw Error(text_format(_("class %d is out of range (the model has %d classes, 0 … %d)"), target.klass, model.arch.classes,
                            model.arch.classes - 1));
  if (!klass && target.block >= B)
    throw Error(text_format(_("block %d is out of range (the model has %d blocks, 0 … %d)"), target.block, B, B - 1));
  resnet_check_budget(model, input, budget);
  const int last = klass ? B : target.block + 1;
  Forward f = run_forward(model, input_map(input), last, true, threads, stop);
  CnnGradients g;
  g.width = input.width;
  g.height = input.height;
  // ∂y/∂(the last block's output).
  const Map& top = f.outs.back();
  Map d = make_map(top.channels, top.height, top.width);
  d.v.setZero();
  if (klass) {
    g.logits = f.logits;
    g.klass = target.klass == CnnGradientTarget::kTopClass
                  ? static_cast<int>(std::max_element(g.logits.begin(), g.logits.end()) - g.logits.begin())
                  : target.klass;
    // logit_c = W_fc[c] · mean over positions: each position gets W_fc[c, k] / (h·w).
    const float share = 1.0f / static_cast<float>(top.height * top.width);
    for (int k = 0; k < top.channels; ++k) d.v.row(k).setConstant(model.W_fc(g.klass, k) * share);
  } else {
    if (target.col < 0 || target.col >= top.width || target.row < 0 || target.row >= top.height)
      // TRANSLATORS: "position column,row is outside block B's width x height map" (of features).
      throw Error(text_format(_("position %d,%d is outside block %d's %dx%d map"), target.col, target.row, target.block, top.width,
                              top.height));
    d.v.col(target.row * top.width + target.col).setOnes();
  }
  std::vector<float> cols;
  g.d_blocks.resize(static_cast<std::size_t>(last));
  for (int i = last - 1; i >= 0; --i) {
    check_stop(stop);
    const auto ii = static_cast<std::size_t>(i);
    g.d_blocks[ii] = d;
    const Map& x = i == 0 ? f.pooled : f.outs[ii - 1];
    d = block_backward(model.blocks[ii], x, f.outs[ii], f.tapes[ii], std::move(d), threads, cols);
    f.tapes[ii] = BlockTape();
  }
  d = max_pool_backward(d, f.pool_arg, f.stem.height, f.stem.width, threads);
  relu_backward(d, f.stem);
  g.d_input = conv_backward(model.stem, d, input.height, input.width, threads, cols).v;
  g.blocks = std::move(f.outs);
  return g;
}

Matrix resnet_grad_cam(const CnnGradients& g, int block) {
  if (g.klass < 0) throw Error(_("Grad-CAM needs a class's gradients"));
  if (block < 0 || block >= static_cast<int>(g.blocks.size()))
    throw Error(text_format(_("block %d is out of range (0 … %zu)"), block, g.blocks.size() - 1));
  const FeatureMap &A = g.blocks[static_cast<std::size_t>(block)], &dA = g.d_blocks[static_cast<std::size_t>(block)];
  const Eigen::VectorXf alpha = dA.v.rowwise().mean();
  const RowVector cam = (alpha.transpose() * A.v).cwiseMax(0.0f);
  return Eigen::Map<const Matrix>(cam.data(), A.height, A.width);
}

Matrix cnn_input_gradient_map(const CnnGradients& g) {
  const RowVector s = g.d_input.cwiseAbs().colwise().sum();
  return Eigen::Map<const Matrix>(s.data(), g.height, g.width);
}

Matrix resnet_receptive_field(const ResnetModel& model, const CnnInput& input, int block, int col, int row, std::int64_t budget,
                              int threads) {
  return cnn_input_gradient_map(resnet_gradients(model, input, CnnGradientTarget::position_sum(block, col, row), budget, threads));
}

Matrix resnet_mean_receptive_field(const ResnetModel& model, int count, const std::function<CnnInput(int)>& input, int block, int col,
                                   int row, std::int64_t budget, const std::function<void(int, int)>& progress) {
  if (count < 1) throw Error(_("no image to average the receptive field over"));
  Eigen::MatrixXd sum;
  int width = 0, height = 0;
  for (int i = 0; i < count; ++i) {
    const CnnInput in = input(i);
    if (i == 0) {
      width = in.width, height = in.height;
      sum = Eigen::MatrixXd::Zero(height, width);
    } else if (in.width != width || in.height != height) {
      // TRANSLATORS: sizes in pixels, width x height.
      throw Error(text_format(_("image %d is %dx%d, not %dx%d as the first"), i, in.width, in.height, width, height));
    }
    sum += resnet_receptive_field(model, in, block, col, row, budget).cast<double>();
    if (progress) progress(i + 1, count);
  }
  return (sum / count).cast<float>();
}

std::vector<const CnnConv*> resnet_convs(const ResnetModel& model) {
  std::vector<const CnnConv*> convs;
  for_each_resnet_conv(model, [&](const CnnConv& c, const std::string&, const std::string&, int) { convs.push_back(&c); });
  return convs;
}

void ResnetParameterGradients::zero(const ResnetModel& model) {
  const std::vector<const CnnConv*> of_model = resnet_convs(model);
  convs.resize(of_model.size());
  for (std::size_t i = 0; i < of_model.size(); ++i) {
    convs[i].dW.setZero(of_model[i]->W.rows(), of_model[i]->W.cols());
    convs[i].db.setZero(of_model[i]->out);
  }
  dW_fc.setZero(model.W_fc.rows(), model.W_fc.cols());
  db_fc.setZero(model.b_fc.size());
}

namespace {

// The images (image, channel, y, x) as one map: each channel's row holds every image's plane.
Map batch_map(std::span<const float> images, int count, int height, int width) {
  const std::size_t hw = static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  if (count < 1 || height < 1 || width < 1 || images.size() != static_cast<std::size_t>(count) * 3 * hw)
    // TRANSLATORS: "images of 3 x height x width" values (channels x rows x columns).
    throw Error(text_format(_("a batch of %zu floats is not %d images of 3 x %d x %d"), images.size(), count, height, width));
  Map x = make_map(3, height, width, count);
  for (int b = 0; b < count; ++b)
    for (int c = 0; c < 3; ++c)
      std::copy_n(images.data() + (static_cast<std::size_t>(b) * 3 + c) * hw, hw, x.v.data() + (static_cast<std::size_t>(c) * count + b) * hw);
  return x;
}

// fc on each image's global average pool of `top`: the pooled features (channels × count) into
// `pooled`, the logits (count × classes) returned.
Matrix batch_logits(const ResnetModel& model, const Map& top, Matrix& pooled) {
  const Eigen::Index C = top.channels, n = static_cast<Eigen::Index>(top.height) * top.width;
  const Eigen::VectorXf means = Eigen::Map<const Matrix>(top.v.data(), C * top.count, n).rowwise().mean();
  pooled = Eigen::Map<const Matrix>(means.data(), C, top.count);
  Matrix logits = (model.W_fc * pooled).transpose();
  logits.rowwise() += model.b_fc;
  return logits;
}

}  // namespace

Matrix resnet_batch_logits(const ResnetModel& model, std::span<const float> images, int count, int height, int width, int threads) {
  if (model.arch.classes == 0) throw Error(_("this ResNet has no classifier"));
  const Forward f = run_forward(model, batch_map(images, count, height, width), static_cast<int>(model.blocks.size()), false,
                                threads_or_default(threads), nullptr);
  Matrix pooled;
  return batch_logits(model, f.outs.back(), pooled);
}

Matrix resnet_train_batch(const ResnetModel& model, std::span<const float> images, int count, int height, int width,
                          const std::function<void(Matrix&)>& loss_gradient, ResnetParameterGradients& grads, int threads) {
  threads = threads_or_default(threads);
  if (model.arch.classes == 0) throw Error(_("this ResNet has no classifier to train"));
  if (grads.convs.size() != resnet_convs(model).size()) throw Error(_("the gradients are not this ResNet's (zero() them for it)"));
  const Map x = batch_map(images, count, height, width);
  Forward f = run_forward(model, x, static_cast<int>(model.blocks.size()), true, threads, nullptr);
  const Map& top = f.outs.back();
  const Eigen::Index C = top.channels, n = static_cast<Eigen::Index>(top.height) * top.width;
  Matrix pooled;
  const Matrix logits = batch_logits(model, top, pooled);
  Matrix dz = logits;
  loss_gradient(dz);
  // dW_fc += dzᵀ pooledᵀ, db_fc += Σ dz; each position of image b's last map gets (W_fcᵀ dz_b)/(h·w).
  grads.dW_fc.noalias() += dz.transpose() * pooled.transpose();
  grads.db_fc += dz.colwise().sum();
  const Matrix dpooled = (model.W_fc.transpose() * dz.transpose()) / static_cast<float>(n);  // C × count, row-major: plane k·count + b
  Map d = make_map(top.channels, top.height, top.width, count);
  Eigen::Map<Matrix>(d.v.data(), C * count, n) = Eigen::Map<const Eigen::VectorXf>(dpooled.data(), C * count).replicate(1, n);
  // Where each block's convolutions start among grads.convs (for_each_resnet_conv()'s order; the
  // stem's is 0, so a block's first is never 0).
  std::vector<std::size_t> first(model.blocks.size(), 0);
  std::size_t at = 0;
  for_each_resnet_conv(model, [&](const CnnConv&, const std::string&, const std::string&, int block) {
    if (block >= 0 && first[static_cast<std::size_t>(block)] == 0) first[static_cast<std::size_t>(block)] = at;
    ++at;
  });
  std::vector<float> cols;
  for (int i = static_cast<int>(model.blocks.size()) - 1; i >= 0; --i) {
    const auto ii = static_cast<std::size_t>(i);
    const Map& in = i == 0 ? f.pooled : f.outs[ii - 1];
    d = block_backward(model.blocks[ii], in, f.outs[ii], f.tapes[ii], std::move(d), threads, cols, &grads.convs[first[ii]]);
    f.tapes[ii] = BlockTape();
  }
  d = max_pool_backward(d, f.pool_arg, f.stem.height, f.stem.width, threads);
  relu_backward(d, f.stem);
  conv_parameter_gradient(model.stem, x, d, grads.convs[0], threads, cols);
  return logits;
}

std::vector<float> resnet_stem_kernel(const ResnetModel& model, int out, int in) {
  const CnnConv& c = model.stem;
  const int kk = c.k * c.k;
  std::vector<float> k(static_cast<std::size_t>(kk), 0.0f);
  if (out < 0) {
    for (int o = 0; o < c.out; ++o)
      for (int ch = 0; ch < c.in; ++ch)
        for (int t = 0; t < kk; ++t) k[static_cast<std::size_t>(t)] += std::abs(c.W(o, ch * kk + t));
    return k;
  }
  if (out >= c.out || in < 0 || in >= c.in)
    // TRANSLATORS: conv1 is the name of the ResNet's first convolution.
    throw Error(text_format(_("channel pair (%d, %d) is outside conv1's %d outputs and %d inputs"), out, in, c.out, c.in));
  for (int t = 0; t < kk; ++t) k[static_cast<std::size_t>(t)] = c.W(out, in * kk + t);
  return k;
}

}  // namespace attnlab
