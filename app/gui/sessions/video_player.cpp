#include "app/gui/sessions/video_player.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "core/base/platform.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"

namespace attnlab::app {

void VideoPlayer::open(const std::filesystem::path& path, std::int64_t max_pixels) {
  // "camera:DEVICE" (the Images panel's cameras): the same player, only the opening differs.
  const std::string text = platform::utf8(path);
  VideoReader reader = text.starts_with("camera:")
                           ? VideoReader::open_camera(text.substr(7), max_pixels)
                           : VideoReader::open_file(path, max_pixels);  // throws before anything changes
  close();
  reader_.emplace(std::move(reader));
  path_ = path;
  stop_ = paused_ = ended_ = false;
  error_.reset();
  latest_.reset();
  latency_ms_.clear();
  shown_ = dropped_ = fps_count_ = 0;
  last_index_ = -1;
  last_time_ = shown_fps_ = 0;
  start_ = fps_since_ = std::chrono::steady_clock::now();
  thread_ = std::thread([this] { loop(); });
}

void VideoPlayer::close() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  reader_.reset();
  latest_.reset();
}

void VideoPlayer::set_paused(bool paused) {
  {
    std::lock_guard lock(mutex_);
    const auto now = std::chrono::steady_clock::now();
    if (paused && !paused_) paused_at_ = now;
    if (!paused && paused_) start_ += now - paused_at_;  // the clock stood still while paused
    paused_ = paused;
    if (paused) latest_.reset();  // the frame shown is the one kept
  }
  wake_.notify_all();
}

bool VideoPlayer::paused() const {
  std::lock_guard lock(mutex_);
  return paused_;
}

bool VideoPlayer::ended() const {
  std::lock_guard lock(mutex_);
  return ended_ && !latest_;
}

std::optional<std::string> VideoPlayer::poll_error() {
  std::lock_guard lock(mutex_);
  return std::exchange(error_, std::nullopt);
}

std::optional<PlayedFrame> VideoPlayer::take() {
  std::lock_guard lock(mutex_);
  if (!latest_ || paused_) return std::nullopt;
  std::optional<PlayedFrame> out = PlayedFrame{std::move(*latest_), latest_at_};
  latest_.reset();
  ++shown_;
  ++fps_count_;
  last_index_ = out->frame.index;
  last_time_ = out->frame.time;
  const auto now = std::chrono::steady_clock::now();
  const double span = std::chrono::duration<double>(now - fps_since_).count();
  if (span >= 1.0) {
    shown_fps_ = static_cast<double>(fps_count_) / span;
    fps_count_ = 0;
    fps_since_ = now;
  }
  return out;
}

void VideoPlayer::note_latency(double ms) {
  std::lock_guard lock(mutex_);
  latency_ms_.push_back(ms);
  if (latency_ms_.size() > static_cast<std::size_t>(kLatencyWindow)) latency_ms_.erase(latency_ms_.begin());
}

VideoLatency VideoPlayer::latency() const {
  std::lock_guard lock(mutex_);
  if (latency_ms_.empty()) return {};
  std::vector<double> sorted = latency_ms_;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  const double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;  // the two middle ones' mean
  return {median, static_cast<int>(sorted.size())};
}

std::int64_t VideoPlayer::shown() const {
  std::lock_guard lock(mutex_);
  return shown_;
}

std::int64_t VideoPlayer::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

double VideoPlayer::shown_fps() const {
  std::lock_guard lock(mutex_);
  return shown_fps_;
}

std::string VideoPlayer::status() const {
  const VideoLatency late = latency();
  std::lock_guard lock(mutex_);
  std::string latency;
  if (late.count > 0) latency = text_format(_(", latency %.0f ms (median of the last %d)"), late.median_ms, late.count);
  // TRANSLATORS: the video's file name, the frame's index and time; the last three %s add the latency, ", paused" and ", ended".
  return text_format(_("%s: frame %lld at %.1f s, %.1f frames/s shown, %lld dropped%s%s%s"),
                     platform::utf8(path_.filename()).c_str(), static_cast<long long>(last_index_), last_time_, shown_fps_,
                     static_cast<long long>(dropped_), latency.c_str(), paused_ ? _(", paused") : "",
                     ended_ && !latest_ ? _(", ended") : "");
}

void VideoPlayer::loop() {
  while (true) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || !paused_; });
      if (stop_) return;
    }
    std::optional<VideoFrame> frame;
    try {
      frame = reader_->next();
    } catch (const Error& e) {
      std::lock_guard lock(mutex_);
      error_ = e.what();
      ended_ = true;
      return;
    }
    std::unique_lock lock(mutex_);
    if (!frame) {
      ended_ = true;
      lock.unlock();
      if (wake_fn_) wake_fn_();  // the status line says so
      return;
    }
    // At the video's own pace: wait for the frame's time (shifted by the pauses).
    while (!stop_) {
      const auto due = start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(frame->time));
      if (!paused_ && std::chrono::steady_clock::now() >= due) break;
      if (paused_)
        wake_.wait(lock);
      else
        wake_.wait_until(lock, due);
    }
    if (stop_) return;
    if (latest_) ++dropped_;  // not taken in time: the newer one wins
    latest_ = std::move(frame);
    latest_at_ = std::chrono::steady_clock::now();
    lock.unlock();
    if (wake_fn_) wake_fn_();
  }
}

}  // namespace attnlab::app
