#pragma once
// Export → Record (issue 40): what the window shows, written as an MP4 or a GIF while the user
// works, with a sidecar JSON of the settings. Three kinds share one file writer:
// - live: the window (or, with "map only", the map and its colour bar, as F12 saves it) at a
//   fixed rate of wall-clock time. The frames are taken from the back buffer after a frame is
//   drawn; a thread writes the newest one at each tick of the rate, the same one again while the
//   window draws nothing new (an idle window, a paused video), so the file lasts as long as the
//   recording did and never lags behind what was shown;
// - sweep: one frame per value of a document setting (the query along its row, the layers, the
//   heads, the temperature τ, the patch size K), each taken once its map is drawn;
// - training: one frame each time the Train tab's shown run has trained N more steps.
// Written through VideoWriter (core/io/video.hpp): a temporary beside the file, moved into place
// whole when the recording stops; a name that is never taken already.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace attnlab {
class VideoWriter;
}

namespace attnlab::app {

/// What is recorded and how.
struct RecordPlan {
  enum class Kind { Live, Sweep, Training };
  Kind kind = Kind::Live;
  bool map_only = false;  ///< the map and its colour bar (F12's "map only"), else the whole window
  bool gif = false;       ///< a GIF with one palette, else an H.264 MP4
  /// Live: frames per second of wall-clock time (1 … 30). Sweep and training: frames per second
  /// the file plays at (0.5 … 30).
  double fps = 10;
  std::string what;  ///< for the file name and the sidecar: "window", "map", "sweep-layer", "training"…
};

/// 8-bit RGB pixels, rows from the top: width × height × 3 bytes.
struct RgbFrame {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;
};

/// Longest recordings: MP4 10 minutes; GIF 30 s of live recording (a GIF's frames wait in the
/// palette filter until the end) and at most kMaxGifFrames frames of any kind.
inline constexpr double kMaxMp4Seconds = 600, kMaxGifSeconds = 30;
inline constexpr int kMaxGifFrames = 600;

/// One recording: start() names the file, add() hands it frames, stop() asks for the file to be
/// finished and its sidecar written, take_finished() gives its path once both are. Used from
/// the main thread only; the encoding runs on a thread of its own. Destroying a recorder that was
/// not stopped (or abandon()) removes its temporary: nothing is left.
class Recorder {
 public:
  Recorder();
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  /// Called from the writing thread when a file is finished or the recording failed (the app:
  /// glfwPostEmptyEvent, which ends the main loop's wait for events).
  void set_wake(std::function<void()> wake) { wake_fn_ = std::move(wake); }

  /// Starts a recording into `dir` as attnlab-record-<what>-<time>.mp4|.gif (a free name), with
  /// `sidecar` (the settings when it starts) written beside it at the end, its "record" entry
  /// added. The file is opened with the first frame (its size is the first frame's). Throws
  /// Error (one line) when one is already running or being written, or `dir` is not a folder.
  void start(const RecordPlan& plan, const std::filesystem::path& dir, nlohmann::json sidecar);
  /// True from start() until stop() (or a limit: limit_reached()).
  bool recording() const;
  /// True from start() until take_finished() or abandon(): the thread may still be writing.
  bool busy() const;
  const RecordPlan& plan() const { return plan_; }

  /// A frame: live, the newest shown (written at each tick until a newer one comes); sweep and
  /// training, written once. Frames of another size than the first are cut or padded (black) to
  /// it at their top left. Ignored when not recording.
  void add(RgbFrame frame);

  /// True once the recording should stop by itself: a GIF or MP4 at its limits above, a writer
  /// that fell kMaxBehindSeconds behind the wall clock, or the writer failed (poll_error()).
  bool limit_reached() const;
  /// The writing thread's error (one line), once.
  std::optional<std::string> poll_error();

  /// Asks for the file to be finished, the sidecar written with `extra` merged into its "record"
  /// entry (the sweep's values, the training steps). Returns at once; take_finished() gives the
  /// path when done, poll_error() why not (nothing recorded, a write failed: no file is left).
  void stop(const nlohmann::json& extra = nlohmann::json::object());
  /// The finished video's path once, after stop().
  std::optional<std::filesystem::path> take_finished();
  /// Ends a recording without a file (the app closes while recording).
  void abandon();

  /// One line for the window: "recording the map: 3.2 s, 32 frames (F8 stops)"; empty when idle.
  std::string status() const;
  int frames_written() const;

 private:
  void loop();
  void write_one(const RgbFrame& frame);
  void finish_file(std::unique_lock<std::mutex>& lock);

  RecordPlan plan_;
  std::filesystem::path path_;
  nlohmann::json sidecar_, extra_;
  std::function<void()> wake_fn_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::unique_ptr<VideoWriter> writer_;             // made and written on the thread
  std::vector<RgbFrame> queue_;                     // sweep and training frames waiting to be written
  std::shared_ptr<const RgbFrame> latest_;          // live: the newest frame shown
  int width_ = 0, height_ = 0, written_ = 0;
  bool started_ = false, stopping_ = false, abandoning_ = false, failed_ = false, limit_ = false, done_ = false;
  std::string error_;
  std::optional<std::filesystem::path> finished_;
  std::chrono::steady_clock::time_point first_{}, stop_time_{};
};

}  // namespace attnlab::app
