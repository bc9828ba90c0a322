// The app's main loop (docs/ARCHITECTURE.md, "The main loop"), top to bottom, one named step
// each: wait for events → begin the frame (finished jobs, opened files, the UI scale) → the views
// (keys, settings, the windows) → render → exports → swap → end the frame (timings, the hover
// benchmark, whether the next frame comes at once). The frame itself (ImGui's new frame, the
// views, render) is ui_frame (frame.hpp), the one `attnlab render` runs too. One AppState holds
// every setting; the parts of the App are in files of their own (app.hpp lists them).
#include "app/gui/shell/app.hpp"

#include "app/commands/options.hpp"

#include "app/gui/output/export.hpp"
#include "app/gui/window/frame.hpp"
#include "app/gui/shell/gui.hpp"
#include "app/gui/shell/keys.hpp"
#include "app/gui/vit/vit_views.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/io/files.hpp"

#include <epoxy/gl.h>
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <backends/imgui_impl_glfw.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace attnlab::app {

App::App(GLFWwindow* window, AppState state, const std::string& context_note, std::optional<HoverReplay> replay)
    : window_(window),
      state_(std::move(state)),
      gallery_(find_gallery()),
      views_(make_views()),
      teaching_(chapter_views(views_)) {
  if (replay) replay_.emplace(parts_, std::move(*replay));
  glfwSetWindowUserPointer(window_, this);  // the input callbacks find the App here (window_setup.cpp)
  state_.report.backend_name = hand_made_.name();
  scheduler_.set_wake([] { glfwPostEmptyEvent(); });  // a finished job ends the event wait
  video_.set_wake([] { glfwPostEmptyEvent(); });                // a decoded video frame too
  recording_.set_wake([] { glfwPostEmptyEvent(); });            // a recording written
  if (!hand_made_.fallback_reason().empty())
    // TRANSLATORS: %s is why the GPU cannot be used (a driver's message).
    state_.show_error(text_format(_("GPU path unavailable (%s): using the CPU reference, slower but correct"),
                                  (context_note.empty() ? hand_made_.fallback_reason() : context_note).c_str()));
  base_style_ = ImGui::GetStyle();
  if (const char* s = std::getenv("ATTNLAB_IDLE_FRAME_S"); s && *s) idle_wait_s_ = std::clamp(std::atof(s), 0.05, 60.0);
}

App::~App() {
  video_.close();  // its thread wakes the window: stopped first
  glfwSetWindowUserPointer(window_, nullptr);
}

int App::run() {
  while (!glfwWindowShouldClose(window_)) {
    wait_for_events();
    begin_frame();
    const FrameTarget window = window_target();
    marks_.drawn = ui_frame(ImGui_ImplGlfw_NewFrame, [this] { draw_views(); }, window);  // views → render
    take_exports(window.width, window.height);
    swap();
    video_.note_latency(state_.source == ShownSource::Vit && vit_.run());
    end_frame();
  }
  recording_.finish();    // a recording running when the window closes is written, not lost
  scheduler_.stop_all();  // the jobs stop while the window is torn down
  if (replay_) return replay_->code();
  keep_unsaved_lesson();  // a lesson being made is not lost with the window
  // The user's own settings, never a lesson's step (SPEC §15).
  if (lesson_ && lesson_->user_document) {
    static_cast<Document&>(state_) = Document(remembered_document());
    state_.ui.wanted_patch.reset();  // the user's own K is the document's (users_document)
  }
  save_remembered(state_, window_);
  report_frames();
  return 0;
}

// Polls when the last frame asked for the next at once (or the benchmark runs); otherwise
// sleeps until an event, a finished job (the scheduler's wake) or idle_wait_s_ (half a second).
void App::wait_for_events() {
  if (redraw_ || (replay_ && !replay_->idle())) glfwPollEvents();
  else glfwWaitEventsTimeout(idle_wait_s_);
  marks_ = FrameMarks{};
  marks_.start = FrameMarks::Clock::now();
  moved_before_ = gl::transfer_counts();
}

// The window's framebuffer, cleared to the colour the panels' backgrounds would give.
FrameTarget App::window_target() const {
  FrameTarget t{0, 0, 0, panel_clear_colour()};
  glfwGetFramebufferSize(window_, &t.width, &t.height);
  return t;
}

// Before anything is drawn, on this thread: the rows the GPU finished since the last frame,
// the finished background jobs' results and the files asked for, the UI scale.
void App::begin_frame() {
  scheduler_.drain();  // the finished jobs' continuations, before any session or view looks
  hand_made_.begin_frame();
  take_finished_work();
  apply_ui_scale();
}

// The views, inside ImGui's frame: the keys queued since the last frame, then the settings the
// last frame's controls and this frame's keys changed (drawn, and exported by an F12 among the
// keys, in this frame), then the windows.
void App::draw_views() {
  handle_keys();
  apply_settings();
  widget_log().clear();
  state_.report.view_errors.clear();
  state_.report.train_compared = nullptr;  // until the runs' side-by-side view draws
  state_.report.train_cnn = nullptr;
  draw_windows();
}

// Each queued key press through the key table (keys.cpp).
void App::handle_keys() {
  std::vector<KeyPress> keys;
  keys.swap(key_queue_);
  for (const KeyPress& k : keys) {
    KeyContext c{state_, hand_made_, vit_.run(), ImGui::GetIO().WantTextInput};
    c.train = shown_train_run();
    press_key(c, k.key, k.mods);
    if (c.quit) glfwSetWindowShouldClose(window_, GLFW_TRUE);
  }
}

// F12, F9 and F8 (Record), from the frame just rendered (before the swap).
// A file written: the toast (naming it, with "Open folder" on its folder), and a line on stdout
// (tests and scripts wait for it).
void App::saved(const std::filesystem::path& file) {
  // TRANSLATORS: %s is the file just written.
  state_.ui.status = text_format(_("saved %s"), file.string().c_str());
  state_.ui.status_since = std::chrono::steady_clock::now();
  state_.ui.saved_line = state_.ui.status;
  state_.ui.saved_folder = file.parent_path();
  std::printf("attnlab: saved %s\n", file.string().c_str());  // English: tests and scripts read it
  std::fflush(stdout);
}

void App::take_exports(int w, int h) {
  if (state_.commands.take(Commands::Kind::ExportPng)) {
    try {
      saved(export_window(state_, hand_made_, geometry_, w, h));
    } catch (const Error& e) {
      state_.show_error(e.what());
    }
  }
  if (state_.commands.take(Commands::Kind::ExportCsv)) {
    try {
      if (state_.source == ShownSource::Vit && vit_.run()) saved(export_vit_csv(state_));
      else if (state_.source == ShownSource::Train && shown_train_run()) saved(export_train_csv(state_));
      else saved(export_row_csv(state_, hand_made_));
    } catch (const Error& e) {
      state_.show_error(e.what());
    }
  }
  recording_.take_frame(w, h);  // Export → Record: this frame for the recording
  marks_.rendered = FrameMarks::Clock::now();
}

void App::swap() { glfwSwapBuffers(window_); }

// After the swap: the frame's report (Diagnostics), the hover benchmark's step, and whether the
// next frame comes at once — asked for by whatever changed the document or a source without
// input (Commands::redraw), by input in the last frames (to show what it changed), by a held
// button, waiting commands or keys, or by rows the GPU has not finished.
void App::end_frame() {
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - marks_.start).count();
  state_.report.last_frame_ms = static_cast<float>(ms);
  state_.report.row_pass_ms = static_cast<float>(hand_made_.row_pass_ms());
  const gl::TransferCounts moved = gl::transfer_counts() - moved_before_;
  state_.report.frame_readbacks = moved.readbacks;
  state_.report.frame_readbacks_waited = moved.waited();
  state_.report.frame_readback_bytes = moved.readback_bytes;
  state_.report.frame_uploads = moved.uploads;
  state_.report.frame_upload_bytes = moved.upload_bytes;
  if (replay_) replay_->step(moved, marks_);
  const bool asked = state_.commands.take_redraw();  // taken every frame, whatever else wants one
  const bool input = frames_after_input_ > 0;
  if (input) --frames_after_input_;
  redraw_ = asked || input || ImGui::IsAnyMouseDown() || !state_.commands.empty() || !key_queue_.empty() ||
            hand_made_.rows_pending() || hand_made_.pinned_pending();
  if (redraw_ || hand_made_.generation() != last_generation_) frame_ms_.push_back(ms);
  last_generation_ = hand_made_.generation();
}

// When the window closes: the interactive frames' median and 95th percentile on stdout (English: tests and
// scripts read the line).
void App::report_frames() {
  if (frame_ms_.empty()) return;
  std::sort(frame_ms_.begin(), frame_ms_.end());
  const auto pct = [&](double p) { return frame_ms_[static_cast<size_t>(p * static_cast<double>(frame_ms_.size() - 1))]; };
  std::printf("attnlab: %zu interactive frames, median %.1f ms, 95th percentile %.1f ms (%s)\n", frame_ms_.size(), pct(0.5),
              pct(0.95), hand_made_.name().c_str());
}

int run_gui(const GuiArgs& args) {
  const std::string& image = args.image;
  const std::string& model = args.model;
  // The hover benchmark's report is checked before a window opens (an existing file, no folder).
  std::optional<HoverReplay> replay;
  if (!args.hover_bench.empty()) {
    HoverBenchConfig config{args.hover_bench};
    config.vit = !model.empty() || args.train;  // over the model's patch grid once it has run
    config.train = args.train;              // the Train tab's model, while it trains
    config.video = args.video;              // while a video plays
    // Fewer hovers for the tests (the benchmark's numbers are at the default, 300).
    if (const char* n = std::getenv("ATTNLAB_HOVER_BENCH_HOVERS"); n && *n) {
      char* end = nullptr;
      const long v = std::strtol(n, &end, 10);
      if (*end != '\0' || v < 1 || v > 100000) throw Error(text_format(_("ATTNLAB_HOVER_BENCH_HOVERS must be a count of hovers, not '%s'"), n));
      config.hovers = static_cast<int>(v);
    }
    // --train: how long the model trains before the replay, so that the curves are as long as a
    // lesson's (the window draws only when a chunk ends meanwhile).
    if (const char* s = std::getenv("ATTNLAB_HOVER_BENCH_TRAIN_S"); s && *s) {
      char* end = nullptr;
      const double v = std::strtod(s, &end);
      if (*end != '\0' || !(v >= 0 && v <= 86400)) throw Error(text_format(_("ATTNLAB_HOVER_BENCH_TRAIN_S must be seconds, not '%s'"), s));
      config.train_first_s = v;
    }
    replay.emplace(std::move(config));
  }
  WindowSession session;
  open_window(session, replay.has_value());
  AppState state = initial_state(session.window, replay);
  if (!args.language.empty()) state.language = args.language;  // --lang CODE: chosen, and saved as the menu's choice
  int code = 0;
  {
    App app(session.window, std::move(state), session.context_note, std::move(replay));
    app.set_font_scale(session.font_scale);
    const auto safari = assets_dir() / "safari.jpg";
    // A lesson file (a double-click in the file manager): the safari photo first, then the
    // lesson plays from step 1 over it.
    const bool lesson = std::filesystem::path(image).extension() == ".attnlab";
    try {
      app.open_initial(image.empty() || lesson ? safari : std::filesystem::path(image));
    } catch (const Error& e) {
      if (image.empty()) throw;
      // TRANSLATORS: %s is why the image given could not be opened.
      app.show_error(text_format(_("%s; showing the safari photo instead"), e.what()));
      app.open_initial(safari);
    }
    if (lesson) app.open_lesson_file(image);
    if (!model.empty()) app.open_model(model);
    if (!args.video.empty()) app.open_video(args.video);  // a video that cannot be read: a banner, the photo stays
    code = app.run();
  }
  return code;
}

}  // namespace attnlab::app
