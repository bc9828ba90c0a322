// The image as a ViT sees it: scaled, cropped to whole patches, normalized (with the mean and std
// the loader took from the config files or the model family); and the position embedding
// resampled to its patch grid as the model family's library does it (ModelFamily::input,
// core/vit/model_family.hpp: timm's antialiased bicubic, or Hugging Face's plain bicubic).
#include "core/vit/vit.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/vit/model_family.hpp"

#include <stb_image_resize.h>

#include <algorithm>
#include <cmath>

namespace attnlab {

Image vit_scaled_image(const Image& image, int resize) {
  if (resize <= 0 || std::min(image.width, image.height) == resize) return image;
  Image scaled;
  // The short side becomes `resize`, the long one keeps the aspect ratio (rounded).
  const bool portrait = image.width <= image.height;
  const double f = static_cast<double>(resize) / (portrait ? image.width : image.height);
  scaled.width = portrait ? resize : std::max(1, static_cast<int>(std::lround(image.width * f)));
  scaled.height = portrait ? std::max(1, static_cast<int>(std::lround(image.height * f))) : resize;
  if (static_cast<std::int64_t>(scaled.width) * scaled.height > kMaxImagePixels)
    throw Error(text_format(_("--resize %d makes the image larger than the largest accepted"), resize));
  scaled.rgb.resize(static_cast<std::size_t>(scaled.width) * scaled.height * 3);
  if (!stbir_resize_float(image.rgb.data(), image.width, image.height, 0, scaled.rgb.data(), scaled.width, scaled.height, 0, 3))
    throw Error(_("the image could not be resized"));
  for (float& v : scaled.rgb) v = std::clamp(v, 0.0f, 1.0f);
  return scaled;
}

VitInput vit_input(const VitModel& model, const Image& image, int resize) {
  const int P = model.arch.patch;
  if (resize < 0) throw Error(_("--resize must be a positive number of pixels"));
  // A picture with no pixels (an empty probe photo): stb's resampler asserts on it.
  if (image.width <= 0 || image.height <= 0 ||
      image.rgb.size() != static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) * 3)
    throw Error(text_format(_("the image has no pixels (%dx%d)"), image.width, image.height));
  const Image* src = &image;
  Image scaled;
  if (resize > 0 && std::min(image.width, image.height) != resize) {
    scaled = vit_scaled_image(image, resize);
    src = &scaled;
  }
  VitInput in;
  in.cols = src->width / P;
  in.rows = src->height / P;
  if (in.cols < 1 || in.rows < 1)
    throw Error(text_format(_("the image (%d×%d pixels) is smaller than one %d×%d patch of the model"), src->width, src->height,
                            P, P));
  in.width = in.cols * P;
  in.height = in.rows * P;
  in.scaled_width = src->width;
  in.scaled_height = src->height;
  in.patches.resize(in.N(), 3 * P * P);
  const auto& mean = model.arch.mean;
  const auto& sd = model.arch.std;
  for (int r = 0; r < in.rows; ++r)
    for (int c = 0; c < in.cols; ++c) {
      float* row = in.patches.row(r * in.cols + c).data();
      for (int ch = 0; ch < 3; ++ch)
        for (int y = 0; y < P; ++y)
          for (int x = 0; x < P; ++x)
            row[(ch * P + y) * P + x] = (src->at(c * P + x, r * P + y, ch) - mean[static_cast<std::size_t>(ch)]) /
                                        sd[static_cast<std::size_t>(ch)];
    }
  return in;
}

namespace {

/// Keys' cubic convolution kernel W(x) with parameter a (a = −0.5 in PyTorch's antialiased
/// bicubic, −0.75 in its plain bicubic).
float keys_cubic(float x, float a) {
  x = std::abs(x);
  if (x < 1.0f) return ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f;
  if (x < 2.0f) return (((x - 5.0f) * x + 8.0f) * x - 4.0f) * a;
  return 0.0f;
}

/// Resampling weights along one axis, in float32 as PyTorch 1.13–2.x computes them on the CPU
/// (aten/src/ATen/native/cpu/UpSampleKernel.cpp): out[i] = Σ_k w[i][k] in[first[i] + k].
struct AxisWeights {
  std::vector<int> first;
  std::vector<std::vector<float>> w;
  std::vector<std::vector<int>> index;  ///< the input index of each weight (clamped for plain bicubic)
};

/// F.interpolate(mode="bicubic", antialias=True, align_corners=False): _compute_weights_aa with
/// the aa_filter (a = −0.5): support 2·max(scale, 1), weights normalized to sum 1, taps outside
/// the input left out.
AxisWeights weights_antialiased(int in, int out) {
  AxisWeights a;
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  const float support = scale >= 1.0f ? 2.0f * scale : 2.0f;
  const float invscale = scale >= 1.0f ? 1.0f / scale : 1.0f;
  for (int i = 0; i < out; ++i) {
    const float center = scale * (static_cast<float>(i) + 0.5f);
    const int xmin = std::max(static_cast<int>(center - support + 0.5f), 0);
    const int xsize = std::min(static_cast<int>(center + support + 0.5f), in) - xmin;
    std::vector<float> w(static_cast<std::size_t>(std::max(xsize, 0)));
    std::vector<int> idx(w.size());
    float total = 0.0f;
    for (int j = 0; j < xsize; ++j) {
      w[static_cast<std::size_t>(j)] = keys_cubic((static_cast<float>(j + xmin) - center + 0.5f) * invscale, -0.5f);
      idx[static_cast<std::size_t>(j)] = xmin + j;
      total += w[static_cast<std::size_t>(j)];
    }
    if (total != 0.0f)
      for (float& v : w) v /= total;
    a.w.push_back(std::move(w));
    a.index.push_back(std::move(idx));
  }
  return a;
}

/// F.interpolate(mode="bicubic", align_corners=False) without antialias: source x =
/// scale·(i + 0.5) − 0.5 (not clamped), four taps at ⌊x⌋−1 … ⌊x⌋+2 clamped to the edge, a = −0.75.
AxisWeights weights_bicubic(int in, int out) {
  AxisWeights a;
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (int i = 0; i < out; ++i) {
    const float x = scale * (static_cast<float>(i) + 0.5f) - 0.5f;
    const int x0 = static_cast<int>(std::floor(x));
    const float t = x - static_cast<float>(x0);
    std::vector<float> w = {keys_cubic(t + 1.0f, -0.75f), keys_cubic(t, -0.75f), keys_cubic(1.0f - t, -0.75f),
                            keys_cubic(2.0f - t, -0.75f)};
    std::vector<int> idx(4);
    for (int k = 0; k < 4; ++k) idx[static_cast<std::size_t>(k)] = std::clamp(x0 - 1 + k, 0, in - 1);
    a.w.push_back(std::move(w));
    a.index.push_back(std::move(idx));
  }
  return a;
}

/// Resamples a grid of vectors (rows_in × cols_in, each D wide, raster order) to rows_out ×
/// cols_out: along x first, then y (the order of PyTorch's separable antialiased kernel; the
/// plain bicubic sums the same products, rounding aside).
Matrix resample_grid(const Matrix& grid, int rows_in, int cols_in, int rows_out, int cols_out, bool antialias) {
  const Eigen::Index D = grid.cols();
  Matrix horizontal = grid;
  if (cols_out != cols_in) {
    const AxisWeights ax = antialias ? weights_antialiased(cols_in, cols_out) : weights_bicubic(cols_in, cols_out);
    horizontal = Matrix::Zero(static_cast<Eigen::Index>(rows_in) * cols_out, D);
    for (int r = 0; r < rows_in; ++r)
      for (int c = 0; c < cols_out; ++c)
        for (std::size_t k = 0; k < ax.w[static_cast<std::size_t>(c)].size(); ++k)
          horizontal.row(r * cols_out + c) += ax.w[static_cast<std::size_t>(c)][k] * grid.row(r * cols_in + ax.index[static_cast<std::size_t>(c)][k]);
  }
  if (rows_out == rows_in) return horizontal;
  const AxisWeights ay = antialias ? weights_antialiased(rows_in, rows_out) : weights_bicubic(rows_in, rows_out);
  Matrix out = Matrix::Zero(static_cast<Eigen::Index>(rows_out) * cols_out, D);
  for (int r = 0; r < rows_out; ++r)
    for (int c = 0; c < cols_out; ++c)
      for (std::size_t k = 0; k < ay.w[static_cast<std::size_t>(r)].size(); ++k)
        out.row(r * cols_out + c) += ay.w[static_cast<std::size_t>(r)][k] * horizontal.row(ay.index[static_cast<std::size_t>(r)][k] * cols_out + c);
  return out;
}

int covered_prefix(const VitArchitecture& a) {
  switch (a.pos_layout) {
    case PosLayout::AllTokens: return a.prefix();
    case PosLayout::ClsAndPatches: return 1;
    case PosLayout::PatchesOnly: return 0;
  }
  return 0;
}

}  // namespace

Matrix vit_position_embedding(const VitModel& model, int rows, int cols) {
  const VitArchitecture& a = model.arch;
  if (rows == a.pos_rows && cols == a.pos_cols) return model.pos;
  const int pre = covered_prefix(a);
  const Matrix patches = model.pos.bottomRows(model.pos.rows() - pre);
  const bool antialias = model_family(a.naming).input.antialiased_positions;  // timm's and DINOv2's; not HF's
  Matrix out(pre + static_cast<Eigen::Index>(rows) * cols, model.pos.cols());
  out.topRows(pre) = model.pos.topRows(pre);
  out.bottomRows(static_cast<Eigen::Index>(rows) * cols) = resample_grid(patches, a.pos_rows, a.pos_cols, rows, cols, antialias);
  return out;
}

Matrix vit_initial_tokens(const VitModel& model, const Matrix& patch_tokens, const Matrix& pos) {
  const VitArchitecture& a = model.arch;
  const Eigen::Index N = patch_tokens.rows(), R = a.registers, pre = a.prefix();
  Matrix X(pre + N, a.D);
  X.row(0) = model.cls;
  if (R) X.middleRows(1, R) = model.registers;
  X.bottomRows(N) = patch_tokens;
  switch (a.pos_layout) {
    case PosLayout::AllTokens: X += pos; break;
    case PosLayout::ClsAndPatches:
      X.row(0) += pos.row(0);
      X.bottomRows(N) += pos.bottomRows(N);
      break;
    case PosLayout::PatchesOnly: X.bottomRows(N) += pos; break;
  }
  return X;
}

}  // namespace attnlab
