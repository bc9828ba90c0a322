#pragma once
// The window's app (docs/ARCHITECTURE.md, "The main loop"): one App per window, its members
// defined in a file per part — app.cpp the loop, app_sources.cpp opening files and running the
// ViT, window_setup.cpp the window, fonts and UI scale, layout.cpp the panels, menus.cpp the
// menu bar, tour.cpp the teaching views and the guided tour, keys.cpp the key table. What runs
// beside the views are objects the App owns and calls from its loop, each given the App's parts
// (app_parts.hpp): the recording (recording.hpp), the hover benchmark (replay_driver.hpp), the
// video (app/gui/sessions/video_feed.hpp) and the Train tab's probe
// (app/gui/train/train_probe_feed.hpp). Only app/gui's own files include this header.
#include "app/gui/state/app_state.hpp"
#include "app/gui/train/cka_view.hpp"
#include "app/gui/window/frame.hpp"
#include "app/gui/sessions/hand_made_session.hpp"
#include "app/gui/output/hover_bench.hpp"
#include "app/gui/sessions/hub_session.hpp"
#include "app/gui/maps/map_source.hpp"
#include "app/gui/chapter/teaching_view.hpp"
#include "app/gui/sessions/train_session.hpp"
#include "app/gui/maps/map_pictures.hpp"
#include "app/gui/panels/panels.hpp"
#include "app/gui/sessions/vit_session.hpp"
#include "app/gui/shell/app_parts.hpp"
#include "app/gui/shell/recording.hpp"
#include "app/gui/shell/replay_driver.hpp"
#include "app/gui/train/train_probe_feed.hpp"
#include "app/gui/views/view_registry.hpp"
#include "app/gui/vit/vit_compare.hpp"
#include "app/commands/lesson_steps.hpp"
#include "core/gpu/gl.hpp"
#include "core/io/lesson.hpp"
#include "core/hand_made/grid_math.hpp"

#include <imgui.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct GLFWwindow;

namespace attnlab::app {

struct PixelRect;  // app/gui/output/export.hpp

// --- window_setup.cpp ------------------------------------------------------------------------

/// GLFW, the window with its context and ImGui's backends, released in this fixed order on every
/// way out of run_gui (a thrown error too). The App, with its views' worker threads and GL
/// objects, is gone before: it lives in an inner scope while the context is current.
struct WindowSession {
  GLFWwindow* window = nullptr;
  bool imgui = false, imgui_glfw = false, imgui_gl = false;
  std::string ini;           ///< ImGui's layout file, saved when its context is destroyed
  std::string context_note;  ///< why the OpenGL version asked for could not be had (empty: it was)
  float font_scale = 1;      ///< setup_app_style's factor per unit of UI scale
  WindowSession() = default;
  WindowSession(const WindowSession&) = delete;
  WindowSession& operator=(const WindowSession&) = delete;
  ~WindowSession();
};

/// Initializes GLFW, opens the window where it fits (window_fit.hpp: 1600 × 1000 times the
/// monitor's content scale at most, inside the primary monitor's work area, or where the last run
/// left it, put back on screen) with OpenGL 4.3 (or ATTNLAB_GL_VERSION, else 3.3),
/// sets up ImGui on it with the app's font and style and installs the App's input callbacks
/// (before ImGui's hand_made, which chains to them). `benchmark`: no vsync, no remembered layout.
/// Throws Error when no window can be opened.
void open_window(WindowSession& session, bool benchmark);

/// The state the window starts with: the UI scale from the screen's content scale, the
/// remembered settings (not for the benchmark: its own fixed ones) and ATTNLAB_EXPORT_DIR. A
/// settings.json that cannot be read is named in the banner and kept (ui.settings_kept).
/// `window` may be null (scale 1).
AppState initial_state(GLFWwindow* window, const std::optional<HoverReplay>& replay);

/// Writes the settings to remember (config_dir()/settings.json; settings.new.json beside it when
/// the file read at start could not be read: that one is never written over), with the window's
/// position and size ("window_placement") when `window` is given; a failure is a line on stderr.
void save_remembered(const AppState& state, GLFWwindow* window = nullptr);

/// The gallery's photos in assets/, safari first.
std::vector<std::filesystem::path> find_gallery();

// --- The app ---------------------------------------------------------------------------------

/// The lesson the window has open (lesson.cpp, SPEC §15): made with F6 and the Lesson menu, or
/// opened from a file, and played step by step.
struct OpenLesson {
  Lesson lesson;
  std::filesystem::path file;              ///< where it was opened from or last saved ("" for a new one)
  std::unique_ptr<LessonFolder> folder;    ///< its photos while it is open (a private temporary folder)
  int step = -1;                           ///< the step shown (played, or chosen in the editor)
  bool dirty = false;                      ///< changed since opened or saved
  /// The user's own document while a step drives the window: put back when the lesson is left
  /// and what settings.json keeps (a lesson's state is never written there).
  std::optional<Document> user_document;
  bool reapply = false;   ///< the step's model is opening: its choice is applied again once it has
  std::string missing;    ///< why the step could not be shown (a model not on this machine), "" when it is
  std::string pull;       ///< the missing model's Hub `repo@commit`, offered as a download
  int pulling_step = -1;  ///< the step played again once that download has finished
  bool discard_armed = false;  ///< its unsaved changes were named once: the next open or New discards them
};

class App {
 public:
  App(GLFWwindow* window, AppState state, const std::string& context_note, std::optional<HoverReplay> replay = std::nullopt);
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  /// The main loop, until the window closes; the exit code.
  int run();

  /// Loads the first image (argument or safari). Throws Error if it cannot be loaded. The
  /// remembered settings are kept: a K that does not fit the image is fitted to it
  /// (give_hand_made_image), never reset.
  void open_initial(const std::filesystem::path& path);
  void set_font_scale(float s) { font_scale_ = s; }
  void open_model(const std::filesystem::path& path) { state_.commands.open_model(path); }
  void open_video(const std::filesystem::path& path) { state_.commands.open_video(path); }
  void open_lesson_file(const std::filesystem::path& path) { state_.commands.open_lesson(path); }
  void show_error(const std::string& message) { state_.show_error(message); }

  // What the GLFW callbacks hand over (window_setup.cpp: they find the App through the window's
  // user pointer).
  void dropped(const std::filesystem::path& path);
  void key_pressed(int key, int mods) { key_queue_.push_back({key, mods}); }
  /// An input event (pointer, button, wheel, key, text, focus, resize): a frame follows it, and
  /// two more to show what it changed. Two: a press and its release polled together reach ImGui
  /// over two frames (the press in the first, the release — when a button acts — in the
  /// second), and what the release changed is drawn in the third.
  void input_arrived() { frames_after_input_ = 2; }

 private:
  // The frame's steps, in the order App::run calls them (app.cpp).
  void wait_for_events();
  void begin_frame();
  FrameTarget window_target() const;
  void draw_views();
  void take_exports(int w, int h);
  void saved(const std::filesystem::path& file);
  void swap();
  void end_frame();

  // Opening files, running the ViT, settings (app_sources.cpp).
  void open_image(const std::filesystem::path& path);
  void give_hand_made_image(const Image& img);
  void clamp_query();
  void take_finished_work();
  void take_file_dialog();
  /// Images → Open video: the newest frame becomes the image when the sources are ready.
  void step_video();
  /// The ViT on the hand-made session's image (the resize and runner the document asks for);
  /// a video's frame is remembered until the ViT's maps of it arrive (VideoFeed::take_vit_frame),
  /// `decoded_at` when its latency counts (a frame just taken from the player).
  void run_vit_on_image(std::optional<std::chrono::steady_clock::time_point> decoded_at = std::nullopt);
  void take_train_results();
  // The run the Train tab shows (Document::train_run), its map source, and its snapshot (null before one).
  TrainSession& shown_train() { return parts_.shown_train(); }
  VitMapSource& shown_train_map() { return state_.train_run == 1 ? train_map_b_ : train_map_a_; }
  const VitRun* shown_train_run() { return parts_.shown_train_run(); }
  void apply_settings();
  void keep_cells_in_place(const PatchGrid& before);

  // Window setup (window_setup.cpp).
  void apply_ui_scale();
  void draw_language_menu();

  // Keys (keys.cpp holds the table).
  void handle_keys();

  // Layout (layout.cpp).
  void draw_windows();
  void draw_source_tabs();
  void draw_vit_lower_tabs();
  void draw_toast(ImVec2 d);
  void draw_banner(ImVec2 d, float menu_h);
  void draw_presentation(ImVec2 d);
  void draw_panels(ImVec2 d, float menu_h);
  MapSource& map_source();
  // The sources as the views see them (app/gui/maps/view.hpp): what each offers.
  ViewSource hand_made_view_source();
  ViewSource vit_view_source();
  void draw_main_map();
  void draw_model_gallery();
  void record_window(const std::string& name);
  void begin_panel(const std::string& title, const std::string& name, bool* open, ImGuiWindowFlags flags, bool background = false);
  // The colour a panel's background gives over the window's own clear colour: what the window
  // is cleared to, so that tiled panels need no background of their own (begin_panel).
  static std::array<float, 3> panel_clear_colour();

  // Menus (menus.cpp).
  float draw_menu_bar();
  bool begin_menu(const char* label);
  void menu_item(const std::string& name, const char* label, const char* shortcut, bool* selected);
  void draw_key_list();

  // The lesson (lesson.cpp): opened, played, made and saved; its caption strip and menu.
  void take_lesson_work();
  void open_lesson(const std::filesystem::path& path);
  void play_step(int index, bool open_models = true);
  void apply_document(const Document& d, bool open_models);
  void leave_lesson();
  void add_lesson_step();
  void save_lesson(const std::filesystem::path& path);
  void new_lesson();
  /// False (and a banner) the first time an open or New would drop the lesson's unsaved changes.
  bool may_replace_lesson();
  /// At the window's close: a lesson with unsaved changes written to the config folder, not lost.
  void keep_unsaved_lesson();
  /// The window's room for the views: the display less the lesson's caption strip.
  ImVec2 room() const;
  void measure_lesson_strip(ImVec2 d);
  void draw_lesson_strip(ImVec2 d);
  void draw_lesson_menu();
  void draw_lesson_editor(float menu_h);
  /// The user's own document (the lesson's state never goes to settings.json).
  const Document& remembered_document();
  /// The window's document as the user's own, kept while a lesson plays: its K the one the user
  /// wants (ui.wanted_patch, when the photo shown has a fitted K), as settings.json saves it.
  Document users_document() const;

  // The teaching views and the guided tour (tour.cpp).
  void set_tour_step(int step);
  /// True while a chapter view is open (it takes the map's place).
  bool teaching_view_open() const;
  void draw_teaching_windows(float menu_h);
  void draw_hub_window(float menu_h);
  void draw_compare_window(float menu_h);
  bool comparing() const;
  void draw_compared_maps();
  void draw_tour_box();
  void report_frames();

  GLFWwindow* window_;
  AppState state_;
  // The one scheduler of the window's background work (state/scheduler.hpp), handed to every
  // session and view that has jobs. Declared before them all, so gone after them: each cancels
  // its jobs when it goes, run() stops the rest (stop_all) and the destructor joins the threads.
  Scheduler scheduler_;
  HandMadeSession hand_made_{scheduler_};  // hands it on to the teaching views' jobs
  VitSession vit_{scheduler_};
  HubSession hub_{scheduler_};  // the gallery's downloads (Model → Gallery)
  std::string hub_error_;       // its last error shown in the banner (cleared once a download succeeds)
  VideoFeed video_{state_};  // Images → Open video
  TrainRuns train_{scheduler_};  // the Train tab's runs A and B
  TrainProbeFeed train_probe_;   // what both runs' maps are of
  // The similarity (CKA) views of the loaded ViT and of the model being trained.
  CkaJob vit_cka_{scheduler_, "cka:vit"};
  CkaJob train_cka_{scheduler_, "cka:train"};
  // The attention sources the map views draw (map_source.hpp), over the hand-made session and the sessions.
  HandMadeMapSource hand_made_map_{state_, hand_made_};
  VitMapSource vit_map_{state_, vit_};
  VitCompare compare_{scheduler_};  // View → Compare: model B beside the ViT's map
  unsigned vit_image_serial_ = 0;   // bumped when the ViT is run on another image or size (B follows)
  std::optional<ValueRange> compare_range_;  // Compare's one scale, from the last frame's two maps
  std::optional<SourceChoice> swapped_choice_;  // Compare's swap: B's choice, A's once its new model opens
  // The models being trained, as ViTs: run A's and run B's (Document::train_run picks the one shown).
  VitMapSource train_map_a_{state_, train_.a.vit(), ShownSource::Train}, train_map_b_{state_, train_.b.vit(), ShownSource::Train};
  std::optional<std::filesystem::path> opening_model_;
  int vit_resize_ = 0;
  unsigned seen_vit_generation_ = 0;  // vit_.generation() when take_finished_work() last looked
  std::array<unsigned, 2> seen_train_generation_{};  // the runs' generation() when it last looked
  ShownSource shown_tab_ = ShownSource::HandMade;  // the source tab drawn last
  int shown_vit_lower_ = -1;
  std::string layout_key_;  // the window size, UI scale and source the panels were last laid out for
  // Where each panel and floating window was in this frame and the last (x, y, w, h).
  std::map<std::string, std::array<float, 4>> panel_rects_, last_panel_rects_;
  float controls_w_ = 0;  // the Controls column's width in this frame's layout (panel_layout)
  float tour_h_ = 160;  // the guided tour box's height in the last frame (pixels)
  // The photo's points that the query and the pinned patches stand for across changes of K
  // (keep_cells_in_place, core/hand_made/grid_math.hpp).
  std::vector<PixelPoint> query_anchor_, pin_anchors_;
  std::vector<std::filesystem::path> gallery_;
  // Every view (app/gui/views/view_registry.hpp) and the chapter's among them, in the tour's order.
  std::vector<std::unique_ptr<View>> views_;
  std::vector<View*> teaching_;
  EngineRowCheck row_check_;  // the Diagnostics panel's check of the engine against the reference
  ViewGeometry geometry_;
  ImGuiStyle base_style_;
  float applied_scale_ = -1, font_scale_ = 1;
  bool font_rebuilt_ = false;  // the UI font rasterized at the applied scale (load_ui_font)
  bool applied_presentation_ = false;
  std::optional<std::string> applied_language_;  // the document's language last applied (use_language), none yet
  // The loop's own: keys queued by the callback, input seen since the last frame, whether the
  // next frame comes at once (else on the next event, a finished job or after 0.5 s).
  std::vector<KeyPress> key_queue_;
  int frames_after_input_ = 0;  // frames still to draw at once after the last input event
  bool redraw_ = true;
  // How long the window waits for an event before drawing anyway, in seconds: 0.5, or
  // ATTNLAB_IDLE_FRAME_S (a test that must tell a requested frame from the idle one sets it long).
  double idle_wait_s_ = 0.5;
  // The frame under way: when it began, the GL transfers before it, when its lists were built
  // and when it was rendered.
  FrameMarks marks_;
  gl::TransferCounts moved_before_;
  unsigned last_generation_ = 0;
  std::vector<double> frame_ms_;
  // The App's parts its loop's objects work on (references into the members above).
  AppParts parts_{window_, state_, hand_made_, vit_, train_, geometry_, video_, key_queue_, opening_model_,
                  query_anchor_, pin_anchors_, [this](const std::filesystem::path& f) { saved(f); }};
  Recording recording_{parts_};          // Export → Record
  std::optional<OpenLesson> lesson_;     // the lesson open (lesson.cpp)
  float lesson_h_ = 0;                   // the caption strip's height in this frame (0: no lesson playing)
  std::optional<ReplayDriver> replay_;  // the hover benchmark, when asked for
};

}  // namespace attnlab::app
