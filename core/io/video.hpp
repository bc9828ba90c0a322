#pragma once
// Video in and out through FFmpeg's libraries (libavformat, libavcodec, libswscale,
// libavdevice, libavfilter): a video file or a camera read frame by frame as Images, and
// overlaid frames written as an H.264 MP4 or a GIF with a palette (SPEC.md §11, issue 40).
// A camera shares every step with a file but the opening (VideoReader::open_camera()).
#include <cstdint>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/io/image.hpp"

namespace attnlab {

/// What a video's header says, before any frame is decoded.
struct VideoInfo {
  int width = 0, height = 0;  ///< pixels of the first frame (a stream may change size later)
  double fps = 0;             ///< average frames per second as the container says (0: unknown)
  double duration = 0;        ///< seconds as the container says (0: unknown, e.g. a camera)
  std::string codec;          ///< the decoder's short name: "h264", "gif", "rawvideo"…
  std::string format;         ///< the demuxer's short name: "mov,mp4,m4a,3gp,3g2,mj2", "v4l2"…
};

/// One decoded frame: RGB in [0,1] (as load_image()), and its time in seconds from the start.
struct VideoFrame {
  Image image;
  double time = 0;
  std::int64_t index = 0;  ///< 0, 1, 2… in decoding order
};

/// The largest frame a reader accepts, in pixels: kMaxImagePixels, lowered so that the frames a
/// pipelined video holds at once (FramePrefetch's, the caller's, BackgroundWriter's: two as
/// floats with their decoded and converted 8-bit copies, one as 8-bit RGB with the encoder's
/// copy) fit `budget` bytes (vit_memory_budget()).
std::int64_t video_max_pixels(std::int64_t budget);

/// Reads frames from a video file or a camera. Move-only; not thread-safe (one call at a time,
/// from any thread). Every failure is an Error with one line naming the source: a missing or empty file,
/// a file that is not a video, no video stream, a codec this FFmpeg cannot decode, a header or a
/// frame larger than the limit (refused from the header before a frame is allocated), a corrupt
/// or truncated stream (what decodes before the damage is returned first).
class VideoReader {
 public:
  /// Opens a video file (MP4, WebM, MKV, MOV, AVI, animated GIF, Y4M…). `max_pixels` bounds a
  /// frame's width × height (video_max_pixels()).
  static VideoReader open_file(const std::filesystem::path& path, std::int64_t max_pixels);
  /// Opens a camera through libavdevice: `device` as list_cameras() names it ("/dev/video0"
  /// with v4l2 on Linux). Everything after the opening is the file's code.
  static VideoReader open_camera(const std::string& device, std::int64_t max_pixels);

  VideoReader(VideoReader&&) noexcept;
  VideoReader& operator=(VideoReader&&) noexcept;
  ~VideoReader();

  const VideoInfo& info() const;
  /// The next frame, or nothing at the end of the stream. Throws Error (one line) when the
  /// stream is damaged beyond the decoder's concealment or a frame exceeds the limit.
  std::optional<VideoFrame> next();

  struct Impl;

 private:
  explicit VideoReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// A camera libavdevice can open: `device` for open_camera(), `name` for people.
struct CameraInfo {
  std::string device, name;
};

/// The cameras found (v4l2 on Linux); empty when there are none, which is not an error
/// ("no camera found" is what a caller shows).
std::vector<CameraInfo> list_cameras();

/// Which encoder a writer uses for a file name: ".mp4" → H.264 (libx264) when this FFmpeg has
/// it, else MPEG-4 part 2; ".gif" → GIF with one palette for the whole animation (libavfilter's
/// palettegen and paletteuse, as `ffmpeg -vf palettegen` does). Throws Error for other endings.
std::string video_encoder_for(const std::filesystem::path& path);

/// Writes 8-bit RGB frames of one size as a video: into a temporary file beside `path`, moved
/// into place whole by finish(); nothing is left behind when finish() is not reached or fails.
/// Never replaces an existing file unless `overwrite`. MP4 needs even sizes: an odd width or
/// height loses its last column or row. Throws Error naming the path and the reason.
class VideoWriter {
 public:
  VideoWriter(const std::filesystem::path& path, int width, int height, double fps, bool overwrite = false);
  VideoWriter(VideoWriter&&) noexcept;
  VideoWriter& operator=(VideoWriter&&) noexcept;
  ~VideoWriter();

  /// One frame, width*height*3 bytes, rows from the top.
  void write(std::span<const std::uint8_t> rgb8);
  /// Flushes the encoder, writes the trailer, moves the file into place.
  void finish();

  int frames() const;
  const std::string& encoder() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// Decodes ahead (issue 49): while the caller works on a frame (a ViT's forward), the reader's
/// next frame is decoded on another thread. next() returns, in order, what reader.next() would,
/// and rethrows its Error. The reader must outlive this and be read only through it; the
/// destructor waits for a decode under way.
class FramePrefetch {
 public:
  explicit FramePrefetch(VideoReader& reader);
  FramePrefetch(const FramePrefetch&) = delete;
  FramePrefetch& operator=(const FramePrefetch&) = delete;
  ~FramePrefetch();
  std::optional<VideoFrame> next();

 private:
  VideoReader& reader_;
  std::future<std::optional<VideoFrame>> ahead_;
};

/// Encodes behind (issue 49): write() hands a frame to another thread and returns at once,
/// after waiting for the frame before it (so at most one is being encoded while the caller
/// works on the next). Frames are written in order; an Error of one comes back from the next
/// write() or from finish(), which writes the last frame and finishes the file. The writer must
/// outlive this; the destructor waits for a frame under way (and leaves the file unfinished).
class BackgroundWriter {
 public:
  explicit BackgroundWriter(VideoWriter& writer) : writer_(writer) {}
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;
  ~BackgroundWriter();
  void write(std::vector<std::uint8_t> rgb8);
  void finish();

 private:
  VideoWriter& writer_;
  std::future<void> behind_;
};

/// An Image as 8-bit RGB (rounded, clamped), width*height*3 bytes.
std::vector<std::uint8_t> image_to_rgb8(const Image& image);

}  // namespace attnlab
