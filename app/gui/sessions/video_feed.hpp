#pragma once
// Images → Open video in the window (docs/VIDEO.md), an object the App owns and calls from its
// frame loop: the player (video_player.hpp), the Open and Pause commands, the newest decoded
// frame handed out when the sources are ready for it, which frame each source's maps are of
// (FrameReport::video_hand_made, video_vit) and the latency from a frame's decoding to its map
// on screen. Giving a frame to the sources is the App's (it is the document's image).
#include "app/gui/sessions/video_player.hpp"
#include "app/gui/state/app_state.hpp"

#include <chrono>
#include <functional>
#include <optional>

namespace attnlab::app {

class VideoFeed {
 public:
  using Clock = std::chrono::steady_clock;
  explicit VideoFeed(AppState& state) : state_(state) {}
  /// Stops the player's thread (it wakes the window).
  ~VideoFeed() { player_.close(); }
  VideoFeed(const VideoFeed&) = delete;
  VideoFeed& operator=(const VideoFeed&) = delete;

  /// Called from the player's thread when a frame is decoded (the window's event wait ends).
  void set_wake(std::function<void()> wake) { player_.set_wake(std::move(wake)); }
  const VideoPlayer& player() const { return player_; }

  /// The Open and Pause commands of this frame (Commands::Kind::OpenVideo, PauseVideo); a video
  /// that cannot be read leaves a banner and whatever was open. `max_pixels`: the largest frame
  /// the memory budget allows (video_max_pixels).
  void take_commands(std::int64_t max_pixels);
  /// An image opened: the video ends, and the report forgets its frames.
  void close();
  /// The player's state into the UI and the report; then, unless it is paused or ended or
  /// `sources_busy` (the ViTs still on the last frame: the newest frame wins, the player drops
  /// the ones decoded meanwhile), the next frame to show, with a redraw asked for.
  std::optional<PlayedFrame> take_frame(bool sources_busy);
  /// A frame taken with take_frame became the hand-made heads' image in this frame.
  void shown_to_hand_made(PlayedFrame played);
  /// A frame that could not be shown: the player pauses, the error is in the banner.
  void pause() { player_.set_paused(true); }
  /// The ViT was handed the hand-made heads' image (a job of generation `vit_generation` runs,
  /// or none when `started` is false); `decoded_at` when its latency counts (a frame just taken).
  void handed_to_vit(bool started, unsigned vit_generation, std::optional<Clock::time_point> decoded_at);
  /// A finished ViT job (its session's generation now `vit_generation`) on a video's frame: that
  /// frame becomes the one the ViT's maps show.
  void take_vit_frame(unsigned vit_generation);
  /// After the swap: the latency of the frame whose map the shown source (`vit_shown`: the
  /// ViT's map was drawn) drew for the first time.
  void note_latency(bool vit_shown);

 private:
  // A video's frame handed to the ViT, until its maps arrive.
  struct ForVit {
    ShownVideoFrame frame;
    unsigned vit_generation;  // VitSession::generation() when it was handed over
    std::optional<Clock::time_point> decoded_at;
  };

  AppState& state_;
  VideoPlayer player_;
  std::optional<ForVit> for_vit_;
  // When the frames whose maps are drawn for the first time in this frame were decoded.
  std::optional<Clock::time_point> hand_made_drawn_due_, vit_drawn_due_;
};

}  // namespace attnlab::app
