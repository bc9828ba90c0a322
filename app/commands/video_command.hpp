#pragma once
// `attnlab video` and the overlaid stills and sweeps of `render --view overlay | --sweep` (issue
// 40): a ViT's map, or the hand-made heads' without --model, drawn over each frame of a video, or
// over one image for a range of layers, heads, queries, temperatures or patch sizes, written as
// MP4 or GIF with a sidecar JSON. No window: the map is coloured and blended on the CPU
// (core/io/overlay.hpp, through app/commands/overlay_source.hpp), so the same picture comes out
// of every path.
#include <filesystem>
#include <string>
#include <vector>

#include "app/commands/document.hpp"
#include "app/commands/overlay_source.hpp"

namespace attnlab::app {

/// The usage text of `attnlab video`.
std::string video_usage();

/// Runs `attnlab video …` (args after the command): with --model a ViT's map over each frame,
/// without it the hand-made heads' (the document's flags of render: --patch, --query, --head,
/// --temperature, --mask, …; the query by default the middle patch of the first frame's grid).
/// Returns the exit code; throws Error (one line) for bad arguments, files, models and videos.
int run_video(const std::vector<std::string>& args);

/// `render --model PATH --image IMG --view overlay --out FILE.png`: one overlaid still, exactly
/// what `attnlab video` writes for that picture as a frame. `d` holds the image, model and
/// display settings (parsed by render). Throws Error.
int run_overlay_still(const Document& d, const OverlayChoices& choices, const std::filesystem::path& out, bool force);

/// `render --model PATH --image IMG --sweep KIND --out FILE.gif|FILE.mp4`: the overlaid still
/// for each swept value, one frame each (frame k = the still with that value). Throws Error.
int run_overlay_sweep(const Document& d, const OverlayChoices& choices, const SweepRequest& sweep,
                      const std::filesystem::path& out, bool force);

/// `render --view overlay --out FILE.png` and `render --sweep head|query-row|tau|K --out
/// FILE.gif|FILE.mp4` without --model: the hand-made heads' row for d's query, head and settings
/// over the whole image d.image_path (make_hand_made_overlay()), one still (sweep.kind empty) or
/// one frame per value; `--sweep layer` is refused in one line. Throws Error.
int run_hand_made_overlay(const Document& d, const SweepRequest& sweep, const std::filesystem::path& out, bool force);

}  // namespace attnlab::app
