#pragma once
// The hover benchmark in the window (app/gui/output/hover_bench.hpp), an object the App owns
// when `--hover-bench` asks for it and calls after each frame's swap: the frame's time, then the
// pointer moved to the path's next patch once the last one's map is on screen; over a ViT, every
// few hovers a layer or head step pressed as a key (the key table's, keys.cpp).
#include "app/gui/output/hover_bench.hpp"
#include "app/gui/shell/app_parts.hpp"
#include "core/gpu/gl.hpp"

#include <optional>

namespace attnlab::app {

class ReplayDriver {
 public:
  ReplayDriver(AppParts& app, HoverReplay replay) : app_(app), replay_(std::move(replay)) {}

  const HoverBenchConfig& config() const { return replay_.config(); }
  /// Before the main map draws: what it is made of in this frame, from `shown_vit` (the ViT
  /// shown, the loaded one or a Train run, or null) and its choice in the document; main_map()
  /// reads it first, and a hover later in the frame moves the query for the next one.
  void note_vit_map(const VitRun* shown_vit);
  /// After each frame's swap: the frame (its stages `marks`, the GL transfers `moved`), then the
  /// next move. The last frame writes the report and closes the window (code()).
  void step(const gl::TransferCounts& moved, FrameMarks marks);
  /// Whether the window waits for events as with nobody at it (--train, before the replay
  /// begins: the training has the CPU a lesson would give it).
  bool idle() const { return idle_; }
  /// The exit code once the window is closed: 0, or 1 when the replay could not finish.
  int code() const { return code_; }

 private:
  void stop(int code, const std::string& line);
  nlohmann::json video_block() const;
  Shown vit_shown() const;
  void step_vit(VitSession& session);
  void step_hand_made();

  // --video: the player's counts when the replay began.
  struct VideoStart {
    std::int64_t shown, dropped;
  };

  AppParts& app_;
  HoverReplay replay_;
  int code_ = 0;
  bool vit_started_ = false;  // the ViT replay's start settings applied
  std::optional<VideoStart> video_start_;
  FrameMarks::Clock::time_point train_started_;  // --train: when the replay started the model's training
  bool idle_ = false;
  Shown vit_map_shown_;  // what the ViT's main map was made of in this frame
};

}  // namespace attnlab::app
