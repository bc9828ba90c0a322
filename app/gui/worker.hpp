#pragma once
// A view's job on a thread of its own. The Worker is the thread's one owner: destroying it (or
// assigning another job to it) asks the job to stop and joins the thread, so no thread outlives
// the view that started it, and the views are gone before a command or the window returns from
// main. Nothing is detached.
#include <atomic>
#include <chrono>
#include <exception>
#include <future>
#include <stop_token>
#include <thread>
#include <utility>

namespace attnlab::app {

template <class T>
class Worker {
 public:
  Worker() = default;

  /// Starts fn(stop) on a new thread; fn should return soon once the atomic `stop` is set.
  /// Throws std::system_error when no thread can be started.
  template <class F>
  explicit Worker(F fn) {
    std::promise<T> promise;
    result_ = promise.get_future();
    thread_ = std::jthread([fn = std::move(fn), promise = std::move(promise)](std::stop_token token) mutable {
      std::atomic<bool> stop{token.stop_requested()};
      const std::stop_callback on_stop(token, [&stop] { stop.store(true); });
      try {
        promise.set_value(fn(static_cast<const std::atomic<bool>&>(stop)));
      } catch (...) {
        promise.set_exception(std::current_exception());
      }
    });
  }

  /// A job was started and its result not yet taken.
  bool active() const { return result_.valid(); }
  /// The job has finished (take() does not block).
  bool ready() const { return wait_for(std::chrono::milliseconds(0)); }
  /// Waits up to `d` for the job; true when it has finished.
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> d) const {
    return result_.valid() && result_.wait_for(d) == std::future_status::ready;
  }
  /// Asks the job to stop; the result is still taken (or the Worker destroyed) as usual.
  void stop() { thread_.request_stop(); }
  bool stop_requested() const { return thread_.get_stop_token().stop_requested(); }

  /// The job's result (waiting for it), rethrowing what the job threw; the thread is joined.
  T take() {
    auto result = std::move(result_);
    if (thread_.joinable()) thread_.join();
    return result.get();
  }

 private:
  std::future<T> result_;
  std::jthread thread_;  // declared last: destroyed (stopped and joined) first
};

}  // namespace attnlab::app
