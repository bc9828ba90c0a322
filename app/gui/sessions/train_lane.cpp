#include "app/gui/sessions/train_lane.hpp"

#include <algorithm>
#include <exception>

namespace attnlab::app {

void TrainLane::ask(Owner who, std::function<void()> submit) {
  const auto it = std::find_if(queue_.begin(), queue_.end(), [&](const auto& turn) { return turn.first == who; });
  if (it != queue_.end()) it->second = std::move(submit);
  else queue_.emplace_back(who, std::move(submit));
  if (!holder_) give_next();
}

void TrainLane::release(Owner who) {
  std::erase_if(queue_, [&](const auto& turn) { return turn.first == who; });
  if (holder_ != who) return;
  holder_ = nullptr;
  give_next();
}

bool TrainLane::asking(Owner who) const { return holder_ == who || waiting(who); }

bool TrainLane::waiting(Owner who) const {
  return std::any_of(queue_.begin(), queue_.end(), [&](const auto& turn) { return turn.first == who; });
}

void TrainLane::give_next() {
  // A turn whose submit() throws (the scheduler refused the job) does not keep the lane: it is
  // freed for the next turn, and the first such error is passed on once a turn runs or none is left.
  std::exception_ptr failed;
  while (!queue_.empty()) {
    auto [who, submit] = std::move(queue_.front());
    queue_.pop_front();
    holder_ = who;
    try {
      submit();
      break;
    } catch (...) {
      holder_ = nullptr;
      if (!failed) failed = std::current_exception();
    }
  }
  if (failed) std::rethrow_exception(failed);
}

}  // namespace attnlab::app
