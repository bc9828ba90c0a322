#include "core/vit/vit_kernels.hpp"

#include "core/base/blas.hpp"
#include "core/base/types.hpp"

#include <unsupported/Eigen/SpecialFunctions>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <mutex>

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

namespace {

/// How long an idle worker (and the caller, for the last of its workers) spins before it
/// sleeps: the gaps between a forward's parallel regions are a few microseconds, and waking a
/// sleeping thread costs tens of microseconds on a virtual machine (85 regions a ViT-S forward).
constexpr std::chrono::microseconds kSpin{100};

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// Spins until `ready()` or kSpin has passed; true when ready.
template <class Ready>
bool spin_until(const Ready& ready) {
  const auto end = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    cpu_relax();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > end) return ready();
  }
}

/// The calling thread's workers for run_tasks: started on first use, grown to the largest count
/// asked, joined when the calling thread ends. Each call publishes its tasks under a new
/// generation; the workers it needs run them, and every worker counts down `remaining_`.
class Team {
 public:
  ~Team() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      quit_ = true;
      generation_.fetch_add(1, std::memory_order_release);
    }
    start_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  void run(int tasks, int threads, const std::function<void(int, int)>& task) {
    while (static_cast<int>(workers_.size()) < threads - 1) {
      const int w = static_cast<int>(workers_.size()) + 1;
      workers_.emplace_back([this, w, seen = generation_.load(std::memory_order_acquire)] { work(w, seen); });
    }
    task_ = &task;
    tasks_ = tasks;
    threads_ = threads;
    remaining_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);  // every worker answers
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      generation_.fetch_add(1, std::memory_order_release);
    }
    start_.notify_all();
    std::exception_ptr error;
    try {
      for (int t = 0; t < tasks; t += threads) task(t, 0);
    } catch (...) {
      error = std::current_exception();
    }
    if (!spin_until([&] { return remaining_.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [&] { return remaining_.load(std::memory_order_acquire) == 0; });
    }
    {  // every worker is done: the first error, the caller's or a worker's, goes to the caller
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!error) error = worker_error_;
      worker_error_ = nullptr;
    }
    if (error) std::rethrow_exception(error);
  }

 private:
  void work(int w, std::uint64_t seen) {
    while (true) {
      if (!spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; })) {
        std::unique_lock<std::mutex> lock(mutex_);
        start_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      }
      seen = generation_.load(std::memory_order_acquire);
      if (quit_) return;
      try {
        for (int t = w; t < tasks_ && w < threads_; t += threads_) (*task_)(t, w);  // none when this call needs fewer workers
      } catch (...) {  // kept for the caller (run rethrows it); the worker lives on
        const std::lock_guard<std::mutex> lock(mutex_);
        if (!worker_error_) worker_error_ = std::current_exception();
      }
      // Every worker answers every call, so that none still reads this call's task when the
      // caller has returned and set the next one.
      if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        const std::lock_guard<std::mutex> lock(mutex_);
        done_.notify_one();
      }
    }
  }

  std::vector<std::thread> workers_;  // worker w is workers_[w − 1]
  std::mutex mutex_;
  std::condition_variable start_, done_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> remaining_{0};
  // Written by the caller before the generation is bumped (release), read by the workers after
  // they see it (acquire).
  const std::function<void(int, int)>* task_ = nullptr;
  int tasks_ = 0, threads_ = 0;
  bool quit_ = false;
  std::exception_ptr worker_error_;  // a worker's task's exception, under mutex_
};

}  // namespace

void run_tasks(int tasks, int threads, const std::function<void(int task, int worker)>& task) {
  thread_local Team team;
  team.run(tasks, threads, task);
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
