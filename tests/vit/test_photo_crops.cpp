// The masked-patch task's data (core/vit/photo_crops): crops of one photo, their masks, the whole
// photo as a probe; seeded and checked against what they must be.
#include "core/base/error.hpp"
#include "core/vit/photo_crops.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace attnlab {
namespace {

TEST(PhotoCrops, MasksHoldTheRatiosShareAndCropsAreNormalizedWithThePhotosStatistics) {
  const Image& photo = testing::safari();
  PhotoCrops crops(photo, 64, 8, 0.75f, 3);
  EXPECT_EQ(crops.N(), 64);
  EXPECT_EQ(crops.masked_per_image(), 48);
  // The photo's own mean and std per channel, recomputed here.
  for (int c = 0; c < 3; ++c) {
    double sum = 0.0, sq = 0.0;
    for (int y = 0; y < photo.height; ++y)
      for (int x = 0; x < photo.width; ++x) sum += photo.at(x, y, c), sq += static_cast<double>(photo.at(x, y, c)) * photo.at(x, y, c);
    const double n = static_cast<double>(photo.width) * photo.height, m = sum / n;
    EXPECT_NEAR(crops.mean()[static_cast<std::size_t>(c)], m, 1e-5);
    EXPECT_NEAR(crops.std()[static_cast<std::size_t>(c)], std::sqrt(sq / n - m * m), 1e-4);
  }
  std::vector<float> images;
  std::vector<std::uint8_t> masked;
  crops.next(32, images, masked);
  ASSERT_EQ(images.size(), 32u * 3 * 64 * 64);
  ASSERT_EQ(masked.size(), 32u * 64);
  std::vector<int> per_patch(64, 0);
  for (int b = 0; b < 32; ++b) {
    int count = 0;
    for (int p = 0; p < 64; ++p) count += masked[static_cast<std::size_t>(b) * 64 + p], per_patch[static_cast<std::size_t>(p)] += masked[static_cast<std::size_t>(b) * 64 + p];
    EXPECT_EQ(count, 48);
  }
  // Not the same mask every time: every patch is masked in some crop and visible in another.
  for (const int n : per_patch) EXPECT_TRUE(n > 0 && n < 32);
  // Crops are scaled pixels of the photo: back in [0, 1] after undoing the normalization, and
  // their mean over many crops near the photo's (0 after normalizing).
  double mean0 = 0.0;
  for (int b = 0; b < 32; ++b)
    for (int i = 0; i < 64 * 64; ++i) {
      const float v = images[static_cast<std::size_t>(b) * 3 * 4096 + i];
      const float pixel = v * crops.std()[0] + crops.mean()[0];
      EXPECT_GE(pixel, -1e-5f);
      EXPECT_LE(pixel, 1.0f + 1e-5f);
      mean0 += v;
    }
  EXPECT_LT(std::abs(mean0 / (32.0 * 4096)), 0.5);
}

TEST(PhotoCrops, TheSameSeedGivesTheSameCropsAndTheWholePhotoIsItsCentreSquare) {
  const Image& photo = testing::safari();
  PhotoCrops a(photo, 32, 4, 0.5f, 9), b(photo, 32, 4, 0.5f, 9), c(photo, 32, 4, 0.5f, 10);
  std::vector<float> ia, ib, ic;
  std::vector<std::uint8_t> ma, mb, mc;
  a.next(4, ia, ma);
  b.next(4, ib, mb);
  c.next(4, ic, mc);
  EXPECT_EQ(ia, ib);
  EXPECT_EQ(ma, mb);
  EXPECT_NE(ia, ic);
  EXPECT_EQ(a.mask(5), b.mask(5));
  EXPECT_NE(a.mask(5), a.mask(6));
  // The safari photo is square (500 × 500): the whole photo scaled to 32 px; each output pixel
  // is near the mean of its 15.6-pixel block.
  const Image whole = a.whole();
  ASSERT_EQ(whole.width, 32);
  ASSERT_EQ(whole.height, 32);
  double worst = 0.0;
  for (int y = 2; y < 30; y += 7)
    for (int x = 2; x < 30; x += 7) {
      double sum = 0.0;
      int n = 0;
      for (int py = static_cast<int>(y * 500.0 / 32); py < static_cast<int>((y + 1) * 500.0 / 32); ++py)
        for (int px = static_cast<int>(x * 500.0 / 32); px < static_cast<int>((x + 1) * 500.0 / 32); ++px) sum += photo.at(px, py, 1), ++n;
      worst = std::max(worst, std::abs(whole.at(x, y, 1) - sum / n));
    }
  EXPECT_LT(worst, 0.12);  // a smooth filter over neighbours, not a box: close, not equal
  std::vector<float> input(3 * 32 * 32);
  a.input(whole, input.data());
  EXPECT_NEAR(input[0], (whole.at(0, 0, 0) - a.mean()[0]) / a.std()[0], 1e-6);
  EXPECT_NEAR(input[2 * 1024 + 5 * 32 + 7], (whole.at(7, 5, 2) - a.mean()[2]) / a.std()[2], 1e-6);
}

TEST(PhotoCrops, RefusesWhatCannotWork) {
  const Image& photo = testing::safari();
  EXPECT_THROW(PhotoCrops(photo, 30, 8, 0.5f, 1), Error);  // 8 does not divide 30
  EXPECT_THROW(PhotoCrops(photo, 8, 8, 0.5f, 1), Error);   // one patch
  EXPECT_THROW(PhotoCrops(photo, 32, 8, 1.0f, 1), Error);
  EXPECT_THROW(PhotoCrops(Image{}, 32, 8, 0.5f, 1), Error);
  PhotoCrops crops(photo, 16, 8, 0.01f, 1);  // rounds to at least one masked patch
  EXPECT_EQ(crops.masked_per_image(), 1);
  Image small;
  small.width = small.height = 8;
  small.rgb.assign(8 * 8 * 3, 0.5f);
  std::vector<float> out(3 * 16 * 16);
  EXPECT_THROW(crops.input(small, out.data()), Error);
}

// With the true patches as the prediction, the reconstruction is the crop again; the masked
// picture is grey exactly where the mask says, and the crop elsewhere.
TEST(PhotoCrops, ReconstructionPicturesPutThePredictedPixelsInTheMaskedPatches) {
  const Image& photo = testing::safari();
  PhotoCrops crops(photo, 16, 8, 0.5f, 4);
  const Image crop = crops.whole();
  std::vector<float> input(3 * 16 * 16);
  crops.input(crop, input.data());
  Matrix truth(4, 3 * 64);
  for (int p = 0; p < 4; ++p)
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 8; ++x) truth(p, (c * 8 + y) * 8 + x) = input[static_cast<std::size_t>(c) * 256 + ((p / 2) * 8 + y) * 16 + (p % 2) * 8 + x];
  const std::vector<std::uint8_t> mask = {0, 1, 1, 0};
  const MaskedPatchPictures pics = masked_patch_pictures(crops, crop, mask, truth);
  double worst = 0.0;
  for (std::size_t i = 0; i < crop.rgb.size(); ++i) worst = std::max(worst, static_cast<double>(std::abs(pics.reconstructed.rgb[i] - crop.rgb[i])));
  EXPECT_LT(worst, 1e-5);
  EXPECT_EQ(pics.original.rgb, crop.rgb);
  EXPECT_EQ(pics.masked.at(12, 3, 1), 0.5f);   // patch 1: (1, 0), masked
  EXPECT_EQ(pics.masked.at(3, 12, 0), 0.5f);   // patch 2: (0, 1), masked
  EXPECT_EQ(pics.masked.at(3, 3, 2), crop.at(3, 3, 2));      // patch 0, visible
  EXPECT_EQ(pics.masked.at(12, 12, 0), crop.at(12, 12, 0));  // patch 3, visible
  // A prediction of zeros is the photo's mean colour in the masked patches (then clamped).
  const MaskedPatchPictures mean = masked_patch_pictures(crops, crop, mask, Matrix::Zero(4, 192));
  EXPECT_NEAR(mean.reconstructed.at(12, 3, 0), crops.mean()[0], 1e-6);
  EXPECT_EQ(mean.reconstructed.at(3, 3, 0), crop.at(3, 3, 0));
  EXPECT_THROW(masked_patch_pictures(crops, crop, std::vector<std::uint8_t>{1, 0}, truth), Error);
}

// The task's data as the CLI and the Train tab use it: the fixed crops' loss is the same at every
// evaluation (the curve shows the model, not the draw) and falls as a tiny model trains; the
// probe is the whole photo and its pictures are the crop's size.
TEST(MaskedPatchData, TheFixedLossIsStableAndFallsAsATinyModelTrains) {
  const VitTrainShape shape{.image_rows = 32, .image_cols = 32, .patch = 8, .D = 32, .depth = 1, .heads = 2,
                            .mlp_hidden = 64, .pos = VitPosKind::Sincos, .task = VitTask::MaskedPatches};
  VitTrainSettings settings;
  settings.lr = 3e-3;
  settings.warmup_steps = 5;
  settings.total_steps = 60;
  VitTrainer trainer(shape, settings, 1, 1);
  MaskedPatchData data(testing::safari(), shape, 2, 32);
  const double before = data.fixed_loss(trainer);
  EXPECT_EQ(before, data.fixed_loss(trainer));
  for (int s = 0; s < 60; ++s) data.train_step(trainer, 16);
  const double after = data.fixed_loss(trainer);
  EXPECT_LT(after, 0.9 * before) << before << " → " << after;
  const MaskedPatchPictures pics = data.probe_pictures(trainer);
  EXPECT_EQ(pics.reconstructed.width, 32);
  EXPECT_EQ(pics.original.rgb, data.probe().rgb);
  EXPECT_EQ(data.probe().rgb, data.crops().whole().rgb);
}

}  // namespace
}  // namespace attnlab
