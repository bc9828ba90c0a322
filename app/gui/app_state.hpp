#pragma once
// AppState: every setting of the app in one place. Views read it and write the user's
// changes into it; the main loop hands it to the backend. Plain data, serializable to JSON
// (export sidecars, remembered settings).
#include "core/colormap.hpp"
#include "core/settings.hpp"

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

/// A patch in grid coordinates (col, row), 0-based from the top left.
struct Cell {
  int col = 0, row = 0;
  bool operator==(const Cell&) const = default;
};

/// The patch sizes K the app offers (slider, `[` and `]`), in pixels.
inline constexpr int kMinPatchSize = 4, kMaxPatchSize = 128;

/// The fused choices of AppState::vit_head.
inline constexpr int kVitHeadMean = -1, kVitHeadMax = -2, kVitHeadMin = -3;

struct AppState {
  // --- the attention math (core Settings) and the query
  Settings attention;
  Cell query{12, 8};
  bool query_pinned = false;  ///< false: the query follows the mouse over the image
  int main_head = 0;          ///< HeadKind shown in the image view
  std::vector<Cell> pinned;   ///< queries compared side by side (pinned view)

  // --- display
  Colormap colormap = kDefaultColormap;
  Normalization normalization = Normalization::MinMax;
  float opacity = kDefaultOverlayOpacity;  ///< heat map over the photo
  bool show_grid = true;
  bool show_mask = true;   ///< darken the keys the query may not attend to
  float zoom = 1.0f;       ///< 1 = fit the view
  std::array<float, 2> pan{0, 0};  ///< image-view offset in screen pixels
  bool paint_mode = false;  ///< left-drag paints the painted mask instead of moving the query

  // --- classroom
  float ui_scale = 1.0f;
  bool presentation = false;
  bool show_controls = true, show_heads = true, show_pinned = true, show_images = true, show_diagnostics = false;

  // --- teaching views (by TeachingView::name) and the guided tour
  std::map<std::string, bool> open_views;
  int tour_step = -1;  ///< index into the teaching views, -1 = no tour

  // --- a real ViT (the loaded checkpoint's layers and heads as the attention source)
  bool vit_source = false;          ///< draw the loaded ViT's attention instead of the hand-made heads
  std::filesystem::path model_path;  ///< the checkpoint (a .safetensors file or a model folder)
  int vit_layer = -1;               ///< 0-based block; -1: the last one
  int vit_head = kVitHeadMean;      ///< ≥ 0: one head; kVitHeadMean/Max/Min: fused over heads
  int vit_token = 0;                ///< query token: 0 CLS, 1… registers; -1: the patch vit_cell
  Cell vit_cell{0, 0};              ///< the patch query on the ViT's grid
  std::vector<Cell> vit_pinned;     ///< patch queries compared side by side (ViT grid)
  int vit_tab = 0;                  ///< the ViT's lower view: 0 distance, 1 pinned queries, 2 attention matrix, 3 step by step
  bool vit_rollout = false;         ///< the main map shows attention rollout up to vit_layer
  bool vit_masks = false;           ///< DINO-style outlines of the patches holding vit_mass of the CLS row
  float vit_mass = 0.6f;            ///< share of the attention mass the outlines keep, 0…1
  bool vit_norms = false;           ///< the main map shows ‖x‖ of the layer's output tokens
  bool bilinear = false;            ///< maps upsampled bilinearly instead of as patch blocks
  int vit_resize = 0;               ///< the input's short side in pixels; 0: the model's trained size
  std::vector<std::string> recent_models;  ///< most recent first (remembered between runs)

  // --- images and files
  std::filesystem::path image_path;
  std::filesystem::path export_dir = ".";
  std::string export_dir_text;  ///< the Export section's folder field (not saved)
  bool export_map_only = false;  ///< F12 saves the map and its colour bar only (for slides), not the window
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

/// JSON of every persistent setting (the sidecar of an export, and remembered settings).
nlohmann::json to_json(const AppState& s);

/// True while the last export's confirmation (s.status) is on screen: for 4 s after it was set.
inline bool toast_showing(const AppState& s) {
  return !s.status.empty() && std::chrono::steady_clock::now() - s.status_since <= std::chrono::seconds(4);
}
/// Applies what `j` holds onto `s` (missing keys keep their values). Throws Error (with the
/// key) on a value of the wrong type or out of range; `s` is unchanged then.
void apply_json(const nlohmann::json& j, AppState& s);

/// Where settings and the ImGui layout are remembered: $XDG_CONFIG_HOME/attnlab or
/// ~/.config/attnlab (created on demand).
std::filesystem::path config_dir();

}  // namespace attnlab::app
