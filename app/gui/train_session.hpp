#pragma once
// A ViT trained in the window (the Train tab, issue 29 item 4): the trainer (core/vit_train.hpp)
// runs on the app's scheduler in chunks of about 0.2 s of steps, never in a frame. Each chunk's
// job ends with a snapshot of the model (VitTrainer::model) run on the probe image (a
// Fashion-MNIST test image) with the CPU runner, and the mean attention distance of every head
// over 16 test images; its continuation (main thread) shows the snapshot through a VitSession,
// so the map views draw the model being trained as any ViT (VitMapSource), appends the curves
// and submits the next chunk. Pause stops submitting; the window stays live. The trainer is
// used by one thread at a time: a chunk's job, or the main thread between chunks (saving).
// One training thread: the scheduler's other thread and the UI keep the second core.
#include "app/gui/scheduler.hpp"
#include "app/gui/vit_session.hpp"
#include "core/fashion_mnist.hpp"
#include "core/vit_train.hpp"

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnlab::app {

/// What the Train panel sets before Start: the model's shape (the experiment switches) and the
/// run. The defaults are `attnlab train`'s model; ATTNLAB_TRAIN_DEFAULTS ("depth=1 dim=32
/// heads=2 batch=32 chunk=5", the tests' tiny model) changes them.
struct TrainConfig {
  VitTrainShape shape;
  int batch = 128;
  double lr = 2e-3;
  int steps = 3000;        ///< the schedule's length (warm-up, then cosine to 0); training stops there
  int seed = 0;
  int chunk_steps = 0;     ///< steps per job; 0: as many as fit in about 0.2 s
  TrainConfig();
};

/// One point of the curves.
struct TrainPoint {
  std::int64_t step = 0;
  float loss = 0, train_accuracy = 0;  ///< over the chunk's batches
  float test_accuracy = -1;            ///< on 500 test images, every ~2 s of training; −1 between
  double seconds = 0;                  ///< training time so far
  Matrix distance;                     ///< layers × heads, mean attention distance (input pixels) over 16 test images
};

class TrainSession {
 public:
  /// Jobs under "train:chunk" and "train:probe" on `scheduler`, which must outlive the session.
  explicit TrainSession(Scheduler& scheduler);
  ~TrainSession();
  TrainSession(const TrainSession&) = delete;
  TrainSession& operator=(const TrainSession&) = delete;

  TrainConfig& config() { return config_; }
  /// Starts a new run with config() (step 0's snapshot first); throws Error for a shape that
  /// cannot work. Reads the data set on the job's thread the first time.
  void start();
  void pause() { running_ = false; }
  void resume();
  /// Forgets the run, its curves and its maps.
  void reset();

  bool started() const { return run_ != nullptr || scheduler_.busy("train:chunk"); }
  bool running() const { return running_; }
  bool in_flight() const { return scheduler_.busy("train:chunk"); }
  bool finished() const { return step() >= config_.steps; }
  std::int64_t step() const { return points_.empty() ? 0 : points_.back().step; }
  double steps_per_second() const { return rate_; }
  const std::vector<TrainPoint>& points() const { return points_; }
  /// The last test accuracy measured (−1 before one).
  float test_accuracy() const;
  /// The shape of the run (config() may have changed since Start).
  const VitTrainShape& shape() const { return run_shape_; }

  /// Which test image the maps are of; a change runs the snapshot on it.
  int probe() const { return probe_; }
  void set_probe(int index);
  int test_count() const;

  /// Writes the checkpoint (the same files as `attnlab train --out`) to `dir`, refused with one
  /// line when `dir` exists; while a chunk runs, at the end of it. The error of the last save,
  /// once; the folder saved to (to open it as a ViT).
  void save(const std::filesystem::path& dir);
  bool save_pending() const { return pending_save_.has_value(); }
  std::optional<std::string> poll_error() { return std::exchange(error_, std::nullopt); }
  std::optional<std::filesystem::path> poll_saved() { return std::exchange(saved_, std::nullopt); }
  const std::filesystem::path& last_saved() const { return last_saved_; }

  /// The snapshot as a ViT (its VitRun on the probe image), for VitMapSource.
  VitSession& vit() { return vit_; }
  /// Bumped by every finished chunk.
  unsigned generation() const { return generation_; }
  /// log.csv's text so far.
  std::string log_csv() const;

 private:
  struct Data;
  struct Run;
  struct Chunk;
  void submit_chunk(bool first);
  void take(Chunk c);
  void write(const std::filesystem::path& dir);

  Scheduler& scheduler_;
  TrainConfig config_;
  VitTrainShape run_shape_;
  std::shared_ptr<const Data> data_;
  std::shared_ptr<Run> run_;
  std::vector<TrainPoint> points_;
  double rate_ = 0;
  bool running_ = false;
  int probe_ = 0;
  std::optional<std::filesystem::path> pending_save_, saved_;
  std::filesystem::path last_saved_;
  std::optional<std::string> error_;
  unsigned generation_ = 0;
  VitSession vit_;
};

}  // namespace attnlab::app
