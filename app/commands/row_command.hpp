#pragma once
// `attnlab row` (README, "Command line"): one row of the attention matrix A as CSV, and the
// hand-made heads' rows for any image and document (HandMadeRows), which `attnlab video` and
// `render --view overlay | --sweep` without --model draw over the photo (video_command.hpp).
#include <memory>
#include <string>
#include <vector>

#include "app/commands/document.hpp"
#include "core/hand_made/tokens.hpp"
#include "core/io/image.hpp"

namespace attnlab {
class HeadlessContext;
class HandMadeGpuEngine;
}  // namespace attnlab

namespace attnlab::app {

/// Row i of A of one hand-made head: the weights a_ij over the N keys (raster order of `grid`),
/// and whether every key was masked for the query (the row is then all 0).
struct HandMadeRow {
  std::vector<float> weights;  ///< N
  PatchGrid grid;
  bool empty = false;
};

/// The hand-made heads' rows on the GPU engine (core/gpu/hand_made_gpu_engine.hpp) in one
/// headless context made once, for every image and document asked (a video's frames, a sweep's
/// values: the engine re-tokenizes only what changed), or on the CPU reference
/// (core/hand_made/reference.hpp) when no GPU context can be made (said once on stderr).
class HandMadeRows {
 public:
  HandMadeRows();
  ~HandMadeRows();
  HandMadeRows(const HandMadeRows&) = delete;
  HandMadeRows& operator=(const HandMadeRows&) = delete;

  /// The image the next rows are of (kept; uploaded to the GPU at the next row()).
  void set_image(const Image& image);
  /// The image set_image() took (empty before).
  const Image& image() const { return image_; }

  /// Row i of A for the image under `d`: its attention settings (d.attention, the painted cells
  /// d.painted_cells as indices of the image's grid), its head d.hand_made.head.head (0 … 5) and
  /// query d.hand_made.cell (col, row of the grid). Throws Error (one line) for no image, a K that
  /// does not fit the image, bad settings, a query outside the grid.
  HandMadeRow row(const Document& d);

  /// Which path computes the rows: "GPU (RENDERER)" or "CPU reference (Eigen)".
  std::string backend() const;

 private:
  std::unique_ptr<HeadlessContext> context_;
  std::unique_ptr<HandMadeGpuEngine> engine_;
  bool context_tried_ = false;  // the context is made at the first row(), after its checks
  Image image_;
  bool image_uploaded_ = false;  // the engine holds image_
};

/// Runs `attnlab row` with the arguments after the command name (the options of
/// parse_query_options, no others). Prints row i of A for the query as CSV on stdout: H/K lines
/// of W/K weights, in the patch grid's layout, computed on the GPU engine, or on the CPU
/// reference when no GPU context can be made (said on stderr). Returns 0, or 1 when stdout
/// cannot be flushed; throws Error (one line) for bad arguments and files.
int run_row(const std::vector<std::string>& args);

}  // namespace attnlab::app
