#pragma once
// `attnlab video` and the overlaid stills and sweeps of `render --model` (issue 40): a ViT's map
// drawn over each frame of a video, or over one image for a range of layers, heads, queries or
// temperatures, written as MP4 or GIF with a sidecar JSON. No window: the map is coloured and
// blended on the CPU (core/io/overlay.hpp), so the same picture comes out of every path.
#include <filesystem>
#include <string>
#include <vector>

#include "app/commands/document.hpp"
#include "app/commands/source_choice.hpp"

namespace attnlab::app {

/// The ViT's choice as the command line gives it (--layer, --head, --query: ChoiceFlags, checked
/// against the model once it is loaded, app/commands/source_choice.hpp; not given: the last
/// layer, the heads' mean, the CLS token), and what the map shows: map (a row of A), rollout (the
/// rollout row up to the layer) or norms (the layer's token norms).
struct OverlayChoices {
  ChoiceFlags choice;
  std::string view = "map";
};

/// What `render --sweep` varies: layer 0…L−1, head 0…H−1, the query along its row (query-row:
/// the patch query's row, every column), or the softmax temperature τ (a_ij ∝ exp(s_ij/τ) over
/// the model's own scores s_ij, τ = 1 being the model), with `values` (comma-separated) for tau.
struct SweepRequest {
  std::string kind;    ///< layer, head, query-row, tau
  std::string values;  ///< tau's values, default 0.25,0.5,1,2,4
  double fps = 2;
};

/// The usage text of `attnlab video`.
std::string video_usage();

/// Runs `attnlab video …` (args after the command). Returns the exit code; throws Error (one
/// line) for bad arguments, files, models and videos.
int run_video(const std::vector<std::string>& args);

/// `render --model PATH --image IMG --view overlay --out FILE.png`: one overlaid still, exactly
/// what `attnlab video` writes for that picture as a frame. `d` holds the image, model and
/// display settings (parsed by render). Throws Error.
int run_overlay_still(const Document& d, const OverlayChoices& choices, const std::filesystem::path& out, bool force);

/// `render --model PATH --image IMG --sweep KIND --out FILE.gif|FILE.mp4`: the overlaid still
/// for each swept value, one frame each (frame k = the still with that value). Throws Error.
int run_overlay_sweep(const Document& d, const OverlayChoices& choices, const SweepRequest& sweep,
                      const std::filesystem::path& out, bool force);

}  // namespace attnlab::app
