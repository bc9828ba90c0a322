#include "core/hand_made/mask.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/hand_made/shader_constants.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <random>

namespace attnlab {

namespace {
// shaders/mask_rule.glsl, compiled as C++: the rule the shaders use, word for word.
using uint = std::uint32_t;
using std::abs;
using namespace shader;
#include "shaders/mask_rule.glsl"
}  // namespace

Mask::Mask(const MaskSpec& spec, const PatchGrid& grid)
    : kind_(spec.kind), radius_(spec.radius), cols_(grid.cols), keep_(static_cast<size_t>(grid.N()), 1) {
  const int N = grid.N();
  if (kind_ == MaskKind::Window && radius_ < 0)
    throw Error(text_format(_("window mask radius must be >= 0 patches, got %d"), radius_));
  if (kind_ == MaskKind::Random) {
    if (!(spec.ratio >= 0.0f && spec.ratio <= 1.0f))
      throw Error(_("random mask ratio must be between 0 and 1"));
    // Exactly round(ratio·N) keys are dropped: the first ones of a seeded shuffle.
    std::vector<int> order(static_cast<size_t>(N));
    std::iota(order.begin(), order.end(), 0);
    std::mt19937 gen(spec.seed);
    for (int n = N - 1; n > 0; --n) std::swap(order[n], order[gen() % static_cast<unsigned>(n + 1)]);  // Fisher–Yates
    const int drop = static_cast<int>(std::lround(static_cast<double>(spec.ratio) * N));
    for (int n = 0; n < drop; ++n) keep_[order[n]] = 0;
  }
  if (kind_ == MaskKind::Painted)
    for (int j : spec.painted) {
      if (j < 0 || j >= N) throw Error(text_format(_("painted mask cell %d is outside the grid of %d tokens"), j, N));
      keep_[j] = 0;
    }
}

bool Mask::allowed(int i, int j) const {
  return mask_allowed(static_cast<int>(kind_), radius_, cols_, i, j, keep_[static_cast<size_t>(j)]);
}

std::vector<int> painted_indices(const std::vector<std::array<int, 2>>& cells, const PatchGrid& grid) {
  std::vector<int> out;
  for (auto [c, r] : cells) out.push_back(token_at(grid, c, r));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

} // namespace attnlab
