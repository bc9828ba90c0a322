// Export → Record (issue 40; app/gui/output/recorder.hpp): F8 or the menu starts and stops a
// live recording of what F12 saves (the window, or the map only); a sweep steps one setting over
// its values (app/gui/output/sweeps.hpp), one frame each once its map is drawn, and puts the
// document back; a training recording takes a frame each time the Train tab's run has trained
// N more steps. Frames are read from the back buffer after the frame is rendered, before the swap.
#include "app/gui/shell/app.hpp"

#include "app/gui/output/export.hpp"
#include "core/base/error.hpp"

#include <GLFW/glfw3.h>

#include <cstdio>
#include <thread>

namespace attnlab::app {

// What the shown source offers a sweep: a ViT's grid, layers and heads (the loaded one, or the
// run the Train tab shows), or the hand-made heads' grid, heads and photo.
SweepShape App::sweep_shape() {
  SweepShape shape;
  const VitRun* run = state_.source == ShownSource::Vit ? vit_.run() : state_.source == ShownSource::Train ? shown_train_run() : nullptr;
  if (run) {
    shape.vit = true;
    shape.cols = run->grid().cols;
    shape.rows = run->grid().rows;
    shape.layers = run->layers();
    shape.heads = run->heads();
    shape.pins = static_cast<int>(shown_choice(state_).pins.size());
  } else if (hand_made_.has_image()) {
    shape.cols = hand_made_.grid().cols;
    shape.rows = hand_made_.grid().rows;
    shape.heads = kHeadCount;
    shape.pins = static_cast<int>(state_.hand_made.pins.size());
    shape.image_width = hand_made_.image().width;
    shape.image_height = hand_made_.image().height;
  }
  return shape;
}

void App::start_recording(const std::string& what, int w, int h) {
  RecordPlan plan;
  plan.map_only = state_.export_map_only;
  plan.gif = state_.ui.record_gif;
  plan.fps = state_.ui.record_fps;
  plan.what = plan.map_only ? "map" : "window";
  std::optional<SweepRun> sweep;
  if (what.starts_with("sweep:")) {
    sweep.emplace();
    sweep->kind = what.substr(6);
    sweep->steps = plan_sweep(sweep->kind, state_, sweep_shape());  // throws when the source cannot
    sweep->saved = state_;
    sweep->query_anchor = query_anchor_;
    sweep->pin_anchors = pin_anchors_;
    plan.kind = RecordPlan::Kind::Sweep;
    plan.fps = state_.ui.sweep_fps;
    plan.what = "sweep-" + sweep->kind;
  } else if (what == "training") {
    if (state_.source != ShownSource::Train || !shown_train_run())
      throw Error("cannot record the training: show the Train tab's map of a run first");
    plan.kind = RecordPlan::Kind::Training;
    plan.fps = state_.ui.sweep_fps;
    plan.what = "training";
  }
  nlohmann::json sidecar = sidecar_json(state_, hand_made_, geometry_, w, h);
  recorder_.start(plan, make_export_folder(state_), std::move(sidecar));
  recorded_step_ = -1;
  recorded_steps_.clear();
  last_capture_ = {};
  sweep_ = std::move(sweep);
  if (sweep_) {
    sweep_->steps[0].apply(state_);  // drawn from the next frame on
    state_.commands.redraw();
  }
}

void App::stop_recording() {
  nlohmann::json extra = nlohmann::json::object();
  if (sweep_) {
    nlohmann::json values = nlohmann::json::array();
    for (std::size_t k = 0; k < sweep_->next && k < sweep_->steps.size(); ++k) values.push_back(sweep_->steps[k].value);
    extra["sweep"] = {{"kind", sweep_->kind}, {"values", values}, {"complete", sweep_->next == sweep_->steps.size()}};
    // The document as it was before the sweep. The hand-made session takes its settings here, so
    // that a K swept back is not a change of K that moves the query (keep_cells_in_place).
    static_cast<Document&>(state_) = sweep_->saved;
    query_anchor_ = sweep_->query_anchor;
    pin_anchors_ = sweep_->pin_anchors;
    if (hand_made_.has_image() && !(state_.attention == hand_made_.settings())) hand_made_.set_settings(state_.attention);
    sweep_.reset();
  }
  if (recorder_.plan().kind == RecordPlan::Kind::Training)
    extra["training"] = {{"every_steps", state_.ui.record_every_steps}, {"steps", recorded_steps_}};
  recorder_.stop(extra);
  state_.commands.redraw();
}

// When the window closes: a recording still running is stopped and written (a sweep's settings
// put back first, so they are the ones remembered), waiting up to a minute for the file.
void App::finish_recording() {
  if (!recorder_.busy()) return;
  if (recorder_.recording()) stop_recording();
  for (int i = 0; i < 600 && recorder_.busy(); ++i) {
    if (const auto error = recorder_.poll_error()) std::fprintf(stderr, "attnlab: %s\n", error->c_str());
    if (const auto file = recorder_.take_finished()) {
      saved(*file);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// The picture of `crop` in the frame just rendered (window height `h`) to the recording.
void App::record_frame(const PixelRect& crop, int h) { recorder_.add({crop.w, crop.h, read_back_buffer(crop, h)}); }

// A sweep's frame: once the step's map has been drawn with nothing pending for two frames, the
// frame (`crop` of it) is taken and the next step applied (or the recording stopped after the last).
void App::step_sweep(const PixelRect& crop, int h) {
  state_.commands.redraw();  // frames go on until the sweep ends
  const bool settled = !hand_made_.rows_pending() && !hand_made_.pinned_pending() && !vit_.busy();
  sweep_->settled_frames = settled ? sweep_->settled_frames + 1 : 0;
  if (sweep_->settled_frames < 2) return;
  record_frame(crop, h);
  sweep_->settled_frames = 0;
  ++sweep_->next;
  if (sweep_->next == sweep_->steps.size()) stop_recording();
  else sweep_->steps[sweep_->next].apply(state_);
}

// After the frame is rendered, before the swap: Record's commands, this frame's picture for the
// recording, its limits, and a finished file's toast.
void App::take_recording(int w, int h) {
  if (const auto command = state_.commands.take(Commands::Kind::Record)) {
    try {
      if (recorder_.recording()) stop_recording();
      else if (recorder_.busy()) throw Error("the last recording is still being written");
      else start_recording(command->what, w, h);
    } catch (const Error& e) {
      state_.show_error(e.what());
    }
  }
  if (recorder_.recording() && w > 0 && h > 0) {
    const PixelRect crop = export_crop(recorder_.plan().map_only, geometry_, w, h);
    const auto now = std::chrono::steady_clock::now();
    switch (recorder_.plan().kind) {
      case RecordPlan::Kind::Live:
        // At most one picture per tick of the rate: the writer repeats the newest meanwhile.
        if (now - last_capture_ >= std::chrono::duration<double>(0.9 / recorder_.plan().fps)) {
          record_frame(crop, h);
          last_capture_ = now;
        }
        break;
      case RecordPlan::Kind::Sweep:
        if (sweep_) step_sweep(crop, h);
        break;
      case RecordPlan::Kind::Training: {
        const nlohmann::json& drawn = state_.report.train_drawn;
        if (state_.source == ShownSource::Train && drawn.is_object() && drawn.contains("step")) {
          const std::int64_t step = drawn.at("step").get<std::int64_t>();
          if (recorded_step_ < 0 || step >= recorded_step_ + std::max(1, state_.ui.record_every_steps)) {
            record_frame(crop, h);
            recorded_step_ = step;
            recorded_steps_.push_back(step);
          }
        }
        break;
      }
    }
    if (recorder_.limit_reached()) stop_recording();
  }
  if (const auto error = recorder_.poll_error()) state_.show_error(*error);
  if (const auto file = recorder_.take_finished()) saved(*file);
  state_.ui.record_status = recorder_.status();
  state_.ui.recording_steps = recorder_.recording() && recorder_.plan().kind != RecordPlan::Kind::Live;
}

}  // namespace attnlab::app
