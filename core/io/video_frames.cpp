// What video in and out share with builds that have no FFmpeg (-DATTNLAB_VIDEO=OFF): frame sizes
// and 8-bit frames. core/io/video.cpp is the FFmpeg half, core/io/video_unavailable.cpp its stand-in.
#include "core/io/video.hpp"

#include <algorithm>
#include <cmath>

namespace attnlab {

std::int64_t video_max_pixels(std::int64_t budget) {
  // One frame held as floats (12 bytes a pixel) plus its decoded and converted 8-bit copies
  // (at most 8 bytes a pixel): 20 bytes a pixel.
  return std::max<std::int64_t>(1, std::min<std::int64_t>(kMaxImagePixels, budget / 20));
}

std::vector<std::uint8_t> image_to_rgb8(const Image& image) {
  std::vector<std::uint8_t> out(image.rgb.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::uint8_t>(std::lround(std::clamp(image.rgb[i], 0.0f, 1.0f) * 255.0f));
  return out;
}

}  // namespace attnlab
