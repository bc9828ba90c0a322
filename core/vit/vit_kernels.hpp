#pragma once
// The pieces of a ViT block's backward pass shared by the trainer (vit_train.cpp: gradients of
// the loss with respect to the parameters) and the gradient pass of a loaded model
// (vit_gradients.cpp: gradients of one scalar with respect to A and the input). Row-major float
// buffers; the formulas are docs/MATH.md's, "Training a ViT: the backward pass". Internal to
// core/vit: not a public interface.
#include <algorithm>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace attnlab::vit_kernels {

/// Threads the CPU paths use by default: ATTNLAB_THREADS when set (1 … 256), else one per core.
int default_threads();

/// Runs task(t, worker) for t in [0, tasks) on `threads` threads, the calling one among them
/// (worker 0), task t on worker t mod threads, and returns when every task has run. The other
/// workers are the calling thread's own team (run_tasks), kept between calls. A task that
/// throws: the other tasks still run, and the first exception is rethrown here once every
/// worker is done. A task must not call parallel_tasks itself.
void run_tasks(int tasks, int threads, const std::function<void(int task, int worker)>& task);

template <class Task>
void parallel_tasks(int tasks, int threads, const Task& task) {
  threads = std::max(1, std::min(threads, tasks));
  if (threads == 1) {
    for (int t = 0; t < tasks; ++t) task(t, 0);
    return;
  }
  run_tasks(tasks, threads, std::function<void(int, int)>(std::cref(task)));
}

/// Splits [0, count) into at most `threads` contiguous parts of whole `granule`s (the last part
/// takes the remainder), as even as the granule allows, and runs part(first, size) for each on
/// its own thread. An uneven split leaves threads waiting for the slowest: 104 + 93 rows of
/// T = 197 cost 5 % of the forward on two threads.
template <class Part>
void parallel_ranges(int count, int threads, int granule, const Part& part) {
  granule = std::max(1, granule);
  const int units = (count + granule - 1) / granule;
  const int parts = std::max(1, std::min(threads, units));
  const int base = units / parts, extra = units % parts;  // the first `extra` parts take one more granule
  parallel_tasks(parts, parts, [&](int p, int) {
    const int first = (p * base + std::min(p, extra)) * granule;
    const int size = std::min(count, first + (base + (p < extra ? 1 : 0)) * granule) - first;
    if (size > 0) part(first, size);
  });
}

/// Splits `rows` into min(threads, rows) contiguous parts whose sizes differ by at most one row
/// and runs part(first, count) for each on its own thread.
template <class Part>
void parallel_rows(int rows, int threads, const Part& part) {
  parallel_ranges(rows, threads, 1, part);
}

/// The query blocks of at most `most` rows that split `rows` rows evenly among `threads`
/// workers (a multiple of `threads` blocks, sizes within one row of each other): the block
/// size, at least 1. T = 197 on 2 threads in blocks of at most 64: 4 blocks of 50, not 64, 64,
/// 64 and 5, of which one thread took 128 rows.
inline int even_block_rows(int rows, int threads, int most) {
  const int t = std::max(1, threads);
  const int blocks = std::max(1, (rows + most * t - 1) / (most * t)) * t;  // ceil(rows / (most·t))·t
  return std::max(1, (rows + blocks - 1) / blocks);
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
