#include "app/gui/state/scheduler.hpp"

#include "core/base/platform.hpp"

#include <algorithm>
#include <utility>


namespace attnlab::app {

Scheduler::Scheduler(int threads, std::function<void()> wake) : wake_(std::move(wake)) {
  for (int t = 0; t < std::max(threads, 1); ++t) threads_.emplace_back([this] { loop(false); });
}

Scheduler::~Scheduler() {
  stop_all();
  threads_.clear();  // joins: each running job was asked to stop
}

void Scheduler::stop_all() {
  {
    const std::lock_guard lock(mutex_);
    quitting_ = true;
    for (auto& [key, job] : wanted_) job.second->store(true);
    queue_.clear();
    background_queue_.clear();
  }
  work_ready_.notify_all();
}

void Scheduler::set_wake(std::function<void()> wake) {
  const std::lock_guard lock(mutex_);
  wake_ = std::move(wake);
}

void Scheduler::enqueue(const std::string& key, std::function<void(const std::atomic<bool>&)> run, std::function<void()> done,
                        Priority priority) {
  {
    const std::lock_guard lock(mutex_);
    cancel_locked(key);
    Job job{key, ++next_id_, std::move(run), std::move(done), std::make_shared<std::atomic<bool>>(false)};
    wanted_[key] = {job.id, job.stop};
    if (priority == Priority::Background) {
      background_queue_.push_back(std::move(job));
      if (!std::exchange(background_started_, true)) threads_.emplace_back([this] { loop(true); });
    } else {
      queue_.push_back(std::move(job));
    }
  }
  work_ready_.notify_all();  // the pool's threads and the background thread wait on the same condition
}

void Scheduler::cancel_locked(const std::string& key) {
  const auto it = wanted_.find(key);
  if (it == wanted_.end()) return;
  it->second.second->store(true);
  const std::uint64_t id = it->second.first;
  wanted_.erase(it);
  std::erase_if(queue_, [&](const Job& j) { return j.id == id; });
  std::erase_if(background_queue_, [&](const Job& j) { return j.id == id; });
  std::erase_if(finished_, [&](const Job& j) { return j.id == id; });
}

void Scheduler::cancel(const std::string& key) {
  const std::lock_guard lock(mutex_);
  cancel_locked(key);
}

void Scheduler::cancel_prefix(const std::string& prefix) {
  const std::lock_guard lock(mutex_);
  std::vector<std::string> keys;
  for (const auto& [key, job] : wanted_)
    if (key.starts_with(prefix)) keys.push_back(key);
  for (const auto& key : keys) cancel_locked(key);
}

void Scheduler::loop(bool background) {
  // The background thread takes the lowest priority (a thread's own nice value on Linux): the
  // window's frames and the pool's jobs come first. It can never be raised again, hence a thread
  // of its own. Refused (e.g. by a sandbox), it runs at the usual priority.
  if (background) platform::lower_this_thread_priority();
  std::deque<Job>& queue = background ? background_queue_ : queue_;
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [&] { return quitting_ || !queue.empty(); });
      if (quitting_) return;
      job = std::move(queue.front());
      queue.pop_front();
      ++running_;
    }
    job.run(*job.stop);  // a packaged_task: what it throws is kept for the continuation
    {
      const std::lock_guard lock(mutex_);
      --running_;
      const auto it = wanted_.find(job.key);
      if (it != wanted_.end() && it->second.first == job.id) finished_.push_back(std::move(job));
      // Woken under the lock, so that whoever sees the result (wait, drain) knows the wake was
      // sent (glfwPostEmptyEvent: thread-safe, never calls back into the scheduler).
      if (wake_) wake_();
    }
    result_ready_.notify_all();
  }
}

int Scheduler::drain() {
  std::deque<Job> ready;
  {
    const std::lock_guard lock(mutex_);
    ready.swap(finished_);
    for (const Job& j : ready) wanted_.erase(j.key);  // done: the key is free for the next request
  }
  for (Job& j : ready) j.done();  // may submit new jobs
  return static_cast<int>(ready.size());
}

bool Scheduler::busy() const {
  const std::lock_guard lock(mutex_);
  return !wanted_.empty() || running_ > 0;
}

bool Scheduler::busy(const std::string& key) const {
  const std::lock_guard lock(mutex_);
  return wanted_.count(key) != 0;
}

bool Scheduler::wait(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  result_ready_.wait_for(lock, timeout, [&] { return !finished_.empty() || (wanted_.empty() && running_ == 0); });
  return !wanted_.empty() || running_ > 0;
}

}  // namespace attnlab::app
