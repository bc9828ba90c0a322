#include "core/vit/vit_kernels.hpp"

#include "core/base/blas.hpp"
#include "core/base/types.hpp"

#include <unsupported/Eigen/SpecialFunctions>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace attnlab::vit_kernels {

namespace {
using MatMap = Eigen::Map<Matrix>;
using ConstMatMap = Eigen::Map<const Matrix>;
using RowArray = Eigen::Array<float, 1, Eigen::Dynamic>;
using ConstRowMap = Eigen::Map<const RowArray>;
using ArrMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrMap = Eigen::Map<const Eigen::ArrayXf>;
constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;
}  // namespace

int default_threads() {
  if (const char* env = std::getenv("ATTNLAB_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n > 0 && n <= 256) return static_cast<int>(n);
  }
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

void ln_forward(const float* X, const float* w, const float* b, int rows, int D, float eps, float* Y, float* mu, float* rstd) {
  const ConstMatMap x(X, rows, D);
  MatMap y(Y, rows, D);
  const ConstRowMap wa(w, D), ba(b, D);
  const float inv_d = 1.0f / static_cast<float>(D);
  for (int t = 0; t < rows; ++t) {
    const float m = x.row(t).sum() * inv_d;
    const float var = (x.row(t).array() - m).square().sum() * inv_d;
    const float r = 1.0f / std::sqrt(var + eps);
    mu[t] = m;
    rstd[t] = r;
    y.row(t) = (((x.row(t).array() - m) * r) * wa + ba).matrix();
  }
}

void ln_backward(const float* dY, const float* X, const float* mu, const float* rstd, const float* w, int rows, int D, float* dX,
                 bool accumulate, float* gw, float* gb) {
  const ConstMatMap x(X, rows, D), dy(dY, rows, D);
  MatMap dx(dX, rows, D);
  const ConstRowMap wa(w, D);
  RowArray gwa = RowArray::Zero(D), gba = gwa, xhat(D), dxhat(D);
  const float inv_d = 1.0f / static_cast<float>(D);
  for (int t = 0; t < rows; ++t) {
    const float r = rstd[t];
    xhat = (x.row(t).array() - mu[t]) * r;
    dxhat = dy.row(t).array() * wa;
    if (gw) gwa += dy.row(t).array() * xhat;
    if (gb) gba += dy.row(t).array();
    const float s1 = dxhat.sum() * inv_d, s2 = (dxhat * xhat).sum() * inv_d;
    if (accumulate) dx.row(t).array() += r * (dxhat - s1 - xhat * s2);
    else dx.row(t).array() = r * (dxhat - s1 - xhat * s2);
  }
  if (gw) Eigen::Map<RowArray>(gw, D) += gwa;
  if (gb) Eigen::Map<RowArray>(gb, D) += gba;
}

void gelu_forward(const float* pre, std::size_t count, float* out) {
  const ConstArrMap x(pre, static_cast<Eigen::Index>(count));
  ArrMap(out, x.size()) = 0.5f * x * (1.0f + (x * kInvSqrt2).erf());
}

void gelu_backward(const float* pre, std::size_t count, float* dH) {
  const ConstArrMap x(pre, static_cast<Eigen::Index>(count));
  ArrMap(dH, x.size()) *= 0.5f * (1.0f + (x * kInvSqrt2).erf()) + x * kInvSqrt2Pi * (-0.5f * x.square()).exp();
}

void attention_head_backward(const float* A, const float* dO, int o_stride, const float* q, const float* k, const float* v,
                             int qkv_stride, int T, int m, float scale, float* dq, float* dk, float* dv, float* dS,
                             float* dA_out) {
  // dA = dO·Vᵀ, dV = Aᵀ·dO.
  blas::sgemm(false, true, T, T, m, 1.0f, dO, o_stride, v, qkv_stride, 0.0f, dS, T);
  if (dA_out) std::copy(dS, dS + static_cast<std::ptrdiff_t>(T) * T, dA_out);
  blas::sgemm(true, false, T, m, T, 1.0f, A, T, dO, o_stride, 0.0f, dv, qkv_stride);
  // Softmax: dS = A ⊙ (dA − Σ_j A ⊙ dA), per row.
  const ConstMatMap a(A, T, T);
  MatMap d(dS, T, T);
  for (int i = 0; i < T; ++i) {
    const float dot = a.row(i).dot(d.row(i));
    d.row(i).array() = a.row(i).array() * (d.row(i).array() - dot);
  }
  // S = scale·Q·Kᵀ: dQ = scale·dS·K, dK = scale·dSᵀ·Q.
  blas::sgemm(false, false, T, m, T, scale, dS, T, k, qkv_stride, 0.0f, dq, qkv_stride);
  blas::sgemm(true, false, T, m, T, scale, dS, T, q, qkv_stride, 0.0f, dk, qkv_stride);
}

}  // namespace attnlab::vit_kernels
