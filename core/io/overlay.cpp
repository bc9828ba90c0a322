#include "core/io/overlay.hpp"

#include <algorithm>
#include <cmath>

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

namespace attnlab {

std::vector<std::uint8_t> overlay_heat_map(const Image& photo, std::span<const float> values, int cols, int rows,
                                           Colormap colormap, Normalization normalization, float opacity,
                                           bool bilinear) {
  return overlay_heat_map_on_grid(photo, values, cols, rows, photo.width, photo.height, colormap, normalization,
                                  opacity, bilinear);
}

std::vector<std::uint8_t> overlay_heat_map_on_grid(const Image& photo, std::span<const float> values, int cols,
                                                   int rows, int grid_width, int grid_height, Colormap colormap,
                                                   Normalization normalization, float opacity, bool bilinear) {
  // TRANSLATORS: "overlay" is the heat map drawn over the photo (an internal check).
  if (photo.empty()) throw Error(_("overlay: the photo is empty"));
  if (grid_width < 1 || grid_height < 1)
    // TRANSLATORS: an internal check; %dx%d is a width and a height in pixels.
    throw Error(text_format(_("overlay: a grid of %dx%d pixels"), grid_width, grid_height));
  if (cols < 1 || rows < 1 || values.size() != static_cast<std::size_t>(cols) * rows)
    // TRANSLATORS: an internal check; %1$zu values for a grid of %2$d columns and %3$d rows of patches.
    throw Error(text_format(_("overlay: %zu values for a %dx%d grid"), values.size(), cols, rows));
  const std::vector<std::uint8_t> rgba = apply_colormap(values, {}, colormap, normalization);  // cols·rows × 4
  const float a = std::clamp(opacity, 0.0f, 1.0f);
  const int W = photo.width, H = photo.height;
  const float gw = static_cast<float>(grid_width), gh = static_cast<float>(grid_height);
  std::vector<std::uint8_t> out(static_cast<std::size_t>(W) * H * 3);
  auto colour = [&](int c, int r, int ch) {
    return static_cast<float>(rgba[(static_cast<std::size_t>(r) * cols + c) * 4 + ch]);
  };
  for (int y = 0; y < H; ++y) {
    // The patch row of this pixel and, for bilinear, its position between patch centres.
    const float gy = (static_cast<float>(y) + 0.5f) * static_cast<float>(rows) / gh;
    const int r = std::min(rows - 1, static_cast<int>(gy));
    const float fy = std::clamp(gy - 0.5f, 0.0f, static_cast<float>(rows - 1));
    const int r0 = static_cast<int>(fy), r1 = std::min(rows - 1, r0 + 1);
    const float ty = fy - static_cast<float>(r0);
    for (int x = 0; x < W; ++x) {
      const float gx = (static_cast<float>(x) + 0.5f) * static_cast<float>(cols) / gw;
      const bool outside = x >= grid_width || y >= grid_height;  // past a cropped grid: the photo as it is
      const int c = std::min(cols - 1, static_cast<int>(gx));
      const float fx = std::clamp(gx - 0.5f, 0.0f, static_cast<float>(cols - 1));
      const int c0 = static_cast<int>(fx), c1 = std::min(cols - 1, c0 + 1);
      const float tx = fx - static_cast<float>(c0);
      for (int ch = 0; ch < 3; ++ch) {
        const float heat = bilinear ? (1 - ty) * ((1 - tx) * colour(c0, r0, ch) + tx * colour(c1, r0, ch)) +
                                          ty * ((1 - tx) * colour(c0, r1, ch) + tx * colour(c1, r1, ch))
                                    : colour(c, r, ch);
        const float pixel = 255.0f * std::clamp(photo.at(x, y, ch), 0.0f, 1.0f);
        const float v = outside ? pixel : (1 - a) * pixel + a * heat;
        out[(static_cast<std::size_t>(y) * W + x) * 3 + ch] =
            static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.0f, 255.0f)));
      }
    }
  }
  return out;
}

Image crop_image(const Image& image, int width, int height) {
  Image out;
  out.width = std::clamp(width, 0, image.width);
  out.height = std::clamp(height, 0, image.height);
  out.rgb.resize(static_cast<std::size_t>(out.width) * out.height * 3);
  for (int y = 0; y < out.height; ++y)
    std::copy_n(image.rgb.begin() + static_cast<std::ptrdiff_t>(y) * image.width * 3, out.width * 3,
                out.rgb.begin() + static_cast<std::ptrdiff_t>(y) * out.width * 3);
  return out;
}

}  // namespace attnlab
