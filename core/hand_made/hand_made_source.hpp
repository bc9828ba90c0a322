#pragma once
// The chapter's hand-made heads as an AttentionSource (attention_source.hpp): one layer, its six
// heads (HeadKind order), no prefix tokens, the patch grid over the part of the image the
// patches cover. The rows come from a HandMadeModel (the GPU engine or the reference) for the
// query asked, so a view that draws an AttentionSource draws these heads as it draws a ViT's.
#include "core/vit/attention_source.hpp"
#include "core/hand_made/hand_made.hpp"

namespace attnlab {

/// The hand-made heads' grid as a source's: no prefix tokens, the covered part the whole grid
/// (cols·K × rows·K image pixels, padding included).
SourceGrid hand_made_source_grid(const PatchGrid& grid);

class HandMadeSource final : public AttentionSource {
 public:
  /// `model` must hold an image and outlive the source; `grid` is its patch grid (the setup's).
  HandMadeSource(HandMadeModel& model, const PatchGrid& grid) : model_(model), grid_(grid) {}

  SourceGrid grid() const override;
  int layers() const override { return 1; }
  int heads() const override { return kHeadCount; }
  /// Row `query` of A (eq. 26.20 with τ and the mask) of one head, or the heads fused; N values.
  /// Throws Error for a layer other than 0, a head outside 0…5 or a query outside the grid.
  std::vector<float> patch_row(int layer, HeadChoice head, int query) const override;
  /// A of one head or the heads fused, N × N (HandMadeModel::matrix, its size limit included).
  Matrix matrix(int layer, HeadChoice head) const override;

 private:
  void check(int layer, HeadChoice head) const;
  HandMadeModel& model_;
  PatchGrid grid_;
};

}  // namespace attnlab
