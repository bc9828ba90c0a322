#pragma once
// Attention masks, section 26.10 and figs. 26.17–26.19.
#include "core/base/settings.hpp"
#include "core/hand_made/tokens.hpp"

#include <cstdint>
#include <vector>

namespace attnlab {

/// A mask resolved against a grid: decides whether query i may attend to key j.
/// Structural kinds (causal, strict, window) depend on i and j; key kinds (random, painted)
/// drop the same keys for every query, listed in key_keep() for the GPU.
class Mask {
 public:
  /// Throws Error for a negative radius, a ratio outside [0,1] or a painted index outside the grid.
  Mask(const MaskSpec& spec, const PatchGrid& grid);

  /// True when a_ij may be non-zero. i, j in [0,N).
  bool allowed(int i, int j) const;

  MaskKind kind() const { return kind_; }
  int radius() const { return radius_; }
  /// 1 = key kept, 0 = key dropped, size N (all 1 for structural kinds).
  const std::vector<std::uint8_t>& key_keep() const { return keep_; }

 private:
  MaskKind kind_;
  int radius_;
  int cols_;
  std::vector<std::uint8_t> keep_;
};

/// Painted mask cells given as (col,row) → token indices; Error for cells outside the grid.
std::vector<int> painted_indices(const std::vector<std::array<int, 2>>& cells, const PatchGrid& grid);

} // namespace attnlab
