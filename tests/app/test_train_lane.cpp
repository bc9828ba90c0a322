// The Train tab's lane (app/gui/sessions/train_lane.hpp): two runs that ask for a turn after each chunk
// never train at once on the scheduler's two threads, and take turns chunk by chunk; a run that
// leaves (reset) gives its turn to the one waiting and loses its own waiting turn. The same with
// the real TrainSession: two runs training on the scheduler while the probe, a save and a reset
// come from the main thread (tests/thread_sanitized_suite.sh runs it under ThreadSanitizer).
#include "app/gui/window/headless.hpp"
#include "app/gui/state/scheduler.hpp"
#include "app/gui/sessions/train_lane.hpp"
#include "app/gui/sessions/train_session.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

using namespace attnlab;
using namespace attnlab::app;
using namespace std::chrono_literals;

namespace {

// A run as TrainSession drives the lane: each turn submits a chunk (a job of a few ms that
// counts how many chunks run at once); its continuation releases the lane, then asks again
// until `chunks` are done.
struct FakeRun {
  std::string name;
  int chunks = 0, done = 0;
  TrainLane* lane = nullptr;
  Scheduler* scheduler = nullptr;
  std::atomic<int>* running = nullptr;
  std::atomic<int>* most = nullptr;
  std::vector<std::string>* order = nullptr;

  void ask() {
    lane->ask(this, [this] {
      scheduler->submit<int>("train:" + name + ":chunk", [this](const std::atomic<bool>&) {
        const int now = ++*running;
        int seen = most->load();
        while (now > seen && !most->compare_exchange_weak(seen, now)) {}
        std::this_thread::sleep_for(5ms);
        --*running;
        return 0;
      }, [this](std::future<int> r) {
        r.get();
        lane->release(this);
        order->push_back(name);
        if (++done < chunks) ask();
      });
    });
  }
};

// A model small enough to train in milliseconds a step: one block, D 32, two heads, batches of
// 32, chunks of 5 steps, `steps` in all.
void make_tiny(TrainConfig& c, int steps) {
  c.shape.depth = 1;
  c.shape.D = 32;
  c.shape.heads = 2;
  c.batch = 32;
  c.steps = steps;
  c.chunk_steps = 5;
}

bool drain_until(Scheduler& s, const std::function<bool()>& done, std::chrono::seconds patience = 20s) {
  const auto give_up = std::chrono::steady_clock::now() + patience;
  while (!done() && std::chrono::steady_clock::now() < give_up) {
    s.wait(50ms);
    s.drain();
  }
  return done();
}

}  // namespace

TEST(TrainLane, TwoRunsNeverTrainAtOnceAndTakeTurnsChunkByChunk) {
  Scheduler scheduler(2);  // two threads: without the lane both chunks would run together
  TrainLane lane;
  std::atomic<int> running{0}, most{0};
  std::vector<std::string> order;
  FakeRun a{"a", 6, 0, &lane, &scheduler, &running, &most, &order};
  FakeRun b{"b", 6, 0, &lane, &scheduler, &running, &most, &order};
  a.ask();
  b.ask();
  EXPECT_EQ(lane.holder(), &a);
  EXPECT_TRUE(lane.waiting(&b));
  EXPECT_TRUE(lane.asking(&a));
  EXPECT_FALSE(lane.waiting(&a));
  ASSERT_TRUE(drain_until(scheduler, [&] { return a.done == 6 && b.done == 6; }));
  EXPECT_EQ(most.load(), 1) << "two chunks ran at once";
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b"}));
  EXPECT_EQ(lane.holder(), nullptr);
  EXPECT_FALSE(lane.asking(&a));
  EXPECT_FALSE(lane.asking(&b));
}

TEST(TrainLane, ARunThatLeavesGivesItsTurnAndDropsTheOneItWaitedFor) {
  TrainLane lane;
  int x = 0, y = 0, z = 0;
  std::vector<int> submitted;
  lane.ask(&x, [&] { submitted.push_back(1); });
  lane.ask(&y, [&] { submitted.push_back(2); });
  lane.ask(&z, [&] { submitted.push_back(3); });
  EXPECT_EQ(submitted, (std::vector<int>{1}));
  lane.release(&y);  // y leaves while waiting: its turn is gone, x keeps the lane
  EXPECT_EQ(lane.holder(), &x);
  EXPECT_FALSE(lane.asking(&y));
  lane.release(&x);  // x's chunk ended (or x was reset): the next waiting turn is z's
  EXPECT_EQ(submitted, (std::vector<int>{1, 3}));
  EXPECT_EQ(lane.holder(), &z);
  // Asking twice while waiting keeps one turn, with the later function.
  lane.ask(&x, [&] { submitted.push_back(10); });
  lane.ask(&x, [&] { submitted.push_back(11); });
  lane.release(&z);
  EXPECT_EQ(submitted, (std::vector<int>{1, 3, 11}));
  lane.release(&x);
  EXPECT_EQ(lane.holder(), nullptr);
  lane.release(&y);  // not in the lane: nothing happens
  EXPECT_EQ(lane.holder(), nullptr);
}

// Issue 38: a turn whose submit() throws (before: the lane stayed held by it for ever, so no run
// could train again) frees the lane, passes the error on, and the next turn is given.
TEST(TrainLane, ASubmitThatThrowsLeavesTheLaneFree) {
  TrainLane lane;
  int a = 0, b = 0, ran = 0;
  EXPECT_THROW(lane.ask(&a, [] { throw std::runtime_error("refused"); }), std::runtime_error);
  EXPECT_EQ(lane.holder(), nullptr);
  EXPECT_FALSE(lane.asking(&a));
  lane.ask(&b, [&] { ++ran; });
  EXPECT_EQ(lane.holder(), &b);
  EXPECT_EQ(ran, 1);
  // Waiting behind b: when b releases, a's throwing turn is skipped and the next one runs.
  int c = 0;
  lane.ask(&a, [] { throw std::runtime_error("refused again"); });
  lane.ask(&c, [&] { ++ran; });
  EXPECT_THROW(lane.release(&b), std::runtime_error);
  EXPECT_EQ(lane.holder(), &c);
  EXPECT_EQ(ran, 2);
}

// Issue 38: the lane as the Train tab drives it, with the real TrainSession: runs A and B train a
// tiny model in turns on the scheduler's background thread while the main thread changes the
// probe (its snapshot is run again on the pool beside the training), saves A during a chunk (at
// its end), and resets and restarts B during one (the old chunk, told to stop, may still run).
// Then a run is destroyed with its chunk under way. Everything the jobs and the main thread share
// goes through the scheduler; ThreadSanitizer (thread_sanitized_suite) checks that it does.
TEST(TrainSession, TwoRealRunsTakeTurnsWhileTheProbeASaveAndAResetComeFromTheMainThread) {
  HeadlessUi ui(64, 64);  // a current context: a snapshot shown makes the VitSession's textures
  Scheduler scheduler(2);
  const auto dir = std::filesystem::temp_directory_path() / ("attnlab-train-lane-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  {
    TrainRuns runs(scheduler);
    for (TrainSession* s : {&runs.a, &runs.b}) make_tiny(s->config(), 40);
    runs.b.config().shape.pooling = VitPooling::Average;
    runs.a.start();
    runs.b.start();
    EXPECT_TRUE(runs.a.in_flight());
    EXPECT_TRUE(runs.b.waiting_turn());

    ASSERT_TRUE(drain_until(scheduler, [&] { return runs.a.step() >= 5 && runs.b.step() >= 5; }, 120s));
    for (TrainSession* s : {&runs.a, &runs.b}) s->set_probe(TrainProbe{3, nullptr, "test image 3"});
    runs.a.save(dir / "a");
    ASSERT_TRUE(drain_until(scheduler, [&] { return !runs.a.save_pending(); }, 120s));
    EXPECT_EQ(runs.a.poll_error(), std::nullopt);
    EXPECT_EQ(runs.a.poll_saved(), dir / "a");

    ASSERT_TRUE(drain_until(scheduler, [&] { return (runs.b.in_flight() && !runs.b.waiting_turn()) || runs.b.finished(); }, 120s));
    runs.b.reset();  // its chunk may be running: asked to stop, its result dropped
    EXPECT_FALSE(runs.b.started());
    runs.b.start();
    ASSERT_TRUE(drain_until(scheduler, [&] { return runs.a.finished() && runs.b.finished() && !runs.a.in_flight() && !runs.b.in_flight(); }, 120s));
    for (TrainSession* s : {&runs.a, &runs.b}) {
      EXPECT_EQ(s->poll_error(), std::nullopt) << s->name();
      EXPECT_EQ(s->step(), 40) << s->name();
      EXPECT_EQ(s->shown_probe(), "test image 3") << s->name();
      ASSERT_NE(s->vit().run(), nullptr) << s->name();
      EXPECT_FALSE(s->running()) << s->name();
    }
    EXPECT_EQ(runs.lane.holder(), nullptr);

    runs.a.config().steps = 1000;
    runs.a.start();
    ASSERT_TRUE(drain_until(scheduler, [&] { return runs.a.step() >= 5; }, 120s));
  }  // destroyed with A's chunk under way: cancelled, its continuation never reaches the session
  scheduler.drain();
  std::filesystem::remove_all(dir);
}

// Issue 38: a chunk that fails drops the save asked for during it, says so in the same line as
// the failure, leaves the lane free and Save free: the next save writes. The failure: the
// snapshot of the chunk runs on a probe photo with no pixels (set while the run was paused).
TEST(TrainSession, AFailedChunkDropsItsPendingSaveInOneLineAndSaveIsFreeAgain) {
  HeadlessUi ui(64, 64);
  Scheduler scheduler(2);
  const auto dir = std::filesystem::temp_directory_path() / ("attnlab-failed-chunk-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  {
    TrainRuns runs(scheduler);
    TrainSession& a = runs.a;
    make_tiny(a.config(), 100000);
    a.start();
    ASSERT_TRUE(drain_until(scheduler, [&] { return a.step() >= 5; }, 120s));
    a.pause();
    ASSERT_TRUE(drain_until(scheduler, [&] { return !a.in_flight() && !scheduler.busy(); }, 120s));
    a.set_probe(TrainProbe{0, std::make_shared<const Image>(), "a photo with no pixels"});
    ASSERT_TRUE(drain_until(scheduler, [&] { return !scheduler.busy(); }, 120s));
    (void)a.poll_error();  // the probe's own job may say it cannot run on it
    a.config().chunk_steps = 200;  // long enough for the save to be asked during it
    a.resume();
    ASSERT_TRUE(a.in_flight());
    a.save(dir / "a");
    EXPECT_TRUE(a.save_pending());
    ASSERT_TRUE(drain_until(scheduler, [&] { return !a.in_flight(); }, 120s));
    const std::optional<std::string> error = a.poll_error();
    ASSERT_TRUE(error.has_value()) << "the chunk did not fail";
    EXPECT_NE(error->find("training run A stopped: "), std::string::npos) << *error;
    EXPECT_NE(error->find((dir / "a").string() + " was not saved"), std::string::npos) << *error;
    EXPECT_EQ(error->find('\n'), std::string::npos) << *error;
    EXPECT_FALSE(a.save_pending());
    EXPECT_FALSE(a.running());
    EXPECT_FALSE(std::filesystem::exists(dir / "a"));
    EXPECT_EQ(runs.lane.holder(), nullptr);
    a.save(dir / "a");  // no chunk in flight: written at once
    EXPECT_EQ(a.poll_error(), std::nullopt);
    EXPECT_EQ(a.poll_saved(), dir / "a");
    EXPECT_TRUE(std::filesystem::exists(dir / "a" / "model.safetensors"));
  }
  scheduler.drain();
  std::filesystem::remove_all(dir);
}
