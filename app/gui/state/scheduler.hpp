#pragma once
// The one scheduler of the app's background work (issue 15): a pool of threads that runs the
// views' long computations, and a queue of finished results that the main thread drains once
// per frame. Every job has a key ("matrix:fc", "permutation:output"); a new job under a key
// replaces the old one, which is asked to stop and whose result is dropped (latest request
// wins). A job's work runs on a pool thread and must not touch ImGui, GL or the view; its
// continuation runs on the main thread in drain(), with the result. Nothing is detached: the
// destructor stops every job and joins the threads.
// Long work nobody waits for (the Train tab's training chunks) is submitted as Background: it
// runs on a thread of its own, started on the first such job, at the lowest priority (nice 19),
// so that it takes only the CPU the window and the pool's jobs leave, and never holds a pool
// thread a view's job is waiting for.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace attnlab::app {

class Scheduler {
 public:
  /// Normal: the pool's threads. Background: the one low-priority thread (nice 19), in order.
  enum class Priority { Normal, Background };

  /// Starts `threads` pool threads (at least 1). `wake` is called from a pool thread whenever a
  /// result is ready, under the scheduler's lock (so wait() and drain() never see a result before its
  /// wake was sent): it must not call into the scheduler (the window passes glfwPostEmptyEvent
  /// so that its event wait returns).
  explicit Scheduler(int threads = 2, std::function<void()> wake = {});
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Replaces the wake-up call (main thread, before jobs are submitted).
  void set_wake(std::function<void()> wake);

  /// Runs `work(stop)` on a pool thread, then `done(result)` on the main thread in drain(), with
  /// `result` a ready std::future<T> whose get() returns the value or rethrows what work threw.
  /// Any job still queued or running under `key` is cancelled first (its done never runs).
  /// `priority` Background: on the low-priority thread instead of the pool.
  template <class T, class Work, class Done>
  void submit(const std::string& key, Work work, Done done, Priority priority = Priority::Normal) {
    auto task = std::make_shared<std::packaged_task<T(const std::atomic<bool>&)>>(std::move(work));
    auto future = std::make_shared<std::future<T>>(task->get_future());
    enqueue(key, [task](const std::atomic<bool>& stop) { (*task)(stop); },
            [future, done = std::move(done)]() mutable { done(std::move(*future)); }, priority);
  }

  /// Cancels the job under `key`, if any: dropped if queued, asked to stop if running, its
  /// continuation never run. Main thread.
  void cancel(const std::string& key);
  /// Cancels every job whose key starts with `prefix` (a view's destructor passes its name).
  void cancel_prefix(const std::string& prefix);

  /// Runs the continuations of the jobs that have finished and are still wanted, in the order
  /// they finished. Returns how many ran. Main thread, once per frame.
  int drain();

  /// Asks every running job to stop and drops the queued ones, without waiting: the window
  /// calls it as soon as it is closed, so the jobs stop while the rest is torn down (issue 38:
  /// closed within 1 s). Nothing runs after it; the destructor then joins. Main thread.
  void stop_all();

  /// A job is queued, running, or finished with its continuation not yet run.
  bool busy() const;
  /// The same for the one job under `key`.
  bool busy(const std::string& key) const;
  /// Waits until a result is ready to drain or nothing is left to wait for, at most `timeout`.
  /// Returns busy(). For the headless renderer: it sleeps on the queue instead of polling.
  bool wait(std::chrono::milliseconds timeout) const;

 private:
  struct Job {
    std::string key;
    std::uint64_t id = 0;
    std::function<void(const std::atomic<bool>&)> run;
    std::function<void()> done;
    std::shared_ptr<std::atomic<bool>> stop;
  };
  void enqueue(const std::string& key, std::function<void(const std::atomic<bool>&)> run, std::function<void()> done,
               Priority priority);
  void cancel_locked(const std::string& key);
  void loop(bool background);

  mutable std::mutex mutex_;
  mutable std::condition_variable work_ready_, result_ready_;
  std::deque<Job> queue_, background_queue_;
  std::map<std::string, std::pair<std::uint64_t, std::shared_ptr<std::atomic<bool>>>> wanted_;  // key → latest job
  std::deque<Job> finished_;
  int running_ = 0;
  std::uint64_t next_id_ = 0;
  bool quitting_ = false;
  std::function<void()> wake_;
  bool background_started_ = false;
  std::vector<std::jthread> threads_;  // declared last: joined first
};

}  // namespace attnlab::app
