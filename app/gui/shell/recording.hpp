#pragma once
// Export → Record (issue 40; app/gui/output/recorder.hpp), an object the App owns and calls: F8
// or the menu starts and stops a live recording of what F12 saves (the window, or the map
// only); a sweep steps one setting over its values (app/gui/output/sweeps.hpp), one frame each
// once its map is drawn, and puts the document back; a training recording takes a frame each
// time the Train tab's run has trained N more steps. Frames are read from the back buffer after
// the frame is rendered, before the swap.
#include "app/gui/output/recorder.hpp"
#include "app/gui/output/sweeps.hpp"
#include "app/gui/shell/app_parts.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace attnlab::app {

struct PixelRect;  // app/gui/output/export.hpp

// A sweep being recorded: its steps, the next one, how many frames were drawn settled since
// the last step was applied, and the document and the photo points of the query and pins
// (App::keep_cells_in_place) to restore at the end. At namespace scope: clang 14 does not count
// a nested struct with member initializers as default-constructible in its class.
struct SweepRun {
  std::string kind;
  std::vector<SweepStep> steps;
  std::size_t next = 0;
  int settled_frames = 0;
  Document saved;
  std::vector<PixelPoint> query_anchor, pin_anchors;
};

class Recording {
 public:
  explicit Recording(AppParts& app) : app_(app) {}
  /// Called from the writer's thread when a file is written (the window's event wait ends).
  void set_wake(std::function<void()> wake) { recorder_.set_wake(std::move(wake)); }

  /// After the frame is rendered (a `w` × `h` framebuffer), before the swap: Record's commands
  /// (Commands::Kind::Record), this frame's picture for the recording, its limits, and a
  /// finished file's toast; errors go to the banner.
  void take_frame(int w, int h);
  /// Export → Record's items, inside the open Export menu.
  void draw_menu();
  /// When the window closes: a recording still running is stopped and written (a sweep's
  /// settings put back first, so they are the ones remembered), waiting up to a minute for the file.
  void finish();

 private:
  SweepShape sweep_shape() const;
  void start(const std::string& what, int w, int h);
  void stop();
  void add_frame(const PixelRect& crop, int h);
  void step_sweep(const PixelRect& crop, int h);

  AppParts& app_;
  Recorder recorder_;
  std::optional<SweepRun> sweep_;              // a sweep being recorded
  std::int64_t recorded_step_ = -1;            // a training recording: the step of its last frame
  std::vector<std::int64_t> recorded_steps_;  // and of every frame, for the sidecar
  std::chrono::steady_clock::time_point last_capture_{};
};

}  // namespace attnlab::app
