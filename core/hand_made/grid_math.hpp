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

}  // namespace attnlab
