// The documents the window shows: opening an image or a model (the commands a view, a key, a
// menu or a dropped file pushed), the finished background jobs' results, and the attention
// settings handed to the hand-made heads (a change of K keeps the query and the pins over the
// same spot of the photo: core/hand_made/grid_math.hpp).
#include "app/gui/shell/app.hpp"
#include "core/vit/model_family.hpp"
#include "app/gui/output/export.hpp"

#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/base/translate.hpp"
#include "core/io/video.hpp"
#include "core/vit/vit.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

namespace attnlab::app {

// Loads the first image (argument or safari). Throws Error if it cannot be loaded. The remembered
// settings are kept whatever the image: a K that does not fit it is fitted (give_hand_made_image).
void App::open_initial(const std::filesystem::path& path) {
  give_hand_made_image(load_image(path));
  state_.image_path = path;
  clamp_query();
}

// The hand-made heads on a new image (a photo, a video's frame) with the user's settings; the
// user's K when it fits the image, else fitted to it (fitted_patch) and the user's kept in
// ui.wanted_patch, to be saved and tried first on the next image. Painted keys outside the new
// grid are dropped. Throws Error with nothing changed when the image cannot be used.
void App::give_hand_made_image(const Image& img) {
  Settings s = state_.attention;
  const int wanted = state_.ui.wanted_patch.value_or(s.patch);
  s.patch = fitted_patch(img.width, img.height, wanted, s.edge);
  if (s.mask.kind == MaskKind::Painted) {
    const PatchGrid g = make_grid(img.width, img.height, s.patch, s.edge);
    std::erase_if(s.mask.painted, [&](int j) { return j >= g.N(); });
  }
  hand_made_.set_image(img, s);
  state_.attention = s;
  if (s.patch != wanted) state_.ui.wanted_patch = wanted;
  else state_.ui.wanted_patch.reset();
}

void App::open_image(const std::filesystem::path& path) {
  try {
    give_hand_made_image(load_image(path));
    // Pins mark spots of a photo: on another photo they would mark whatever lies there.
    if (!state_.hand_made.pins.empty())
      // TRANSLATORS: %zu is how many pinned queries (patches) there were, %s the photo's file name.
      state_.ui.pinned_note = text_format(_("The %zu pinned queries of %s were cleared: pins belong to the photo they were made on."),
                                          state_.hand_made.pins.size(), state_.image_path.filename().string().c_str());
    state_.hand_made.pins.clear();
    pin_anchors_.clear();
    query_anchor_.clear();
    state_.image_path = path;
    video_.close();  // an image opened while a video plays ends the video
    clamp_query();
    run_vit_on_image();  // the ViT's maps follow, on the scheduler
  } catch (const Error& e) {
    state_.show_error(e.what());  // the previous image and settings stay
  }
}

void App::run_vit_on_image(std::optional<std::chrono::steady_clock::time_point> decoded_at) {
  vit_.set_backend(state_.vit_backend);
  vit_.run_on(hand_made_.image(), state_.vit_resize);
  vit_resize_ = state_.vit_resize;
  ++vit_image_serial_;  // Compare's model B runs on it too (VitCompare::follow)
  video_.handed_to_vit(vit_.busy(), vit_.generation(), decoded_at);
}

void App::step_video() {
  auto played = video_.take_frame(vit_.busy() || compare_.busy());
  if (!played) return;
  const auto decoded_at = played->decoded_at;
  try {
    give_hand_made_image(played->frame.image);
  } catch (const Error& e) {
    state_.show_error(e.what());
    video_.pause();
    return;
  }
  video_.shown_to_hand_made(std::move(*played));
  clamp_query();
  if (vit_.run()) run_vit_on_image(decoded_at);
}

void App::clamp_query() {
  if (!hand_made_.has_image()) return;
  const auto& g = hand_made_.grid();
  Cell& q = state_.hand_made.cell;
  q.col = std::clamp(q.col, 0, g.cols - 1);
  q.row = std::clamp(q.row, 0, g.rows - 1);
}

// The commands to open files, and the results of the jobs that finished since the last frame;
// whatever changes the document asks for the next frame at once, to show it.
void App::take_finished_work() {
  take_file_dialog();
  take_lesson_work();  // lesson.cpp: opened, stepped, saved
  if (const auto open = state_.commands.take(Commands::Kind::OpenImage)) {
    open_image(open->path);
    state_.commands.redraw();
  }
  // A gallery download that finished opens its snapshot like any checkpoint; one that failed says why.
  if (const auto pulled = hub_.take_finished()) {
    state_.commands.open_model(*pulled);
    state_.ui.show_hub_gallery = false;  // the map it opens on is under the window
    if (!hub_error_.empty() && state_.ui.banner == hub_error_) state_.ui.banner.clear();  // an earlier try's error is over
    hub_error_.clear();
  }
  if (const auto error = hub_.take_error()) {
    state_.show_error(*error);
    hub_error_ = state_.ui.banner;  // "cannot download ...", in whatever language
  }
  video_.take_commands(video_max_pixels(vit_memory_budget()));
  video_.take_vit_frame(vit_.generation());  // before step_video hands the ViT the next frame
  step_video();
  if (const auto open = state_.commands.take(Commands::Kind::OpenModel)) {
    const std::filesystem::path& path = open->path;
    if (hand_made_.has_image()) {
      vit_.set_backend(state_.vit_backend);
      vit_.open(path, hand_made_.image(), state_.vit_resize);
      vit_resize_ = state_.vit_resize;
      opening_model_ = path;
      video_.handed_to_vit(true, vit_.generation(), std::nullopt);
    }
    state_.commands.redraw();
  }
  if (vit_.run() && (state_.vit_resize != vit_resize_ || state_.vit_backend != vit_.backend()) && !vit_.busy())
    run_vit_on_image();  // Diagnostics switched the runner or the input size: run again on it
  // A finished ViT job was taken by the scheduler's drain at the start of this frame.
  const unsigned before = std::exchange(seen_vit_generation_, vit_.generation());
  if (const auto error = vit_.poll()) {
    if (opening_model_ && error->find(kResnetNotVit) != std::string::npos) {
      // A ResNet dropped or opened where a ViT goes: set beside the ViT, in the ViT views' CNN tab.
      state_.cnn_model = *opening_model_;
      state_.vit_view = "cnn";
      // TRANSLATORS: %s is the model's file name; the CNN tab is one of the ViT views' tabs.
      state_.show_error(text_format(vit_.run() ? _("%s is a ResNet: it is set beside the ViT in the CNN tab")
                                               : _("%s is a ResNet: it is set beside the ViT in the CNN tab (open a ViT to see the two side by side)"),
                                    opening_model_->filename().string().c_str()));
    } else {
      state_.show_error(text_format(opening_model_ ? _("cannot open the model: %s") : _("the ViT could not run on this image: %s"),
                                    error->c_str()));
    }
    if (!vit_.run()) state_.source = ShownSource::HandMade;
    opening_model_.reset();
    swapped_choice_.reset();
    state_.commands.redraw();
  } else if (vit_.generation() != before) {
    state_.commands.redraw();  // the new maps, and the source tab chosen below, in the next frame too
    if (opening_model_) {  // a new model: show it, CLS query, last layer, remember it
      state_.model_path = *opening_model_;
      state_.source = ShownSource::Vit;
      state_.vit.layer = -1;
      state_.vit.prefix_token = 0;
      if (swapped_choice_) state_.vit = *std::exchange(swapped_choice_, std::nullopt);  // Compare's swap: B's place
      const std::string p = std::filesystem::absolute(*opening_model_).lexically_normal().string();
      std::erase(state_.recent_models, p);
      state_.recent_models.insert(state_.recent_models.begin(), p);
      if (state_.recent_models.size() > 8) state_.recent_models.resize(8);
      opening_model_.reset();
    }
    if (const VitRun* src = vit_.run()) {
      state_.vit.cell.col = std::clamp(state_.vit.cell.col, 0, src->grid().cols - 1);
      state_.vit.cell.row = std::clamp(state_.vit.cell.row, 0, src->grid().rows - 1);
    }
  }
  if (vit_.busy()) state_.commands.redraw();
  if (std::exchange(state_.ui.swap_compared, false) && !state_.model_path.empty() && !state_.compare_model.empty()) {
    swapped_choice_ = compare_.run() ? std::optional<SourceChoice>(compare_.choice()) : std::nullopt;
    const std::filesystem::path a = state_.model_path;
    state_.commands.open_model(state_.compare_model);  // taken in the next frame
    state_.compare_model = a;
  }
  compare_.follow(state_, hand_made_.image(), vit_image_serial_);
  if (const auto error = compare_.poll()) {
    state_.show_error(*error);
    state_.compare_model.clear();  // Compare off: the window shows the ViT alone, as before
  }
  if (compare_.busy()) state_.commands.redraw();
  take_train_results();
  if (!state_.ui.banner.empty() && std::chrono::steady_clock::now() - state_.ui.banner_since > std::chrono::seconds(12))
    state_.ui.banner.clear();  // drawn without it in this frame
}

// The Train tab's results, of both runs: a chunk's maps (taken in the drain), a save's folder
// or its error; and the probe the document asks for, handed to both.
void App::take_train_results() {
  if (train_probe_.update(state_, hand_made_, train_)) state_.commands.redraw();
  // Before Start, the Train tab shows the untrained model's own maps (TrainSession::preview).
  if (state_.source == ShownSource::Train && shown_train().preview()) state_.commands.redraw();
  for (int r = 0; r < 2; ++r) {
    TrainSession& run = train_[r];
    if (const auto error = run.poll_error()) {
      state_.show_error(*error);
      state_.commands.redraw();
    }
    if (const auto saved = run.poll_saved()) {
      // TRANSLATORS: the first %s is the run's name (A or B), the second the checkpoint's folder.
      state_.ui.status = text_format(_("Saved run %s's checkpoint to %s"), run.name().c_str(), saved->string().c_str());
      state_.ui.status_since = std::chrono::steady_clock::now();
      state_.commands.redraw();
    }
    if (run.generation() != seen_train_generation_[static_cast<std::size_t>(r)]) {
      seen_train_generation_[static_cast<std::size_t>(r)] = run.generation();
      if (r == state_.train_run)
        if (const VitRun* src = run.vit().run()) {
          state_.train.cell.col = std::clamp(state_.train.cell.col, 0, src->grid().cols - 1);
          state_.train.cell.row = std::clamp(state_.train.cell.row, 0, src->grid().rows - 1);
        }
      state_.commands.redraw();
    }
    // No frame is asked for while a run trains: each chunk's end wakes the window (the
    // scheduler's wake) and its new maps ask for the next one above, so the CPU between chunks
    // is the training's.
  }
}

// Hands changed attention settings to the hand-made session; settings it refuses (e.g. a K larger
// than the image) leave a banner and the previous, working ones.
void App::apply_settings() {
  if (hand_made_.has_image() && !(state_.attention == hand_made_.settings())) {
    Settings wanted = state_.attention;
    try {
      if (wanted.mask.kind == MaskKind::Painted) {  // painted cells may fall outside a new grid
        const PatchGrid g = make_grid(hand_made_.image().width, hand_made_.image().height, wanted.patch, wanted.edge);
        std::erase_if(wanted.mask.painted, [&](int j) { return j >= g.N(); });
      }
      const PatchGrid before = hand_made_.grid();
      hand_made_.set_settings(wanted);
      state_.attention = wanted;
      if (hand_made_.grid().K != before.K) {
        keep_cells_in_place(before);
        state_.ui.wanted_patch.reset();  // the user chose this K: it is theirs now
      }
    } catch (const Error& e) {
      state_.show_error(e.what());
      state_.attention = hand_made_.settings();  // keep the previous, working settings
    }
    state_.commands.redraw();
  }
  clamp_query();
}

// After a change of K: the query and the pinned patches become the patches that hold the
// point of the photo they stand for (core/hand_made/grid_math.hpp), so they stay over the same spot (the
// giraffe's neck stays the query as K goes from 16 to 8); the points are kept for the next
// change, so K 16 → 32 → 64 → 32 → 16 comes back to the same patch.
void App::keep_cells_in_place(const PatchGrid& before) {
  const PatchGrid& g = hand_made_.grid();
  const RegriddedCell q = regrid_cell(before, g, state_.hand_made.cell.col, state_.hand_made.cell.row, query_anchor_);
  state_.hand_made.cell = Cell{q.col, q.row};
  query_anchor_ = {q.anchor};
  std::vector<Cell> pinned;
  std::vector<PixelPoint> kept;
  for (const Cell& c : state_.hand_made.pins) {
    const RegriddedCell m = regrid_cell(before, g, c.col, c.row, pin_anchors_);
    kept.push_back(m.anchor);
    if (const Cell moved{m.col, m.row}; std::find(pinned.begin(), pinned.end(), moved) == pinned.end()) pinned.push_back(moved);
  }
  state_.hand_made.pins = std::move(pinned);
  pin_anchors_ = std::move(kept);
}

// The Open dialog a key, a menu or a button asked for, shown here, before the frame and outside
// ImGui's: a chosen image or checkpoint becomes an open command of this same frame, a chosen
// folder the export folder; Cancel changes nothing; no dialog at all says why in the banner.
void App::take_file_dialog() {
  const auto asked = state_.commands.take(Commands::Kind::AskForFile);
  if (!asked) return;
  const FileDialogKind kind = asked->asked;
  std::filesystem::path start = kind == FileDialogKind::ExportFolder ? state_.export_dir
                                : kind == FileDialogKind::Image      ? state_.image_path.parent_path()
                                : kind == FileDialogKind::Lesson || kind == FileDialogKind::SaveLesson
                                    ? (lesson_ && !lesson_->file.empty() ? lesson_->file.parent_path() : state_.export_dir)
                                                                     : state_.model_path.parent_path();
  try {
    const auto chosen = show_file_dialog(kind, start);
    if (chosen) {
      switch (kind) {
        case FileDialogKind::Image:
          if (chosen->extension() == ".attnlab") state_.commands.open_lesson(*chosen);  // Ctrl+O opens lessons too
          else state_.commands.open_image(*chosen);
          break;
        case FileDialogKind::Lesson: state_.commands.open_lesson(*chosen); break;
        case FileDialogKind::SaveLesson: state_.commands.save_lesson(*chosen); break;
        case FileDialogKind::ModelFile:
        case FileDialogKind::ModelFolder:
          state_.source = ShownSource::Vit;
          state_.commands.open_model(*chosen);
          break;
        case FileDialogKind::ExportFolder:
          state_.export_dir = choose_export_dir(platform::utf8(*chosen));
          state_.ui.export_dir_text = platform::utf8(state_.export_dir);
          // TRANSLATORS: %s is the export folder.
          state_.ui.status = text_format(_("pictures and CSV go to %s"), platform::utf8(state_.export_dir).c_str());
          state_.ui.status_since = std::chrono::steady_clock::now();
          break;
      }
    }
  } catch (const Error& e) {
    state_.show_error(e.what());  // what was open stays
  }
  state_.commands.redraw();
  input_arrived();  // the dialog took the events meanwhile: the next frames come at once
}

}  // namespace attnlab::app
