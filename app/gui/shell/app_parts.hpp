#pragma once
// What the App's helpers work on (docs/ARCHITECTURE.md, "The main loop"): the recording
// (recording.hpp), the hover benchmark's replay (replay_driver.hpp), the video feed
// (video_feed.hpp) and the training probe (train_probe.hpp) are objects the App owns and calls
// from its frame loop; each gets these references into the App, valid for the App's life.
#include "app/gui/maps/map_pictures.hpp"
#include "app/gui/sessions/hand_made_session.hpp"
#include "app/gui/sessions/train_session.hpp"
#include "app/gui/sessions/video_feed.hpp"
#include "app/gui/sessions/vit_session.hpp"
#include "app/gui/state/app_state.hpp"
#include "core/hand_made/grid_math.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

struct GLFWwindow;

namespace attnlab::app {

/// A key press queued by the GLFW key callback (ImGui 1.86 sees only whether a key is down at
/// the start of a frame, so a press and release between two frames would be lost).
struct KeyPress {
  int key, mods;
};

struct AppParts {
  GLFWwindow* window;
  AppState& state;
  HandMadeSession& hand_made;
  VitSession& vit;        ///< the loaded ViT's session
  TrainRuns& train;       ///< the Train tab's runs A and B
  ViewGeometry& geometry; ///< where the main map was drawn in the last frame
  VideoFeed& video;       ///< Images → Open video
  std::vector<KeyPress>& keys;  ///< the key presses the next frame handles (keys.cpp's table)
  /// The checkpoint being opened, until its first pass is done or it fails.
  const std::optional<std::filesystem::path>& opening_model;
  /// The photo's points the query and the pinned patches stand for across changes of K
  /// (App::keep_cells_in_place, core/hand_made/grid_math.hpp).
  std::vector<PixelPoint>& query_anchor;
  std::vector<PixelPoint>& pin_anchors;
  /// A file written: the toast naming it and the "attnlab: saved FILE" line (App::saved).
  std::function<void(const std::filesystem::path&)> saved;

  /// The run the Train tab shows (Document::train_run), and its snapshot (null before one).
  TrainSession& shown_train() const { return train[state.train_run]; }
  const VitRun* shown_train_run() const { return shown_train().vit().run(); }
};

}  // namespace attnlab::app
