// The window: GLFW and its OpenGL context, ImGui on it with the app's font and style, the input
// callbacks (which reach the App through the window's user pointer: no file-level state), the
// state the window starts with and the UI scale applied each frame.
#include "app/gui/shell/app.hpp"

#include "app/commands/options.hpp"

#include "app/gui/window/headless.hpp"
#include "app/gui/window/window_fit.hpp"
#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/base/translate.hpp"
#include "core/io/files.hpp"
#include "core/io/image.hpp"
#include "core/gpu/debug.hpp"

#include <epoxy/gl.h>
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string_view>
#include <vector>

namespace attnlab::app {
namespace {

// The App of a window, or null while none is attached (App's constructor and destructor set it).
App* app_of(GLFWwindow* window) { return static_cast<App*>(glfwGetWindowUserPointer(window)); }

// A checkpoint (a .safetensors file, a PyTorch .pth, .pt or .bin, or a folder) opens as the
// ViT; anything else as an image.
bool is_model_path(const std::filesystem::path& p) {
  std::error_code ec;
  const auto ext = p.extension();
  return ext == ".safetensors" || ext == ".pth" || ext == ".pt" || ext == ".bin" || std::filesystem::is_directory(p, ec);
}

// The input callbacks: each tells the App that input arrived (a frame follows, and one more to
// show what it changed). ImGui's GLFW hand_made, installed after them, chains to the key, button,
// wheel, text, focus and enter callbacks; the pointer's position, the window's size and its
// exposure are ours alone.
void on_drop(GLFWwindow* window, int count, const char** paths) {
  App* app = app_of(window);
  if (!app || count <= 0) return;
  app->input_arrived();
  app->dropped(paths[0]);
}
// Key presses are queued: ImGui 1.86 sees only whether a key is down at the start of a frame, so
// a press and release arriving between two frames (xdotool, a quick tap) would be lost.
void on_key(GLFWwindow* window, int key, int, int action, int mods) {
  App* app = app_of(window);
  if (!app) return;
  app->input_arrived();
  if (action == GLFW_PRESS || action == GLFW_REPEAT) app->key_pressed(key, mods);
}
void input(GLFWwindow* window) {
  if (App* app = app_of(window)) app->input_arrived();
}
void on_cursor(GLFWwindow* w, double, double) { input(w); }
void on_button(GLFWwindow* w, int, int, int) { input(w); }
void on_scroll(GLFWwindow* w, double, double) { input(w); }
void on_char(GLFWwindow* w, unsigned) { input(w); }
void on_focus(GLFWwindow* w, int) { input(w); }
void on_enter(GLFWwindow* w, int) { input(w); }
void on_size(GLFWwindow* w, int, int) { input(w); }
void on_refresh(GLFWwindow* w) { input(w); }

// The last GLFW error's description, for the line an Error carries (GLFW keeps it per thread;
// no error callback, so no state of ours).
std::string glfw_error_text() {
  const char* description = nullptr;
  glfwGetError(&description);
  return description ? description : "?";
}

}  // namespace

std::vector<std::filesystem::path> find_gallery() {
  std::vector<std::filesystem::path> out = image_files_in(assets_dir());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    const bool sa = a.filename() == "safari.jpg", sb = b.filename() == "safari.jpg";
    return sa != sb ? sa : a.filename() < b.filename();
  });
  return out;
}

namespace {

// Remembered settings (everything but the image and the query).
void load_remembered(AppState& state) {
  const auto path = config_dir() / "settings.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {  // a first start: a first picture that shows something
    state.attention.temperature = kFirstStartTemperature;
    return;
  }
  std::ifstream in(path);
  if (!in) {
    state.ui.settings_kept = path;
    // TRANSLATORS: the first %s is the settings file, the second the file this session's settings are saved to.
    state.show_error(text_format(_("cannot read the remembered settings in %s (kept as it is; this session's go to %s)"),
                                 path.string().c_str(), (config_dir() / "settings.new.json").string().c_str()));
    return;
  }
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    j.erase("image");
    j.erase("window_placement");  // open_window's
    j.erase("query");
    j.erase("pinned");
    if (j.contains("vit") && j["vit"].is_object()) {  // the model is reopened only by asking
      j["vit"].erase("model");
      j["vit"].erase("source");
    }
    apply_json(j, state);
  } catch (const std::exception& e) {
    state.ui.settings_kept = path;  // never written over: it may be the user's own edit
    // TRANSLATORS: the settings file, why it could not be read, and the file this session's settings are saved to.
    state.show_error(text_format(_("ignored the remembered settings in %s: %s (kept as it is; this session's go to %s)"),
                                 path.string().c_str(), e.what(), (config_dir() / "settings.new.json").string().c_str()));
  }
}

}  // namespace

void save_remembered(const AppState& state, GLFWwindow* window) {
  std::error_code ec;
  std::filesystem::create_directories(config_dir(), ec);
  nlohmann::json j = to_json(state);
  // The user's K, not the one fitted to the image shown (App::give_hand_made_image).
  if (state.ui.wanted_patch) j["patch"] = *state.ui.wanted_patch;
  // Where the window was, unless it was minimized or maximized (then its size says nothing).
  if (window && !glfwGetWindowAttrib(window, GLFW_ICONIFIED) && !glfwGetWindowAttrib(window, GLFW_MAXIMIZED)) {
    ScreenRect r;
    glfwGetWindowPos(window, &r.x, &r.y);
    glfwGetWindowSize(window, &r.width, &r.height);
    if (r.width > 0 && r.height > 0) j["window_placement"] = {{"x", r.x}, {"y", r.y}, {"width", r.width}, {"height", r.height}};
  }
  try {
    if (!state.ui.settings_kept.empty()) {
      // The file read at start was not valid: kept for its owner; the settings go beside it.
      const auto beside = config_dir() / "settings.new.json";
      write_file_safely(beside, j.dump(2) + "\n", /*overwrite=*/true);
      std::fprintf(stderr, _("attnlab: %s could not be read and is kept as it is; the settings were saved to %s\n"),
                   state.ui.settings_kept.string().c_str(), beside.string().c_str());
      return;
    }
    write_file_safely(config_dir() / "settings.json", j.dump(2) + "\n", /*overwrite=*/true);
  } catch (const std::exception& e) {
    std::fprintf(stderr, _("attnlab: could not remember the settings: %s\n"), e.what());
  }
}

namespace {

// The window's rectangle as the last run left it (settings.json's "window_placement"), if any.
std::optional<ScreenRect> remembered_placement() {
  std::ifstream in(config_dir() / "settings.json");
  if (!in) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("window_placement")) return std::nullopt;
  try {
    const auto& p = j.at("window_placement");
    return ScreenRect{p.at("x").get<int>(), p.at("y").get<int>(), p.at("width").get<int>(), p.at("height").get<int>()};
  } catch (const std::exception&) {
    return std::nullopt;  // a placement not understood: a first start's
  }
}

// The monitors' work areas (the screen less task bars and docks), the primary first.
std::vector<ScreenRect> work_areas() {
  std::vector<ScreenRect> out;
  int count = 0;
  GLFWmonitor** monitors = glfwGetMonitors(&count);
  GLFWmonitor* primary = glfwGetPrimaryMonitor();
  if (primary) {
    ScreenRect r;
    glfwGetMonitorWorkarea(primary, &r.x, &r.y, &r.width, &r.height);
    if (r.width > 0 && r.height > 0) out.push_back(r);
  }
  for (int i = 0; i < count; ++i) {
    if (monitors[i] == primary) continue;
    ScreenRect r;
    glfwGetMonitorWorkarea(monitors[i], &r.x, &r.y, &r.width, &r.height);
    if (r.width > 0 && r.height > 0) out.push_back(r);
  }
  return out;
}

// The primary monitor's content scale (2 on a high-DPI screen), 1 when unknown.
float primary_content_scale() {
  float xs = 1, ys = 1;
  if (GLFWmonitor* m = glfwGetPrimaryMonitor()) glfwGetMonitorContentScale(m, &xs, &ys);
  return std::max(xs, ys);
}

}  // namespace

WindowSession::~WindowSession() {
  if (imgui_gl) ImGui_ImplOpenGL3_Shutdown();
  if (imgui_glfw) ImGui_ImplGlfw_Shutdown();
  if (imgui) ImGui::DestroyContext();
  if (window) glfwDestroyWindow(window);
  glfwTerminate();  // closes the display; Mesa destroys its screen and joins its threads
}

void open_window(WindowSession& session, bool benchmark) {
  if (!glfwInit())
    // TRANSLATORS: %s is the windowing library's (GLFW's) message; "attnlab --help" is a command to type.
    throw Error(text_format(_("cannot open a window (%s); is there a display? The command line works without one: attnlab --help"),
                            glfw_error_text().c_str()));
  // Where it opens: inside a monitor's work area (fit_window); the benchmark at its fixed size
  // when the screen has room. Made hidden, then moved and shown once the frame is known.
  const std::vector<ScreenRect> areas = work_areas();
  const std::optional<ScreenRect> remembered = benchmark ? std::nullopt : remembered_placement();
  const float content_scale = benchmark ? 1.0f : primary_content_scale();
  ScreenRect placement = fit_window(areas, remembered, {}, content_scale);
  // The GL error callback (core/gpu/debug.hpp) on the window's context: in Debug builds, and in
  // any build with ATTNLAB_GL_DEBUG=1 (the window tests that look for GL errors in their log).
  const char* debug_env = std::getenv("ATTNLAB_GL_DEBUG");
  bool gl_debug = kGlDebugBuild || (debug_env && std::string_view(debug_env) == "1");
  auto make_window = [&placement, gl_debug](int major, int minor) {
    glfwDefaultWindowHints();
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, major);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, minor);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
    glfwWindowHint(GLFW_OPENGL_DEBUG_CONTEXT, gl_debug ? GLFW_TRUE : GLFW_FALSE);
    return glfwCreateWindow(placement.width, placement.height, "Attention Lab", nullptr, nullptr);
  };
  int major = 4, minor = 3;
  if (const char* v = std::getenv("ATTNLAB_GL_VERSION"); v && std::sscanf(v, "%d.%d", &major, &minor) != 2) {
    major = 4;
    minor = 3;
  }
  GLFWwindow* window = make_window(major, minor);
  if (!window && (major > 3 || minor > 3)) {
    // TRANSLATORS: the OpenGL version asked for (major.minor), and the windowing library's (GLFW's) message.
    session.context_note = text_format(_("no OpenGL %d.%d window: %s"), major, minor, glfw_error_text().c_str());
    window = make_window(3, 3);
  }
  if (!window) throw Error(text_format(_("cannot open an OpenGL 3.3 window (%s)"), glfw_error_text().c_str()));
  session.window = window;
  // The frame (title bar, borders) is known now: the window and its frame inside the work area.
  FrameMargins frame;
  glfwGetWindowFrameSize(window, &frame.left, &frame.top, &frame.right, &frame.bottom);
  placement = fit_window(areas, remembered, frame, content_scale);
  glfwSetWindowSize(window, placement.width, placement.height);
  if (!areas.empty()) glfwSetWindowPos(window, placement.x, placement.y);
  glfwShowWindow(window);
  glfwMakeContextCurrent(window);
  glfwSwapInterval(benchmark ? 0 : 1);  // the benchmark times frames, not the display's refresh
  if (gl_debug) install_gl_debug_callback();

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  session.imgui = true;
  ImGuiIO& io = ImGui::GetIO();
  std::error_code ec;
  std::filesystem::create_directories(config_dir(), ec);
  session.ini = (config_dir() / "imgui.ini").string();
  // Written by ImGui::DestroyContext; the benchmark starts from the default layout and keeps none.
  io.IniFilename = benchmark ? nullptr : session.ini.c_str();
  session.font_scale = setup_app_style(1.0f);
  // Ours before ImGui's hand_made, which chains to those it installs too.
  glfwSetKeyCallback(window, on_key);
  glfwSetDropCallback(window, on_drop);
  glfwSetCursorPosCallback(window, on_cursor);
  glfwSetMouseButtonCallback(window, on_button);
  glfwSetScrollCallback(window, on_scroll);
  glfwSetCharCallback(window, on_char);
  glfwSetWindowFocusCallback(window, on_focus);
  glfwSetCursorEnterCallback(window, on_enter);
  glfwSetFramebufferSizeCallback(window, on_size);
  glfwSetWindowRefreshCallback(window, on_refresh);
  session.imgui_glfw = ImGui_ImplGlfw_InitForOpenGL(window, true);
  session.imgui_gl = ImGui_ImplOpenGL3_Init("#version 330 core");
}

AppState initial_state(GLFWwindow* window, const std::optional<HoverReplay>& replay) {
  AppState state;
  float xs = 1, ys = 1;
  if (window) glfwGetWindowContentScale(window, &xs, &ys);    // none: the tests' headless state
  state.ui_scale = std::clamp(std::max(xs, ys), 1.0f, 3.0f);  // high-DPI screens start larger
  if (replay) {  // the same settings on every machine: the defaults, K = 16, the query following the mouse
    state.attention.patch = replay->config().patch;
    state.hand_made.query_pinned = state.vit.query_pinned = false;
  } else {
    load_remembered(state);
  }
  // A folder chosen for this run (the window tests' own): chosen as in the Controls, so remembered.
  if (const char* dir = std::getenv("ATTNLAB_EXPORT_DIR"); dir && *dir) {
    std::error_code ec;
    state.export_dir = std::filesystem::absolute(dir, ec);
  }
  state.ui.export_dir_text = platform::utf8(export_folder(state));
  return state;
}

void App::dropped(const std::filesystem::path& path) {
  if (path.extension() == ".attnlab") state_.commands.open_lesson(path);
  else if (is_model_path(path)) state_.commands.open_model(path);
  else state_.commands.open_image(path);
}

// The UI scale (Ctrl +/-) and presentation mode, applied before the frame when they changed:
// the style scaled from the base style, the font rasterized again at the new size.
void App::apply_ui_scale() {
  // Presentation mode: large type, at least 2 (the same picture at UI scale 1 and 2, issue 47).
  const float scale = state_.presentation ? std::max(state_.ui_scale, 2.0f) : state_.ui_scale;
  // The language (the Language menu, settings.json): its catalog, and the font atlas again with
  // its characters (ui_font.hpp), live, between frames.
  const bool language_changed = !applied_language_ || *applied_language_ != state_.language;
  if (scale == applied_scale_ && state_.presentation == applied_presentation_ && !language_changed) return;
  if (language_changed) {
    use_language(state_.language);
    applied_language_ = state_.language;
  }
  ImGuiStyle& style = ImGui::GetStyle();
  style = base_style_;
  if (state_.presentation) {  // high contrast for projectors
    ImGui::StyleColorsDark(&style);
    style.Colors[ImGuiCol_WindowBg] = ImVec4(0, 0, 0, 1);
    style.Colors[ImGuiCol_Text] = ImVec4(1, 1, 1, 1);
  }
  style.ScaleAllSizes(scale);
  // The font rasterized again at the new size (crisp at any scale); a scaled bitmap only
  // when the font file is missing.
  if (scale != applied_scale_ || language_changed) {
    font_rebuilt_ = load_ui_font(16.0f * scale);
    if (font_rebuilt_) {
      ImGui_ImplOpenGL3_DestroyFontsTexture();
      ImGui_ImplOpenGL3_CreateFontsTexture();
    }
  }
  ImGui::GetIO().FontGlobalScale = font_rebuilt_ ? 1.0f : scale * font_scale_;
  applied_scale_ = scale;
  applied_presentation_ = state_.presentation;
}

}  // namespace attnlab::app
