#pragma once
// The pieces of a ViT block's backward pass shared by the trainer (vit_train.cpp: gradients of
// the loss with respect to the parameters) and the gradient pass of a loaded model
// (vit_gradients.cpp: gradients of one scalar with respect to A and the input). Row-major float
// buffers; the formulas are docs/MATH.md's, "Training a ViT: the backward pass". Internal to
// core/vit: not a public interface.
#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace attnlab::vit_kernels {

/// Threads the CPU paths use by default: ATTNLAB_THREADS when set (1 … 256), else one per core.
int default_threads();

/// Runs task(t, worker) for t in [0, tasks) on `threads` threads, the calling one among them
/// (worker 0), task t on worker t mod threads.
template <class Task>
void parallel_tasks(int tasks, int threads, const Task& task) {
  threads = std::max(1, std::min(threads, tasks));
  if (threads == 1) {
    for (int t = 0; t < tasks; ++t) task(t, 0);
    return;
  }
  std::vector<std::thread> pool;
  for (int w = 1; w < threads; ++w)
    pool.emplace_back([&, w] {
      for (int t = w; t < tasks; t += threads) task(t, w);
    });
  for (int t = 0; t < tasks; t += threads) task(t, 0);
  for (std::thread& th : pool) th.join();
}

/// Splits `rows` into `threads` contiguous parts (multiples of 8 rows where possible) and runs
/// part(first, count) for each on its own thread.
template <class Part>
void parallel_rows(int rows, int threads, const Part& part) {
  const int parts = std::max(1, std::min(threads, (rows + 7) / 8));
  const int per = ((rows + parts - 1) / parts + 7) / 8 * 8;
  parallel_tasks(parts, parts, [&](int p, int) {
    const int first = p * per, count = std::min(per, rows - first);
    if (count > 0) part(first, count);
  });
}

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
