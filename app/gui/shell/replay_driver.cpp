// The hover benchmark's steps in the window (replay_driver.hpp).
#include "app/gui/shell/replay_driver.hpp"

#include "app/gui/state/source_choice.hpp"
#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/base/translate.hpp"

#include <epoxy/gl.h>
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cstdio>

namespace attnlab::app {

void ReplayDriver::note_vit_map(const VitRun* shown_vit) {
  vit_map_shown_ = Shown{Cell{-1, -1}, -2, -100};
  if (!shown_vit) return;
  const VitRun& src = *shown_vit;
  const SourceChoice& choice = shown_choice(app_.state);
  const SourceGrid g = src.grid();
  const int token = choice_query(choice, g);
  const HeadChoice head = choice_head(choice, src.heads());
  vit_map_shown_ = Shown{token < g.prefix ? Cell{-1, -1} : Cell{(token - g.prefix) % g.cols, (token - g.prefix) / g.cols},
                         choice_layer(choice, src.layers()), shown_head(head)};
}

void ReplayDriver::stop(int code, const std::string& line) {
  std::printf("attnlab: %s\n", line.c_str());
  std::fflush(stdout);
  code_ = code;
  glfwSetWindowShouldClose(app_.window, GLFW_TRUE);
}

void ReplayDriver::step(const gl::TransferCounts& moved, FrameMarks marks) {
  glFinish();  // the frame's pixels are done, not only queued
  marks.end = HoverReplay::Clock::now();
  const bool over_vit = config().vit, over_train = config().train;
  AppState& state = app_.state;
  const VideoPlayer& video = app_.video.player();
  if (over_train) replay_.trained(app_.train.a.step());
  if (over_vit) {
    replay_.frame(marks, moved, vit_shown());
  } else {
    const PatchGrid& g = app_.hand_made.grid();
    const int q = app_.geometry.valid && app_.geometry.query >= 0 ? app_.geometry.query : hand_made_query(state, g);  // the map on screen
    replay_.frame(marks, moved, Shown{Cell{q % g.cols, q / g.cols}, 0, 0});
  }
  const std::string banner = state.ui.banner.empty() ? std::string() : " (" + state.ui.banner + ")";
  if (replay_.done()) {
    try {
      if (video_start_) replay_.set_video(video_block());
      stop(0, replay_.finish(app_.hand_made.name()));
    } catch (const Error& e) {
      stop(1, e.what());
    }
    return;
  }
  // A hover that never reaches the screen (the pointer outside the map, a dialog over it)
  // ends the run with a line that says so rather than hanging.
  if (replay_.frames() > static_cast<std::size_t>(config().hovers) * 20) {
    stop(1, _("hover benchmark: the hovers do not reach the map (is a window over it?)"));
    return;
  }
  if (!config().video.empty() && !video_start_) {
    // --video: the replay begins once a frame of the video is under the map it hovers.
    if (!video.is_open() && !state.commands.pending(Commands::Kind::OpenVideo)) {
      stop(1, _("hover benchmark: the video did not open") + banner);
      return;
    }
    if (!(over_vit ? state.report.video_vit : state.report.video_hand_made)) return;
    video_start_ = VideoStart{video.shown(), video.dropped()};
  }
  if (over_train) {
    TrainSession& run = app_.train.a;
    // Run A with its default shape, shown; the replay begins once it has trained a chunk.
    if (!run.started()) {
      state.source = ShownSource::Train;
      state.train_run = 0;
      run.start();
      train_started_ = HoverReplay::Clock::now();
    } else if (!run.running() && !run.finished()) {
      stop(1, _("hover benchmark: the model stopped training") + banner);
    } else {
      // Until the replay begins the window waits for events as it does with nobody at it: a
      // frame when a chunk ends, so that the training has the CPU a lesson would give it.
      idle_ = run.step() == 0 ||
              std::chrono::duration<double>(HoverReplay::Clock::now() - train_started_).count() < config().train_first_s;
      if (!idle_) step_vit(run.vit());
    }
    return;
  }
  if (over_vit) {
    if (!app_.vit.run() && !app_.vit.busy() && !app_.opening_model && !state.commands.pending(Commands::Kind::OpenModel))
      stop(1, _("hover benchmark: the model did not open") + banner);
    else step_vit(app_.vit);
    return;
  }
  step_hand_made();
}

// Over the hand-made heads' map: the pointer to the path's next patch.
void ReplayDriver::step_hand_made() {
  if (!app_.geometry.valid || app_.state.source == ShownSource::Vit) return;
  const int K = app_.hand_made.settings().patch;
  const PatchGrid& g = app_.hand_made.grid();
  if (replay_.frames() == 0)
    replay_.set_source(ReplaySource{"hand-made", "", g.cols, g.rows, K, 1, kHeadCount, app_.hand_made.name()});
  replay_.path(g.cols, g.rows);
  if (const auto m = replay_.next()) {
    const Cell c = m->cell;
    const ViewGeometry& v = app_.geometry;
    glfwSetCursorPos(app_.window, v.x + (c.col + 0.5) * K * v.scale, v.y + (c.row + 0.5) * K * v.scale);
    replay_.moved(HoverReplay::Clock::now());
  }
}

// --video: how the video played while the replay ran, for its report.
nlohmann::json ReplayDriver::video_block() const {
  const VideoPlayer& video = app_.video.player();
  const VideoLatency latency = video.latency();
  return {{"path", platform::utf8(video.path())},
          {"frames_shown", video.shown() - video_start_->shown},
          {"frames_dropped", video.dropped() - video_start_->dropped},
          {"latency_ms_median", latency.count > 0 ? nlohmann::json(latency.median_ms) : nlohmann::json(nullptr)},
          {"latency_frames", latency.count},
          {"ended", video.ended()}};
}

// What the ViT's main map drew this frame (note_vit_map): the query's patch, the layer and the
// head; nothing while another view or source is shown.
Shown ReplayDriver::vit_shown() const {
  const nlohmann::json& drawn = config().train ? app_.state.report.train_drawn : app_.state.report.vit_drawn;
  return drawn.is_null() ? Shown{Cell{-1, -1}, -2, -100} : vit_map_shown_;
}

// The ViT replay, over a loaded ViT or (--train) the model being trained (`session`): once the
// model's first forward pass is shown, the query follows the pointer over the model's patch grid
// (the main map's cells, VitRun::grid()), and every few hovers a layer or head step is a key
// press handled by the key table (keys.cpp) as a student's would be.
void ReplayDriver::step_vit(VitSession& session) {
  const bool train = config().train;
  AppState& state = app_.state;
  const VitRun* src = session.run();
  const nlohmann::json& drawn = train ? state.report.train_drawn : state.report.vit_drawn;
  // A video keeps the ViT busy on its next frame: its maps of the last one are drawn meanwhile.
  const bool busy = session.busy() && !video_start_;
  const ViewGeometry& v = app_.geometry;
  if (!src || busy || state.source != (train ? ShownSource::Train : ShownSource::Vit) || !v.valid || drawn.is_null())
    return;
  const SourceGrid g = src->grid();
  SourceChoice& choice = shown_choice(state);
  if (!vit_started_) {  // the same start on every machine: last layer, heads' mean, the query following the pointer
    vit_started_ = true;
    choice.layer = src->layers() - 1;
    choice.head = HeadChoice{-1, HeadFusion::Mean};
    choice.prefix_token = -1;
    state.vit_rollout = state.vit_norms = false;
    choice.query_pinned = false;
    replay_.set_source(ReplaySource{train ? "train" : "vit", train ? "being trained (run A): " + app_.train.a.switches() : session.file().string(),
                                    g.cols, g.rows, src->patch(), src->layers(), src->heads(), src->path()});
    return;  // drawn once with these settings before the first move
  }
  replay_.path(g.cols, g.rows);
  const auto m = replay_.next();
  if (!m) return;
  if (m->kind == ReplayMove::Kind::Hover) {
    const double cell_w = g.covered_w * v.scale / g.cols, cell_h = g.covered_h * v.scale / g.rows;
    glfwSetCursorPos(app_.window, v.x + (m->cell.col + 0.5) * cell_w, v.y + (m->cell.row + 0.5) * cell_h);
    replay_.moved(HoverReplay::Clock::now());
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
  app_.keys.push_back({key, 0});
  replay_.stepped(HoverReplay::Clock::now(), want_layer, want_head);
}

}  // namespace attnlab::app
