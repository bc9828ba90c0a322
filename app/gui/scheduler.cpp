#include "app/gui/scheduler.hpp"

#include <algorithm>

namespace attnlab::app {

Scheduler::Scheduler(int threads, std::function<void()> wake) : wake_(std::move(wake)) {
  for (int t = 0; t < std::max(threads, 1); ++t) threads_.emplace_back([this] { loop(); });
}

Scheduler::~Scheduler() {
  {
    const std::lock_guard lock(mutex_);
    quitting_ = true;
    for (auto& [key, job] : wanted_) job.second->store(true);
    queue_.clear();
  }
  work_ready_.notify_all();
  threads_.clear();  // joins: each running job was asked to stop
}

void Scheduler::set_wake(std::function<void()> wake) {
  const std::lock_guard lock(mutex_);
  wake_ = std::move(wake);
}

void Scheduler::enqueue(const std::string& key, std::function<void(const std::atomic<bool>&)> run, std::function<void()> done) {
  {
    const std::lock_guard lock(mutex_);
    cancel_locked(key);
    Job job{key, ++next_id_, std::move(run), std::move(done), std::make_shared<std::atomic<bool>>(false)};
    wanted_[key] = {job.id, job.stop};
    queue_.push_back(std::move(job));
  }
  work_ready_.notify_one();
}

void Scheduler::cancel_locked(const std::string& key) {
  const auto it = wanted_.find(key);
  if (it == wanted_.end()) return;
  it->second.second->store(true);
  const std::uint64_t id = it->second.first;
  wanted_.erase(it);
  std::erase_if(queue_, [&](const Job& j) { return j.id == id; });
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

void Scheduler::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [&] { return quitting_ || !queue_.empty(); });
      if (quitting_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
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
