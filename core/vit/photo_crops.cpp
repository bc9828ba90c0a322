#include "core/vit/photo_crops.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/base/splitmix.hpp"

#include <stb_image_resize.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnlab {

namespace {

/// The (w × h) region at (x0, y0) of `photo`, scaled to side × side (stb_image_resize's default filter).
Image scaled_region(const Image& photo, int x0, int y0, int w, int h, int side) {
  Image out;
  out.width = out.height = side;
  out.rgb.resize(static_cast<std::size_t>(side) * side * 3);
  const float* src = photo.rgb.data() + (static_cast<std::size_t>(y0) * photo.width + x0) * 3;
  if (!stbir_resize_float(src, w, h, photo.width * 3 * static_cast<int>(sizeof(float)), out.rgb.data(), side, side, 0, 3))
    throw Error(_("the photo could not be scaled for training"));
  for (float& v : out.rgb) v = std::clamp(v, 0.0f, 1.0f);  // the filter overshoots a little at edges
  return out;
}

}  // namespace

PhotoCrops::PhotoCrops(Image photo, int side, int patch, float mask_ratio, std::uint64_t seed)
    : photo_(std::move(photo)), side_(side), patch_(patch), state_(seed) {
  if (photo_.empty()) throw Error(_("no photo to train on"));
  if (patch <= 0 || side <= 0 || side % patch != 0)
    throw Error(text_format(_("the crop side %d is no positive multiple of the patch size %d"), side, patch));
  if (!(mask_ratio > 0.0f && mask_ratio < 1.0f)) throw Error(_("the mask ratio must be between 0 and 1 (exclusive)"));
  if (N() < 2) throw Error(_("a crop of one patch leaves nothing visible to reconstruct it from"));
  masked_ = std::clamp(static_cast<int>(std::lround(mask_ratio * static_cast<float>(N()))), 1, N() - 1);
  const double pixels = static_cast<double>(photo_.width) * photo_.height;
  for (int c = 0; c < 3; ++c) {
    double sum = 0.0, sq = 0.0;
    for (std::size_t i = static_cast<std::size_t>(c); i < photo_.rgb.size(); i += 3) {
      sum += photo_.rgb[i];
      sq += static_cast<double>(photo_.rgb[i]) * photo_.rgb[i];
    }
    const double m = sum / pixels;
    mean_[static_cast<std::size_t>(c)] = static_cast<float>(m);
    std_[static_cast<std::size_t>(c)] = static_cast<float>(std::max(std::sqrt(std::max(sq / pixels - m * m, 0.0)), 1e-3));
  }
}

void PhotoCrops::draw_mask(std::uint64_t& state, std::uint8_t* out) const {
  // A random permutation's first `masked_` patches (Fisher–Yates).
  std::vector<int> order(static_cast<std::size_t>(N()));
  std::iota(order.begin(), order.end(), 0);
  splitmix64_shuffle(order.begin(), order.size(), state);
  std::fill(out, out + N(), std::uint8_t{0});
  for (int i = 0; i < masked_; ++i) out[order[static_cast<std::size_t>(i)]] = 1;
}

void PhotoCrops::next(int count, std::vector<float>& images, std::vector<std::uint8_t>& masked) {
  const std::size_t image_size = 3ull * side_ * side_;
  images.resize(image_size * static_cast<std::size_t>(count));
  masked.resize(static_cast<std::size_t>(count) * N());
  const double area = static_cast<double>(photo_.width) * photo_.height;
  for (int b = 0; b < count; ++b) {
    // torchvision's RandomResizedCrop: ten tries at a scale in [0.2, 1] and a log-uniform ratio
    // in [3/4, 4/3]; the centre square of the short side if none fits.
    int w = std::min(photo_.width, photo_.height), h = w, x0 = (photo_.width - w) / 2, y0 = (photo_.height - h) / 2;
    for (int attempt = 0; attempt < 10; ++attempt) {
      const double target = area * (0.2 + 0.8 * splitmix64_uniform(state_));
      const double ratio = std::exp(std::log(3.0 / 4.0) + (std::log(4.0 / 3.0) - std::log(3.0 / 4.0)) * splitmix64_uniform(state_));
      const int cw = static_cast<int>(std::lround(std::sqrt(target * ratio))), ch = static_cast<int>(std::lround(std::sqrt(target / ratio)));
      if (cw < 1 || ch < 1 || cw > photo_.width || ch > photo_.height) continue;
      w = cw;
      h = ch;
      x0 = static_cast<int>(splitmix64(state_) % static_cast<std::uint64_t>(photo_.width - w + 1));
      y0 = static_cast<int>(splitmix64(state_) % static_cast<std::uint64_t>(photo_.height - h + 1));
      break;
    }
    Image crop = scaled_region(photo_, x0, y0, w, h, side_);
    if (splitmix64_uniform(state_) < 0.5)
      for (int y = 0; y < side_; ++y)
        for (int x = 0; x < side_ / 2; ++x)
          for (int c = 0; c < 3; ++c) std::swap(crop.at(x, y, c), crop.at(side_ - 1 - x, y, c));
    input(crop, images.data() + image_size * b);
    draw_mask(state_, masked.data() + static_cast<std::size_t>(b) * N());
  }
}

Image PhotoCrops::whole() const {
  const int s = std::min(photo_.width, photo_.height);
  return scaled_region(photo_, (photo_.width - s) / 2, (photo_.height - s) / 2, s, s, side_);
}

void PhotoCrops::input(const Image& image, float* out) const {
  if (image.width != side_ || image.height != side_)
    // TRANSLATORS: "a 64×48 image is not a 32-pixel crop" (a square crop of that side).
    throw Error(text_format(_("a %d×%d image is not a %d-pixel crop"), image.width, image.height, side_));
  const std::size_t plane = static_cast<std::size_t>(side_) * side_;
  for (int c = 0; c < 3; ++c)
    for (std::size_t i = 0; i < plane; ++i)
      out[static_cast<std::size_t>(c) * plane + i] = (image.rgb[i * 3 + static_cast<std::size_t>(c)] - mean_[static_cast<std::size_t>(c)]) /
                                                      std_[static_cast<std::size_t>(c)];
}

std::vector<std::uint8_t> PhotoCrops::mask(std::uint64_t seed) const {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(N()));
  std::uint64_t state = seed;
  draw_mask(state, out.data());
  return out;
}

MaskedPatchPictures masked_patch_pictures(const PhotoCrops& crops, const Image& crop, std::span<const std::uint8_t> mask,
                                          const Matrix& predicted) {
  const int side = crops.side(), P = crops.patch(), g = side / P, N = crops.N();
  if (crop.width != side || crop.height != side || mask.size() != static_cast<std::size_t>(N) || predicted.rows() != N ||
      predicted.cols() != 3 * P * P)
    throw Error(text_format(_("the reconstruction's sizes do not match a %d-pixel crop of %d patches"), side, N));
  MaskedPatchPictures out{crop, crop, crop};
  for (int p = 0; p < N; ++p) {
    if (!mask[static_cast<std::size_t>(p)]) continue;
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < P; ++y)
        for (int x = 0; x < P; ++x) {
          const int px = (p % g) * P + x, py = (p / g) * P + y;
          const float v = predicted(p, (c * P + y) * P + x) * crops.std()[static_cast<std::size_t>(c)] + crops.mean()[static_cast<std::size_t>(c)];
          out.reconstructed.at(px, py, c) = std::clamp(v, 0.0f, 1.0f);
          out.masked.at(px, py, c) = 0.5f;
        }
  }
  return out;
}

MaskedPatchData::MaskedPatchData(const Image& photo, const VitTrainShape& shape, std::uint64_t seed, int fixed)
    : crops_(photo, shape.image_cols, shape.patch, shape.mask_ratio, seed), fixed_(fixed), probe_(crops_.whole()) {
  PhotoCrops(photo, shape.image_cols, shape.patch, shape.mask_ratio, seed + 1000003).next(fixed_, fixed_images_, fixed_masks_);
  probe_input_.resize(3ull * crops_.side() * crops_.side());
  crops_.input(probe_, probe_input_.data());
  probe_mask_ = crops_.mask(1);
}

VitStepStats MaskedPatchData::train_step(VitTrainer& trainer, int batch) {
  crops_.next(batch, images_, masks_);
  return trainer.train_step_masked(images_, masks_);
}

double MaskedPatchData::fixed_loss(VitTrainer& trainer) const {
  double loss = 0.0;
  trainer.reconstruct(fixed_images_, fixed_masks_, fixed_, &loss);
  return loss;
}

MaskedPatchPictures MaskedPatchData::probe_pictures(VitTrainer& trainer) const {
  return masked_patch_pictures(crops_, probe_, probe_mask_, trainer.reconstruct(probe_input_, probe_mask_, 1));
}

}  // namespace attnlab
