// The window's video (video_feed.hpp): the player's commands, its frames and their latency.
#include "app/gui/sessions/video_feed.hpp"

#include "core/base/error.hpp"
#include "core/base/platform.hpp"

#include <utility>

namespace attnlab::app {

namespace {

// The player's numbers for the sidecar's "video" entry (FrameReport::video).
nlohmann::json video_report(const VideoPlayer& video) {
  const VideoLatency latency = video.latency();
  return {{"path", platform::utf8(video.path())},
          {"frames_shown", video.shown()},
          {"frames_dropped", video.dropped()},
          {"shown_fps", video.shown_fps()},
          {"latency_ms_median", latency.count > 0 ? nlohmann::json(latency.median_ms) : nlohmann::json(nullptr)},
          {"latency_frames", latency.count},
          {"paused", video.paused()},
          {"ended", video.ended()}};
}

}  // namespace

void VideoFeed::take_commands(std::int64_t max_pixels) {
  if (const auto open = state_.commands.take(Commands::Kind::OpenVideo)) {
    try {
      player_.open(open->path, max_pixels);
    } catch (const Error& e) {
      state_.show_error(e.what());  // the previous image (or video) stays
    }
    state_.commands.redraw();
  }
  if (state_.commands.take(Commands::Kind::PauseVideo) && player_.is_open()) {
    player_.set_paused(!player_.paused());
    state_.commands.redraw();
  }
}

void VideoFeed::close() {
  player_.close();
  state_.ui.video_open = false;
  state_.report.video_hand_made.reset();
  state_.report.video_vit.reset();
  state_.report.video = nullptr;
}

std::optional<PlayedFrame> VideoFeed::take_frame(bool sources_busy) {
  state_.ui.video_open = player_.is_open();
  if (!player_.is_open()) return std::nullopt;
  if (const auto error = player_.poll_error()) state_.show_error(*error);
  state_.ui.video_paused = player_.paused();
  state_.ui.video_status = player_.status();
  state_.report.video = video_report(player_);
  if (player_.paused() || player_.ended() || sources_busy) return std::nullopt;
  auto played = player_.take();  // the player's thread wakes the loop when the next one is decoded
  if (played) state_.commands.redraw();
  return played;
}

void VideoFeed::shown_to_hand_made(PlayedFrame played) {
  state_.image_path = player_.path();
  hand_made_drawn_due_ = played.decoded_at;  // the new image's rows are drawn in this frame
  state_.report.video_hand_made = ShownVideoFrame{player_.path(), played.frame.index, played.frame.time,
                                                  std::make_shared<const Image>(std::move(played.frame.image))};
}

void VideoFeed::handed_to_vit(bool started, unsigned vit_generation, std::optional<Clock::time_point> decoded_at) {
  for_vit_.reset();
  if (started && state_.report.video_hand_made)  // a job started (there is a model): of this frame
    for_vit_ = ForVit{*state_.report.video_hand_made, vit_generation, decoded_at};
}

void VideoFeed::take_vit_frame(unsigned vit_generation) {
  if (!for_vit_ || vit_generation == for_vit_->vit_generation) return;
  state_.report.video_vit = for_vit_->frame;
  vit_drawn_due_ = for_vit_->decoded_at;
  for_vit_.reset();
}

void VideoFeed::note_latency(bool vit_shown) {
  const auto due = vit_shown ? (state_.report.vit_drawn.is_null() ? std::nullopt : vit_drawn_due_)
                   : state_.source == ShownSource::HandMade ? hand_made_drawn_due_
                                                            : std::nullopt;
  if (due && player_.is_open())
    player_.note_latency(std::chrono::duration<double, std::milli>(Clock::now() - *due).count());
  hand_made_drawn_due_.reset();
  vit_drawn_due_.reset();
}

}  // namespace attnlab::app
