// The documents the window shows: opening an image or a model (the commands a view, a key, a
// menu or a dropped file pushed), the finished background jobs' results, and the attention
// settings handed to the hand-made heads (a change of K keeps the query and the pins over the
// same spot of the photo: core/hand_made/grid_math.hpp).
#include "app/gui/shell/app.hpp"
#include "app/gui/output/export.hpp"

#include "core/base/error.hpp"
#include "core/io/fashion_mnist.hpp"
#include "core/base/platform.hpp"
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
      state_.ui.pinned_note = "The " + std::to_string(state_.hand_made.pins.size()) + " pinned queries of " +
                           state_.image_path.filename().string() + " were cleared: pins belong to the photo they were made on.";
    state_.hand_made.pins.clear();
    pin_anchors_.clear();
    query_anchor_.clear();
    state_.image_path = path;
    video_.close();  // an image opened while a video plays ends the video
    state_.ui.video_open = false;
    state_.report.video_hand_made.reset();
    state_.report.video_vit.reset();
    state_.report.video = nullptr;
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
  video_for_vit_.reset();
  if (vit_.busy() && state_.report.video_hand_made)  // a job started (there is a model): of this frame
    video_for_vit_ = VideoFrameForVit{*state_.report.video_hand_made, vit_.generation(), decoded_at};
}

void App::take_vit_video_frame() {
  if (!video_for_vit_ || vit_.generation() == video_for_vit_->vit_generation) return;
  state_.report.video_vit = video_for_vit_->frame;
  vit_drawn_due_ = video_for_vit_->decoded_at;
  video_for_vit_.reset();
}

void App::note_video_latency() {
  const auto due = state_.source == ShownSource::Vit && vit_.run() ? (state_.report.vit_drawn.is_null() ? std::nullopt : vit_drawn_due_)
                   : state_.source == ShownSource::HandMade        ? hand_made_drawn_due_
                                                                   : std::nullopt;
  if (due && video_.is_open())
    video_.note_latency(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - *due).count());
  hand_made_drawn_due_.reset();
  vit_drawn_due_.reset();
}

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

void App::step_video() {
  state_.ui.video_open = video_.is_open();
  if (!video_.is_open()) return;
  if (const auto error = video_.poll_error()) state_.show_error(*error);
  state_.ui.video_paused = video_.paused();
  state_.ui.video_status = video_.status();
  state_.report.video = video_report(video_);
  if (video_.paused() || video_.ended()) return;
  // Newest frame wins: a frame is taken only when the ViT's job on the last one is done; the
  // ones decoded meanwhile were dropped by the player.
  if (vit_.busy() || compare_.busy()) return;
  auto played = video_.take();  // the player's thread wakes the loop when the next one is decoded
  if (!played) return;
  state_.commands.redraw();
  try {
    give_hand_made_image(played->frame.image);
  } catch (const Error& e) {
    state_.show_error(e.what());
    video_.set_paused(true);
    return;
  }
  state_.image_path = video_.path();
  state_.report.video_hand_made = ShownVideoFrame{video_.path(), played->frame.index, played->frame.time,
                                                  std::make_shared<const Image>(std::move(played->frame.image))};
  hand_made_drawn_due_ = played->decoded_at;  // the new image's rows are drawn in this frame
  clamp_query();
  if (vit_.run()) run_vit_on_image(played->decoded_at);
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
  if (const auto open = state_.commands.take(Commands::Kind::OpenImage)) {
    open_image(open->path);
    state_.commands.redraw();
  }
  // A gallery download that finished opens its snapshot like any checkpoint; one that failed says why.
  if (const auto pulled = hub_.take_finished()) {
    state_.commands.open_model(*pulled);
    state_.ui.show_hub_gallery = false;  // the map it opens on is under the window
    if (state_.ui.banner.starts_with("cannot download")) state_.ui.banner.clear();  // an earlier try's error is over
  }
  if (const auto error = hub_.take_error()) state_.show_error(*error);
  if (const auto open = state_.commands.take(Commands::Kind::OpenVideo)) {
    try {
      video_.open(open->path, video_max_pixels(vit_memory_budget()));
    } catch (const Error& e) {
      state_.show_error(e.what());  // the previous image (or video) stays
    }
    state_.commands.redraw();
  }
  if (state_.commands.take(Commands::Kind::PauseVideo) && video_.is_open()) {
    video_.set_paused(!video_.paused());
    state_.commands.redraw();
  }
  take_vit_video_frame();  // before step_video hands the ViT the next frame
  step_video();
  if (const auto open = state_.commands.take(Commands::Kind::OpenModel)) {
    const std::filesystem::path& path = open->path;
    if (hand_made_.has_image()) {
      vit_.set_backend(state_.vit_backend);
      vit_.open(path, hand_made_.image(), state_.vit_resize);
      vit_resize_ = state_.vit_resize;
      opening_model_ = path;
      video_for_vit_.reset();
      if (state_.report.video_hand_made) video_for_vit_ = VideoFrameForVit{*state_.report.video_hand_made, vit_.generation(), std::nullopt};
    }
    state_.commands.redraw();
  }
  if (vit_.run() && (state_.vit_resize != vit_resize_ || state_.vit_backend != vit_.backend()) && !vit_.busy())
    run_vit_on_image();  // Diagnostics switched the runner or the input size: run again on it
  // A finished ViT job was taken by the scheduler's drain at the start of this frame.
  const unsigned before = std::exchange(seen_vit_generation_, vit_.generation());
  if (const auto error = vit_.poll()) {
    state_.show_error((opening_model_ ? "cannot open the model: " : "the ViT could not run on this image: ") + *error);
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
  give_train_probe();
  // Before Start, the Train tab shows the untrained model's own maps (TrainSession::preview).
  if (state_.source == ShownSource::Train && shown_train().preview()) state_.commands.redraw();
  for (int r = 0; r < 2; ++r) {
    TrainSession& run = train_[r];
    if (const auto error = run.poll_error()) {
      state_.show_error(*error);
      state_.commands.redraw();
    }
    if (const auto saved = run.poll_saved()) {
      state_.ui.status = "Saved run " + run.name() + "'s checkpoint to " + saved->string();
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

// The probe both runs' maps are of, from the document: a Fashion-MNIST test image, or the photo
// the window has open made as the training data are (again when another photo opens).
void App::give_train_probe() {
  // The photo a masked-patch run cuts its crops from, when it starts: the window's.
  if (hand_made_.has_image() && state_.image_path.string() != given_photo_) {
    given_photo_ = state_.image_path.string();
    auto shared = std::make_shared<const Image>(hand_made_.image());
    train_.a.set_photo(shared, state_.image_path.filename().string());
    train_.b.set_photo(std::move(shared), state_.image_path.filename().string());
  }
  const bool photo = state_.train_probe_photo && hand_made_.has_image();
  const std::string key = photo ? "photo:" + state_.image_path.string() : "test:" + std::to_string(state_.train_probe);
  if (key == given_probe_) return;
  given_probe_ = key;
  TrainProbe probe;
  if (photo) {
    const VitTrainShape input;  // the data's 28 × 28, whatever the runs' shapes
    probe.photo = std::make_shared<const Image>(fashion_mnist_style(hand_made_.image(), input.image_rows, input.image_cols));
    probe.name = "photo " + state_.image_path.filename().string();
  } else {
    probe.test_index = std::clamp(state_.train_probe, 0, kFashionMnistTestCount - 1);
    probe.name = "test image " + std::to_string(probe.test_index);
  }
  train_.a.set_probe(probe);
  train_.b.set_probe(std::move(probe));
  state_.commands.redraw();
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
                                                                     : state_.model_path.parent_path();
  try {
    const auto chosen = show_file_dialog(kind, start);
    if (chosen) {
      switch (kind) {
        case FileDialogKind::Image: state_.commands.open_image(*chosen); break;
        case FileDialogKind::ModelFile:
        case FileDialogKind::ModelFolder:
          state_.source = ShownSource::Vit;
          state_.commands.open_model(*chosen);
          break;
        case FileDialogKind::ExportFolder:
          state_.export_dir = choose_export_dir(platform::utf8(*chosen));
          state_.ui.export_dir_text = platform::utf8(state_.export_dir);
          state_.ui.status = "pictures and CSV go to " + platform::utf8(state_.export_dir);
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
