#pragma once
// AppState: the document and what the window keeps beside it. Views read it and write the
// user's changes into it; the main loop hands it to the hand-made session. Its saved part is the Document
// (app/commands/document.hpp: to_json, apply_json and the command line's flags, through one
// field table); beside it, each in its own part: UI state, the command queue, the last frame's
// report.
#include "app/commands/document.hpp"
#include "app/platform/file_dialog.hpp"
#include "core/hand_made/tokens.hpp"
#include "core/io/video.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace attnlab::app {

/// What the window keeps beside the document for the person using it, none of it saved: text
/// being typed, the red banner, the export toast, a note on the pinned view.
struct UiState {
  bool paint_mode = false;  ///< left-drag paints the painted mask instead of moving the query
  std::string export_dir_text;  ///< the Export section's folder field
  std::string open_path_text;  ///< the images panel's "open by path" text field
  std::string model_path_text;  ///< the model panel's "open by path" text field
  std::string compare_path_text;  ///< the Compare window's model B path field
  std::string train_folder_text;  ///< the Train panel's "save checkpoint" folder field (empty: the export folder's trained-vit)
  bool show_compare = false;  ///< the View → Compare window (model B beside the ViT's map) is open
  bool swap_compared = false;  ///< Compare's A and B to be swapped in the next frame (swap_compared_models)
  bool show_hub_gallery = false;  ///< the Model → Gallery window (models from the Hugging Face Hub) is open
  bool train_cka_runs = false;
  int train_view = 0;  ///< the Train tab's lower view shown (its curves, A and B, the ViT's views), as draw_train_lower counts them    ///< the Train tab's CKA view compares run A's layers with run B's (else the shown run's with its own)
  std::string banner;  ///< an error shown at the top; empty = none
  std::chrono::steady_clock::time_point banner_since{};
  std::string status;  ///< last export etc.
  std::chrono::steady_clock::time_point status_since{};  ///< when status was set (a toast shows it for 8 s)
  /// The last save's line (App::saved: "saved <file>") and the folder holding that file: while
  /// `status` is still that line, the toast offers "Open folder" on it.
  std::string saved_line;
  std::filesystem::path saved_folder;
  std::string pinned_note;  ///< why the pinned queries were cleared (a new photo), shown while there are none
  /// The user's patch size K while the image shown needed another (core/hand_made/grid_math.hpp,
  /// fitted_patch: K = 32 on a 28 × 28 image is drawn at K = 4). It is what settings.json keeps,
  /// and the K tried first on the next image; cleared when the user chooses a K.
  std::optional<int> wanted_patch;
  /// The remembered settings file when it could not be read at start: kept as it is, never
  /// written over; the settings are saved beside it instead (save_remembered()).
  std::filesystem::path settings_kept;
  bool video_open = false, video_paused = false;  ///< Images → Open video: a video plays (app/gui/sessions/video_player.hpp)
  std::string video_status;  ///< its line: frame, time, frames per second shown, dropped
  /// Export → Record's choices (not saved): GIF instead of MP4, a live recording's frames per
  /// second of wall-clock time, a sweep's frames per second of the file, a training recording's
  /// steps between frames.
  bool record_gif = false;
  float record_fps = 10, sweep_fps = 2;
  int record_every_steps = 20;
  bool recording_steps = false;  ///< a sweep or a training run is being recorded: the map leaves out the pointer's tooltip
  std::string record_status;  ///< "recording the map: 3.2 s, 32 frames (F8 stops)"; empty when idle
  /// The same in one English word, for programs whatever the language: "recording" (frames are
  /// being taken: F8 stops), "writing" (the file is being finished) or "" (idle).
  std::string record_state;
  /// The images panel's cameras, looked for when asked (none before: the panel's button).
  std::optional<std::vector<CameraInfo>> cameras;

  // --- the lesson (app/gui/shell/lesson.cpp, SPEC §15): what the keys and the Lesson menu ask of
  // it, taken before the next frame, and what the playing step locks.
  int lesson_move = 0;            ///< steps to move (PgDn +1, PgUp −1), summed until taken
  bool lesson_leave = false;      ///< Esc: leave the lesson, the user's own settings back
  bool lesson_add_step = false;   ///< F6 or the menu: this view becomes the lesson's next step
  bool lesson_new = false;        ///< Lesson → New lesson
  /// The step to play (Lesson → Play from step 1, a click in the editor's list of steps). Taken
  /// before the frame like the keys: a step's photo or K remakes the map's textures, which the
  /// views drawn earlier in the frame have already handed to ImGui's draw list.
  std::optional<int> lesson_play;
  bool lesson_playing = false;    ///< a step of the open lesson drives the document
  std::string lesson_view;        ///< the playing step's view, as `render --from` names it ("map", "heads", "vit-distance", …)
  /// The playing step's settings (JSON paths) drawn disabled or not at all (setting_widget).
  std::vector<std::string> lesson_locked, lesson_hidden;
  bool show_lesson_editor = false;  ///< Lesson → Edit steps: the steps' list, title, caption, locks
  std::string lesson_path_text;     ///< the editor's "save to" field (a path typed instead of the Save dialog)
};

/// The command queue: what a view, a key, a menu or a dropped file asks the main loop to do. A
/// view never opens a file or exports itself; it pushes a command, and the main loop takes each
/// kind at its point in the frame (opens before the views, exports after them, so an export is
/// the frame just drawn). Of several opens of one kind the latest wins.
class Commands {
 public:
  enum class Kind { OpenImage, OpenModel, OpenVideo, PauseVideo, ExportPng, ExportCsv, AskForFile, Record, OpenLesson, SaveLesson };
  struct Command {
    Kind kind;
    std::filesystem::path path;  ///< the file to open (OpenImage, OpenModel)
    FileDialogKind asked = FileDialogKind::Image;  ///< AskForFile: which Open dialog
    std::string what;  ///< Record: "" live (or stop), "sweep:KIND" (sweeps.hpp), "training"
  };
  void open_image(const std::filesystem::path& p) { push(Kind::OpenImage, p); }
  void open_model(const std::filesystem::path& p) { push(Kind::OpenModel, p); }
  void open_video(const std::filesystem::path& p) { push(Kind::OpenVideo, p); }
  void pause_video() { push(Kind::PauseVideo); }  ///< Pause, or Play when paused
  /// Opens a lesson file (.attnlab) and plays it from step 1 (app/gui/shell/lesson.cpp).
  void open_lesson(const std::filesystem::path& p) { push(Kind::OpenLesson, p); }
  /// Saves the open lesson to `p` (empty: where it was opened from or last saved).
  void save_lesson(const std::filesystem::path& p = {}) { push(Kind::SaveLesson, p); }
  /// The desktop's Open dialog (app/platform/file_dialog.hpp), shown before the next frame; what
  /// is chosen is opened (or becomes the export folder), Cancel changes nothing.
  void ask_for_file(FileDialogKind kind) { push(Kind::AskForFile, {}, kind); }
  void export_png() { push(Kind::ExportPng); }
  void export_csv() { push(Kind::ExportCsv); }
  /// Export → Record (app/gui/output/recorder.hpp): `what` "" starts a live recording, or stops
  /// whatever records; "sweep:KIND" records a sweep (app/gui/output/sweeps.hpp); "training" the
  /// Train tab's shown run, a frame every UiState::record_every_steps steps.
  void record(std::string what = {}) { push(Kind::Record, {}, FileDialogKind::Image, std::move(what)); }
  /// True while a command of `kind` waits (an export waits for the frame's end: its toast and
  /// hints are not drawn into the picture).
  bool pending(Kind kind) const;
  /// True when no command waits.
  bool empty() const { return queue_.empty(); }
  /// Takes the commands of `kind` off the queue; the latest one, or nullopt when none waits.
  std::optional<Command> take(Kind kind);
  /// Whatever changed the document or a source without an input event (a finished job, an
  /// opened file, a banner) and work under way (a worker thread, a pass spread over frames, a
  /// debounce, a toast on screen) asks for the next frame at once instead of when the next event
  /// comes; the main loop takes it once per frame (App::end_frame). Input events ask for their
  /// own (App::input_arrived).
  void redraw() { redraw_ = true; }
  bool take_redraw() { return std::exchange(redraw_, false); }
  bool redraw_pending() const { return redraw_; }

 private:
  void push(Kind kind, std::filesystem::path path = {}, FileDialogKind asked = FileDialogKind::Image, std::string what = {}) {
    queue_.push_back(Command{kind, std::move(path), asked, std::move(what)});
  }
  std::vector<Command> queue_;
  bool redraw_ = false;
};

/// A video's frame that a map was computed from (Images → Open video): an export writes it as a
/// PNG beside itself and names that PNG as its image, so that `attnlab render --from` can redraw
/// it (export.hpp).
struct ShownVideoFrame {
  std::filesystem::path video;  ///< the file played (or camera:DEVICE)
  std::int64_t index = 0;       ///< the frame's index, 0, 1, 2… in decoding order
  double time = 0;              ///< its time in the video, seconds
  std::shared_ptr<const Image> image;  ///< the frame as decoded (the hand-made heads' image, or the ViT's input before resizing)
};

/// What the last frame measured and drew: shown in Diagnostics, written into export sidecars.
struct FrameReport {
  float last_frame_ms = 0, row_pass_ms = 0;
  /// What the last frame moved between the CPU and the GPU (gl::transfer_counts over the frame).
  std::uint64_t frame_readbacks = 0, frame_readback_bytes = 0, frame_uploads = 0, frame_upload_bytes = 0;
  std::uint64_t frame_readbacks_waited = 0;  ///< of frame_readbacks, those that waited for the GPU (no fence had signalled)
  std::string backend_name;  ///< "GPU: llvmpipe …" or "CPU reference (…)"
  /// Teaching views that could not draw in the last frame, with the reason (shown in their
  /// window, written into export sidecars).
  std::map<std::string, std::string> view_errors;
  /// What the views checked against their own arithmetic (the step view's softmax, the
  /// tokenization's W_tokenize x_i), a line each, shown in the Diagnostics panel: name → result.
  std::map<std::string, std::string> checks;
  /// What the ViT's main map drew in the last frame (model and its SHA-256, layer, head, query
  /// token, the values coloured, where the photo was drawn), written into export sidecars;
  /// null when the hand-made heads were drawn.
  nlohmann::json vit_drawn;
  /// The same for the ViT being trained (the Train tab), with the training step its maps are of;
  /// null when it was not drawn.
  nlohmann::json train_drawn;
  /// The CKA matrix the similarity view drew (labels, values, models, examples; cka_view.hpp);
  /// null when it was not drawn.
  nlohmann::json cka_drawn;
  /// What the high-norm tokens view drew (layer, ratio, median, threshold, the marked patches,
  /// the prefix tokens' norms, the histogram); null when it was not drawn.
  nlohmann::json high_norm_drawn;
  /// What the relevance view drew (class, label, method, the map, and the faithfulness curves
  /// once measured), or {"error": …}; null when it was not drawn.
  nlohmann::json relevance_drawn;
  /// What the receptive-field view drew (layer, token, size, sum, largest value), or
  /// {"error": …}; null when it was not drawn.
  nlohmann::json field_drawn;
  /// What the CNN view drew (app/gui/cnn/cnn_view.cpp: what it shows, the ViT's layer and token,
  /// the ResNet's block and position, the maps' sizes and reach, or the CKA matrix), or
  /// {"error": …}; null when it was not drawn.
  nlohmann::json cnn_drawn;
  /// What the Train tab's side-by-side view drew of each run (run, step, switches, test
  /// accuracy, the map's layer, head, query and values); null when it was not drawn.
  nlohmann::json train_compared;
  /// What the main map's place showed for a CNN run of the Train tab (run, step, probe, its
  /// prediction; draw_cnn_run_map); null when it was not drawn.
  nlohmann::json train_cnn;
  /// What Compare's model B drew beside the ViT's map (View → Compare; vit_compare.hpp's
  /// compare_entry); null when Compare was not drawn.
  nlohmann::json compare;
  /// While a video is open: the frame the hand-made heads' image is, and the frame the ViT's
  /// shown maps were computed from (each nullopt when that source's image is not a video's).
  std::optional<ShownVideoFrame> video_hand_made, video_vit;
  /// The player's numbers, for the sidecar's "video" entry: path, frames shown and dropped,
  /// frames per second shown, and the latency (a frame decoded → its map on screen) as the
  /// median in ms over the last frames drawn (latency_frames of them); null when no video is open.
  nlohmann::json video;
};

/// The app's state: the document (every saved setting, through its field table), and beside
/// it the window's UI state, the command queue and the last frame's report, none of them saved.
/// Where the widgets were drawn is the test seam's (widget_log.hpp), not here.
struct AppState : Document {
  UiState ui;
  Commands commands;
  FrameReport report;
  /// Shows `message` in the banner (asking for the next frame at once) and prints it on stderr
  /// as "attnlab: <message>".
  void show_error(const std::string& message);
};

/// The hand-made heads' query token i on `grid`, as the document chooses it (the cell kept
/// inside the grid): what every view passes down to HandMadeSession and the shaders. The one
/// place that reads the document's query for the hand-made heads.
inline int hand_made_query(const AppState& s, const PatchGrid& grid) {
  return grid.index(std::clamp(s.hand_made.cell.col, 0, grid.cols - 1), std::clamp(s.hand_made.cell.row, 0, grid.rows - 1));
}

/// True while the last export's confirmation (s.status) is on screen: for 8 s after it was set
/// (long enough to reach its "Open folder"; the pointer over it keeps it, layout.cpp).
inline bool toast_showing(const AppState& s) {
  return !s.ui.status.empty() && std::chrono::steady_clock::now() - s.ui.status_since <= std::chrono::seconds(8);
}

/// The folder the toast's "Open folder" opens: the last save's, while the toast still says it;
/// empty when the toast says something else (a chosen folder, an error's way out).
inline std::filesystem::path toast_folder(const AppState& s) {
  return !s.ui.saved_line.empty() && s.ui.status == s.ui.saved_line ? s.ui.saved_folder : std::filesystem::path();
}
/// The folder saves go to while the user has chosen none: <Pictures>/attnlab, the Pictures folder
/// as platform::pictures_folder() finds it (XDG_PICTURES_DIR, user-dirs.dirs, ~/Pictures; the
/// Pictures known folder on Windows); "attnlab" in the current folder when not even a home
/// folder is known. Absolute; not created here.
std::filesystem::path default_export_folder();

/// The folder F12 (PNG and sidecar), F9 (CSV) and F8 (recordings) save into, and the Train tab's
/// checkpoints under: the one the user chose (Document::export_dir: Controls → Export, the
/// folder dialog, ATTNLAB_EXPORT_DIR), else default_export_folder(). Not created here.
std::filesystem::path export_folder(const Document& d);

/// export_folder(d) for a save about to be written: the default folder is made (with its
/// parents) when missing. A chosen folder is not: one that has gone is that save's error. Throws
/// Error ("cannot make the folder '<path>' for saves: <reason>") when the default cannot be made.
std::filesystem::path make_export_folder(const Document& d);

/// Where settings and the ImGui layout are remembered: $XDG_CONFIG_HOME/attnlab or
/// ~/.config/attnlab (created on demand).
std::filesystem::path config_dir();

}  // namespace attnlab::app
