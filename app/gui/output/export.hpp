#pragma once
// Export (docs/GUIDE.md, "What the window does"): the window as PNG with a sidecar JSON of every setting, and the
// current row as CSV, under names that never overwrite a file, in export_folder(state) (the folder
// the user chose, else <Pictures>/attnlab, made when first saved to: app_state.hpp).
#include "app/gui/state/app_state.hpp"
#include "app/gui/sessions/hand_made_session.hpp"
#include "app/gui/maps/map_pictures.hpp"

#include <filesystem>

namespace attnlab::app {

/// Everything needed to reproduce and check an export: to_json(state) plus the program's
/// version, the hand-made session, the image and grid sizes, the query's token index, the main head's
/// row summary (min, max, the five largest weights with their cells) and where the image view
/// drew the photo.
nlohmann::json sidecar_json(const AppState& state, HandMadeSession& hand_made, const ViewGeometry& view, int width, int height);

/// A rectangle of the framebuffer in pixels, (x, y) its top-left corner from the window's top left.
struct PixelRect {
  int x = 0, y = 0, w = 0, h = 0;
};

/// What an export or a recording keeps of a `width` × `height` framebuffer: the whole window, or
/// with `map_only` the main map and its colour bar (view.picture, scaled from ImGui's display
/// units to framebuffer pixels and clamped inside it; the whole window while no map is drawn).
PixelRect export_crop(bool map_only, const ViewGeometry& view, int width, int height);

/// The back buffer's pixels in `rect` (of a framebuffer `height` pixels high) as 8-bit RGB,
/// rows from the top: rect.w × rect.h × 3 bytes. Needs the window's GL context current.
std::vector<std::uint8_t> read_back_buffer(const PixelRect& rect, int height);

/// Reads the current back buffer (width × height) and writes attnlab-<time>.png and its .json
/// into export_folder(state): the whole window, or with state.export_map_only the map and its
/// colour bar (view.picture; attnlab-map-<time>.png), for a slide. The sidecar's "export"
/// says which, with the crop (x, y, w, h) in window pixels. Returns the PNG path. Throws
/// Error (nothing left half-written).
std::filesystem::path export_window(const AppState& state, HandMadeSession& hand_made, const ViewGeometry& view, int width,
                                    int height);

/// Writes the main head's row as CSV in the grid's layout (rows of the grid as lines), after
/// '#' comment lines naming the image, K and the grid, the query, head, mask, temperature and
/// positional codes.
std::filesystem::path export_row_csv(const AppState& state, HandMadeSession& hand_made);

/// Writes the ViT map drawn last (state.report.vit_drawn: a layer's row, its rollout or the token
/// norms over the patch grid) as CSV in the grid's layout, after '#' comment lines naming the
/// model file, its SHA-256, the image, layer, head, query token and what the values are,
/// plus the share of the row that went to the prefix tokens (not in the grid). Throws Error
/// when no ViT map has been drawn.
std::filesystem::path export_vit_csv(const AppState& state);

/// The same for the model being trained (state.report.train_drawn, the Train tab's shown run):
/// its '#' lines name it "being trained", with the run, the step, the run's switches and the
/// probe instead of a file, its SHA-256 and the photo. attnlab-train-<run>-<shows>-layer<L>-token<T>.csv.
/// Throws Error when no map of it has been drawn.
std::filesystem::path export_train_csv(const AppState& state);

/// The folder exports go to, from what a user typed: an existing folder, or a new one made in
/// an existing folder. Returns it absolute. Throws Error with a one-line reason (a file of that
/// name, a missing parent, no permission) and creates nothing then.
std::filesystem::path choose_export_dir(const std::string& typed);

/// "YYYYMMDD-HHMMSS" in local time, for file names.
std::string timestamp();

}  // namespace attnlab::app
