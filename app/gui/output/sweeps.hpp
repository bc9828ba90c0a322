#pragma once
// Export → Record → a sweep (issue 40): one document setting stepped over its values, one frame
// of the map each, for a slide that shows what the setting does. Which sweeps a source offers
// and their values; the recording itself is the Recorder's (recorder.hpp), the stepping the
// main loop's (app/gui/shell/recording.cpp). `render --sweep` does the same headless
// (app/commands/video_command.hpp).
#include <functional>
#include <string>
#include <vector>

#include "app/gui/state/app_state.hpp"

namespace attnlab::app {

/// What the shown source offers a sweep.
struct SweepShape {
  bool vit = false;      ///< a ViT is shown (loaded, or being trained), else the hand-made heads
  int cols = 0, rows = 0;  ///< its patch grid
  int layers = 1, heads = 0;
  int pins = 0;  ///< the pinned patches of the shown choice (the path query-path walks)
  int image_width = 0, image_height = 0;  ///< the hand-made heads' photo (K's largest value)
};

/// One frame of a sweep: the value (for the sidecar) and what it sets in the document.
struct SweepStep {
  std::string value;
  std::function<void(AppState&)> apply;
};

/// The sweeps, in the menu's order: query-row (the query along its row: every column of the
/// shown query's row, the middle row for the CLS token or a register), query-path (the query
/// along the pinned patches, in the order they were pinned: a path a teacher draws), layer (0 … L−1, a ViT),
/// head (0 … H−1), tau (the hand-made heads' temperature τ of eq. 26.20 over
/// kSweepTemperatures), K (the hand-made heads' patch size over kSweepPatchSizes, those that fit
/// the photo).
const std::vector<std::string>& sweep_kinds();
/// The menu's words for a kind: "the query along its row"…
std::string sweep_label(const std::string& kind);

inline constexpr float kSweepTemperatures[] = {0.05f, 0.1f, 0.25f, 0.5f, 1.0f, 2.0f, 4.0f};
inline constexpr int kSweepPatchSizes[] = {8, 12, 16, 24, 32, 48, 64};

/// Why `kind` cannot be swept on `shape` (one line), or "" when it can.
std::string sweep_unavailable(const std::string& kind, const SweepShape& shape);

/// The steps of a sweep of `kind` from the document `state` (the query's row, the choice the
/// other steps keep). Each step also pins the query, so that the pointer does not move it.
/// Throws Error (sweep_unavailable()'s line) when the source cannot take it.
std::vector<SweepStep> plan_sweep(const std::string& kind, const AppState& state, const SweepShape& shape);

}  // namespace attnlab::app
