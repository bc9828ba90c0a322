#include "core/hand_made/grid_math.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <string>

namespace attnlab {

RegriddedCell regrid_cell(const PatchGrid& from, const PatchGrid& to, int col, int row, std::span<const PixelPoint> anchors) {
  PixelPoint at{col * from.K + from.K / 2, row * from.K + from.K / 2};
  for (const PixelPoint& a : anchors)
    if (a.x / from.K == col && a.y / from.K == row) at = a;
  return {std::clamp(at.x / to.K, 0, to.cols - 1), std::clamp(at.y / to.K, 0, to.rows - 1), at};
}

int fitted_patch(int width, int height, int wanted, EdgeMode edge) {
  if (width < 1 || height < 1) throw Error(_("the image is empty"));
  // TRANSLATORS: K is the patch size in pixels.
  if (wanted < 1) throw Error(text_format(_("patch size K must be at least 1 pixel, got %d"), wanted));
  const auto fits = [&](int k) {
    try {
      make_grid(width, height, k, edge);
      return true;
    } catch (const Error&) {
      return false;
    }
  };
  if (fits(wanted)) return wanted;
  const int shorter = std::min(width, height);
  if (wanted > shorter || wanted > kMaxPatch) {  // too large: halve down the ladder
    const int most = std::max(shorter / kFittedPatchesPerSide, 1);
    int k = wanted;
    while (k > most && k > 1) k /= 2;
    return k;
  }
  long long k = wanted;  // too small (too many tokens): double up the ladder
  while (k < kMaxPatch && !fits(static_cast<int>(k))) k *= 2;
  if (k > kMaxPatch || !fits(static_cast<int>(k))) throw Error(text_format(_("no patch size fits a %dx%d image"), width, height));
  return static_cast<int>(k);
}

}  // namespace attnlab
