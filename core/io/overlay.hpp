#pragma once
// A heat map drawn over a photo in 8-bit RGB, without a window: the picture `attnlab video`
// writes for each frame and `render --model --view overlay` for a still (issue 40).
#include <cstdint>
#include <span>
#include <vector>

#include "core/base/colormap.hpp"
#include "core/io/image.hpp"

namespace attnlab {

/// `values` (cols × rows, raster order, one per patch) coloured with `colormap` under
/// `normalization` (apply_colormap(): the map's own range) and blended over `photo`:
/// pixel = (1 − opacity)·photo + opacity·colour, per channel, rounded to 8 bits. The grid covers
/// the whole photo (photo.width/cols pixels a patch, photo.height/rows); each pixel takes its
/// patch's colour, or with `bilinear` the colours of the four nearest patch centres blended
/// (clamped at the border), as the app's "bilinear" switch draws maps. Returns
/// photo.width × photo.height × 3 bytes. Throws Error when values.size() != cols·rows or the
/// photo is empty.
std::vector<std::uint8_t> overlay_heat_map(const Image& photo, std::span<const float> values, int cols, int rows,
                                           Colormap colormap, Normalization normalization, float opacity,
                                           bool bilinear);

/// As overlay_heat_map(), but the grid covers the top-left `grid_width` × `grid_height` pixels
/// (grid_width/cols × grid_height/rows pixels a patch: the hand-made heads' K × K patches give
/// cols·K × rows·K), not necessarily the whole photo. A grid that stops short of the photo's
/// edge (--edge crop: the pixels past the last whole patch) leaves those pixels the photo's own;
/// one that reaches past it (--edge pad) is drawn where it is over the photo. Returns
/// photo.width × photo.height × 3 bytes. Throws Error as overlay_heat_map() does, and when
/// grid_width or grid_height is below 1.
std::vector<std::uint8_t> overlay_heat_map_on_grid(const Image& photo, std::span<const float> values, int cols,
                                                   int rows, int grid_width, int grid_height, Colormap colormap,
                                                   Normalization normalization, float opacity, bool bilinear);

/// The top-left `width` × `height` pixels of an image (a crop; sizes clamped to the image's).
Image crop_image(const Image& image, int width, int height);

}  // namespace attnlab
