// What video in and out share with builds that have no FFmpeg (-DATTNLAB_VIDEO=OFF): frame sizes
// and 8-bit frames. core/io/video.cpp is the FFmpeg half, core/io/video_unavailable.cpp its stand-in.
#include "core/io/video.hpp"

#include <algorithm>
#include <cmath>

namespace attnlab {

std::int64_t video_max_pixels(std::int64_t budget) {
  // Two frames held as floats (12 bytes a pixel) with their decoded and converted 8-bit copies
  // (at most 8 bytes a pixel), and one as 8-bit RGB with the encoder's copy (at most 6 bytes a
  // pixel): 46 bytes a pixel.
  return std::max<std::int64_t>(1, std::min<std::int64_t>(kMaxImagePixels, budget / 46));
}

std::vector<std::uint8_t> image_to_rgb8(const Image& image) {
  std::vector<std::uint8_t> out(image.rgb.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::uint8_t>(std::lround(std::clamp(image.rgb[i], 0.0f, 1.0f) * 255.0f));
  return out;
}

FramePrefetch::FramePrefetch(VideoReader& reader) : reader_(reader) {
  ahead_ = std::async(std::launch::async, [this] { return reader_.next(); });
}

FramePrefetch::~FramePrefetch() {
  if (ahead_.valid()) ahead_.wait();
}

std::optional<VideoFrame> FramePrefetch::next() {
  if (!ahead_.valid()) return std::nullopt;  // the end, or an error, was returned before
  std::optional<VideoFrame> frame = ahead_.get();  // rethrows the reader's Error
  if (frame) ahead_ = std::async(std::launch::async, [this] { return reader_.next(); });
  return frame;
}

BackgroundWriter::~BackgroundWriter() {
  if (behind_.valid()) behind_.wait();
}

void BackgroundWriter::write(std::vector<std::uint8_t> rgb8) {
  if (behind_.valid()) behind_.get();  // rethrows the last frame's Error
  behind_ = std::async(std::launch::async, [this, frame = std::move(rgb8)] { writer_.write(frame); });
}

void BackgroundWriter::finish() {
  if (behind_.valid()) behind_.get();
  writer_.finish();
}

}  // namespace attnlab
