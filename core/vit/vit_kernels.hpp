#pragma once
// The pieces of a ViT block's backward pass shared by the trainer (vit_train.cpp: gradients of
// the loss with respect to the parameters) and the gradient pass of a loaded model
// (vit_gradients.cpp: gradients of one scalar with respect to A and the input). Row-major float
// buffers; the formulas are docs/MATH.md's, "Training a ViT: the backward pass". Internal to
// core/vit: not a public interface.
#include <cstddef>

namespace attnlab::vit_kernels {

/// LayerNorm forward of `rows` rows of width D: y = x̂·w + b, x̂ = (x − μ)·r, r = 1/√(σ² + ε)
/// (σ² with 1/D, as torch.nn.LayerNorm); keeps μ and r per row for the backward.
void ln_forward(const float* X, const float* w, const float* b, int rows, int D, float eps, float* Y, float* mu, float* rstd);

/// LayerNorm backward: from dY (rows × D), the input X and the kept μ, r:
/// dx = r·(dx̂ − mean(dx̂) − x̂·mean(dx̂ ⊙ x̂)), dx̂ = dy ⊙ w, written to dX (or added when
/// `accumulate`); gw += Σ dy ⊙ x̂ and gb += Σ dy when they are not null.
void ln_backward(const float* dY, const float* X, const float* mu, const float* rstd, const float* w, int rows, int D, float* dX,
                 bool accumulate, float* gw, float* gb);

/// The exact GELU x·Φ(x) of `count` values, from `pre` into `out` (may be the same buffer).
void gelu_forward(const float* pre, std::size_t count, float* out);

/// The GELU's backward in place: dH ⊙= GELU'(pre) = Φ(x) + x·φ(x), `count` values.
void gelu_backward(const float* pre, std::size_t count, float* dH);

/// One head's attention backward (eqs. 26.20–26.21 differentiated): from A (T × T, after the
/// softmax), the head's dO (T rows, stride `o_stride`) and its q, k, v (T rows each, stride
/// `qkv_stride`; q, k not yet scaled by `scale` = 1/√m), writes dq, dk, dv (same strides) and
/// leaves ∂y/∂A (T × T, before the softmax's backward) in `dA_out` when it is not null.
/// `dS` is T × T scratch. dA = dO·Vᵀ, dV = Aᵀ·dO, dS = A ⊙ (dA − Σ_j A ⊙ dA),
/// dQ = scale·dS·K, dK = scale·dSᵀ·Q.
void attention_head_backward(const float* A, const float* dO, int o_stride, const float* q, const float* k, const float* v,
                             int qkv_stride, int T, int m, float scale, float* dq, float* dk, float* dv, float* dS,
                             float* dA_out);

}  // namespace attnlab::vit_kernels
