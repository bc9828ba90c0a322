#include "app/gui/output/recorder.hpp"

#include "app/gui/output/export.hpp"
#include "core/base/platform.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/io/files.hpp"
#include "core/io/video.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace attnlab::app {
namespace {

using Clock = std::chrono::steady_clock;

// Frames waiting to be written (sweeps, training) beyond which the recording stops: the writer
// has fallen far behind.
constexpr std::size_t kMaxQueued = 64;
// Seconds a live recording's writer may fall behind the wall clock before it stops.
constexpr double kMaxBehindSeconds = 5;

// `frame` cut or padded (black) at its top left to width × height.
RgbFrame fitted(RgbFrame frame, int width, int height) {
  if (frame.width == width && frame.height == height) return frame;
  RgbFrame out{width, height, std::vector<std::uint8_t>(static_cast<std::size_t>(width) * height * 3, 0)};
  const int w = std::min(width, frame.width), h = std::min(height, frame.height);
  for (int y = 0; y < h; ++y)
    std::memcpy(out.rgb.data() + static_cast<std::size_t>(y) * width * 3,
                frame.rgb.data() + static_cast<std::size_t>(y) * frame.width * 3, static_cast<std::size_t>(w) * 3);
  return out;
}

}  // namespace

Recorder::Recorder() = default;

Recorder::~Recorder() { abandon(); }

void Recorder::start(const RecordPlan& plan, const std::filesystem::path& dir, nlohmann::json sidecar) {
  if (busy()) throw Error(_("a recording is already running or being written"));
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw Error(text_format(_("cannot record into '%s': it is not a folder"), platform::utf8(dir).c_str()));
  const auto stem = next_free_stem(dir, "attnlab-record-" + plan.what + "-" + timestamp(), {".mp4", ".gif", ".json"});
  const std::filesystem::path path = stem.string() + (plan.gif ? ".gif" : ".mp4");
  video_encoder_for(path);  // a build without FFmpeg says so here, in one line, before anything starts
  plan_ = plan;
  plan_.fps = std::clamp(plan.fps, 0.5, 30.0);
  path_ = path;
  sidecar_ = std::move(sidecar);
  extra_ = nlohmann::json::object();
  queue_.clear();
  latest_.reset();
  writer_.reset();
  width_ = height_ = written_ = 0;
  stopping_ = abandoning_ = failed_ = limit_ = started_ = false;
  finished_.reset();
  error_.clear();
  thread_ = std::thread([this] { loop(); });
}

bool Recorder::busy() const { return thread_.joinable(); }

bool Recorder::recording() const {
  std::lock_guard lock(mutex_);
  return thread_.joinable() && !stopping_;
}

void Recorder::add(RgbFrame frame) {
  if (frame.width <= 0 || frame.height <= 0) return;
  std::lock_guard lock(mutex_);
  if (!thread_.joinable() || stopping_ || failed_) return;
  if (!started_) {
    started_ = true;
    first_ = Clock::now();
    width_ = frame.width;
    height_ = frame.height;
  }
  frame = fitted(std::move(frame), width_, height_);
  if (plan_.kind == RecordPlan::Kind::Live) {
    latest_ = std::make_shared<const RgbFrame>(std::move(frame));
  } else {
    if (queue_.size() >= kMaxQueued) {
      limit_ = true;
      return;
    }
    queue_.push_back(std::move(frame));
  }
  wake_.notify_all();
}

bool Recorder::limit_reached() const {
  std::lock_guard lock(mutex_);
  return limit_ || failed_;
}

std::optional<std::string> Recorder::poll_error() {
  std::lock_guard lock(mutex_);
  if (error_.empty()) return std::nullopt;
  return std::exchange(error_, std::string());
}

void Recorder::stop(const nlohmann::json& extra) {
  std::lock_guard lock(mutex_);
  if (!thread_.joinable() || stopping_) return;
  extra_ = extra;
  stopping_ = true;
  stop_time_ = Clock::now();
  wake_.notify_all();
}

void Recorder::abandon() {
  {
    std::lock_guard lock(mutex_);
    if (!thread_.joinable()) return;
    stopping_ = abandoning_ = true;
    stop_time_ = Clock::now();
    wake_.notify_all();
  }
  thread_.join();
  writer_.reset();  // never finished: its temporary goes (VideoWriter)
}

std::optional<std::filesystem::path> Recorder::take_finished() {
  std::unique_lock lock(mutex_);
  if (!done_ || !thread_.joinable()) return std::nullopt;
  lock.unlock();
  thread_.join();  // its work is done: this does not wait
  lock.lock();
  done_ = false;
  writer_.reset();
  return std::exchange(finished_, std::nullopt);
}

int Recorder::frames_written() const {
  std::lock_guard lock(mutex_);
  return written_;
}

std::string Recorder::status() const {
  std::lock_guard lock(mutex_);
  if (!thread_.joinable()) return "";
  // TRANSLATORS: what is being recorded, in "recording %s: 2.5 s, 25 frames (F8 stops)".
  const char* scope = plan_.map_only ? _("the map") : _("the window");
  char line[160];
  if (stopping_) {
    // TRANSLATORS: the video file being written, then the frames it has.
    std::snprintf(line, sizeof line, _("writing %s (%d frames)..."), platform::utf8(path_.filename()).c_str(), written_);
  } else if (plan_.kind == RecordPlan::Kind::Live) {
    const double s = started_ ? std::chrono::duration<double>(Clock::now() - first_).count() : 0.0;
    // TRANSLATORS: "the map" or "the window", the seconds recorded, the frames; F8 is the key that stops.
    std::snprintf(line, sizeof line, _("recording %s: %.1f s, %d frames (F8 stops)"), scope, s, written_);
  } else {
    // TRANSLATORS: %s is what is recorded, an identifier kept as it is ("sweep-layer", "training").
    std::snprintf(line, sizeof line, _("recording %s: %d frames"), plan_.what.c_str(), written_);
  }
  return line;
}

// Opens the writer with the first frame (its size), writes one frame; a failure is kept as the
// recording's error and ends its writing.
void Recorder::write_one(const RgbFrame& frame) {
  try {
    if (!writer_) writer_ = std::make_unique<VideoWriter>(path_, frame.width, frame.height, plan_.fps, false);
    writer_->write(frame.rgb);
  } catch (const Error& e) {
    std::lock_guard lock(mutex_);
    failed_ = true;
    error_ = text_format(_("the recording stopped: %s"), e.what());
    return;
  }
  std::lock_guard lock(mutex_);
  ++written_;
  const double max_frames = plan_.gif ? kMaxGifFrames : kMaxMp4Seconds * plan_.fps;
  if (written_ >= max_frames) limit_ = true;
}

// The writing thread: live, the newest frame at each tick of the rate until the stop time;
// otherwise each queued frame once. Then the file is finished and the sidecar written.
void Recorder::loop() {
  std::unique_lock lock(mutex_);
  std::int64_t ticks = 0;
  const bool live = plan_.kind == RecordPlan::Kind::Live;
  const double max_live = plan_.gif ? kMaxGifSeconds : kMaxMp4Seconds;
  while (!abandoning_ && !failed_) {
    if (live) {
      if (!started_) {
        if (stopping_) break;
        wake_.wait(lock);
        continue;
      }
      const Clock::time_point until = stopping_ ? stop_time_ : Clock::now();
      const double elapsed = std::chrono::duration<double>(until - first_).count();
      const auto due = static_cast<std::int64_t>(std::floor(std::min(elapsed, max_live) * plan_.fps)) + 1;
      if (elapsed >= max_live) limit_ = true;
      if (ticks < due) {
        if (static_cast<double>(due - ticks) > kMaxBehindSeconds * plan_.fps && !stopping_) {
          limit_ = true;
          error_ = text_format(_("the recording stopped: the writer could not keep up with %f frames/s (record the map only, or a lower rate)"),
                               plan_.fps);
          break;
        }
        const std::shared_ptr<const RgbFrame> frame = latest_;
        lock.unlock();
        write_one(*frame);
        lock.lock();
        ++ticks;
        continue;
      }
      if (stopping_ || limit_) break;  // a limit: the caller stops
      const auto next = first_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                                     static_cast<double>(ticks) / plan_.fps));
      wake_.wait_until(lock, next);
    } else {
      if (!queue_.empty()) {
        RgbFrame frame = std::move(queue_.front());
        queue_.erase(queue_.begin());
        lock.unlock();
        write_one(frame);
        lock.lock();
        continue;
      }
      if (stopping_) break;
      wake_.wait(lock);
    }
  }
  if (abandoning_) return;
  if (!stopping_) wake_.wait(lock, [this] { return stopping_; });  // a limit or a failure: the caller stops
  if (abandoning_ || failed_) {
    done_ = true;
    if (wake_fn_) wake_fn_();
    return;
  }
  finish_file(lock);
}

// After the last frame: the file moved into place, then its sidecar (if that fails, the video
// goes too: one is not kept without the other).
void Recorder::finish_file(std::unique_lock<std::mutex>& lock) {
  const double seconds = started_ ? std::chrono::duration<double>(stop_time_ - first_).count() : 0.0;
  const int frames = written_;
  lock.unlock();
  std::string error;
  try {
    if (!writer_ || frames == 0) throw Error(_("nothing was recorded (no frame was drawn)"));
    writer_->finish();
    nlohmann::json record = {{"kind", plan_.kind == RecordPlan::Kind::Live    ? "live"
                                      : plan_.kind == RecordPlan::Kind::Sweep ? "sweep"
                                                                              : "training"},
                             {"scope", plan_.map_only ? "map" : "window"},
                             {"what", plan_.what},
                             {"file", platform::utf8(path_.filename())},
                             {"encoder", writer_->encoder()},
                             {"fps", plan_.fps},
                             {"frames", frames},
                             {"width", width_},
                             {"height", height_},
                             {"seconds_recorded", seconds}};
    record.update(extra_);
    nlohmann::json sidecar = sidecar_;
    sidecar["record"] = record;
    write_sidecar_or_remove(path_, sidecar.dump(2) + "\n");
  } catch (const Error& e) {
    error = text_format(_("the recording was not saved: %s"), e.what());
  }
  lock.lock();
  if (error.empty()) finished_ = path_;
  else {
    failed_ = true;
    error_ = error;
  }
  done_ = true;
  if (wake_fn_) wake_fn_();
}

}  // namespace attnlab::app
