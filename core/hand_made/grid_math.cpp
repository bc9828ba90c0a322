#include "core/hand_made/grid_math.hpp"

#include <algorithm>

namespace attnlab {

RegriddedCell regrid_cell(const PatchGrid& from, const PatchGrid& to, int col, int row, std::span<const PixelPoint> anchors) {
  PixelPoint at{col * from.K + from.K / 2, row * from.K + from.K / 2};
  for (const PixelPoint& a : anchors)
    if (a.x / from.K == col && a.y / from.K == row) at = a;
  return {std::clamp(at.x / to.K, 0, to.cols - 1), std::clamp(at.y / to.K, 0, to.rows - 1), at};
}

}  // namespace attnlab
