// Export → Record (recording.hpp): the recording's commands, its frames, a sweep's steps, and
// its menu.
#include "app/gui/shell/recording.hpp"

#include "app/gui/output/export.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <thread>

namespace attnlab::app {

// What the shown source offers a sweep: a ViT's grid, layers and heads (the loaded one, or the
// run the Train tab shows), or the hand-made heads' grid, heads and photo.
SweepShape Recording::sweep_shape() const {
  SweepShape shape;
  const VitRun* run = app_.state.source == ShownSource::Vit ? app_.vit.run() : app_.state.source == ShownSource::Train ? app_.shown_train_run() : nullptr;
  if (run) {
    shape.vit = true;
    shape.cols = run->grid().cols;
    shape.rows = run->grid().rows;
    shape.layers = run->layers();
    shape.heads = run->heads();
    shape.pins = static_cast<int>(shown_choice(app_.state).pins.size());
  } else if (app_.hand_made.has_image()) {
    shape.cols = app_.hand_made.grid().cols;
    shape.rows = app_.hand_made.grid().rows;
    shape.heads = kHeadCount;
    shape.pins = static_cast<int>(app_.state.hand_made.pins.size());
    shape.image_width = app_.hand_made.image().width;
    shape.image_height = app_.hand_made.image().height;
  }
  return shape;
}

void Recording::start(const std::string& what, int w, int h) {
  RecordPlan plan;
  plan.map_only = app_.state.export_map_only;
  plan.gif = app_.state.ui.record_gif;
  plan.fps = app_.state.ui.record_fps;
  plan.what = plan.map_only ? "map" : "window";
  std::optional<SweepRun> sweep;
  if (what.starts_with("sweep:")) {
    sweep.emplace();
    sweep->kind = what.substr(6);
    sweep->steps = plan_sweep(sweep->kind, app_.state, sweep_shape());  // throws when the source cannot
    sweep->saved = app_.state;
    sweep->query_anchor = app_.query_anchor;
    sweep->pin_anchors = app_.pin_anchors;
    plan.kind = RecordPlan::Kind::Sweep;
    plan.fps = app_.state.ui.sweep_fps;
    plan.what = "sweep-" + sweep->kind;
  } else if (what == "training") {
    if (app_.state.source != ShownSource::Train || !app_.shown_train_run())
      throw Error(_("cannot record the training: show the Train tab's map of a run first"));
    plan.kind = RecordPlan::Kind::Training;
    plan.fps = app_.state.ui.sweep_fps;
    plan.what = "training";
  }
  nlohmann::json sidecar = sidecar_json(app_.state, app_.hand_made, app_.geometry, w, h);
  recorder_.start(plan, make_export_folder(app_.state), std::move(sidecar));
  recorded_step_ = -1;
  recorded_steps_.clear();
  last_capture_ = {};
  sweep_ = std::move(sweep);
  if (sweep_) {
    sweep_->steps[0].apply(app_.state);  // drawn from the next frame on
    app_.state.commands.redraw();
  }
}

void Recording::stop() {
  nlohmann::json extra = nlohmann::json::object();
  if (sweep_) {
    nlohmann::json values = nlohmann::json::array();
    for (std::size_t k = 0; k < sweep_->next && k < sweep_->steps.size(); ++k) values.push_back(sweep_->steps[k].value);
    extra["sweep"] = {{"kind", sweep_->kind}, {"values", values}, {"complete", sweep_->next == sweep_->steps.size()}};
    // The document as it was before the sweep. The hand-made session takes its settings here, so
    // that a K swept back is not a change of K that moves the query (keep_cells_in_place).
    static_cast<Document&>(app_.state) = sweep_->saved;
    app_.query_anchor = sweep_->query_anchor;
    app_.pin_anchors = sweep_->pin_anchors;
    if (app_.hand_made.has_image() && !(app_.state.attention == app_.hand_made.settings())) app_.hand_made.set_settings(app_.state.attention);
    sweep_.reset();
  }
  if (recorder_.plan().kind == RecordPlan::Kind::Training)
    extra["training"] = {{"every_steps", app_.state.ui.record_every_steps}, {"steps", recorded_steps_}};
  recorder_.stop(extra);
  app_.state.commands.redraw();
}

// When the window closes: a recording still running is stopped and written (a sweep's settings
// put back first, so they are the ones remembered), waiting up to a minute for the file.
void Recording::finish() {
  if (!recorder_.busy()) return;
  if (recorder_.recording()) stop();
  for (int i = 0; i < 600 && recorder_.busy(); ++i) {
    if (const auto error = recorder_.poll_error()) std::fprintf(stderr, "attnlab: %s\n", error->c_str());  // i18n: English (the program's name)
    if (const auto file = recorder_.take_finished()) {
      app_.saved(*file);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// The picture of `crop` in the frame just rendered (window height `h`) to the recording.
void Recording::add_frame(const PixelRect& crop, int h) { recorder_.add({crop.w, crop.h, read_back_buffer(crop, h)}); }

// A sweep's frame: once the step's map has been drawn with nothing pending for two frames, the
// frame (`crop` of it) is taken and the next step applied (or the recording stopped after the last).
void Recording::step_sweep(const PixelRect& crop, int h) {
  app_.state.commands.redraw();  // frames go on until the sweep ends
  const bool settled = !app_.hand_made.rows_pending() && !app_.hand_made.pinned_pending() && !app_.vit.busy() &&
                       !app_.vit.gradients_busy();
  sweep_->settled_frames = settled ? sweep_->settled_frames + 1 : 0;
  if (sweep_->settled_frames < 2) return;
  add_frame(crop, h);
  sweep_->settled_frames = 0;
  ++sweep_->next;
  if (sweep_->next == sweep_->steps.size()) stop();
  else sweep_->steps[sweep_->next].apply(app_.state);
}

// After the frame is rendered, before the swap: Record's commands, this frame's picture for the
// recording, its limits, and a finished file's toast.
void Recording::take_frame(int w, int h) {
  if (const auto command = app_.state.commands.take(Commands::Kind::Record)) {
    try {
      if (recorder_.recording()) stop();
      else if (recorder_.busy()) throw Error(_("the last recording is still being written"));
      else start(command->what, w, h);
    } catch (const Error& e) {
      app_.state.show_error(e.what());
    }
  }
  if (recorder_.recording() && w > 0 && h > 0) {
    const PixelRect crop = export_crop(recorder_.plan().map_only, app_.geometry, w, h);
    const auto now = std::chrono::steady_clock::now();
    switch (recorder_.plan().kind) {
      case RecordPlan::Kind::Live:
        // At most one picture per tick of the rate: the writer repeats the newest meanwhile.
        if (now - last_capture_ >= std::chrono::duration<double>(0.9 / recorder_.plan().fps)) {
          add_frame(crop, h);
          last_capture_ = now;
        }
        break;
      case RecordPlan::Kind::Sweep:
        if (sweep_) step_sweep(crop, h);
        break;
      case RecordPlan::Kind::Training: {
        const nlohmann::json& drawn = app_.state.report.train_drawn;
        if (app_.state.source == ShownSource::Train && drawn.is_object() && drawn.contains("step")) {
          const std::int64_t step = drawn.at("step").get<std::int64_t>();
          if (recorded_step_ < 0 || step >= recorded_step_ + std::max(1, app_.state.ui.record_every_steps)) {
            add_frame(crop, h);
            recorded_step_ = step;
            recorded_steps_.push_back(step);
          }
        }
        break;
      }
    }
    if (recorder_.limit_reached()) stop();
  }
  if (const auto error = recorder_.poll_error()) app_.state.show_error(*error);
  if (const auto file = recorder_.take_finished()) app_.saved(*file);
  app_.state.ui.record_status = recorder_.status();
  app_.state.ui.record_state = recorder_.recording() ? "recording" : recorder_.busy() ? "writing" : "";  // i18n: English (a sidecar's value)
  app_.state.ui.recording_steps = recorder_.recording() && recorder_.plan().kind != RecordPlan::Kind::Live;
}

// Export → Record: a live recording of what F12 saves (F8), a sweep of one setting, the
// training; GIF or MP4, and the rates (app/gui/output/recorder.hpp).
void Recording::draw_menu() {
  ImGui::Separator();
  const bool recording = recorder_.recording();
  const char* live = recording ? _("Stop recording") : app_.state.export_map_only ? _("Record the map") : _("Record the window");
  if (ImGui::MenuItem(live, "F8", false, recording || !recorder_.busy())) app_.state.commands.record();
  record_widget("menu:Export/record");
  ImGui::MenuItem(_("Record as GIF (else MP4)"), nullptr, &app_.state.ui.record_gif);
  record_widget("menu:Export/record_gif");
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  // TRANSLATORS: frames per second of a live recording.
  ImGui::SliderFloat(_("frames/s (live)"), &app_.state.ui.record_fps, 1, 30, "%.0f");
  record_widget("menu:Export/record_fps");
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  ImGui::SliderFloat(_("frames/s (sweeps, training)"), &app_.state.ui.sweep_fps, 0.5f, 30, "%.1f");
  record_widget("menu:Export/sweep_fps");
  ImGui::Separator();
  // TRANSLATORS: a sweep records one setting (e.g. the head, K) taking each of its values in turn.
  ImGui::TextDisabled("%s", _("Sweeps: one frame per value, then the settings come back"));
  const SweepShape shape = sweep_shape();
  for (const std::string& kind : sweep_kinds()) {
    const std::string why = sweep_unavailable(kind, shape);
    // TRANSLATORS: %s is what is swept ("the head", "K", ...): a menu item that records it.
    if (ImGui::MenuItem(text_format(_("Sweep %s"), sweep_label(kind).c_str()).c_str(), nullptr, false, why.empty() && !recorder_.busy()))
      app_.state.commands.record("sweep:" + kind);
    if (!why.empty() && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("%s", why.c_str());
    record_widget("menu:Export/sweep:" + kind);
  }
  const bool training = app_.state.source == ShownSource::Train && app_.shown_train_run();
  if (ImGui::MenuItem(_("Record the training run"), nullptr, false, training && !recorder_.busy())) app_.state.commands.record("training");
  if (!training && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", _("show the Train tab's map of a run first"));
  record_widget("menu:Export/record_training");
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  ImGui::InputInt(_("steps between frames"), &app_.state.ui.record_every_steps);
  app_.state.ui.record_every_steps = std::clamp(app_.state.ui.record_every_steps, 1, 100000);
  record_widget("menu:Export/record_every_steps");
}

}  // namespace attnlab::app
