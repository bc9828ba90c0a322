#pragma once
// Training images cut from one photo, for masked-patch reconstruction (issue 29, item 7;
// VitTask::MaskedPatches in core/vit/vit_train.hpp): MAE's pre-training augmentation on a single
// photo — a random crop of 20 % to 100 % of its area with an aspect ratio between 3/4 and 4/3,
// scaled to side × side pixels (stb_image_resize), flipped left–right half the time — and for
// each crop a random mask of round(ratio·N) of its N patches (MAE's per-image shuffle; the
// chapter's random mask, section 26.10, drops them as keys). Normalized with the photo's own
// per-channel mean and standard deviation. The whole photo, scaled so that its short side is
// `side` and centre-cropped, is one such crop (of scale 1): the probe the app's maps are of.
#include "core/io/image.hpp"
#include "core/base/types.hpp"
#include "core/vit/vit_train.hpp"

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace attnlab {

class PhotoCrops {
 public:
  /// `photo`: RGB in [0, 1], any size (crops are scaled). `side` a positive multiple of `patch`
  /// with at least 2 patches; `mask_ratio` in (0, 1), rounded to at least one patch masked and one
  /// visible. Throws Error otherwise, or for an empty photo.
  PhotoCrops(Image photo, int side, int patch, float mask_ratio, std::uint64_t seed);

  int side() const { return side_; }
  int patch() const { return patch_; }
  int N() const { return (side_ / patch_) * (side_ / patch_); }  ///< patches per crop
  int masked_per_image() const { return masked_; }               ///< round(ratio·N), within [1, N − 1]
  const std::array<float, 3>& mean() const { return mean_; }     ///< the photo's per-channel mean
  const std::array<float, 3>& std() const { return std_; }       ///< its standard deviation (at least 1e-3)

  /// The next `count` crops as the model's input: count·3·side·side floats ((channel, y, x) per
  /// image, normalized), and their masks, count·N bytes (1: the patch is masked), raster order.
  void next(int count, std::vector<float>& images, std::vector<std::uint8_t>& masked);

  /// The whole photo as one crop: its short side scaled to `side`, the centre square, RGB in [0, 1].
  Image whole() const;
  /// `image` (side × side, RGB in [0, 1]) as the model's input: 3·side·side normalized floats into `out`.
  void input(const Image& image, float* out) const;
  /// A mask drawn from `seed` alone (N bytes): the same for every call with that seed.
  std::vector<std::uint8_t> mask(std::uint64_t seed) const;

 private:
  void draw_mask(std::uint64_t& state, std::uint8_t* out) const;
  Image photo_;
  int side_, patch_, masked_;
  std::array<float, 3> mean_{}, std_{};
  std::uint64_t state_;
};

/// One crop as the masked-patch model sees it and gives it back, side × side RGB in [0, 1]:
/// `masked` the crop with its masked patches grey (0.5), `reconstructed` its visible patches
/// as they are and the masked ones as predicted, `original` the crop.
struct MaskedPatchPictures {
  Image masked, reconstructed, original;
};

/// The pictures of `crop` (side × side, RGB in [0, 1]) under `mask` (N bytes, raster order)
/// from `predicted`, N × 3P² rows of VitTrainer::reconstruct (each a patch's pixels in
/// (channel, y, x) order, normalized as `crops` normalizes): un-normalized and clamped to
/// [0, 1]. Throws Error when the sizes do not match `crops`.
MaskedPatchPictures masked_patch_pictures(const PhotoCrops& crops, const Image& crop, std::span<const std::uint8_t> mask,
                                          const Matrix& predicted);

/// What training on masked patches of one photo needs (VitTask::MaskedPatches), shared by
/// `attnlab train --task masked` and the window's Train tab: the random crops, a fixed set of
/// crops and masks to measure the loss on (drawn once from a seed of their own: the same at every
/// evaluation, so the curve shows the model, not the draw), and the whole photo as the probe with
/// a fixed mask for the reconstruction pictures.
class MaskedPatchData {
 public:
  /// The crops of `photo` for a model of `shape` (image_cols the crop side, patch, mask_ratio),
  /// seeded by `seed`; `fixed` crops for the loss. Throws Error as PhotoCrops does.
  MaskedPatchData(const Image& photo, const VitTrainShape& shape, std::uint64_t seed, int fixed = 128);

  const PhotoCrops& crops() const { return crops_; }
  /// The next `batch` crops through one training step (VitTrainer::train_step_masked).
  VitStepStats train_step(VitTrainer& trainer, int batch);
  /// The mean squared error over the fixed crops' masked pixels (VitTrainer::reconstruct).
  double fixed_loss(VitTrainer& trainer) const;
  /// The whole photo at the crop size (PhotoCrops::whole): what the app's maps are of.
  const Image& probe() const { return probe_; }
  /// The probe under its fixed mask (seed 1): masked, reconstructed by `trainer`, original.
  MaskedPatchPictures probe_pictures(VitTrainer& trainer) const;

 private:
  PhotoCrops crops_;
  std::vector<float> fixed_images_, images_;
  std::vector<std::uint8_t> fixed_masks_, masks_;
  int fixed_;
  Image probe_;
  std::vector<float> probe_input_;
  std::vector<std::uint8_t> probe_mask_;
};

}  // namespace attnlab
