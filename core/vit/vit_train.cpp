#include "core/vit/vit_train.hpp"

#include "core/vit/vit_kernels.hpp"

#include "core/base/budget.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/base/flush_subnormals.hpp"

#include "core/base/blas.hpp"
#if defined(__SSE2__)
#include <xmmintrin.h>
#endif
#include <unsupported/Eigen/SpecialFunctions>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <thread>

namespace attnlab {

const char* pos_kind_name(VitPosKind kind) {
  switch (kind) {
    case VitPosKind::Learned: return "learned";
    case VitPosKind::Sincos: return "sincos";
    case VitPosKind::None: return "none";
  }
  return "?";
}

const char* pooling_name(VitPooling pooling) { return pooling == VitPooling::Average ? "avg" : "cls"; }

const char* task_name(VitTask task) {
  return task == VitTask::MaskedPatches ? "masked-patches" : "classify";
}

void VitTrainShape::check() const {
  auto positive = [](int v, const char* what) {
    // TRANSLATORS: %1$s is one of the model's sizes ("the image height", "the token width D", ...), %2$d its value.
    if (v <= 0) throw Error(text_format(_("%s must be positive, not %d"), what, v));
  };
  positive(image_rows, _("the image height"));
  positive(image_cols, _("the image width"));
  positive(patch, _("the patch size"));
  // TRANSLATORS: D is the width of a token (its number of values).
  positive(D, _("the token width D"));
  // TRANSLATORS: the model's number of transformer blocks.
  positive(depth, _("the depth"));
  positive(heads, _("the number of heads"));
  positive(mlp_hidden, _("the MLP width"));
  if (task == VitTask::Classify) positive(classes, _("the number of classes"));
  if (task == VitTask::MaskedPatches && !(mask_ratio > 0.0f && mask_ratio < 1.0f))
    throw Error(text_format(_("the mask ratio must be between 0 and 1 (exclusive), not %f"), static_cast<double>(mask_ratio)));
  if (image_rows != image_cols)
    // TRANSLATORS: width×height of the images.
    throw Error(text_format(_("the images must be square (%d×%d given)"), image_cols, image_rows));
  if (image_rows % patch != 0)
    throw Error(text_format(_("the patch size %d does not divide the image side %d"), patch, image_rows));
  // TRANSLATORS: D is the width of a token.
  if (D % heads != 0) throw Error(text_format(_("%d heads do not divide D = %d"), heads, D));
  if (pos == VitPosKind::Sincos && D % 4 != 0)
    // TRANSLATORS: D is the width of a token.
    throw Error(text_format(_("sine–cosine position codes need D to be a multiple of 4, not %d"), D));
  if (D > 4096 || depth > 64 || mlp_hidden > 16384 || N() > 4096 || classes > 100000)
    throw Error(_("the model is larger than the trainer is made for"));
  if (!(eps > 0.0f)) throw Error(_("LayerNorm's eps must be positive"));
}

double vit_learning_rate(const VitTrainSettings& s, std::int64_t step) {
  if (step < s.warmup_steps) return s.lr * static_cast<double>(step + 1) / s.warmup_steps;
  const double span = std::max(1, s.total_steps - s.warmup_steps);
  const double t = std::min(1.0, static_cast<double>(step - s.warmup_steps) / span);
  return s.min_lr + (s.lr - s.min_lr) * 0.5 * (1.0 + std::cos(std::numbers::pi * t));
}

Matrix sincos_position_embedding(int rows, int cols, int D) {
  if (D % 4 != 0) throw Error(_("sine–cosine position codes need D to be a multiple of 4"));
  const int q = D / 4;
  Matrix pos = Matrix::Zero(1 + rows * cols, D);
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      const int t = 1 + y * cols + x;
      for (int k = 0; k < q; ++k) {
        const double omega = 1.0 / std::pow(10000.0, static_cast<double>(k) / q);
        pos(t, k) = static_cast<float>(std::sin(x * omega));
        pos(t, q + k) = static_cast<float>(std::cos(x * omega));
        pos(t, 2 * q + k) = static_cast<float>(std::sin(y * omega));
        pos(t, 3 * q + k) = static_cast<float>(std::cos(y * omega));
      }
    }
  return pos;
}

namespace {


/// Random numbers that do not depend on the standard library's distributions (which differ
/// between implementations): uniform doubles from the top 53 bits, normals by Box–Muller.
class Random {
 public:
  explicit Random(std::uint64_t seed) : gen_(seed) {}
  double uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }  ///< [0, 1)
  double normal() {
    if (spare_) {
      spare_ = false;
      return spare_value_;
    }
    double u1 = uniform();
    while (u1 <= 0.0) u1 = uniform();
    const double u2 = uniform(), r = std::sqrt(-2.0 * std::log(u1)), a = 2.0 * std::numbers::pi * u2;
    spare_ = true;
    spare_value_ = r * std::sin(a);
    return r * std::cos(a);
  }

 private:
  std::mt19937_64 gen_;
  bool spare_ = false;
  double spare_value_ = 0.0;
};

int default_threads() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

using MatMap = Eigen::Map<Matrix>;
using ConstMatMap = Eigen::Map<const Matrix>;
using ArrMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrMap = Eigen::Map<const Eigen::ArrayXf>;
using ConstRowMap = Eigen::Map<const Eigen::Array<float, 1, Eigen::Dynamic>>;

/// Softmax of each row of a rows × cols block in place (the row's maximum subtracted first).
void softmax_rows(float* S, int rows, int cols) {
  MatMap s(S, rows, cols);
  for (int i = 0; i < rows; ++i) {
    auto row = s.row(i).array();
    row = (row - row.maxCoeff()).exp();
    row *= 1.0f / row.sum();
  }
}

/// Y (rows × out) = X (rows × in) · Wᵀ + b.
void linear_forward(const float* X, const float* W, const float* b, int rows, int in, int out, float* Y) {
  for (int t = 0; t < rows; ++t) std::copy(b, b + out, Y + static_cast<std::ptrdiff_t>(t) * out);
  blas::sgemm(false, true, rows, out, in, 1.0f, X, in, W, in, 1.0f, Y, out);
}

/// The backward of linear_forward: gW += dYᵀ·X, gb += Σ rows of dY, and dX = dY·W (when dX).
void linear_backward(const float* dY, const float* X, const float* W, int rows, int in, int out, float* gW, float* gb, float* dX) {
  blas::sgemm(true, false, out, in, rows, 1.0f, dY, out, X, in, 1.0f, gW, in);
  Eigen::Map<RowVector>(gb, out) += ConstMatMap(dY, rows, out).colwise().sum();
  if (dX) blas::sgemm(false, false, rows, in, out, 1.0f, dY, out, W, in, 0.0f, dX, in);
}

/// The final LayerNorm's weight: timm's `fc_norm` after average pooling, `norm` otherwise
/// (masked-patch reconstruction pools nothing: `norm` on every token); its bias is the next kind.
VitTensor final_norm_kind(const VitTrainShape& s) {
  return s.task == VitTask::Classify && s.pooling == VitPooling::Average ? VitTensor::FcNormWeight : VitTensor::NormWeight;
}
constexpr VitTensor next_kind(VitTensor kind) { return static_cast<VitTensor>(static_cast<int>(kind) + 1); }


}  // namespace

/// One thread's share of a batch: the activations the backward pass needs and its gradient.
struct VitTrainer::Work {
  int capacity = 0;                    ///< images the buffers hold
  std::vector<float> patches;          ///< n·N × 3P²
  std::vector<std::vector<float>> X;   ///< depth + 1: the tokens entering block l (n·T × D); X[depth] the last block's output
  std::vector<std::vector<float>> Xmid, Xn1, Xn2, QKV, O, Hpre, Hact, A, mu1, rs1, mu2, rs2;
  std::vector<float> pooled, Z, pmu, prs, logits;
  std::vector<float> dX, dXn, dQKV, dO, dH, dA, dZ, dpooled;
  std::vector<float> grad;             ///< this thread's gradient, as VitTrainer's values
  double loss = 0.0;
  int correct = 0;

  void reserve(const VitTrainShape& s, int n, std::size_t params) {
    if (grad.size() != params) grad.assign(params, 0.0f);
    if (n <= capacity) return;
    capacity = n;
    const std::size_t R = static_cast<std::size_t>(n) * s.T(), D = s.D, Hd = s.mlp_hidden, L = s.depth;
    const std::size_t K = 3ull * s.patch * s.patch, T = s.T();
    patches.assign(static_cast<std::size_t>(n) * s.N() * K, 0.0f);
    auto layers = [&](std::vector<std::vector<float>>& v, std::size_t count, std::size_t size) {
      v.assign(count, std::vector<float>(size, 0.0f));
    };
    layers(X, L + 1, R * D);
    layers(Xmid, L, R * D);
    layers(Xn1, L, R * D);
    layers(Xn2, L, R * D);
    layers(QKV, L, R * 3 * D);
    layers(O, L, R * D);
    layers(Hpre, L, R * Hd);
    layers(Hact, L, R * Hd);
    layers(A, L, static_cast<std::size_t>(n) * s.heads * T * T);
    layers(mu1, L, R);
    layers(rs1, L, R);
    layers(mu2, L, R);
    layers(rs2, L, R);
    // Classify normalizes one pooled row per image, MaskedPatches every token's row.
    const std::size_t normed = s.task == VitTask::MaskedPatches ? R : static_cast<std::size_t>(n);
    pooled.assign(static_cast<std::size_t>(n) * D, 0.0f);
    Z.assign(normed * D, 0.0f);
    pmu.assign(normed, 0.0f);
    prs.assign(normed, 0.0f);
    logits.assign(normed * s.outputs(), 0.0f);
    dX.assign(R * D, 0.0f);
    dXn.assign(R * D, 0.0f);
    dQKV.assign(R * 3 * D, 0.0f);
    dO.assign(R * D, 0.0f);
    dH.assign(R * Hd, 0.0f);
    dA.assign(T * T, 0.0f);
    dZ.assign(normed * D, 0.0f);
    dpooled.assign(static_cast<std::size_t>(n) * D, 0.0f);
  }
};

namespace {

// The floats VitTrainer's constructor gives its parameters (the sizes of params_, summed).
std::size_t train_param_floats(const VitTrainShape& s) {
  const std::size_t D = static_cast<std::size_t>(s.D), Hd = static_cast<std::size_t>(s.mlp_hidden),
                    P = static_cast<std::size_t>(s.patch), T = static_cast<std::size_t>(s.T()),
                    C = static_cast<std::size_t>(s.outputs()), L = static_cast<std::size_t>(s.depth);
  std::size_t n = checked_sum(D, checked_product({T, D}));                   // cls_token, pos_embed
  n = checked_sum(n, checked_sum(checked_product({D, 3, P, P}), D));         // the patch embedding
  const std::size_t block = checked_sum(checked_product({4, D, D}), checked_product({2, D, Hd}));  // qkv, proj, fc1, fc2
  n = checked_sum(n, checked_product({L, checked_sum(block, checked_sum(checked_product({9, D}), Hd))}));  // + biases, norms
  return checked_sum(n, checked_sum(checked_product({2, D}), checked_sum(checked_product({C, D}), C)));  // norm, head C × D + C
}

// The floats Work::reserve() gives one thread for `n` images (its gradient not counted).
std::size_t train_work_floats(const VitTrainShape& s, std::size_t n) {
  const std::size_t T = static_cast<std::size_t>(s.T()), D = static_cast<std::size_t>(s.D), Hd = static_cast<std::size_t>(s.mlp_hidden),
                    L = static_cast<std::size_t>(s.depth), H = static_cast<std::size_t>(s.heads), R = checked_product({n, T}),
                    normed = s.task == VitTask::MaskedPatches ? R : n;
  std::size_t f = checked_product({n, static_cast<std::size_t>(s.N()), 3, static_cast<std::size_t>(s.patch), static_cast<std::size_t>(s.patch)});
  f = checked_sum(f, checked_product({L + 1, R, D}));                 // X
  f = checked_sum(f, checked_product({L, R, D, 7}));                  // Xmid, Xn1, Xn2, O, QKV (3)
  f = checked_sum(f, checked_product({L, R, Hd, 2}));                 // Hpre, Hact
  f = checked_sum(f, checked_product({L, n, H, T, T}));               // A
  f = checked_sum(f, checked_product({L, R, 4}));                     // mu1, rs1, mu2, rs2
  f = checked_sum(f, checked_product({R, D, 6}));                     // dX, dXn, dO, dQKV (3)
  f = checked_sum(f, checked_product({R, Hd}));                       // dH
  f = checked_sum(f, checked_product({T, T}));                        // dA
  f = checked_sum(f, checked_product({normed, checked_sum(checked_product({2, D}), checked_sum(2, static_cast<std::size_t>(s.outputs())))}));
  return checked_sum(f, checked_product({n, D, 2}));                  // pooled, dpooled
}

constexpr int kTrainEvalChunk = 128;  // images an evaluation's forward holds at once (logits(), layer_tokens())

}  // namespace

std::size_t vit_train_bytes(const VitTrainShape& shape, int batch, int threads) {
  const std::size_t t = static_cast<std::size_t>(std::max(1, threads > 0 ? threads : default_threads()));
  const std::size_t b = static_cast<std::size_t>(std::max(batch, 1));
  const std::size_t per_thread = std::max<std::size_t>((b + t - 1) / t, kTrainEvalChunk);
  const std::size_t P = train_param_floats(shape);
  const std::size_t floats = checked_sum(checked_product({5, P}), checked_product({t, checked_sum(P, train_work_floats(shape, per_thread))}));
  return checked_product({floats, sizeof(float)});
}

void vit_check_train_budget(const VitTrainShape& shape, int batch, int threads, std::uint64_t budget) {
  const std::size_t need = vit_train_bytes(shape, batch, threads);
  if (need <= budget) return;
  // The per-thread share is at least an evaluation chunk: batches up to that cost the same.
  int lo = 0, hi = std::max(batch, 1);
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (vit_train_bytes(shape, mid, threads) <= budget ? lo : hi) = mid;
  }
  // TRANSLATORS: goes into "... would need N MiB, over the B MiB memory budget"; D: the token width, depth: the number of blocks,
  // MLP: the MLP's width.
  const std::string model = text_format(_("training a ViT of D=%d, depth %d, MLP %d on %d tokens, batch %d"), shape.D, shape.depth,
                                        shape.mlp_hidden, shape.T(), batch);
  check_memory(need, budget, model,
               lo > 0 ? text_format(_("a batch of up to %d fits"), lo)
                      // TRANSLATORS: D: the token width; depth: the number of blocks.
                      : std::string(_("no batch fits: choose a smaller D, depth or MLP width")));
}

VitTrainer::~VitTrainer() = default;
VitTrainer::VitTrainer(VitTrainer&&) noexcept = default;
VitTrainer& VitTrainer::operator=(VitTrainer&&) noexcept = default;

VitTrainer::VitTrainer(const VitTrainShape& shape, const VitTrainSettings& settings, std::uint64_t seed, int threads)
    : shape_(shape), settings_(settings), threads_(threads > 0 ? threads : default_threads()) {
  shape_.check();
  const std::int64_t D = shape_.D, Hd = shape_.mlp_hidden, P = shape_.patch, T = shape_.T();
  std::size_t offset = 0;
  index_.assign(static_cast<std::size_t>(shape_.depth) + 1, {});
  for (auto& row : index_) row.fill(-1);
  // Each parameter named by timm's table (core/vit/tensor_names.hpp), indexed by its kind and block.
  auto add = [&](VitTensor kind, int block, std::vector<std::int64_t> dims, bool decay, bool trained = true) {
    VitParam p;
    p.kind = kind;
    p.block = block;
    p.name = vit_tensor_name(VitNaming::Timm, kind, block);
    p.shape = std::move(dims);
    p.size = 1;
    for (const auto d : p.shape) p.size *= static_cast<std::size_t>(d);
    p.offset = offset;
    p.decay = decay;
    p.trained = trained;
    offset += p.size;
    index_[static_cast<std::size_t>(block + 1)][static_cast<std::size_t>(kind)] = static_cast<int>(params_.size());
    params_.push_back(std::move(p));
  };
  using Kind = VitTensor;
  add(Kind::ClsToken, -1, {1, 1, D}, false);
  add(Kind::PosEmbed, -1, {1, T, D}, false, shape_.pos == VitPosKind::Learned);
  add(Kind::PatchWeight, -1, {D, 3, P, P}, true);
  add(Kind::PatchBias, -1, {D}, false);
  for (int l = 0; l < shape_.depth; ++l) {
    add(Kind::Norm1Weight, l, {D}, false);
    add(Kind::Norm1Bias, l, {D}, false);
    add(Kind::QkvWeight, l, {3 * D, D}, true);
    add(Kind::QkvBias, l, {3 * D}, false);
    add(Kind::ProjWeight, l, {D, D}, true);
    add(Kind::ProjBias, l, {D}, false);
    add(Kind::Norm2Weight, l, {D}, false);
    add(Kind::Norm2Bias, l, {D}, false);
    add(Kind::Fc1Weight, l, {Hd, D}, true);
    add(Kind::Fc1Bias, l, {Hd}, false);
    add(Kind::Fc2Weight, l, {D, Hd}, true);
    add(Kind::Fc2Bias, l, {D}, false);
  }
  const VitTensor norm = final_norm_kind(shape_);
  add(norm, -1, {D}, false);
  add(next_kind(norm), -1, {D}, false);
  add(Kind::HeadWeight, -1, {shape_.outputs(), D}, true);
  add(Kind::HeadBias, -1, {shape_.outputs()}, false);
  values_.assign(offset, 0.0f);
  grad_.assign(offset, 0.0f);
  m_.assign(offset, 0.0f);
  v_.assign(offset, 0.0f);

  // timm's initialization, in the order above.
  Random rng(seed);
  auto trunc_normal = [&](const VitParam& p, double std) {
    for (float& v : values_of(p)) {
      double x = rng.normal() * std;
      while (x < -2.0 || x > 2.0) x = rng.normal() * std;
      v = static_cast<float>(x);
    }
  };
  for (const VitParam& p : params_) {
    auto v = values_of(p);
    if (p.kind == VitTensor::ClsToken) {
      for (float& x : v) x = static_cast<float>(rng.normal() * 1e-6);
    } else if (p.kind == VitTensor::PosEmbed) {
      if (shape_.pos == VitPosKind::Learned) trunc_normal(p, 0.02);
      else if (shape_.pos == VitPosKind::Sincos) {
        const Matrix s = sincos_position_embedding(shape_.grid_rows(), shape_.grid_cols(), shape_.D);
        std::copy(s.data(), s.data() + s.size(), v.begin());
      }
    } else if (p.kind == VitTensor::PatchWeight || p.kind == VitTensor::PatchBias) {
      const double bound = 1.0 / std::sqrt(3.0 * static_cast<double>(P * P));
      for (float& x : v) x = static_cast<float>((2.0 * rng.uniform() - 1.0) * bound);
    } else if (p.kind == VitTensor::Norm1Weight || p.kind == VitTensor::Norm2Weight || p.kind == VitTensor::NormWeight ||
               p.kind == VitTensor::FcNormWeight) {
      std::fill(v.begin(), v.end(), 1.0f);
    } else if (p.shape.size() == 2) {
      trunc_normal(p, 0.02);
    }  // biases and LayerNorm biases stay 0
  }
}

const VitParam& VitTrainer::param(const std::string& name) const {
  for (const VitParam& p : params_)
    if (p.name == name) return p;
  throw Error(text_format(_("the model has no parameter '%s'"), name.c_str()));
}

const VitParam& VitTrainer::param(VitTensor kind, int block) const {
  const bool exists = block >= -1 && block < shape_.depth && kind != VitTensor::Count;
  const int i = exists ? index_[static_cast<std::size_t>(block + 1)][static_cast<std::size_t>(kind)] : -1;
  if (i < 0)
    throw Error(text_format(_("the model has no parameter '%s'"), vit_tensor_name(VitNaming::Timm, kind, block).c_str()));
  return params_[static_cast<std::size_t>(i)];
}

float* VitTrainer::value_of(VitTensor kind, int block) {
  return values_.data() + params_[static_cast<std::size_t>(index_[static_cast<std::size_t>(block + 1)][static_cast<std::size_t>(kind)])].offset;
}

float* VitTrainer::gradient_in(Work& w, VitTensor kind, int block) const {
  return w.grad.data() + params_[static_cast<std::size_t>(index_[static_cast<std::size_t>(block + 1)][static_cast<std::size_t>(kind)])].offset;
}

void VitTrainer::embed(Work& w, const float* images, const std::uint8_t* masked, int n) {
  const VitTrainShape& s = shape_;
  const int D = s.D, T = s.T(), N = s.N(), P = s.patch, K = 3 * P * P, side = s.image_cols, gc = s.grid_cols();
  const std::size_t image_size = 3ull * side * side;
  // Patches: row (b, patch) = the patch's pixels in (channel, y, x) order, as the conv kernel.
  for (int b = 0; b < n; ++b)
    for (int p = 0; p < N; ++p) {
      float* row = w.patches.data() + (static_cast<std::size_t>(b) * N + p) * K;
      const int py = p / gc, px = p % gc;
      const float* img = images + b * image_size;
      for (int c = 0; c < 3; ++c)
        for (int y = 0; y < P; ++y) {
          const float* src = img + (static_cast<std::size_t>(c) * side + py * P + y) * side + px * P;
          std::copy(src, src + P, row + (c * P + y) * P);
        }
    }
  // Patch embedding into the patch rows of X[0]; then cls and the position embedding.
  float* X0 = w.X[0].data();
  std::vector<float> E(static_cast<std::size_t>(n) * N * D);
  linear_forward(w.patches.data(), value_of(VitTensor::PatchWeight), value_of(VitTensor::PatchBias), n * N, K, D, E.data());
  const float* cls = value_of(VitTensor::ClsToken);
  const float* pos = value_of(VitTensor::PosEmbed);
  for (int b = 0; b < n; ++b)
    for (int t = 0; t < T; ++t) {
      float* x = X0 + (static_cast<std::size_t>(b) * T + t) * D;
      if (t > 0 && masked && masked[static_cast<std::size_t>(b) * N + t - 1]) {  // a masked patch: its position code alone
        std::copy(pos + t * D, pos + (t + 1) * D, x);
        continue;
      }
      const float* src = t == 0 ? cls : E.data() + (static_cast<std::size_t>(b) * N + t - 1) * D;
      for (int j = 0; j < D; ++j) x[j] = src[j] + pos[t * D + j];
    }
}

void VitTrainer::forward_blocks(Work& w, const std::uint8_t* masked, int n) {
  const VitTrainShape& s = shape_;
  const int D = s.D, H = s.heads, m = D / H, T = s.T(), N = s.N(), Hd = s.mlp_hidden, R = n * T;
  const float eps = s.eps, scale = 1.0f / std::sqrt(static_cast<float>(m));
  // The random mask of section 26.10 on the keys: a masked patch's column of the scores is −∞
  // before the softmax (the class token's key is never masked), and its weight is set to exactly 0
  // after it: the vectorized exp turns −∞ into a subnormal float, not 0, and subnormals in the
  // products that follow cost a hundred times a normal number.
  auto mask_keys = [&](float* S, int b, float value) {
    if (!masked) return;
    const std::uint8_t* mb = masked + static_cast<std::size_t>(b) * N;
    for (int p = 0; p < N; ++p)
      if (mb[p])
        for (int i = 0; i < T; ++i) S[static_cast<std::size_t>(i) * T + 1 + p] = value;
  };
  using Kind = VitTensor;
  for (int l = 0; l < s.depth; ++l) {
    const float* Xin = w.X[l].data();
    float* Xn1 = w.Xn1[l].data();
    float* QKV = w.QKV[l].data();
    float* O = w.O[l].data();
    float* Xmid = w.Xmid[l].data();
    vit_kernels::ln_forward(Xin, value_of(Kind::Norm1Weight, l), value_of(Kind::Norm1Bias, l), R, D, eps, Xn1, w.mu1[l].data(), w.rs1[l].data());
    linear_forward(Xn1, value_of(Kind::QkvWeight, l), value_of(Kind::QkvBias, l), R, D, 3 * D, QKV);
    for (int b = 0; b < n; ++b)
      for (int h = 0; h < H; ++h) {
        float* A = w.A[l].data() + (static_cast<std::size_t>(b) * H + h) * T * T;
        const float* q = QKV + static_cast<std::size_t>(b) * T * 3 * D + h * m;
        blas::sgemm(false, true, T, T, m, scale, q, 3 * D, q + D, 3 * D, 0.0f, A, T);
        mask_keys(A, b, -std::numeric_limits<float>::infinity());
        softmax_rows(A, T, T);
        mask_keys(A, b, 0.0f);
        blas::sgemm(false, false, T, m, T, 1.0f, A, T, q + 2 * D, 3 * D, 0.0f, O + static_cast<std::size_t>(b) * T * D + h * m, D);
      }
    linear_forward(O, value_of(Kind::ProjWeight, l), value_of(Kind::ProjBias, l), R, D, D, Xmid);
    ArrMap(Xmid, static_cast<Eigen::Index>(R) * D) += ConstArrMap(Xin, static_cast<Eigen::Index>(R) * D);
    float* Xn2 = w.Xn2[l].data();
    vit_kernels::ln_forward(Xmid, value_of(Kind::Norm2Weight, l), value_of(Kind::Norm2Bias, l), R, D, eps, Xn2, w.mu2[l].data(), w.rs2[l].data());
    float* Hpre = w.Hpre[l].data();
    float* Hact = w.Hact[l].data();
    linear_forward(Xn2, value_of(Kind::Fc1Weight, l), value_of(Kind::Fc1Bias, l), R, D, Hd, Hpre);
    vit_kernels::gelu_forward(Hpre, static_cast<std::size_t>(R) * Hd, Hact);
    float* Xout = w.X[l + 1].data();
    linear_forward(Hact, value_of(Kind::Fc2Weight, l), value_of(Kind::Fc2Bias, l), R, Hd, D, Xout);
    ArrMap(Xout, static_cast<Eigen::Index>(R) * D) += ConstArrMap(Xmid, static_cast<Eigen::Index>(R) * D);
  }
}

double VitTrainer::reconstruction_loss(Work& w, const std::uint8_t* masked, int n, double loss_scale, bool backward, float* out) {
  const VitTrainShape& s = shape_;
  const int D = s.D, T = s.T(), N = s.N(), P = s.patch, C = s.outputs(), K = 3 * P * P, R = n * T;
  const float* XL = w.X[s.depth].data();
  const VitTensor norm = final_norm_kind(s);
  // Every token's output normed and through the head: 3P² predicted pixels per token.
  vit_kernels::ln_forward(XL, value_of(norm), value_of(next_kind(norm)), R, D, s.eps, w.Z.data(), w.pmu.data(), w.prs.data());
  float* pred = w.logits.data();
  linear_forward(w.Z.data(), value_of(VitTensor::HeadWeight), value_of(VitTensor::HeadBias), R, D, C, pred);
  if (out) std::copy(pred, pred + static_cast<std::size_t>(R) * C, out);
  if (!masked) return 0.0;
  // Squared error over the masked patches' pixels; dpred = 2·(pred − x)·loss_scale there, 0 elsewhere.
  double loss = 0.0;
  for (int b = 0; b < n; ++b)
    for (int t = 0; t < T; ++t) {
      float* row = pred + (static_cast<std::size_t>(b) * T + t) * C;
      if (t == 0 || !masked[static_cast<std::size_t>(b) * N + t - 1]) {
        std::fill(row, row + C, 0.0f);
        continue;
      }
      const float* target = w.patches.data() + (static_cast<std::size_t>(b) * N + t - 1) * K;
      for (int k = 0; k < C; ++k) {
        const double e = static_cast<double>(row[k]) - target[k];
        loss += e * e;
        row[k] = static_cast<float>(2.0 * e * loss_scale);
      }
    }
  if (!backward) return loss;
  linear_backward(pred, w.Z.data(), value_of(VitTensor::HeadWeight), R, D, C, gradient_in(w, VitTensor::HeadWeight),
                  gradient_in(w, VitTensor::HeadBias), w.dZ.data());
  vit_kernels::ln_backward(w.dZ.data(), XL, w.pmu.data(), w.prs.data(), value_of(norm), R, D, w.dX.data(), false, gradient_in(w, norm),
              gradient_in(w, next_kind(norm)));
  backward_blocks(w, masked, n);
  return loss;
}

double VitTrainer::classification_loss(Work& w, const int* labels, int n, double loss_scale, bool backward, float* out) {
  const VitTrainShape& s = shape_;
  const int D = s.D, T = s.T(), N = s.N(), C = s.outputs(), R = n * T;
  const float* XL = w.X[s.depth].data();
  const VitTensor norm = final_norm_kind(s);
  float* dX = w.dX.data();
  // Pooling, final LayerNorm, classifier.
  const bool token = s.pooling == VitPooling::Token;
  for (int b = 0; b < n; ++b) {
    float* pooled = w.pooled.data() + static_cast<std::size_t>(b) * D;
    const float* xb = XL + static_cast<std::size_t>(b) * T * D;
    if (token) {
      std::copy(xb, xb + D, pooled);
    } else {
      for (int j = 0; j < D; ++j) {
        float sum = 0.0f;
        for (int t = 1; t < T; ++t) sum += xb[static_cast<std::size_t>(t) * D + j];
        pooled[j] = sum / static_cast<float>(N);
      }
    }
  }
  vit_kernels::ln_forward(w.pooled.data(), value_of(norm), value_of(next_kind(norm)), n, D, s.eps, w.Z.data(), w.pmu.data(), w.prs.data());
  float* logits = w.logits.data();
  linear_forward(w.Z.data(), value_of(VitTensor::HeadWeight), value_of(VitTensor::HeadBias), n, D, C, logits);
  if (out) std::copy(logits, logits + static_cast<std::size_t>(n) * C, out);
  if (!labels) return 0.0;

  // Cross-entropy with label smoothing; dlogits = (p − q)·loss_scale (1/B) in place of the logits.
  double loss = 0.0;
  w.correct = 0;
  for (int b = 0; b < n; ++b) {
    bool correct = false;
    loss += smoothed_cross_entropy(logits + static_cast<std::size_t>(b) * C, C, labels[b], settings_.label_smoothing, loss_scale, true,
                                   &correct);
    w.correct += correct;
  }
  if (!backward) return loss;

  // Classifier and final LayerNorm.
  linear_backward(logits, w.Z.data(), value_of(VitTensor::HeadWeight), n, D, C, gradient_in(w, VitTensor::HeadWeight),
                  gradient_in(w, VitTensor::HeadBias), w.dZ.data());
  vit_kernels::ln_backward(w.dZ.data(), w.pooled.data(), w.pmu.data(), w.prs.data(), value_of(norm), n, D, w.dpooled.data(), false,
              gradient_in(w, norm), gradient_in(w, next_kind(norm)));
  std::fill(dX, dX + static_cast<std::size_t>(R) * D, 0.0f);
  for (int b = 0; b < n; ++b) {
    const float* dp = w.dpooled.data() + static_cast<std::size_t>(b) * D;
    float* dxb = dX + static_cast<std::size_t>(b) * T * D;
    if (token) {
      std::copy(dp, dp + D, dxb);
    } else {
      for (int t = 1; t < T; ++t)
        for (int j = 0; j < D; ++j) dxb[static_cast<std::size_t>(t) * D + j] = dp[j] / static_cast<float>(N);
    }
  }
  backward_blocks(w, nullptr, n);
  return loss;
}

double VitTrainer::forward_backward(Work& w, const float* images, const int* labels, const std::uint8_t* masked, int n, double loss_scale,
                                    bool backward, float* out) {
  embed(w, images, masked, n);
  forward_blocks(w, masked, n);
  if (shape_.task == VitTask::MaskedPatches) return reconstruction_loss(w, masked, n, loss_scale, backward, out);
  return classification_loss(w, labels, n, loss_scale, backward, out);
}

void VitTrainer::backward_blocks(Work& w, const std::uint8_t* masked, int n) {
  const VitTrainShape& s = shape_;
  const int D = s.D, H = s.heads, m = D / H, T = s.T(), N = s.N(), P = s.patch, Hd = s.mlp_hidden;
  const int K = 3 * P * P, R = n * T;
  const float scale = 1.0f / std::sqrt(static_cast<float>(m));
  using Kind = VitTensor;
  auto val = [&](VitTensor kind, int block = -1) { return value_of(kind, block); };
  auto grd = [&](VitTensor kind, int block = -1) { return gradient_in(w, kind, block); };
  float* dX = w.dX.data();
  // Blocks, last to first; dX holds the gradient of the block's output, then of its input.
  float* dXn = w.dXn.data();
  float* dQKV = w.dQKV.data();
  float* dO = w.dO.data();
  float* dH = w.dH.data();
  for (int l = s.depth - 1; l >= 0; --l) {
    // x_out = x_mid + fc2(gelu(fc1(LN2(x_mid)))).
    linear_backward(dX, w.Hact[l].data(), val(Kind::Fc2Weight, l), R, Hd, D, grd(Kind::Fc2Weight, l), grd(Kind::Fc2Bias, l), dH);
    const float* Hpre = w.Hpre[l].data();
    vit_kernels::gelu_backward(Hpre, static_cast<std::size_t>(R) * Hd, dH);
    linear_backward(dH, w.Xn2[l].data(), val(Kind::Fc1Weight, l), R, D, Hd, grd(Kind::Fc1Weight, l), grd(Kind::Fc1Bias, l), dXn);
    vit_kernels::ln_backward(dXn, w.Xmid[l].data(), w.mu2[l].data(), w.rs2[l].data(), val(Kind::Norm2Weight, l), R, D, dX, true, grd(Kind::Norm2Weight, l),
                grd(Kind::Norm2Bias, l));
    // x_mid = x_in + proj(attention(qkv(LN1(x_in)))).
    linear_backward(dX, w.O[l].data(), val(Kind::ProjWeight, l), R, D, D, grd(Kind::ProjWeight, l), grd(Kind::ProjBias, l), dO);
    const float* QKV = w.QKV[l].data();
    float* dA = w.dA.data();
    for (int b = 0; b < n; ++b)
      for (int h = 0; h < H; ++h) {
        const float* A = w.A[l].data() + (static_cast<std::size_t>(b) * H + h) * T * T;
        const std::size_t r0 = static_cast<std::size_t>(b) * T;
        const float* q = QKV + r0 * 3 * D + h * m;
        const float* dOh = dO + r0 * D + h * m;
        float* dq = dQKV + r0 * 3 * D + h * m;
        vit_kernels::attention_head_backward(A, dOh, D, q, q + D, q + 2 * D, 3 * D, T, m, scale, dq, dq + D, dq + 2 * D, dA,
                                             nullptr);
      }
    linear_backward(dQKV, w.Xn1[l].data(), val(Kind::QkvWeight, l), R, D, 3 * D, grd(Kind::QkvWeight, l), grd(Kind::QkvBias, l),
                    dXn);
    vit_kernels::ln_backward(dXn, w.X[l].data(), w.mu1[l].data(), w.rs1[l].data(), val(Kind::Norm1Weight, l), R, D, dX, true, grd(Kind::Norm1Weight, l),
                grd(Kind::Norm1Bias, l));
  }
  // Class token, position embedding, patch embedding.
  float* gcls = grd(Kind::ClsToken);
  float* gpos = shape_.pos == VitPosKind::Learned ? grd(Kind::PosEmbed) : nullptr;
  std::vector<float> dE(static_cast<std::size_t>(n) * N * D);
  for (int b = 0; b < n; ++b)
    for (int t = 0; t < T; ++t) {
      const float* d = dX + (static_cast<std::size_t>(b) * T + t) * D;
      if (t == 0)
        for (int j = 0; j < D; ++j) gcls[j] += d[j];
      else if (!masked || !masked[static_cast<std::size_t>(b) * N + t - 1])  // a masked patch's embedding was not used
        std::copy(d, d + D, dE.data() + (static_cast<std::size_t>(b) * N + t - 1) * D);
      if (gpos)
        for (int j = 0; j < D; ++j) gpos[t * D + j] += d[j];
    }
  linear_backward(dE.data(), w.patches.data(), nullptr, n * N, K, D, grd(Kind::PatchWeight), grd(Kind::PatchBias), nullptr);
}

namespace {
/// Splits `count` items into `parts` contiguous ranges as evenly as possible: the first of part p.
int part_begin(int count, int parts, int p) { return static_cast<int>(static_cast<std::int64_t>(count) * p / parts); }
}  // namespace

VitStepStats VitTrainer::compute_gradients(std::span<const float> images, std::span<const int> labels) {
  if (shape_.task != VitTask::Classify) throw Error(_("this model reconstructs masked patches: it has no labels to learn"));
  for (const int y : labels)
    if (y < 0 || y >= shape_.classes) throw Error(text_format(_("label %d is outside [0, %d)"), y, shape_.classes));
  return compute(images, labels.data(), nullptr, static_cast<int>(labels.size()));
}

VitStepStats VitTrainer::compute_gradients_masked(std::span<const float> images, std::span<const std::uint8_t> masked) {
  if (shape_.task != VitTask::MaskedPatches) throw Error(_("this model classifies: it has no masked patches to reconstruct"));
  const int N = shape_.N();
  if (masked.size() % static_cast<std::size_t>(N) != 0)
    throw Error(text_format(_("the mask holds %zu bytes, no whole number of images of %d patches"), masked.size(), N));
  return compute(images, nullptr, masked.data(), static_cast<int>(masked.size() / static_cast<std::size_t>(N)));
}

namespace {
/// Masked patches in `masked` (count·N bytes); throws when an image has none (its loss would be empty).
std::int64_t count_masked(const std::uint8_t* masked, int count, int N) {
  std::int64_t total = 0;
  for (int b = 0; b < count; ++b) {
    const auto in_image = std::count_if(masked + static_cast<std::size_t>(b) * N, masked + static_cast<std::size_t>(b + 1) * N,
                                        [](std::uint8_t v) { return v != 0; });
    if (in_image == 0) throw Error(text_format(_("image %d of the batch has no masked patch to reconstruct"), b));
    total += in_image;
  }
  return total;
}
}  // namespace

VitStepStats VitTrainer::compute(std::span<const float> images, const int* labels, const std::uint8_t* masked, int B) {
  const std::size_t image_size = 3ull * shape_.image_rows * shape_.image_cols;
  if (B <= 0) throw Error(_("a training batch needs at least one image"));
  if (images.size() != image_size * B)
    throw Error(text_format(_("the batch holds %zu floats, not %d images of %zu"), images.size(), B, image_size));
  // The loss is a mean: over the images (cross-entropy), or over the masked patches' pixel values.
  const double loss_count = masked ? static_cast<double>(count_masked(masked, B, shape_.N())) * shape_.outputs() : B;
  const int parts = std::min(threads_, B);
  while (static_cast<int>(work_.size()) < parts) work_.push_back(std::make_unique<Work>());
  auto run = [&](int p) {
    FlushSubnormals ftz;
    Work& w = *work_[static_cast<std::size_t>(p)];
    const int b0 = part_begin(B, parts, p), b1 = part_begin(B, parts, p + 1);
    w.reserve(shape_, b1 - b0, values_.size());
    std::fill(w.grad.begin(), w.grad.end(), 0.0f);
    w.correct = 0;
    w.loss = forward_backward(w, images.data() + image_size * b0, labels ? labels + b0 : nullptr,
                              masked ? masked + static_cast<std::size_t>(b0) * shape_.N() : nullptr, b1 - b0, 1.0 / loss_count, true, nullptr);
  };
  std::vector<std::thread> pool;
  for (int p = 1; p < parts; ++p) pool.emplace_back(run, p);
  run(0);
  for (std::thread& t : pool) t.join();
  VitStepStats stats;
  std::copy(work_[0]->grad.begin(), work_[0]->grad.end(), grad_.begin());
  for (int p = 1; p < parts; ++p) {
    const std::vector<float>& g = work_[static_cast<std::size_t>(p)]->grad;
    for (std::size_t i = 0; i < grad_.size(); ++i) grad_[i] += g[i];
  }
  double loss = 0.0;
  for (int p = 0; p < parts; ++p) {
    loss += work_[static_cast<std::size_t>(p)]->loss;
    stats.correct += work_[static_cast<std::size_t>(p)]->correct;
  }
  stats.loss = loss / loss_count;
  return stats;
}

VitStepStats VitTrainer::apply_update() {
  const VitStepStats stats = adamw_update(settings_, step_, params_, values_, grad_, m_, v_);
  ++step_;
  return stats;
}

double smoothed_cross_entropy(float* z, int C, int y, double smoothing, double scale, bool gradient, bool* correct) {
  const int best = static_cast<int>(std::max_element(z, z + C) - z);
  if (correct) *correct = best == y;
  const double mx = z[best];
  double sum = 0.0;
  for (int c = 0; c < C; ++c) sum += std::exp(z[c] - mx);
  const double lse = mx + std::log(sum);
  double loss = 0.0;
  for (int c = 0; c < C; ++c) {
    const double q = (c == y ? 1.0 - smoothing : 0.0) + smoothing / C;
    const double logp = z[c] - lse;
    loss -= q * logp;
    if (gradient) z[c] = static_cast<float>((std::exp(logp) - q) * scale);
  }
  return loss;
}

VitStepStats adamw_update(const VitTrainSettings& s, std::int64_t step, const std::vector<VitParam>& params, std::span<float> values,
                          std::span<const float> grad, std::span<float> m, std::span<float> v) {
  VitStepStats stats;
  double sq = 0.0;
  for (const VitParam& p : params)
    if (p.trained)
      for (std::size_t i = p.offset; i < p.offset + p.size; ++i) sq += static_cast<double>(grad[i]) * grad[i];
  stats.grad_norm = std::sqrt(sq);
  const double coef = s.clip_norm > 0.0 ? std::min(1.0, s.clip_norm / (stats.grad_norm + 1e-6)) : 1.0;
  stats.lr = vit_learning_rate(s, step);
  const double t = static_cast<double>(step + 1);
  const double bc1 = 1.0 - std::pow(s.beta1, t), bc2_sqrt = std::sqrt(1.0 - std::pow(s.beta2, t));
  const float step_size = static_cast<float>(stats.lr / bc1), b1 = static_cast<float>(s.beta1), b2 = static_cast<float>(s.beta2);
  const float inv_bc2 = static_cast<float>(1.0 / bc2_sqrt), eps = static_cast<float>(s.adam_eps), c = static_cast<float>(coef);
  for (const VitParam& p : params) {
    if (!p.trained) continue;
    const float keep = static_cast<float>(1.0 - stats.lr * (p.decay ? s.weight_decay : 0.0));
    for (std::size_t i = p.offset; i < p.offset + p.size; ++i) {
      const float g = grad[i] * c;
      float& x = values[i];
      x *= keep;
      m[i] = b1 * m[i] + (1.0f - b1) * g;
      v[i] = b2 * v[i] + (1.0f - b2) * g * g;
      x -= step_size * m[i] / (std::sqrt(v[i]) * inv_bc2 + eps);
    }
  }
  return stats;
}

VitStepStats VitTrainer::train_step(std::span<const float> images, std::span<const int> labels) {
  VitStepStats stats = compute_gradients(images, labels);
  const VitStepStats update = apply_update();
  stats.grad_norm = update.grad_norm;
  stats.lr = update.lr;
  return stats;
}

VitStepStats VitTrainer::train_step_masked(std::span<const float> images, std::span<const std::uint8_t> masked) {
  VitStepStats stats = compute_gradients_masked(images, masked);
  const VitStepStats update = apply_update();
  stats.grad_norm = update.grad_norm;
  stats.lr = update.lr;
  return stats;
}

Matrix VitTrainer::reconstruct(std::span<const float> images, std::span<const std::uint8_t> masked, int count, double* loss) {
  if (shape_.task != VitTask::MaskedPatches) throw Error(_("this model classifies: it reconstructs no patches"));
  const std::size_t image_size = 3ull * shape_.image_rows * shape_.image_cols;
  const int N = shape_.N(), T = shape_.T(), C = shape_.outputs();
  if (count <= 0 || images.size() != image_size * static_cast<std::size_t>(count) || masked.size() != static_cast<std::size_t>(count) * N)
    throw Error(text_format(_("reconstruct: %zu floats and %zu mask bytes are not %d images"), images.size(), masked.size(),
                            count));
  const double loss_count = static_cast<double>(count_masked(masked.data(), count, N)) * C;
  if (work_.empty()) work_.push_back(std::make_unique<Work>());
  Work& w = *work_[0];
  FlushSubnormals ftz;
  Matrix out(static_cast<Eigen::Index>(count) * N, C);
  std::vector<float> rows;
  double sum = 0.0;
  constexpr int kChunk = 64;  // images per forward: bounds the kept activations
  for (int b0 = 0; b0 < count; b0 += kChunk) {
    const int n = std::min(kChunk, count - b0);
    w.reserve(shape_, n, values_.size());
    rows.resize(static_cast<std::size_t>(n) * T * C);
    // The head's rows are copied out before the loss turns them into its gradient.
    sum += forward_backward(w, images.data() + image_size * b0, nullptr, masked.data() + static_cast<std::size_t>(b0) * N, n, 1.0, false,
                            rows.data());
    for (int b = 0; b < n; ++b)
      for (int p = 0; p < N; ++p)
        std::copy_n(rows.data() + (static_cast<std::size_t>(b) * T + 1 + p) * C, C, out.data() + (static_cast<std::size_t>(b0 + b) * N + p) * C);
  }
  if (loss) *loss = sum / loss_count;
  return out;
}

Matrix VitTrainer::logits(std::span<const float> images, int count) {
  const std::size_t image_size = 3ull * shape_.image_rows * shape_.image_cols;
  if (count < 0 || images.size() != image_size * static_cast<std::size_t>(count))
    throw Error(text_format(_("the images hold %zu floats, not %d images"), images.size(), count));
  if (shape_.task != VitTask::Classify) throw Error(_("this model reconstructs masked patches: it has no class logits"));
  Matrix out(count, shape_.classes);
  if (count == 0) return out;
  constexpr int kChunk = 128;  // images per forward on one thread: bounds the kept activations
  const int chunks = (count + kChunk - 1) / kChunk, parts = std::min(threads_, chunks);
  while (static_cast<int>(work_.size()) < parts) work_.push_back(std::make_unique<Work>());
  auto run = [&](int p) {
    FlushSubnormals ftz;
    Work& w = *work_[static_cast<std::size_t>(p)];
    for (int c = p; c < chunks; c += parts) {
      const int b0 = c * kChunk, b1 = std::min(count, b0 + kChunk);
      w.reserve(shape_, b1 - b0, values_.size());
      forward_backward(w, images.data() + image_size * b0, nullptr, nullptr, b1 - b0, 1.0, false, out.data() + static_cast<std::size_t>(b0) * shape_.classes);
    }
  };
  std::vector<std::thread> pool;
  for (int p = 1; p < parts; ++p) pool.emplace_back(run, p);
  run(0);
  for (std::thread& t : pool) t.join();
  return out;
}

std::vector<Matrix> VitTrainer::layer_tokens(std::span<const float> images, int count) {
  const std::size_t image_size = 3ull * shape_.image_rows * shape_.image_cols;
  if (count <= 0 || images.size() != image_size * static_cast<std::size_t>(count))
    throw Error(text_format(_("the images hold %zu floats, not %d images"), images.size(), count));
  const int T = shape_.T(), D = shape_.D;
  std::vector<Matrix> out(static_cast<std::size_t>(shape_.depth + 1), Matrix(static_cast<Eigen::Index>(count) * T, D));
  if (work_.empty()) work_.push_back(std::make_unique<Work>());
  Work& w = *work_[0];
  FlushSubnormals ftz;
  constexpr int kChunk = 128;
  for (int b0 = 0; b0 < count; b0 += kChunk) {
    const int n = std::min(kChunk, count - b0);
    w.reserve(shape_, n, values_.size());
    forward_backward(w, images.data() + image_size * b0, nullptr, nullptr, n, 1.0, false, nullptr);
    for (int l = 0; l <= shape_.depth; ++l)
      std::copy(w.X[static_cast<std::size_t>(l)].begin(), w.X[static_cast<std::size_t>(l)].begin() + static_cast<std::ptrdiff_t>(n) * T * D,
                out[static_cast<std::size_t>(l)].data() + static_cast<std::ptrdiff_t>(b0) * T * D);
  }
  return out;
}

SafetensorsFile VitTrainer::tensors() const {
  SafetensorsFile file;
  file.metadata["format"] = "pt";
  for (const VitParam& p : params_) {
    Tensor t;
    t.dtype = TensorDType::F32;
    t.shape = p.shape;
    const auto v = values_of(p);
    t.values.assign(v.begin(), v.end());
    file.tensors.emplace(p.name, std::move(t));
  }
  return file;
}

VitModel VitTrainer::model(const std::array<float, 3>& mean, const std::array<float, 3>& std, const std::vector<std::string>& labels) const {
  // TRANSLATORS: stands where a file's name would in messages about the model ("the model being trained: ...").
  return vit_from_tensors(tensors(), vit_train_config_json(shape_, mean, std, labels), "", {}, _("the model being trained"));
}

std::string vit_train_config_json(const VitTrainShape& shape, const std::array<float, 3>& mean, const std::array<float, 3>& std,
                                  const std::vector<std::string>& labels) {
  using nlohmann::json;
  // Masked-patch reconstruction: timm's global_pool "" (no pooling: the head maps every token to
  // its 3P² pixels); no class names.
  const bool masked = shape.task == VitTask::MaskedPatches;
  const char* pool = masked ? "" : shape.pooling == VitPooling::Token ? "token" : "avg";
  json names = json::array();
  for (int c = 0; c < shape.classes && !masked; ++c)
    names.push_back(c < static_cast<int>(labels.size()) ? labels[static_cast<std::size_t>(c)] : "class " + std::to_string(c));
  json config = {
      {"architecture", "vit_attnlab_trained"},
      {"num_classes", shape.outputs()},
      {"num_features", shape.D},
      {"global_pool", pool},
      {"model_args",
       {{"img_size", shape.image_rows},
        {"patch_size", shape.patch},
        {"in_chans", 3},
        {"embed_dim", shape.D},
        {"depth", shape.depth},
        {"num_heads", shape.heads},
        {"mlp_ratio", static_cast<double>(shape.mlp_hidden) / shape.D},
        {"qkv_bias", true},
        {"class_token", true},
        {"no_embed_class", false},
        {"global_pool", pool},
        {"num_classes", shape.outputs()}}},
      {"pretrained_cfg",
       {{"mean", {mean[0], mean[1], mean[2]}},
        {"std", {std[0], std[1], std[2]}},
        {"input_size", {3, shape.image_rows, shape.image_cols}},
        {"num_classes", shape.outputs()}}},
      {"label_names", names},
      {"attnlab", {{"pos_embed", pos_kind_name(shape.pos)}, {"norm_eps", shape.eps}, {"task", task_name(shape.task)}}},
  };
  if (masked) config["attnlab"]["mask_ratio"] = shape.mask_ratio;
  return config.dump(2) + "\n";
}

}  // namespace attnlab
