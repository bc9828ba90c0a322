#pragma once
// An attention source: something that answers "which patches does this query attend to?" for
// a layer and a head. A view asks a source for rows and never asks what kind of source it is.
// Implemented by a real ViT's forward pass (VitRun, vit_run.hpp) and by the chapter's hand-made
// heads (hand_made_source.hpp, one layer); the query is an argument, not state.
#include "core/vit/vit.hpp"

#include <functional>
#include <string>
#include <vector>

namespace attnlab {

/// The patch grid a source's rows are laid over, in the pixels of the image the source read.
struct SourceGrid {
  int cols = 0, rows = 0;  ///< patches; N = cols·rows
  int prefix = 0;          ///< tokens before the patches (CLS, registers): token t ≥ prefix is patch t − prefix
  /// The part of the source image the patches cover, in that image's pixels (x0 = y0 = 0): a
  /// model that resizes its input covers the image scaled, cropped to whole patches.
  double covered_w = 0, covered_h = 0;
  int N() const { return cols * rows; }
  int T() const { return prefix + N(); }
};

/// A token in words, the same in every window, export and command line: "CLS" (token 0),
/// "register 0" (token 1: registers count from 0, as `attnlab vit --query reg0`), "patch (4,5)"
/// (col, row of the grid, from 0). `token` in 0 … T − 1.
std::string token_label(const SourceGrid& grid, int token);

class AttentionSource {
 public:
  virtual ~AttentionSource() = default;
  virtual SourceGrid grid() const = 0;
  virtual int layers() const = 0;
  virtual int heads() const = 0;
  /// Weights a_ij of query token `query` (0 … T−1) over the patch keys j (N values, raster
  /// order) in `layer`, for one head or fused over heads (eq. 26.20). Keys outside the patches
  /// (prefix tokens) are left out, not renormalized. Throws Error for a layer, head or query
  /// out of range.
  virtual std::vector<float> patch_row(int layer, HeadChoice head, int query) const = 0;
  /// The whole A of `layer` for one head or fused over heads (elementwise mean, max or min):
  /// T × T over all tokens, prefix first. Throws Error for a layer or head out of range.
  virtual Matrix matrix(int layer, HeadChoice head) const = 0;
};

/// Heads fused elementwise (mean, max or min) over `heads` matrices given one at a time by
/// `head_matrix(h)`, all of one shape; the one rule every source fuses by (HeadChoice).
Matrix fuse_heads(int heads, HeadFusion fusion, const std::function<Matrix(int)>& head_matrix);

}  // namespace attnlab
