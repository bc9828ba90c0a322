// The one scheduler of the app's background work (app/gui/state/scheduler.hpp): results reach the
// main thread only through drain(), the latest request under a key wins and the older one is
// told to stop, a cancelled job's continuation never runs, and nothing outlives the scheduler.
#include "app/gui/state/scheduler.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

using namespace attnlab::app;
using namespace std::chrono_literals;

namespace {

// Drains until `done` holds or 10 s pass (the pool threads do the work meanwhile).
template <class F>
bool drain_until(Scheduler& s, F done) {
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (!done() && std::chrono::steady_clock::now() < give_up) {
    s.wait(100ms);
    s.drain();
  }
  return done();
}

TEST(Scheduler, ResultsAndErrorsReachTheMainThreadOnlyThroughDrain) {
  Scheduler s(2);
  const auto main_thread = std::this_thread::get_id();
  int value = 0;
  std::string error;
  std::thread::id ran_on, continued_on;
  s.submit<int>("a", [&](const std::atomic<bool>&) { ran_on = std::this_thread::get_id(); return 42; },
                [&](std::future<int> r) { continued_on = std::this_thread::get_id(); value = r.get(); });
  s.submit<int>("b", [](const std::atomic<bool>&) -> int { throw std::runtime_error("no such patch"); },
                [&](std::future<int> r) {
                  try {
                    r.get();
                  } catch (const std::exception& e) {
                    error = e.what();
                  }
                });
  EXPECT_TRUE(s.busy());
  ASSERT_TRUE(drain_until(s, [&] { return value != 0 && !error.empty(); }));
  EXPECT_EQ(value, 42);
  EXPECT_EQ(error, "no such patch");
  EXPECT_NE(ran_on, main_thread);
  EXPECT_EQ(continued_on, main_thread);
  EXPECT_FALSE(s.busy());
  EXPECT_EQ(s.drain(), 0);
}

TEST(Scheduler, TheLatestRequestUnderAKeyWinsAndTheOldOneIsToldToStop) {
  Scheduler s(2);
  std::atomic<bool> old_started{false}, old_saw_stop{false};
  std::vector<int> delivered;
  s.submit<int>(
      "fc",
      [&](const std::atomic<bool>& stop) {
        old_started = true;
        while (!stop) std::this_thread::sleep_for(1ms);  // a long job that honours stop
        old_saw_stop = true;
        return 1;
      },
      [&](std::future<int> r) { delivered.push_back(r.get()); });
  while (!old_started) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(s.busy("fc"));
  s.submit<int>("fc", [](const std::atomic<bool>&) { return 2; }, [&](std::future<int> r) { delivered.push_back(r.get()); });
  ASSERT_TRUE(drain_until(s, [&] { return !delivered.empty() && old_saw_stop; }));
  s.wait(200ms);
  s.drain();
  EXPECT_EQ(delivered, std::vector<int>{2}) << "only the latest request's result is delivered";
  EXPECT_TRUE(old_saw_stop);
  EXPECT_FALSE(s.busy("fc"));
}

TEST(Scheduler, ACancelledJobsContinuationNeverRuns) {
  Scheduler s(1);
  std::atomic<bool> release{false};
  bool ran = false;
  s.submit<int>("view:a", [&](const std::atomic<bool>&) { while (!release) std::this_thread::sleep_for(1ms); return 1; },
                [&](std::future<int>) { ran = true; });
  s.submit<int>("view:b", [](const std::atomic<bool>&) { return 2; }, [&](std::future<int>) { ran = true; });  // queued
  s.cancel_prefix("view:");
  release = true;
  EXPECT_FALSE(s.busy("view:a"));
  EXPECT_FALSE(s.busy("view:b"));
  while (s.busy()) s.wait(50ms);  // the running job ends; nothing is left for drain
  EXPECT_EQ(s.drain(), 0);
  EXPECT_FALSE(ran);
}

TEST(Scheduler, DestroyingItStopsAndJoinsARunningJob) {
  std::atomic<bool> saw_stop{false};
  {
    Scheduler s(1);
    std::atomic<bool> started{false};
    s.submit<int>("long", [&](const std::atomic<bool>& stop) {
      started = true;
      while (!stop) std::this_thread::sleep_for(1ms);
      saw_stop = true;
      return 0;
    }, [](std::future<int>) {});
    while (!started) std::this_thread::sleep_for(1ms);
  }  // joins here
  EXPECT_TRUE(saw_stop);
}

TEST(Scheduler, WaitWakesWhenAResultIsReadyAndCallsWake) {
  std::atomic<int> wakes{0};
  Scheduler s(1, [&] { ++wakes; });
  s.submit<int>("x", [](const std::atomic<bool>&) { std::this_thread::sleep_for(20ms); return 7; }, [](std::future<int>) {});
  EXPECT_TRUE(s.wait(10s));  // woke with a result to drain (still busy until drained)
  EXPECT_EQ(wakes.load(), 1);
  EXPECT_EQ(s.drain(), 1);
  EXPECT_FALSE(s.wait(10ms));
}

}  // namespace

// The Train tab's chunks are Background jobs: they run on a thread of their own at the lowest
// priority (nice 19), so a long one never holds the pool's thread a view's job waits for, and
// the pool's threads keep the process's priority.
TEST(Scheduler, BackgroundJobsRunOnALowPriorityThreadBesideThePool) {
  Scheduler s(1);  // one pool thread: a background job on it would hold it
  std::atomic<bool> release{false};
  std::atomic<int> background_nice{-100}, pool_nice{-100};
  std::thread::id background_thread, pool_thread;
  bool background_done = false, pool_done = false;
  s.submit<int>("train:a:chunk", [&](const std::atomic<bool>& stop) {
    background_thread = std::this_thread::get_id();
    errno = 0;
    background_nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
    while (!release && !stop) std::this_thread::sleep_for(1ms);
    return 1;
  }, [&](std::future<int> r) { background_done = r.get() == 1; }, Scheduler::Priority::Background);
  s.submit<int>("view", [&](const std::atomic<bool>&) {
    pool_thread = std::this_thread::get_id();
    pool_nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
    return 2;
  }, [&](std::future<int> r) { pool_done = r.get() == 2; });
  // The view's job finishes while the background job still runs.
  ASSERT_TRUE(drain_until(s, [&] { return pool_done; }));
  EXPECT_FALSE(background_done);
  EXPECT_TRUE(s.busy("train:a:chunk"));
  release = true;
  ASSERT_TRUE(drain_until(s, [&] { return background_done; }));
  EXPECT_NE(background_thread, pool_thread);
  EXPECT_EQ(background_nice.load(), 19);
  EXPECT_EQ(pool_nice.load(), getpriority(PRIO_PROCESS, 0)) << "the pool keeps the process's priority";
  // Cancelled while queued behind another background job: never run.
  std::atomic<bool> hold{false};
  int ran = 0;
  s.submit<int>("bg:1", [&](const std::atomic<bool>&) { while (!hold) std::this_thread::sleep_for(1ms); return 0; },
                [&](std::future<int>) { ++ran; }, Scheduler::Priority::Background);
  s.submit<int>("bg:2", [&](const std::atomic<bool>&) { return 0; }, [&](std::future<int>) { ran += 10; }, Scheduler::Priority::Background);
  s.cancel("bg:2");
  hold = true;
  ASSERT_TRUE(drain_until(s, [&] { return ran > 0; }));
  s.wait(200ms);
  s.drain();
  EXPECT_EQ(ran, 1);
}
