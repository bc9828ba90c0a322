#pragma once
// The interactive benchmark (`attnlab --hover-bench OUT.json`, docs/SPEED.md, "The window"): the real
// window replays a fixed path of hovers over the photo, one patch to a neighbouring one as a
// hand sweeping the mouse would, through the pointer of the display (the window system moves
// it; ImGui reads it as it reads a person's). It records every frame's wall time and transfers
// and, per hover, the time from the pointer's move to the swap of the frame that shows the new
// query's map, then writes the numbers as JSON and one line on stdout. Needs no person.
// With a ViT (`--model PATH`) the same kind of path runs over the model's patch grid once its
// first forward pass is done, and every `step_every` hovers a layer/head step happens as a key
// press would make it (PageUp/End, 1…9, 0 for the heads' mean); those frames count too.
// With `--train` the same runs over the Train tab's model (run A, the default shape) while it
// trains on the scheduler, from its first trained chunk on; the report adds how many training
// steps were made during the replay, and how fast.
#include "app/gui/state/app_state.hpp"
#include "core/gpu/gl.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace attnlab::app {

/// The replay's settings: what the issue fixes (300 hovers at K = 16 in a 1600 × 1000 window).
struct HoverBenchConfig {
  std::filesystem::path out;  ///< the JSON report (not overwritten if it exists)
  int hovers = 300;
  int patch = 16;  ///< K, pixels
  std::uint32_t seed = 19;  ///< the path's random walk (std::mt19937, its raw output only)
  bool vit = false;  ///< over a ViT's patch grid (`--model`, or `--train`), not the hand-made heads' map
  bool train = false;  ///< the ViT is the Train tab's model, training during the replay (`--train`)
  double train_first_s = 0;  ///< --train: seconds of training before the replay begins (ATTNLAB_HOVER_BENCH_TRAIN_S; 0: after the first chunk)
  int step_every = 10;  ///< ViT: a layer/head step after every step_every-th hover but the last (0: none)
  /// --video VIDEO: the replay begins once the video plays under the map it hovers (a frame of it
  /// drawn by the hand-made heads, or with --model the ViT's maps of one); the report's "video"
  /// block says how it played meanwhile (set_video). Empty: no video.
  std::filesystem::path video = {};
};

/// What the replay ran over, for its report.
struct ReplaySource {
  std::string kind = "hand-made";  ///< "hand-made", "vit" or "train" (the model being trained)
  std::string model;               ///< vit: the checkpoint file read
  int cols = 0, rows = 0;          ///< the patch grid the path walks
  int patch = 0;                   ///< pixels per patch (K; a ViT's P, input pixels)
  int layers = 1, heads = 0;
  std::string runner;              ///< where the attention ran: the hand-made session's name, or the ViT's "cpu" / "gpu"
};

/// What a frame's main map showed: the query's patch ({-1, -1} for a prefix token), the layer
/// and the head (shown_head: a head from 0, a ViT's fusion of heads as −1 mean, −2 max, −3 min).
struct Shown {
  Cell query{-1, -1};
  int layer = 0, head = 0;
};
/// A head choice as Shown's number.
inline int shown_head(HeadChoice h) { return h.head >= 0 ? h.head : -1 - static_cast<int>(h.fusion); }

/// What the replay does next: move the pointer to a patch, or step the layer or head (a key).
struct ReplayMove {
  enum class Kind { Hover, Step } kind = Kind::Hover;
  Cell cell;     ///< Hover: the patch
  int step = 0;  ///< Step: its index, 0, 1, … (the app picks the key from it)
};

/// Percentiles of a list of milliseconds (nearest rank on the sorted list).
struct Spread {
  double median = 0, p95 = 0, max = 0;
  std::size_t count = 0;
};
/// Throws Error on an empty list.
Spread spread_of(std::vector<double> ms);

/// The fixed path: `hovers` cells of a `cols` × `rows` grid, starting at the centre, each a
/// neighbour of the one before (one of the 8, never the same cell, kept inside the grid), from
/// a std::mt19937 seeded with `seed` (its raw output, so the path is the same on every machine).
/// Throws Error for an empty grid or hovers < 1.
std::vector<Cell> hover_path(int cols, int rows, int hovers, std::uint32_t seed);

/// When a frame passed its stages (the app's loop, top to bottom).
struct FrameMarks {
  using Clock = std::chrono::steady_clock;
  Clock::time_point start;     ///< events polled: the frame's work begins
  Clock::time_point drawn;     ///< the views have run (their GPU passes and read-backs included) and ImGui has built its lists
  Clock::time_point rendered;  ///< ImGui's draw lists submitted to OpenGL
  Clock::time_point end;       ///< swapped and finished (glFinish): the frame is on screen
};

class HoverReplay {
 public:
  using Clock = FrameMarks::Clock;
  /// Throws Error if `config.out` exists (no export overwrites a file silently) or its folder
  /// does not.
  explicit HoverReplay(HoverBenchConfig config);

  const HoverBenchConfig& config() const { return config_; }
  /// The path over a grid (made on the first call, for the grid then shown).
  const std::vector<Cell>& path(int cols, int rows);

  /// What the replay runs over (written to the report).
  void set_source(ReplaySource source) { source_ = std::move(source); }

  /// Called after every frame's swap (and glFinish) during the replay: its stages (its wall time
  /// runs from the end of the previous frame), what it moved, and what the frame's map showed.
  void frame(const FrameMarks& marks, const gl::TransferCounts& moved, const Shown& drawn);
  /// The next move, once the last one is on screen: the next cell of the path, or (a ViT,
  /// after every config().step_every hovers but the last) a layer/head step; nullopt while the
  /// last move is not yet drawn, or when the path is done (done() then says so).
  std::optional<ReplayMove> next();
  /// The pointer was moved to the cell next() gave, at `when`.
  void moved(Clock::time_point when) { moved_at_ = when; }
  /// The key of the step next() gave was pressed at `when`; the map should then show `layer`, `head`.
  void stepped(Clock::time_point when, int layer, int head);
  bool done() const { return started_ && index_ >= path_.size() && !waiting_; }
  /// The step the model being trained has reached (`--train`), told before each frame(): the
  /// replay keeps the step at its first move and at its last frame, for the report's
  /// training steps per second over the replay's wall time.
  void trained(std::int64_t step);
  /// Frames drawn while the replay ran (a stuck app never ends it otherwise).
  std::size_t frames() const { return frame_ms_.size(); }
  /// --video: how the video played during the replay (frames shown and dropped, latency, whether
  /// it ended before the replay did), written as the report's "video" block.
  void set_video(nlohmann::json video) { video_ = std::move(video); }

  /// Writes the JSON report and returns the one-line summary. Throws Error if it cannot write.
  std::string finish(const std::string& renderer) const;

 private:
  HoverBenchConfig config_;
  std::vector<Cell> path_;
  ReplaySource source_;
  std::size_t index_ = 0;  // the next cell of path_ to move to
  int steps_ = 0;          // layer/head steps given
  bool started_ = false, waiting_ = false, stepping_ = false;
  Cell target_;
  int target_layer_ = 0, target_head_ = 0;
  Clock::time_point moved_at_{}, last_end_{};
  std::vector<double> frame_ms_, latency_ms_, step_ms_;
  std::vector<double> events_ms_, views_ms_, submit_ms_, swap_ms_;  // the stages of each frame
  double cpu_ms_start_ = 0, cpu_ms_ = 0;  // the process's CPU time (every thread, llvmpipe's too)
  std::int64_t train_step_ = -1, train_first_ = -1, train_last_ = -1;  // the training step: now, at the first move, at the last frame
  std::vector<int> frame_readbacks_, frame_waited_, frame_uploads_;
  std::int64_t readback_bytes_ = 0, upload_bytes_ = 0;
  nlohmann::json video_;  // set_video's block (null: no video)
};

}  // namespace attnlab::app
