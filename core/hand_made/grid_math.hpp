#pragma once
// Cells across a change of patch size K: which patch of the new grid holds the spot of the photo
// a patch of the old grid stood for. The window keeps the query and the pinned patches over the
// same spot with it when `[` or `]` (or the K slider) changes K (docs/GUIDE.md, "Controls that act at
// once"): the giraffe's neck stays the query as K goes from 16 to 8.
#include "core/hand_made/tokens.hpp"

#include <span>

namespace attnlab {

/// A point of the photo, in pixels (x to the right, y down, from the top-left corner).
struct PixelPoint {
  int x = 0, y = 0;
  bool operator==(const PixelPoint&) const = default;
};

/// A cell of a grid moved to another grid, with the photo's point it stands for.
struct RegriddedCell {
  int col = 0, row = 0;  ///< the cell of the new grid
  PixelPoint anchor;     ///< the point kept for the next change of K
};

/// The cell of `to` that holds the point of the photo that cell (col, row) of `from` stands for.
/// That point is the last of `anchors` that lies in the cell (the point the cell was first chosen
/// for, kept over earlier changes of K), else the cell's centre (col·K + K/2, row·K + K/2, in
/// whole pixels). Keeping the anchor makes K 16 → 32 → 64 → 32 → 16 come back to the same patch:
/// a centre taken at every step would drift by half a patch each time. The new cell is clamped
/// into `to` (a point past the cropped edge, or in the padding of a Pad grid that the new grid
/// does not have, lands on the last column or row).
RegriddedCell regrid_cell(const PatchGrid& from, const PatchGrid& to, int col, int row, std::span<const PixelPoint> anchors = {});

/// Patches a fitted K leaves on the image's shorter side at least (when the image has the pixels).
inline constexpr int kFittedPatchesPerSide = 4;

/// The patch size K (pixels) the hand-made heads use on a width × height image when the user's K,
/// `wanted`, may not fit it: the teacher's K = 32 must not stop a 28 × 28 Fashion-MNIST image
/// from opening (issue 47). Returns `wanted` when make_grid accepts it (tokens.hpp: a whole patch
/// fits in Crop mode, at most kMaxTokens tokens). Else, for a K too large for the image: the
/// largest wanted / 2^n (n ≥ 1) that leaves at least kFittedPatchesPerSide patches on the shorter
/// side (K ≤ min(width, height) / 4), at least 1 pixel; for a K too small (too many tokens): the
/// smallest wanted · 2^n that gives at most kMaxTokens tokens. So the fitted K stays on the `[` / `]`
/// ladder of the user's K. Throws Error for an empty image or a `wanted` < 1.
int fitted_patch(int width, int height, int wanted, EdgeMode edge);

}  // namespace attnlab
