// The hover benchmark in the window (hover_bench.hpp): after each frame's swap, the frame's time,
// then the pointer moved to the path's next patch once the last one's map is on screen; over a
// ViT, every few hovers a layer or head step pressed as a key (the key table's, keys.cpp).
#include "app/gui/shell/app.hpp"

#include "app/gui/state/source_choice.hpp"
#include "app/gui/vit/vit_views.hpp"
#include "core/base/error.hpp"
#include "core/base/platform.hpp"

#include <epoxy/gl.h>
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cstdio>

namespace attnlab::app {

// The hover benchmark, after each frame's swap: the frame's time, then the pointer moved to
// the path's next patch once the last one's map is on screen (hover_bench.hpp).
void App::step_replay(const gl::TransferCounts& moved, FrameMarks marks) {
  glFinish();  // the frame's pixels are done, not only queued
  marks.end = HoverReplay::Clock::now();
  const bool over_vit = replay_->config().vit, over_train = replay_->config().train;
  if (over_train) replay_->trained(train_.a.step());
  if (over_vit) {
    replay_->frame(marks, moved, vit_shown());
  } else {
    const PatchGrid& g = hand_made_.grid();
    const int q = geometry_.valid && geometry_.query >= 0 ? geometry_.query : hand_made_query(state_, g);  // the map on screen
    replay_->frame(marks, moved, Shown{Cell{q % g.cols, q / g.cols}, 0, 0});
  }
  const auto stop = [&](int code, const std::string& line) {
    std::printf("attnlab: %s\n", line.c_str());
    std::fflush(stdout);
    replay_code_ = code;
    glfwSetWindowShouldClose(window_, GLFW_TRUE);
  };
  if (replay_->done()) {
    try {
      if (video_replay_) replay_->set_video(replay_video_block());
      stop(0, replay_->finish(hand_made_.name()));
    } catch (const Error& e) {
      stop(1, e.what());
    }
    return;
  }
  // A hover that never reaches the screen (the pointer outside the map, a dialog over it)
  // ends the run with a line that says so rather than hanging.
  if (replay_->frames() > static_cast<std::size_t>(replay_->config().hovers) * 20) {
    stop(1, "hover benchmark: the hovers do not reach the map (is a window over it?)");
    return;
  }
  if (!replay_->config().video.empty() && !video_replay_) {
    // --video: the replay begins once a frame of the video is under the map it hovers.
    if (!video_.is_open() && !state_.commands.pending(Commands::Kind::OpenVideo)) {
      stop(1, "hover benchmark: the video did not open" + (state_.ui.banner.empty() ? std::string() : " (" + state_.ui.banner + ")"));
      return;
    }
    if (!(over_vit ? state_.report.video_vit : state_.report.video_hand_made)) return;
    video_replay_ = ReplayVideoStart{video_.shown(), video_.dropped()};
  }
  if (over_train) {
    // Run A with its default shape, shown; the replay begins once it has trained a chunk.
    if (!train_.a.started()) {
      state_.source = ShownSource::Train;
      state_.train_run = 0;
      train_.a.start();
      train_started_ = HoverReplay::Clock::now();
    } else if (!train_.a.running() && !train_.a.finished()) {
      stop(1, "hover benchmark: the model stopped training" + (state_.ui.banner.empty() ? std::string() : " (" + state_.ui.banner + ")"));
    } else {
      // Until the replay begins the window waits for events as it does with nobody at it: a
      // frame when a chunk ends, so that the training has the CPU a lesson would give it.
      replay_idle_ = train_.a.step() == 0 ||
                     std::chrono::duration<double>(HoverReplay::Clock::now() - train_started_).count() < replay_->config().train_first_s;
      if (!replay_idle_) step_vit_replay(train_.a.vit());
    }
    return;
  }
  if (over_vit) {
    if (!vit_.run() && !vit_.busy() && !opening_model_ && !state_.commands.pending(Commands::Kind::OpenModel))
      stop(1, "hover benchmark: the model did not open" + (state_.ui.banner.empty() ? std::string() : " (" + state_.ui.banner + ")"));
    else step_vit_replay(vit_);
    return;
  }
  if (!geometry_.valid || state_.source == ShownSource::Vit) return;
  const int K = hand_made_.settings().patch;
  const PatchGrid& g = hand_made_.grid();
  if (replay_->frames() == 0)
    replay_->set_source(ReplaySource{"hand-made", "", g.cols, g.rows, K, 1, kHeadCount, hand_made_.name()});
  replay_->path(g.cols, g.rows);
  if (const auto m = replay_->next()) {
    const Cell c = m->cell;
    const double x = geometry_.x + (c.col + 0.5) * K * geometry_.scale, y = geometry_.y + (c.row + 0.5) * K * geometry_.scale;
    glfwSetCursorPos(window_, x, y);
    replay_->moved(HoverReplay::Clock::now());
  }
}


// --video: how the video played while the replay ran, for its report.
nlohmann::json App::replay_video_block() const {
  const VideoLatency latency = video_.latency();
  return {{"path", platform::utf8(video_.path())},
          {"frames_shown", video_.shown() - video_replay_->shown},
          {"frames_dropped", video_.dropped() - video_replay_->dropped},
          {"latency_ms_median", latency.count > 0 ? nlohmann::json(latency.median_ms) : nlohmann::json(nullptr)},
          {"latency_frames", latency.count},
          {"ended", video_.ended()}};
}

// What the ViT's main map drew this frame (draw_main_map): the query's patch, the layer and
// the head; nothing while another view or source is shown.
Shown App::vit_shown() const {
  const nlohmann::json& drawn = replay_ && replay_->config().train ? state_.report.train_drawn : state_.report.vit_drawn;
  return drawn.is_null() ? Shown{Cell{-1, -1}, -2, -100} : vit_map_shown_;
}


// The ViT replay, over a loaded ViT or (--train) the model being trained (`session`): once the
// model's first forward pass is shown, the query follows the pointer over the model's patch grid
// (the main map's cells, VitRun::grid()), and every few hovers a layer or head step is a key
// press handled by the key table (keys.cpp) as a student's would be.
void App::step_vit_replay(VitSession& session) {
  const bool train = replay_->config().train;
  const VitRun* src = session.run();
  const nlohmann::json& drawn = train ? state_.report.train_drawn : state_.report.vit_drawn;
  // A video keeps the ViT busy on its next frame: its maps of the last one are drawn meanwhile.
  const bool busy = session.busy() && !video_replay_;
  if (!src || busy || state_.source != (train ? ShownSource::Train : ShownSource::Vit) || !geometry_.valid || drawn.is_null())
    return;
  const SourceGrid g = src->grid();
  SourceChoice& choice = shown_choice(state_);
  if (!vit_replay_started_) {  // the same start on every machine: last layer, heads' mean, the query following the pointer
    vit_replay_started_ = true;
    choice.layer = src->layers() - 1;
    choice.head = HeadChoice{-1, HeadFusion::Mean};
    choice.prefix_token = -1;
    state_.vit_rollout = state_.vit_norms = false;
    choice.query_pinned = false;
    replay_->set_source(ReplaySource{train ? "train" : "vit", train ? "being trained (run A): " + train_.a.switches() : session.file().string(), g.cols, g.rows,
                                     src->patch(), src->layers(), src->heads(), src->path()});
    return;  // drawn once with these settings before the first move
  }
  replay_->path(g.cols, g.rows);
  const auto m = replay_->next();
  if (!m) return;
  if (m->kind == ReplayMove::Kind::Hover) {
    const double cell_w = g.covered_w * geometry_.scale / g.cols, cell_h = g.covered_h * geometry_.scale / g.rows;
    glfwSetCursorPos(window_, geometry_.x + (m->cell.col + 0.5) * cell_w, geometry_.y + (m->cell.row + 0.5) * cell_h);
    replay_->moved(HoverReplay::Clock::now());
    return;
  }
  // Even steps go one layer up (PageUp; End from the first layer back to the last), odd steps
  // to the next head (0…9, then A: the heads' mean, then 0 again).
  const int L = src->layers(), layer = choice_layer(choice, L), heads = std::min(src->heads(), 10);
  int key = 0, want_layer = layer, want_head = shown_head(choice_head(choice, src->heads()));
  if (m->step % 2 == 0) {
    key = layer > 0 ? GLFW_KEY_PAGE_UP : GLFW_KEY_END;
    want_layer = layer > 0 ? layer - 1 : L - 1;
  } else if (want_head < 0 || want_head + 1 < heads) {
    want_head = want_head < 0 ? 0 : want_head + 1;
    key = GLFW_KEY_0 + want_head;
  } else {
    key = GLFW_KEY_A;
    want_head = shown_head(HeadChoice{-1, HeadFusion::Mean});
  }
  key_queue_.push_back({key, 0});
  replay_->stepped(HoverReplay::Clock::now(), want_layer, want_head);
}


void App::report_frames() {
  if (frame_ms_.empty()) return;
  std::sort(frame_ms_.begin(), frame_ms_.end());
  const auto pct = [&](double p) { return frame_ms_[static_cast<size_t>(p * static_cast<double>(frame_ms_.size() - 1))]; };
  std::printf("attnlab: %zu interactive frames, median %.1f ms, 95th percentile %.1f ms (%s)\n", frame_ms_.size(), pct(0.5),
              pct(0.95), hand_made_.name().c_str());
}


}  // namespace attnlab::app
