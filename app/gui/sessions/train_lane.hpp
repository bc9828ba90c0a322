#pragma once
// One lane for the Train tab's runs (A and B): at most one training chunk runs at a time, so that
// two runs training at once still leave the UI its core. A run asks for a turn with the function
// that submits its chunk to the scheduler; the lane calls it at once when no chunk holds the
// lane, else when the chunk that holds it is released (its continuation ran, or it was cancelled).
// Turns go in the order they were asked for: two runs that ask again at the end of each chunk
// alternate, chunk by chunk. Main thread only (the scheduler's continuations run there).
#include <deque>
#include <functional>
#include <utility>

namespace attnlab::app {

class TrainLane {
 public:
  using Owner = const void*;  ///< who asks: a TrainSession

  /// Asks for `who`'s next turn: `submit` runs now if the lane is free, else when the turns
  /// asked for before have been released. One waiting turn per owner (a second ask replaces
  /// the first's function and keeps its place). A `submit` that throws leaves the lane free (the
  /// next turn is given) and its exception is passed on.
  void ask(Owner who, std::function<void()> submit);
  /// `who` is done with the lane: its waiting turn is dropped, and if it holds the lane (its
  /// chunk ended or was cancelled) the next turn is given. Does nothing for an owner not in it.
  void release(Owner who);

  /// The owner whose chunk holds the lane (nullptr: none).
  Owner holder() const { return holder_; }
  /// True while `who` holds the lane or waits for it.
  bool asking(Owner who) const;
  /// True while `who` waits behind another owner's chunk.
  bool waiting(Owner who) const;

 private:
  void give_next();
  Owner holder_ = nullptr;
  std::deque<std::pair<Owner, std::function<void()>>> queue_;
};

}  // namespace attnlab::app
