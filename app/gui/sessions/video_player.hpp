#pragma once
// Images → Open video (issue 40): a video file played into the app. A thread decodes the frames
// at the video's own pace into one slot; the main loop takes the newest when the sources are
// ready for another picture (the ViT's job on the scheduler done), so frames are dropped, never
// queued, and the picture never lags behind. Pause freezes the frame shown, which is then an
// ordinary image (explored, exported); Play goes on from there.
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/io/video.hpp"

namespace attnlab::app {

/// A frame taken from the player's slot, with when the decoding thread put it there (decoded,
/// at its time in the video: the moment it became the newest frame).
struct PlayedFrame {
  VideoFrame frame;
  std::chrono::steady_clock::time_point decoded_at;
};

/// The latency of the frames drawn lately: from a frame put into the slot (decoded) to the
/// swap of the window's frame that first showed its map (App::note_video_drawn).
struct VideoLatency {
  double median_ms = 0;  ///< the median over the last `count` frames drawn (at most kLatencyWindow)
  int count = 0;         ///< 0: none drawn yet
};

class VideoPlayer {
 public:
  VideoPlayer() = default;
  VideoPlayer(const VideoPlayer&) = delete;
  VideoPlayer& operator=(const VideoPlayer&) = delete;
  ~VideoPlayer() { close(); }

  /// Opens `path` (on this thread, so a bad file throws Error at once, one line) and starts
  /// playing it; a video playing before is closed first.
  void open(const std::filesystem::path& path, std::int64_t max_pixels);
  void close();
  bool is_open() const { return thread_.joinable(); }
  const std::filesystem::path& path() const { return path_; }

  /// Called from the decoding thread after each new frame (the app: glfwPostEmptyEvent, which
  /// ends the main loop's wait for events), so nothing polls while the video plays.
  void set_wake(std::function<void()> wake) { wake_fn_ = std::move(wake); }

  void set_paused(bool paused);
  bool paused() const;
  /// True once the last frame was decoded (or the stream failed: error()).
  bool ended() const;
  /// The decoder's one-line error, once.
  std::optional<std::string> poll_error();

  /// The newest decoded frame not yet taken (older ones were dropped), if any.
  std::optional<PlayedFrame> take();
  /// The map of a frame taken from the slot `ms` milliseconds after it was decoded is on
  /// screen now: kept among the last kLatencyWindow latencies.
  void note_latency(double ms);
  /// The median latency of the last kLatencyWindow frames drawn (count 0 before the first).
  VideoLatency latency() const;
  static constexpr int kLatencyWindow = 30;
  /// Frames taken from the slot since open(), and dropped (decoded, never taken).
  std::int64_t shown() const;
  std::int64_t dropped() const;
  /// Frames shown per second, over the last second or so.
  double shown_fps() const;
  /// One line for the panel: "frame 23 at 2.3 s, 9.8 frames/s shown, 4 dropped, latency 85 ms
  /// (median of the last 30)".
  std::string status() const;

 private:
  void loop();

  std::filesystem::path path_;
  std::optional<VideoReader> reader_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::function<void()> wake_fn_;
  std::optional<VideoFrame> latest_;
  std::chrono::steady_clock::time_point latest_at_{};  // when latest_ was put into the slot
  bool stop_ = false, paused_ = false, ended_ = false;
  std::optional<std::string> error_;
  std::chrono::steady_clock::time_point start_{}, paused_at_{};
  std::int64_t shown_ = 0, dropped_ = 0, last_index_ = -1;
  double last_time_ = 0, shown_fps_ = 0;
  std::chrono::steady_clock::time_point fps_since_{};
  std::int64_t fps_count_ = 0;
  std::vector<double> latency_ms_;  // the last kLatencyWindow latencies, oldest first
};

}  // namespace attnlab::app
