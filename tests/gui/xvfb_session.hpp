#pragma once
// Drives the real attnlab under Xvfb as a person would: a virtual screen, the real window,
// real input through xdotool, exports read back from disk.
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace attnlab::testing {

/// An Xvfb server on a free display, for the lifetime of the object.
class Xvfb {
 public:
  Xvfb(int width = 1920, int height = 1080);
  ~Xvfb();
  const std::string& display() const { return display_; }

 private:
  int pid_ = -1;
  std::string display_;
};

/// Where the app saves what F12, F8 and F9 write.
enum class Exports {
  /// ATTNLAB_EXPORT_DIR=<dir>/exports: the test's own folder.
  TestFolder,
  /// The user's default: ATTNLAB_EXPORT_DIR and XDG_PICTURES_DIR unset, HOME=<dir>/home (no
  /// user-dirs.dirs in the config folder), the program started in <dir>/cwd. export_dir() is
  /// <dir>/home/Pictures/attnlab (issue 47); export_view also finds an export saved in <dir>/cwd,
  /// <dir>/home or <dir>/home/Pictures, for the test to say where it went.
  UsersDefault,
};

/// The attnlab program started on a display with its own config and export folders.
class AppProcess {
 public:
  /// Starts build/bin/attnlab as a returning user (an empty <dir>/config/attnlab/settings.json
  /// unless the test wrote one) with `args`, DISPLAY, XDG_CONFIG_HOME=<dir>/config and
  /// ATTNLAB_EXPORT_DIR=<dir>/exports (or the user's default folder: `exports`); stdout and
  /// stderr go to <dir>/app.log. `env` adds NAME=value variables (e.g.
  /// MESA_GL_VERSION_OVERRIDE=3.3), after the defaults (the Hugging Face cache in <dir>,
  /// HF_HUB_OFFLINE=1), which they override.
  AppProcess(const Xvfb& x, const std::filesystem::path& dir, const std::vector<std::string>& args = {},
             const std::vector<std::string>& env = {}, Exports exports = Exports::TestFolder);
  /// The app saving into its own default folder, which the test says (from the HOME or XDG_* it
  /// gives in `env`: a NAME alone unsets it): no ATTNLAB_EXPORT_DIR; export_view() and export_dir()
  /// look in `default_exports` (which may not exist before the first save).
  AppProcess(const Xvfb& x, const std::filesystem::path& dir, const std::vector<std::string>& args,
             const std::vector<std::string>& env, const std::filesystem::path& default_exports);
  ~AppProcess();

  /// Waits for the window to be mapped; returns its X id (0 on time-out).
  unsigned long wait_for_window(std::chrono::seconds timeout = std::chrono::seconds(30));
  /// Runs xdotool with these arguments on this display; returns its exit status.
  int xdotool(const std::string& args) const;
  /// Moves the pointer to (x, y) in window coordinates and clicks `button`.
  void click(float x, float y, int button = 1) const;
  /// Presses a key (X keysym name, e.g. "F12") with the pointer over the window.
  void key(const std::string& keysym) const;
  /// Presses F12 and waits for the new export; returns its sidecar JSON and the PNG path.
  /// `tap`: F12 tapped without the pauses of key() (the app queues its own keys), for tests
  /// that export often.
  std::pair<nlohmann::json, std::filesystem::path> export_view(std::chrono::seconds timeout = std::chrono::seconds(30),
                                                               bool tap = false);
  /// Asks the window to close as the window manager's close button does (WM_DELETE_WINDOW)
  /// and waits for the process; returns its exit status (-1 on time-out).
  int close(std::chrono::seconds timeout = std::chrono::seconds(20));
  /// True while the process runs.
  bool alive();
  /// Waits for the process to end by itself; returns its exit status (-1 on time-out).
  int wait_exit(std::chrono::seconds timeout);
  std::string log() const;
  /// Whether the log has a GL error line (core/gpu/debug.cpp; Debug builds, or ATTNLAB_GL_DEBUG=1
  /// in `env`). The destructor fails the test when it has.
  bool gl_errors() const;
  const std::filesystem::path& export_dir() const { return exports_; }
  /// The process id (e.g. to read its memory use from /proc).
  int pid() const { return pid_; }

 private:
  std::string display_;
  std::filesystem::path dir_, exports_;
  std::vector<std::filesystem::path> watched_;  // where export_view looks for a new export
  int pid_ = -1;
  unsigned long window_ = 0;
  int exit_status_ = -1;
};

/// The pixels of a rectangle (x, y, w, h in the window's coordinates, as the sidecar's widget
/// rectangles) of `window` on `display`, read from the X server as a person would see them (no
/// input reaches the app): 0xRRGGBB, row after row. Empty when they cannot be read.
std::vector<unsigned long> window_pixels(const std::string& display, unsigned long window, const nlohmann::json& rect);

/// A CSV the app exported (F9): its '#' comment lines (each ending in a newline) and the
/// numbers of every other line, one vector per line.
struct ExportedCsv {
  std::string header;
  std::vector<std::vector<float>> lines;
  /// All the numbers, line after line.
  std::vector<float> values() const;
};
/// Waits up to 10 s for a file in `dir` whose name starts with `prefix` and ends in ".csv",
/// and reads it. Throws std::runtime_error when none appears.
ExportedCsv wait_for_csv(const std::filesystem::path& dir, const std::string& prefix, std::filesystem::path* path = nullptr);

/// Where an export's main map drew the photo (its sidecar's image_view and grid K): the window
/// position of a patch's centre, to click on it.
struct Geometry {
  float x, y, scale;
  int K;
  std::pair<float, float> centre(int col, int row) const {
    return {x + (static_cast<float>(col * K) + static_cast<float>(K) * 0.5f) * scale,
            y + (static_cast<float>(row * K) + static_cast<float>(K) * 0.5f) * scale};
  }
};
inline Geometry geometry_of(const nlohmann::json& j) {
  return {j.at("image_view").at("x").get<float>(), j.at("image_view").at("y").get<float>(),
          j.at("image_view").at("scale").get<float>(), j.at("grid").at("K").get<int>()};
}

/// The centre of a recorded widget's rectangle [x, y, w, h] in window coordinates.
inline std::pair<float, float> centre_of(const nlohmann::json& r) {
  return {r[0].get<float>() + r[2].get<float>() * 0.5f, r[1].get<float>() + r[3].get<float>() * 0.5f};
}

/// Exports (F12, tapped) until the sidecar satisfies `ready`, half a second apart, at most
/// `tries` times (work on the app's scheduler: a model loading, training, a CKA matrix); adds a
/// test failure with the last sidecar when it never does, and returns the last sidecar.
nlohmann::json export_until(AppProcess& app, const std::function<bool(const nlohmann::json&)>& ready, int tries = 120);

/// Clicks the centre of a control recorded in a sidecar's "widgets"; a test failure (and no
/// click) when it was not drawn.
void click_widget(AppProcess& app, const nlohmann::json& sidecar, const std::string& widget);
/// Opens the menu bar's `menu` ("Tour") drawn in `sidecar` with a click, and clicks its entry
/// `entry` ("start"); false, and no click on an entry, when the open menu does not show it.
bool click_menu_entry(AppProcess& app, const nlohmann::json& sidecar, const std::string& menu, const std::string& entry);
/// Opens a file through the "open by path" field: clear, click the field, type, click the open
/// button (`open_button`, or "open_video_button" for a video). Clicks and typed characters are
/// queued by the app, so a busy machine cannot lose them.
void open_by_path(AppProcess& app, const nlohmann::json& sidecar, const std::string& path,
                  const std::string& open_button = "open_button");
/// Scrolls the panel `widget` is in (the sidecar's "widget_windows") with the mouse wheel until
/// the widget lies inside the panel's part on screen; returns the sidecar where it does (or the
/// last one). click_widget does it first.
nlohmann::json reveal_widget(AppProcess& app, const nlohmann::json& sidecar, const std::string& widget);

/// The Train tab: opens it and presses Start, so run A trains. Returns the sidecar the panel was
/// seen in.
nlohmann::json start_run_a(AppProcess& app);
/// The Train tab: shows run B, takes run A's settings (one click), average pooling (another) and
/// presses Start. Returns the sidecar run B's panel was seen in.
nlohmann::json start_run_b_averaging(AppProcess& app, const nlohmann::json& sidecar);

/// What a shell command prints on its standard output (popen).
std::string run_capture(const std::string& cmd);

/// A 20 s clip at 10 frames/s, 320 × 240, made with the ffmpeg command from the safari photo:
/// a slow zoom while the window pans (long enough to play through a whole test on a busy
/// machine). Written as <dir>/pan.mp4; empty when ffmpeg is missing or fails.
std::filesystem::path make_safari_pan(const std::filesystem::path& dir);

/// The first file with this extension that appears in `folder` within 30 s (empty: none did).
std::filesystem::path wait_for_file(const std::filesystem::path& folder, const std::string& ext);

}  // namespace attnlab::testing
