#include "core/hand_made/hand_made_source.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

namespace attnlab {

SourceGrid hand_made_source_grid(const PatchGrid& grid) {
  return SourceGrid{.cols = grid.cols,
                    .rows = grid.rows,
                    .prefix = 0,
                    .covered_w = static_cast<double>(grid.cols) * grid.K,
                    .covered_h = static_cast<double>(grid.rows) * grid.K};
}

SourceGrid HandMadeSource::grid() const { return hand_made_source_grid(grid_); }

void HandMadeSource::check(int layer, HeadChoice head) const {
  if (layer != 0) throw Error(text_format(_("layer %d is outside 0…0: the hand-made heads are one layer"), layer));
  if (head.head >= kHeadCount) throw Error(text_format(_("head %d is outside 0…%d"), head.head, kHeadCount - 1));
}

std::vector<float> HandMadeSource::patch_row(int layer, HeadChoice head, int query) const {
  check(layer, head);
  const RowSet rows = model_.rows(query);  // throws for a query outside the grid
  if (head.head >= 0) {
    const auto r = rows.head(head.head);
    return {r.begin(), r.end()};
  }
  const Matrix fused = fuse_heads(kHeadCount, head.fusion, [&](int h) {
    const auto r = rows.head(h);
    return Matrix(Eigen::Map<const Matrix>(r.data(), 1, rows.N));
  });
  return {fused.data(), fused.data() + fused.size()};
}

Matrix HandMadeSource::matrix(int layer, HeadChoice head) const {
  check(layer, head);
  if (head.head >= 0) return model_.matrix(head.head);
  return fuse_heads(kHeadCount, head.fusion, [&](int h) { return model_.matrix(h); });
}

}  // namespace attnlab
