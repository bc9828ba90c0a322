#pragma once
// A ViT trained in the window (the Train tab, issue 29 item 4): the trainer (core/vit/vit_train.hpp)
// runs on the app's scheduler in chunks of about 0.2 s of steps, never in a frame. Each chunk's
// job ends with a snapshot of the model (VitTrainer::model) run on the probe image (a
// Fashion-MNIST test image, or the window's photo made as the data are) with the CPU runner,
// and the mean attention distance of every head over 16 test images; its continuation (main
// thread) shows the snapshot through a VitSession, so the map views draw the model being
// trained as any ViT (VitMapSource), appends the curves and asks for the next chunk. Pause
// stops asking; the window stays live. The trainer is used by one thread at a time: a chunk's
// job, or the main thread between chunks (saving).
// The tab has two runs, A and B (TrainRuns), each a TrainSession: their chunks take turns
// through one TrainLane, so one chunk trains at a time, whichever run it is, on the scheduler's
// low-priority thread (Scheduler::Priority::Background, nice 19): the window's frames and the
// pool's jobs come first, and the training takes the CPU they leave.
#include "app/gui/state/scheduler.hpp"
#include "app/gui/sessions/train_lane.hpp"
#include "app/gui/state/ui_common.hpp"
#include "app/gui/sessions/vit_session.hpp"
#include "core/cnn/cnn_train.hpp"
#include "core/io/fashion_mnist.hpp"
#include "core/vit/photo_crops.hpp"
#include "core/vit/vit_train.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace attnlab::app {

/// What the Train panel sets before Start: the model's shape (the experiment switches) and the
/// run. The defaults are `attnlab train`'s model; ATTNLAB_TRAIN_DEFAULTS ("depth=1 dim=32
/// heads=2 batch=32 chunk=5", the tests' tiny model) changes them.
struct TrainConfig {
  VitTrainShape shape;     ///< shape.task: classify Fashion-MNIST, or reconstruct masked patches of a photo
  /// The run trains a CNN (core/cnn/cnn_train.hpp: a small ResNet) on Fashion-MNIST's classes
  /// instead of a ViT, with the same data, batch, schedule, optimizer and curves (issue 50 item 2:
  /// "which learns faster here?"); `shape` is then not used.
  bool cnn = false;
  CnnTrainShape cnn_shape;  ///< width 16, one block a stage: about the default ViT's parameter count
  int batch = 128;
  double lr = 2e-3;
  int steps = 3000;        ///< the schedule's length (warm-up, then cosine to 0); training stops there
  int seed = 0;
  int chunk_steps = 0;     ///< steps per job; 0: as many as fit in about 0.2 s
  /// MaskedPatches: the photo the crops are cut from (the window's, handed over at Start) and its
  /// file name.
  std::shared_ptr<const Image> photo;
  std::string photo_name;
  TrainConfig();
  /// Switches the task and takes its defaults (`attnlab train`'s for it: classify D 96, patch 7
  /// on 28 × 28 images, batch 128, lr 0.002, learned positions; masked patches D 64, patch 8 on
  /// 64 × 64 crops, batch 64, lr 0.0015, sine–cosine positions, 75 % masked; both depth 4, 4 heads),
  /// then ATTNLAB_TRAIN_DEFAULTS.
  void set_task(VitTask task);
};

/// What a run's maps are of: a Fashion-MNIST test image, or a photo made as the data are
/// (fashion_mnist_style: 28 × 28 grey copied to RGB). The Train tab's runs share one
/// (Document::train_probe, ::train_probe_photo; the App hands it to both).
struct TrainProbe {
  int test_index = 0;                  ///< the test image, 0 … 9999, when there is no photo
  std::shared_ptr<const Image> photo;  ///< the photo made as the data are, or null
  std::string name = "test image 0";   ///< what the sidecar and the CSV call it ("photo safari.jpg")
};

/// What a run is measured on every ~2 s of training: the first 500 Fashion-MNIST test images
/// (test accuracy), or 64 fixed crops of the photo with fixed masks (masked patches' loss).
inline constexpr int kTrainEvalImages = 500, kTrainFixedCrops = 64;

/// A CNN run's snapshot on the probe (the ViT's is its VitRun): what it predicts and where in
/// the image that decision is sensitive, |∂ logit/∂ pixel| summed over colour (the input
/// gradient, core/cnn/resnet.hpp cnn_input_gradient_map).
struct CnnSnapshot {
  std::shared_ptr<const ResnetModel> model;
  Image probe;                  ///< the probe as the model saw it (28 × 28)
  int klass = -1;               ///< the arg-max class
  float probability = 0;        ///< its softmax probability
  Matrix input_gradient;        ///< probe.height × probe.width
};

/// One point of the curves.
struct TrainPoint {
  std::int64_t step = 0;
  float loss = 0, train_accuracy = 0;  ///< over the chunk's batches
  float test_accuracy = -1;            ///< on kTrainEvalImages test images, every ~2 s of training; −1 between (and for masked patches)
  float fixed_loss = -1;               ///< masked patches: the loss on kTrainFixedCrops fixed crops and masks, every ~2 s; −1 between
  double seconds = 0;                  ///< training time so far
  Matrix distance;                     ///< layers × heads, mean attention distance (input pixels) over 16 test images
};

/// Fashion-MNIST's training and test splits as the runs train on them (train_session.cpp).
struct TrainData;

/// The data set the runs of one Train tab share (not a picture: about 55 MB read in about a
/// second): read by the first chunk that needs it, on its thread, and kept while any run holds
/// it. Thread-safe (chunks of both runs may ask at once). Held through a shared_ptr by the
/// sessions and their chunks: a cancelled chunk may still be reading when its session is gone.
class TrainDataSet {
 public:
  /// The data set, read now when no run holds it; `stop` stops the read within 4 MiB (Error).
  std::shared_ptr<const TrainData> get(const std::atomic<bool>& stop);

 private:
  std::mutex mutex_;
  std::weak_ptr<const TrainData> cached_;
};

class TrainSession {
 public:
  /// Jobs under "train:<name>:chunk" and "train:<name>:probe" on `scheduler`; chunks run in
  /// turns on `lane` ("A": keys "train:a:…"), and read Fashion-MNIST through `data_set` (shared
  /// with the other run). `scheduler` and `lane` must outlive the session.
  TrainSession(Scheduler& scheduler, TrainLane& lane, std::shared_ptr<TrainDataSet> data_set, std::string name = "A");
  ~TrainSession();
  TrainSession(const TrainSession&) = delete;
  TrainSession& operator=(const TrainSession&) = delete;

  TrainConfig& config() { return config_; }
  const TrainConfig& config() const { return config_; }
  /// Starts a new run with config() (step 0's snapshot first); throws Error for a shape that
  /// cannot work. Reads the data set on the job's thread the first time.
  void start();
  /// Stops asking for chunks: a turn still waiting on the lane is given up, a chunk under way ends first.
  void pause();
  void resume();
  /// Forgets the run, its curves and its maps.
  void reset();
  /// Before Start (issue 47): the model config() would start from, at step 0, untrained, on the
  /// probe: its maps, so the Train tab shows the untrained model's own (flat) attention, not
  /// another source's. Nothing trains; started() stays false and Start begins a new run. Made
  /// again when config()'s switches change; nothing when a run was started or the shape cannot
  /// work (Start says why). Returns whether a preview was asked for.
  bool preview();
  /// True while what is shown is preview()'s untrained model (or it is on its way).
  bool previewing() const { return !preview_of_.empty(); }

  /// "A" or "B".
  const std::string& name() const { return name_; }
  bool started() const { return preview_of_.empty() && (run_ != nullptr || in_flight()); }
  bool running() const { return running_; }
  /// A chunk of this run is running, or waiting for its turn on the lane.
  bool in_flight() const { return lane_.asking(this); }
  /// Waiting for the other run's chunk to end.
  bool waiting_turn() const { return lane_.waiting(this); }
  bool finished() const { return step() >= config_.steps; }
  std::int64_t step() const { return points_.empty() ? 0 : points_.back().step; }
  double steps_per_second() const { return rate_; }
  const std::vector<TrainPoint>& points() const { return points_; }
  /// The last test accuracy measured (−1 before one, and for masked patches).
  float test_accuracy() const;
  /// Masked patches: the last loss on the fixed crops (−1 before one, and for classification).
  float fixed_loss() const;
  /// The task of the run (config()'s before Start); a CNN classifies.
  VitTask task() const { return is_cnn() ? VitTask::Classify : (run_ ? run_shape_ : config_.shape).task; }
  /// Whether the run trains a CNN (config()'s before Start).
  bool is_cnn() const;
  /// A CNN run's last snapshot on the probe (null before one, and for a ViT).
  const CnnSnapshot* cnn_snapshot() const { return cnn_snapshot_.get(); }
  /// The CNN snapshot's probe with its input gradient over it, as a texture (main thread: GL),
  /// made again on first use after each snapshot; 0 before one.
  ImTextureID cnn_texture();
  /// Masked patches: the probe (the whole photo) under its fixed mask, as the last snapshot
  /// reconstructs it (null before one, and for classification); bumped with each.
  const MaskedPatchPictures* pictures() const { return pictures_.get(); }
  /// pictures() as textures for the window (0: masked, 1: reconstructed, 2: original), made
  /// again on first use after each change (main thread: GL). 0 before there are pictures.
  ImTextureID picture_texture(int which);
  /// The shape of the run (config() may have changed since Start).
  const VitTrainShape& shape() const { return run_shape_; }
  /// The run's switches in words: "depth 4, 4 heads, D 96, patch 7, cls, learned position", or
  /// "CNN: ResNet, 1-1-1-1 basic blocks, width 16, 310k parameters" (config()'s before Start).
  std::string switches() const;

  /// The photo a masked-patch run will cut its crops from (config().photo), handed over by the
  /// window when its photo changes; a run under way keeps the one it started with.
  void set_photo(std::shared_ptr<const Image> photo, std::string name) {
    config_.photo = std::move(photo);
    config_.photo_name = std::move(name);
  }
  /// What the maps are of; a change runs the shown snapshot on it (the next chunks too).
  const TrainProbe& probe() const { return probe_; }
  void set_probe(TrainProbe probe);
  /// The name of the probe the shown snapshot ran on (empty before one).
  const std::string& shown_probe() const { return shown_probe_; }

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

  // The data set (read once, shared by the runs) and a run's trainer and batches: the chunk's
  // functions in train_session.cpp take them.
  using Data = TrainData;
  struct Run;

 private:
  struct Chunk;
  void submit_chunk(bool first);
  void take(Chunk c);
  void run_probe();  // the shown snapshot on probe_, on the pool
  void write(const std::filesystem::path& dir);
  std::string key(const char* job) const;

  Scheduler& scheduler_;
  TrainLane& lane_;
  std::shared_ptr<TrainDataSet> data_set_;
  std::string name_;
  TrainConfig config_;
  VitTrainShape run_shape_;
  std::shared_ptr<const CnnSnapshot> cnn_snapshot_;
  GuiTexture cnn_texture_;
  unsigned cnn_serial_ = 0, cnn_uploaded_ = 0;  // bumped with each snapshot; the one the texture holds
  std::shared_ptr<const Data> data_;
  std::shared_ptr<Run> run_;
  std::vector<TrainPoint> points_;
  double rate_ = 0;
  bool running_ = false;
  std::string preview_of_;  // the switches() of the model preview() shows; empty: no preview
  TrainProbe probe_;
  std::shared_ptr<const MaskedPatchPictures> pictures_;
  std::array<GuiTexture, 3> picture_textures_;
  unsigned pictures_serial_ = 0, uploaded_serial_ = 0;  // bumped with each pictures_; the one the textures hold
  unsigned probe_serial_ = 0;  // bumped by set_probe: a chunk that began before is run again on the new probe
  std::string shown_probe_;
  std::optional<std::filesystem::path> pending_save_, saved_;
  std::filesystem::path last_saved_;
  std::optional<std::string> error_;
  unsigned generation_ = 0;
  VitSession vit_;
};

/// The Train tab's two runs (e.g. CLS against average pooling on the same probe), taking turns
/// chunk by chunk on one lane. Run A is index 0, run B 1 (Document::train_run).
struct TrainRuns {
  TrainLane lane;  // before the sessions: they release it when they go
  std::shared_ptr<TrainDataSet> data_set = std::make_shared<TrainDataSet>();  // read once for both runs
  TrainSession a, b;
  explicit TrainRuns(Scheduler& scheduler) : a(scheduler, lane, data_set, "A"), b(scheduler, lane, data_set, "B") {}
  TrainSession& operator[](int run) { return run == 1 ? b : a; }
  const TrainSession& operator[](int run) const { return run == 1 ? b : a; }
};

}  // namespace attnlab::app
