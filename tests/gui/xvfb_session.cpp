#include "xvfb_session.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace attnlab::testing {

std::string run_capture(const std::string& cmd) {
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    ::pclose(p);
  }
  return out;
}

namespace {

// `unset`: variables the child must not inherit; `cwd`: its working folder (empty: this one's).
int spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env, const std::string& log,
          const std::vector<std::string>& unset = {}, const std::filesystem::path& cwd = {}) {
  const int pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    for (const auto& u : unset) ::unsetenv(u.c_str());
    for (const auto& e : env) {  // NAME=value sets it, a NAME alone unsets it
      if (e.find('=') == std::string::npos) ::unsetenv(e.c_str());
      else ::putenv(const_cast<char*>(e.c_str()));
    }
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    if (!log.empty()) {
      std::FILE* f = std::freopen(log.c_str(), "w", stdout);
      if (f) ::dup2(::fileno(stdout), 2);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

}  // namespace

Xvfb::Xvfb(int width, int height) {
  // Xvfb chooses a free display itself and writes its number to the pipe (-displayfd), so
  // tests running in parallel never share a screen.
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  pid_ = ::fork();
  if (pid_ == 0) {
    ::close(fds[0]);
    std::FILE* devnull = std::freopen("/dev/null", "w", stderr);
    (void)devnull;
    const std::string fd = std::to_string(fds[1]), screen = std::to_string(width) + "x" + std::to_string(height) + "x24";
    ::execlp("Xvfb", "Xvfb", "-displayfd", fd.c_str(), "-screen", "0", screen.c_str(), "-nolisten", "tcp", "-noreset",
             static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string number;
  char ch = 0;
  while (::read(fds[0], &ch, 1) == 1 && ch != '\n') number += ch;
  ::close(fds[0]);
  if (number.empty()) throw std::runtime_error("Xvfb did not start (is the xvfb package installed?)");
  display_ = ":" + number;
  for (int t = 0; t < 200; ++t) {  // ready when a client can connect
    if (Display* d = XOpenDisplay(display_.c_str())) {
      XCloseDisplay(d);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw std::runtime_error("Xvfb on " + display_ + " accepts no connection");
}

Xvfb::~Xvfb() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
}

AppProcess::AppProcess(const Xvfb& x, const std::filesystem::path& dir, const std::vector<std::string>& args,
                       const std::vector<std::string>& env, Exports exports)
    : display_(x.display()), dir_(dir), exports_(dir / "exports") {
  const bool users_default = exports == Exports::UsersDefault;
  if (users_default) {
    exports_ = dir / "home" / "Pictures" / "attnlab";  // made by the app, not here
    std::filesystem::create_directories(dir / "cwd");
    watched_ = {exports_, dir / "cwd", dir / "home", dir / "home" / "Pictures"};
  } else {
    std::filesystem::create_directories(exports_);
    watched_ = {exports_};
  }
  std::filesystem::create_directories(dir / "config" / "attnlab");
  // A returning user's start unless the test wrote settings of its own: an empty settings.json,
  // so the defaults hold (a first start opens at kFirstStartTemperature, app/commands/document.hpp;
  // tests/app/test_document.cpp's FirstPicture checks that picture).
  if (const auto settings = dir / "config" / "attnlab" / "settings.json"; !std::filesystem::exists(settings))
    std::ofstream(settings) << "{}\n";
  std::vector<std::string> argv = {ATTNLAB_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> vars = {"DISPLAY=" + display_, "XDG_CONFIG_HOME=" + (dir / "config").string(),
                                    "ATTNLAB_EXPORT_DIR=" + exports_.string(),
                                    "EGL_LOG_LEVEL=fatal",
                                    // The Hugging Face cache of this test's own, offline: no click on a
                                    // Download button (the soak clicks every control) reaches for a
                                    // host off this machine. A test of the hub gives its own (later
                                    // entries win).
                                    "HF_HUB_OFFLINE=1", "HF_HUB_CACHE=" + (dir / "hf_cache").string(),
                                    "HF_HOME=" + (dir / "hf_home").string(),
                                    // No modal Open dialog from a random click (the soak): the file
                                    // dialog's tests turn it on. GTK without an accessibility bus.
                                    // GTK's settings in memory (no dconf, no D-Bus session here), its
                                    // list of recent files in the test's folder, not the user's.
                                    "ATTNLAB_FILE_DIALOG=none", "NO_AT_BRIDGE=1", "GSETTINGS_BACKEND=memory",
                                    "XDG_DATA_HOME=" + (dir / "data").string()};
  std::vector<std::string> unset;
  if (users_default) {
    vars.erase(std::remove_if(vars.begin(), vars.end(), [](const std::string& v) { return v.starts_with("ATTNLAB_EXPORT_DIR="); }),
               vars.end());
    // The caches (Mesa's compiled shaders) stay where they were: HOME is for the Pictures folder.
    const char* cache = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    if (cache && *cache) vars.push_back(std::string("XDG_CACHE_HOME=") + cache);
    else if (home && *home) vars.push_back(std::string("XDG_CACHE_HOME=") + home + "/.cache");
    vars.push_back("HOME=" + (dir / "home").string());
    unset = {"ATTNLAB_EXPORT_DIR", "XDG_PICTURES_DIR"};
  }
  vars.insert(vars.end(), env.begin(), env.end());
  pid_ = spawn(argv, vars, (dir / "app.log").string(), unset, users_default ? dir / "cwd" : std::filesystem::path());
}

AppProcess::AppProcess(const Xvfb& x, const std::filesystem::path& dir, const std::vector<std::string>& args,
                       const std::vector<std::string>& env, const std::filesystem::path& default_exports)
    : AppProcess(x, dir, args, [&] {
        std::vector<std::string> e = {"ATTNLAB_EXPORT_DIR"};  // unset: the app's own default folder
        e.insert(e.end(), env.begin(), env.end());
        return e;
      }()) {
  exports_ = default_exports;
  watched_ = {default_exports};
}

AppProcess::~AppProcess() {
  if (alive()) {
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  // Debug builds (and ATTNLAB_GL_DEBUG=1) print every GL error the driver reports (core/gpu/debug.hpp):
  // each fails the test.
  if (gl_errors()) ADD_FAILURE() << "GL errors:\n" << log();
}

bool AppProcess::gl_errors() const { return log().find("attnlab: GL error:") != std::string::npos; }

bool AppProcess::alive() {
  if (pid_ <= 0 || exit_status_ != -1) return false;
  int status = 0;
  const int r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return false;
  }
  return true;
}

std::string AppProcess::log() const {
  std::ifstream in(dir_ / "app.log");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int AppProcess::xdotool(const std::string& args) const {
  return std::system(("DISPLAY=" + display_ + " xdotool " + args + " >/dev/null 2>&1").c_str());
}

unsigned long AppProcess::wait_for_window(std::chrono::seconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end && alive()) {
    const std::string out = run_capture("DISPLAY=" + display_ + " xdotool search --onlyvisible --name 'Attention Lab' 2>/dev/null");
    if (!out.empty()) {
      window_ = std::stoul(out);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));  // first frames
      return window_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return 0;
}

void AppProcess::click(float x, float y, int button) const {
  xdotool("mousemove --window " + std::to_string(window_) + " " + std::to_string(static_cast<int>(x)) + " " +
          std::to_string(static_cast<int>(y)));
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  xdotool("click " + std::to_string(button));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
}

void AppProcess::key(const std::string& keysym) const {
  // Held for 100 ms as a person would (no window manager: the keyboard follows the pointer).
  xdotool("keydown " + keysym);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  xdotool("keyup " + keysym);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
}

std::pair<nlohmann::json, std::filesystem::path> AppProcess::export_view(std::chrono::seconds timeout, bool tap) {
  // The folders watched may not exist yet (the user's Pictures folder is the app's to make).
  auto files_in = [](const std::filesystem::path& folder) {
    std::vector<std::filesystem::path> out;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path());
    return out;
  };
  std::set<std::filesystem::path> before;
  for (const auto& folder : watched_)
    for (const auto& f : files_in(folder)) before.insert(f);
  if (tap) xdotool("key --delay 0 F12");
  else key("F12");
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    for (const auto& folder : watched_)
      for (const auto& path : files_in(folder)) {
        if (before.count(path) || path.extension() != ".json") continue;
        std::ifstream in(path);
        nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
        if (j.is_discarded()) continue;
        auto png = path;
        png.replace_extension(".png");
        if (std::filesystem::exists(png)) return {j, png};
      }
    std::this_thread::sleep_for(std::chrono::milliseconds(tap ? 20 : 100));
  }
  std::string where;
  for (const auto& folder : watched_) where += (where.empty() ? "" : ", ") + folder.string();
  throw std::runtime_error("no export appeared in " + where + "; app log:\n" + log());
}

int AppProcess::close(std::chrono::seconds timeout) {
  if (Display* d = XOpenDisplay(display_.c_str())) {
    XEvent ev{};
    ev.xclient.type = ClientMessage;
    ev.xclient.window = window_;
    ev.xclient.message_type = XInternAtom(d, "WM_PROTOCOLS", True);
    ev.xclient.format = 32;
    ev.xclient.data.l[0] = static_cast<long>(XInternAtom(d, "WM_DELETE_WINDOW", False));
    ev.xclient.data.l[1] = CurrentTime;
    XSendEvent(d, window_, False, NoEventMask, &ev);
    XFlush(d);
    XCloseDisplay(d);
  }
  return wait_exit(timeout);
}

int AppProcess::wait_exit(std::chrono::seconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (!alive()) return exit_status_;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return -1;
}

std::vector<float> ExportedCsv::values() const {
  std::vector<float> out;
  for (const auto& line : lines) out.insert(out.end(), line.begin(), line.end());
  return out;
}

ExportedCsv wait_for_csv(const std::filesystem::path& dir, const std::string& prefix, std::filesystem::path* path) {
  std::filesystem::path csv;
  for (int n = 0; n < 100 && csv.empty(); ++n) {
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".csv" && e.path().filename().string().starts_with(prefix)) csv = e.path();
    if (csv.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (csv.empty()) throw std::runtime_error("no " + prefix + "*.csv appeared in " + dir.string());
  // The app writes a temporary file and renames it: what has the name is whole.
  ExportedCsv out;
  std::ifstream in(csv);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("#")) {
      out.header += line + "\n";
      continue;
    }
    std::istringstream cells(line);
    out.lines.emplace_back();
    for (std::string cell; std::getline(cells, cell, ',');) out.lines.back().push_back(std::stof(cell));
  }
  if (path) *path = csv;
  return out;
}

}  // namespace attnlab::testing

namespace attnlab::testing {

std::vector<unsigned long> window_pixels(const std::string& display, unsigned long window, const nlohmann::json& rect) {
  Display* d = XOpenDisplay(display.c_str());
  if (!d) return {};
  const int x = rect[0].get<int>(), y = rect[1].get<int>(), w = rect[2].get<int>(), h = rect[3].get<int>();
  std::vector<unsigned long> out;
  if (XImage* img = XGetImage(d, window, x, y, static_cast<unsigned>(w), static_cast<unsigned>(h), AllPlanes, ZPixmap)) {
    for (int yy = 0; yy < h; ++yy)
      for (int xx = 0; xx < w; ++xx) out.push_back(XGetPixel(img, xx, yy) & 0xffffff);
    XDestroyImage(img);
  }
  XCloseDisplay(d);
  return out;
}

nlohmann::json export_until(AppProcess& app, const std::function<bool(const nlohmann::json&)>& ready, int tries) {
  nlohmann::json j;
  for (int n = 0; n < tries; ++n) {
    j = app.export_view(std::chrono::seconds(30), true).first;
    if (ready(j)) return j;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ADD_FAILURE() << "the app never showed what was expected; last sidecar: " << j.dump().substr(0, 3000);
  return j;
}

void click_widget(AppProcess& app, const nlohmann::json& sidecar, const std::string& widget) {
  if (!sidecar.contains("widgets") || !sidecar.at("widgets").contains(widget)) {
    ADD_FAILURE() << widget << " was not drawn";
    return;
  }
  const nlohmann::json s = reveal_widget(app, sidecar, widget);
  if (!s.at("widgets").contains(widget)) {
    ADD_FAILURE() << widget << " was not drawn after scrolling to it";
    return;
  }
  const auto [x, y] = centre_of(s.at("widgets").at(widget));
  app.click(x, y);
}

bool click_menu_entry(AppProcess& app, const nlohmann::json& sidecar, const std::string& menu, const std::string& entry) {
  const auto [mx, my] = centre_of(sidecar.at("widgets").at("menu:" + menu));
  app.click(mx, my);
  const nlohmann::json open = app.export_view().first;
  const std::string item = "menu:" + menu + "/" + entry;
  if (!open.at("widgets").contains(item)) return false;
  const auto [ix, iy] = centre_of(open.at("widgets").at(item));
  app.click(ix, iy);
  return true;
}

void open_by_path(AppProcess& app, const nlohmann::json& sidecar, const std::string& path, const std::string& open_button) {
  click_widget(app, sidecar, "clear_button");
  click_widget(app, sidecar, "open_path");
  app.xdotool("type --delay 5 '" + path + "'");
  click_widget(app, sidecar, open_button);
}

nlohmann::json reveal_widget(AppProcess& app, const nlohmann::json& sidecar, const std::string& widget) {
  // A control below (or above) the part of its panel on screen (a column that scrolls) is
  // scrolled into view with the wheel, as a person would.
  nlohmann::json s = sidecar;
  const std::string owner = s.value("widget_windows", nlohmann::json::object()).value(widget, std::string());
  bool scrolled = false;
  for (int n = 0; n < 40 && !owner.empty() && s.at("widgets").contains(owner) && s.at("widgets").contains(widget); ++n) {
    const auto& r = s.at("widgets").at(widget);
    const auto& in = s.at("widgets").at(owner);
    const float y = r[1].get<float>(), h = r[3].get<float>(), top = in[1].get<float>(), bottom = top + in[3].get<float>();
    if (y >= top && y + h <= bottom) break;
    const auto [cx, cy] = centre_of(in);
    app.xdotool("mousemove " + std::to_string(static_cast<int>(cx)) + " " + std::to_string(static_cast<int>(cy)));
    app.xdotool(std::string("click --repeat 3 ") + (y < top ? "4" : "5"));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    s = app.export_view().first;
    scrolled = true;
  }
  // Off the panel after scrolling (no hover left on what was scrolled); the pointer stays put when
  // nothing was scrolled (an open menu must keep its item under it).
  if (scrolled) app.xdotool("mousemove " + std::to_string(static_cast<int>(centre_of(s.at("widgets").at(owner)).first)) + " " +
                            std::to_string(static_cast<int>(centre_of(s.at("widgets").at(owner)).second)));
  return s;
}

nlohmann::json start_run_a(AppProcess& app) {
  click_widget(app, app.export_view().first, "tab:train");
  const nlohmann::json panel = export_until(app, [](const nlohmann::json& j) { return j.at("widgets").contains("train:start"); });
  click_widget(app, panel, "train:start");
  return panel;
}

nlohmann::json start_run_b_averaging(AppProcess& app, const nlohmann::json& sidecar) {
  click_widget(app, sidecar, "train:run_b");
  const nlohmann::json b = export_until(app, [](const nlohmann::json& j) {
    return j.at("train").at("run") == "b" && j.at("widgets").contains("train:copy") && j.at("widgets").contains("train:start");
  });
  click_widget(app, b, "train:copy");
  click_widget(app, b, "train:pool_avg");
  click_widget(app, b, "train:start");
  return b;
}

std::filesystem::path make_safari_pan(const std::filesystem::path& dir) {
  const auto clip = dir / "pan.mp4";
  const std::string make =
      "ffmpeg -nostdin -v error -y -loop 1 -framerate 10 -i '" + asset("safari.jpg").string() +
      "' -vf \"zoompan=z='1+0.004*on':x='on*1.5':y='on':d=1:s=320x240:fps=10\" -frames:v 200 -c:v libx264 "
      "-pix_fmt yuv420p '" +
      clip.string() + "'";
  return std::system(make.c_str()) == 0 ? clip : std::filesystem::path();
}

// The first file with this extension that appears in `folder` within 30 s.
std::filesystem::path wait_for_file(const std::filesystem::path& folder, const std::string& ext) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < end) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(folder, ec))
      if (e.path().extension() == ext) return e.path();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return {};
}

}  // namespace attnlab::testing
