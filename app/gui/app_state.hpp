#pragma once
// AppState: every setting of the app in one place. Views read it and write the user's
// changes into it; the main loop hands it to the backend. Its saved part is the Document
// (app/commands/document.hpp: to_json, apply_json and the command line's flags, through one
// field table); the rest is UI state, requests and metrics.
#include "app/commands/document.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnlab::app {

/// The patch sizes K the app offers (slider, `[` and `]`), in pixels.
inline constexpr int kMinPatchSize = 4, kMaxPatchSize = 128;

/// The app's state: the document (every saved setting, through its field table) and what
/// the window keeps beside it, none of it saved.
struct AppState : Document {
  bool paint_mode = false;  ///< left-drag paints the painted mask instead of moving the query
  std::string export_dir_text;  ///< the Export section's folder field (not saved)
  std::string open_path_text;  ///< the "open by path" text field

  // --- transient (not serialized)
  std::string banner;  ///< an error shown at the top; empty = none
  std::chrono::steady_clock::time_point banner_since{};
  std::string status;  ///< last export etc.
  std::chrono::steady_clock::time_point status_since{};  ///< when status was set (a toast shows it for 4 s)
  std::string pinned_note;  ///< why the pinned queries were cleared (a new photo), shown while there are none
  bool export_requested = false, csv_requested = false;
  /// A view with work still under way (a worker thread, a pass spread over frames) sets this
  /// to get the next frame at once instead of when the next event comes.
  bool redraw_requested = false;
  std::optional<std::filesystem::path> open_requested;  ///< load this image next frame
  std::optional<std::filesystem::path> model_requested;  ///< load this checkpoint next frame
  std::string model_path_text;  ///< the model panel's "open by path" text field
  float last_frame_ms = 0, row_pass_ms = 0;
  /// What the last frame moved between the CPU and the GPU (gl::transfer_counts over the frame).
  std::uint64_t frame_readbacks = 0, frame_readback_bytes = 0, frame_uploads = 0, frame_upload_bytes = 0;
  std::uint64_t frame_readbacks_waited = 0;  ///< of frame_readbacks, those that waited for the GPU (no fence had signalled)
  std::string backend_name;  ///< "GPU: llvmpipe …" or "CPU reference (…)"
  /// Teaching views that could not draw in the last frame, with the reason (shown in their
  /// window, written into export sidecars).
  std::map<std::string, std::string> view_errors;
  /// What the views checked against their own arithmetic (the step view's softmax, the
  /// tokenization's W_tokenize x_i), a line each, shown in the Diagnostics panel: name → result.
  std::map<std::string, std::string> checks;
  /// What the ViT's main map drew in the last frame (model and its SHA-256, layer, head, query
  /// token, the values coloured, where the photo was drawn), written into export sidecars;
  /// null when the hand-made heads were drawn.
  nlohmann::json vit_drawn;
  /// Shows `message` in the banner and prints it on stderr as "attnlab: <message>".
  void show_error(const std::string& message);
};

/// True while the last export's confirmation (s.status) is on screen: for 4 s after it was set.
inline bool toast_showing(const AppState& s) {
  return !s.status.empty() && std::chrono::steady_clock::now() - s.status_since <= std::chrono::seconds(4);
}
/// Where settings and the ImGui layout are remembered: $XDG_CONFIG_HOME/attnlab or
/// ~/.config/attnlab (created on demand).
std::filesystem::path config_dir();

}  // namespace attnlab::app
