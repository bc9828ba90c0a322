// The soak test of issue 7: thousands of random clicks, key presses, wheel turns, drags and
// window resizes on the real window under Xvfb, switching images, heads, masks and K, with good
// and bad files dropped on the window (XDND) or typed into "open by path". Every batch of
// random actions and every directed change after it (one of the settings the issue names)
// ends with an export, which must appear (the app still answers) and be consistent; the app's
// memory must level off; and the final export must match its settings: the sidecar agrees
// with its image, its grid and the CPU reference, and `attnlab render --from` draws the same
// map from the settings alone.
//
// ATTNLAB_SOAK_SEED=n picks another sequence (the seed is printed: the same seed makes the same
// choices, though the app's timing may differ from run to run); ATTNLAB_SOAK_ACTIONS=n
// makes the run longer or shorter, ATTNLAB_SOAK_KEEP_EXPORTS=1 keeps every export's picture.
// Each batch's xdotool script and a line per export (states.txt) stay in the test's folder.
#include <gtest/gtest.h>
#include <stb_image.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "core/io/image.hpp"
#include "core/hand_made/reference.hpp"
#include "core/base/settings.hpp"
#include "core/hand_made/tokens.hpp"
#include "test_support.hpp"
#include "xdnd_drop.hpp"
#include "xvfb_session.hpp"

using namespace attnlab;
using namespace attnlab::testing;
using nlohmann::json;

namespace {

// The hand-made head a sidecar names (hand_made.head, from 0), by its name.
std::string head_of(const nlohmann::json& sidecar) {
  return std::string(head_name(static_cast<HeadKind>(sidecar.at("hand_made").at("head").get<int>())));
}

using Clock = std::chrono::steady_clock;

// The window size the app opens with, restored before the final export.
constexpr int kWidth = 1600, kHeight = 1000;
// About one frame of the app on llvmpipe: the pause after an action so that the app sees it
// before the next one.
constexpr double kFrame = 0.015;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

// Words of a text separated by spaces.
std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

struct Rect {
  float x = 0, y = 0, w = 0, h = 0;
};

std::map<std::string, Rect> widgets_of(const json& sidecar) {
  std::map<std::string, Rect> out;
  for (const auto& [name, r] : sidecar.at("widgets").items())
    out[name] = {r[0].get<float>(), r[1].get<float>(), r[2].get<float>(), r[3].get<float>()};
  return out;
}

// Width and height of a PNG (or any image stb_image reads) from its header; {0, 0} if it is not one.
std::pair<int, int> png_size(const std::filesystem::path& png) {
  int w = 0, h = 0, channels = 0;
  if (!stbi_info(png.c_str(), &w, &h, &channels)) return {0, 0};
  return {w, h};
}

// A file the soak opens: photos and odd but valid images that must open, and files that must
// be refused with a banner while the previous image stays.
struct SoakFile {
  std::filesystem::path path;
  bool good;
};

std::vector<SoakFile> make_files(const std::filesystem::path& dir) {
  std::vector<SoakFile> files;
  for (const char* photo : {"safari.jpg", "horses.jpg", "dog.jpg", "eagle.jpg"}) files.push_back({asset(photo), true});
  auto image = [&](const std::string& name, int w, int h, int channels, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<std::uint8_t> px(static_cast<size_t>(w) * h * channels);
    for (auto& v : px) v = static_cast<std::uint8_t>(rng());
    write_png(dir / name, w, h, channels, px);
    files.push_back({dir / name, true});
  };
  image("odd-77x53.png", 77, 53, 3, 1);    // not a multiple of any K
  image("grey-64x48.png", 64, 48, 1, 2);   // one channel
  image("alpha-40x40.png", 40, 40, 4, 3);  // an alpha channel
  image("one-pixel.png", 1, 1, 3, 4);      // opens only in pad mode: no whole patch fits
  {
    std::string pgm = "P5\n20 10\n65535\n";  // 16 bits per sample
    for (int n = 0; n < 200; ++n) pgm += {static_cast<char>(n), static_cast<char>(255 - n)};
    write_file(dir / "deep-16bit.pgm", pgm);
    files.push_back({dir / "deep-16bit.pgm", true});
  }
  const std::string photo = read_file(asset("safari.jpg"));
  write_file(dir / "empty.png", "");
  write_file(dir / "cut.jpg", photo.substr(0, photo.size() / 2));
  std::mt19937 rng(5);
  std::string noise(4096, '\0');
  for (auto& c : noise) c = static_cast<char>(rng());
  write_file(dir / "noise.jpg", noise);
  write_file(dir / "notes.png", "These are lecture notes, not a picture.\n");
  write_file(dir / "huge.ppm", "P6\n100000 100000\n255\n" + std::string(64, '\x7f'));
  std::filesystem::create_directories(dir / "folder.jpg");
  for (const char* bad : {"empty.png", "cut.jpg", "noise.jpg", "notes.png", "huge.ppm", "folder.jpg", "missing.jpg"})
    files.push_back({dir / bad, false});
  return files;
}

// What the soak did, printed at the end.
struct Tally {
  std::map<std::string, int> count;
  int total = 0;
  void add(const std::string& what) {
    ++count[what];
    ++total;
  }
};

// Random actions written as one xdotool script per batch: one process runs a whole batch,
// with short sleeps so that most actions get a frame of their own.
class Monkey {
 public:
  Monkey(std::uint64_t seed, unsigned long window, std::vector<SoakFile> files)
      : rng_(seed), window_(window), files_(std::move(files)) {}

  // The layout from an export: the window's size and the rectangles of its controls.
  void look_at(const json& sidecar);

  // About `n` actions as an xdotool script; `rough` adds tiny and odd window sizes.
  std::string batch(int n, bool rough, Tally& tally);

  // The value of the setting the directed change is after, in an export.
  std::string directed_value(const json& sidecar) const;

  // One of the settings the issue names as an xdotool script (see directed_action).
  std::string directed(Tally& tally);

  const SoakFile& random_file() { return files_[pick(files_.size())]; }
  std::pair<int, int> random_point() { return {uniform(0, width_ - 1), uniform(0, height_ - 1)}; }
  int width() const { return width_; }
  int height() const { return height_; }

 private:
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  size_t pick(size_t n) { return static_cast<size_t>(uniform(0, static_cast<int>(n) - 1)); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  void line(const std::string& s) { out_ << s << '\n'; }
  void sleep(double s) { out_ << "sleep " << s << '\n'; }
  // xdotool's click waits 100 ms after the release unless told not to; the sleep after it
  // gives the app a frame to see the click where the pointer is, before the next move.
  void click(int button);
  void move(float x, float y);
  std::pair<float, float> inside(const Rect& r);
  // A reachable widget named `name`, or when `name` ends with ':' one whose name starts with
  // it (any widget when empty); nullptr if there is none.
  const std::pair<const std::string, Rect>* widget(const std::string& name);
  // The window that holds a control; empty for the menus, the banner and the map.
  static std::string owner(const std::string& control);
  // True when the middle of a control lies inside its window (below the title) and inside the
  // app's window: panels record their controls also when scrolled or moved out of sight.
  bool reachable(const std::string& name) const;
  // Sliders are recorded with their label; the slider itself is the left part.
  static bool slider(const std::string& name);

  // One of the settings the issue names, changed right after an export while the recorded
  // layout is fresh: the mask kind, K, the head or the image, in turn. The first three by their
  // keys (M, [ and ], 1-6), after an Escape held for a frame that takes the keyboard back from a
  // text field (ImGui's own widgets see only keys held over a frame); the image by a click on
  // the gallery. The random actions change them through the controls too.
  void directed_action(Tally& tally);

  // Drags a panel back where it was at the start, by a point of it that is on screen, under no
  // other window and on nothing that takes the click (ImGui moves a window dragged by any empty
  // part, its title bar or not), then its size back by its lower right corner. The recorded
  // controls move with it. False when it is home already or cannot be reached.
  bool drag_home(const std::string& panel, Tally& tally, bool on_top = false);

  // What a person does now and then when the screen gets crowded or slow: drag the panels back
  // where they were (ImGui keeps every window inside a tiny window, and leaves them where they
  // ended up when it grows again), leave the smallest patches, make the UI smaller again and
  // close a chapter window.
  void tidy(Tally& tally);

  // True when (x, y) lies on a recorded control (with a margin).
  bool on_control(float x, float y) const;

  bool outside(float x, float y) const;
  // True when (x, y) is outside the app's window or inside a window other than `window`.
  bool covered(const std::string& window, float x, float y) const;

  // Brings a window to the front, as a person does when another window covers it: a click on
  // a point of it that no other window covers, its title bar first. False when there is none.
  bool raise_window(const std::string& window);
  void bring_to_front(const std::string& control) { raise_window(owner(control)); }

  // Toggles a panel `times` through the View menu (its entries lie below the title, one per
  // line): once opens a closed panel, twice brings an open one up in front of the others.
  void reopen(const std::string& window, int times);

  void action(Tally& tally);

  void widget_click(Tally& tally);

  void random_click(Tally& tally);

  void canvas_click(Tally& tally);

  void key(Tally& tally);

  void press(const std::string& k, Tally& tally);

  void wheel(Tally& tally);

  // Press at a point, move in a few steps, release; `modifier` is held throughout.
  void drag_path(float x0, float y0, float x1, float y1, int button, const std::string& modifier = "");

  void drag(Tally& tally);

  void type_text(Tally& tally);

  void resize(int w, int h, Tally& tally);

  // A new window size. ImGui keeps every window inside a small one and leaves them where they
  // ended up when it grows again (the panels piled up at the top left, their titles out of
  // reach): tiny and odd sizes come in the last batches only (`rough`), for a few actions each,
  // and the size comes back.
  void random_resize(Tally& tally);

  // Clear, click the field, type the path, then Open or Enter (as in test_app_xvfb.cpp).
  void open_by_path(Tally& tally);

  void hover(Tally& tally);

  std::mt19937_64 rng_;
  unsigned long window_;
  std::vector<SoakFile> files_;
  int width_ = kWidth, height_ = kHeight;
  bool presentation_ = false, rough_ = false;
  std::string closed_panel_;               // "window:…", empty when every panel shows
  int directed_ = 0, directed_tries_ = 0;  // which setting, and how often tried
  bool directed_pending_ = false;          // the next export shows whether it took
  std::string directed_before_;            // its value at the last export
  float ui_scale_ = 1;
  int patch_ = 16;
  std::string head_;  // the main head's name
  std::map<std::string, Rect> widgets_, home_;
  std::ostringstream out_;
};

void Monkey::look_at(const json& sidecar) {
  width_ = sidecar.at("window").at("width").get<int>();
  height_ = sidecar.at("window").at("height").get<int>();
  widgets_ = widgets_of(sidecar);
  if (home_.empty())  // the first layout: where the panels belong
    for (const auto& [name, r] : widgets_)
      if (name.rfind("window:", 0) == 0) home_[name] = r;
  presentation_ = sidecar.at("classroom").at("presentation").get<bool>();
  ui_scale_ = sidecar.at("classroom").at("ui_scale").get<float>();
  patch_ = sidecar.at("patch").get<int>();
  head_ = head_of(sidecar);
  // After a directed change: on to the next setting once it took (or after three tries).
  if (directed_pending_ && (directed_value(sidecar) != directed_before_ || directed_tries_ == 3)) {
    directed_ = (directed_ + 1) % 4;
    directed_tries_ = 0;
  }
  directed_pending_ = false;
  directed_before_ = directed_value(sidecar);
  closed_panel_.clear();  // the first closed one, in the order of the View menu
  const json& panels = sidecar.at("classroom").at("panels");
  for (const auto& [key, window] : {std::pair{"images", "window:Images"},
                                    {"pinned", "window:Pinned queries"},
                                    {"heads", "window:Heads"},
                                    {"controls", "window:Controls"}})
    if (!panels.at(key).get<bool>()) closed_panel_ = window;
}

std::string Monkey::batch(int n, bool rough, Tally& tally) {
  rough_ = rough;
  out_.str("");
  // The banner (a bad file, most batches) is dismissed now and then, and a closed panel
  // comes back through the View menu.
  if (const auto dismiss = widgets_.find("banner_dismiss"); dismiss != widgets_.end() && chance(0.5)) {
    move(dismiss->second.x + dismiss->second.w * 0.5f, dismiss->second.y + dismiss->second.h * 0.5f);
    click(1);
    sleep(0.1);  // ImGui finds the window under the pointer from the last frame's windows
    tally.add("widget click");
  }
  if (!closed_panel_.empty() && chance(0.5)) {
    reopen(closed_panel_, 1);
    tally.add("widget click");
  }
  tidy(tally);
  for (int k = 0; k < n; ++k) {
    // Presentation mode shows only the map and lasts until F5 or Escape, two keys of many:
    // leave it soon, so that the controls get their share of the actions.
    if (presentation_ && chance(0.25)) press("Escape", tally);
    action(tally);
  }
  line("keyup ctrl shift alt");  // never leave a modifier down (Ctrl + a later key)
  return out_.str();
}

std::string Monkey::directed_value(const json& sidecar) const {
  switch (directed_) {
    case 0:
      return sidecar.at("mask").at("kind").get<std::string>();
    case 1:
      return sidecar.at("patch").dump();
    case 2:
      return head_of(sidecar);
    default:
      return sidecar.at("image").get<std::string>();
  }
}

std::string Monkey::directed(Tally& tally) {
  out_.str("");
  directed_action(tally);
  sleep(0.3);  // a choice in a list takes on the release, a frame later; the hand-made session, one more
  return out_.str();
}

void Monkey::click(int button) {
  out_ << "click --delay 0 " << button << '\n';
  sleep(kFrame);
}

void Monkey::move(float x, float y) {
  const int cx = std::clamp(static_cast<int>(x), 0, std::max(width_ - 1, 0));
  const int cy = std::clamp(static_cast<int>(y), 0, std::max(height_ - 1, 0));
  out_ << "mousemove --window " << window_ << ' ' << cx << ' ' << cy << '\n';
}

std::pair<float, float> Monkey::inside(const Rect& r) {
  return {r.x + r.w * std::uniform_real_distribution<float>(0.05f, 0.95f)(rng_),
          r.y + r.h * std::uniform_real_distribution<float>(0.1f, 0.9f)(rng_)};
}

const std::pair<const std::string, Rect>* Monkey::widget(const std::string& name) {
  if (!name.empty() && name.back() != ':') {
    const auto it = widgets_.find(name);
    return it == widgets_.end() || !reachable(name) ? nullptr : &*it;
  }
  std::vector<const std::pair<const std::string, Rect>*> found;
  for (const auto& w : widgets_)
    if (w.first.rfind(name, 0) == 0 && w.first.rfind("window:", 0) != 0 && reachable(w.first)) found.push_back(&w);
  return found.empty() ? nullptr : found[pick(found.size())];
}

std::string Monkey::owner(const std::string& control) {
  auto starts = [&](const char* prefix) { return control.rfind(prefix, 0) == 0; };
  if (starts("head:") || starts("W_q:") || starts("W_k:") || starts("custom_")) return "window:Heads";
  if (starts("gallery:") || starts("open_") || control == "clear_button") return "window:Images";
  if (starts("matrix_")) return "window:matrix";
  if (starts("output_")) return "window:output";
  if (starts("menu:") || starts("banner") || starts("tour_") || control == "image_canvas") return "";
  return "window:Controls";
}

bool Monkey::reachable(const std::string& name) const {
  const Rect& r = widgets_.at(name);
  const float cx = r.x + r.w * 0.5f, cy = r.y + r.h * 0.5f;
  if (cx < 0 || cy < 0 || cx >= static_cast<float>(width_) || cy >= static_cast<float>(height_)) return false;
  const std::string o = owner(name);
  if (o.empty()) return true;
  const auto w = widgets_.find(o);
  return w != widgets_.end() && cx >= w->second.x && cx < w->second.x + w->second.w &&
         cy >= w->second.y + 22 * ui_scale_ && cy < w->second.y + w->second.h;
}

bool Monkey::slider(const std::string& name) {
  static const std::set<std::string> sliders = {"patch",      "temperature", "display.opacity", "pos.B",
                                                "pos.P",      "pos.lambda",  "mask.radius",     "mask.ratio",
                                                "classroom.ui_scale"};
  return sliders.count(name) > 0;
}

void Monkey::directed_action(Tally& tally) {
  const int what = directed_;
  ++directed_tries_;
  directed_pending_ = true;
  if (what <= 2) {
    line("keydown Escape");
    sleep(0.1);
    line("keyup Escape");
    sleep(0.1);
    presentation_ = false;
    if (what == 0) {
      press("m", tally);
    } else if (what == 1) {  // halved or doubled, mostly between 8 and 64 (small K is slow)
      press(patch_ >= 12 && (patch_ > 32 || chance(0.5)) ? "bracketleft" : "bracketright", tally);
    } else {
      static const std::array<std::string, 6> heads = {"colour", "position", "colour+position", "texture", "random", "custom"};
      int n = uniform(0, 4);
      if (heads[static_cast<size_t>(n)] == head_) n = 5;
      press(std::to_string(n), tally);  // digit keys pick heads from 0
    }
    return;
  }
  // The gallery's panel: shown (presentation mode left, the panel opened if closed: the next
  // turn finds it), brought to the front, dragged home. Each step waits for the app's next
  // frames (ImGui finds the window under the pointer from the last frame's windows): a frame
  // takes 25-90 ms on llvmpipe, more on a busy machine.
  if (presentation_) return press("Escape", tally);
  const std::string panel = owner("gallery:");
  if (!widgets_.count(panel)) return reopen(panel, 1);
  if (!raise_window(panel)) reopen(panel, 2);
  sleep(0.25);
  if (drag_home(panel, tally, true)) sleep(0.25);
  const auto* w = widget("gallery:");
  if (!w) {  // scrolled away: back to the top of its panel
    const Rect& p = widgets_.at(panel);
    move(p.x + p.w * 0.5f, p.y + p.h * 0.5f);
    line("click --repeat 10 --delay 10 4");
    sleep(kFrame);
    tally.add("wheel");
    return;
  }
  const auto [x, y] = inside(w->second);
  move(x, y);
  click(1);
  tally.add("gallery image");
}

bool Monkey::drag_home(const std::string& panel, Tally& tally, bool on_top) {
  const auto it = widgets_.find(panel), home = home_.find(panel);
  if (it == widgets_.end() || home == home_.end()) return false;
  const Rect r = it->second, h = home->second;
  if (std::abs(r.x - h.x) + std::abs(r.y - h.y) + std::abs(r.w - h.w) + std::abs(r.h - h.h) < 40) return false;
  const float dx = h.x - r.x, dy = h.y - r.y, w = static_cast<float>(width_), ht = static_cast<float>(height_);
  std::optional<std::pair<float, float>> grab;
  for (float y = std::max(r.y, 0.0f) + 6; !grab && y < std::min(r.y + r.h, ht) - 20; y += 16)
    for (float x = std::max(r.x, 0.0f) + 8; x < std::min(r.x + r.w - 30, w - 8); x += 16)
      if (!(on_top ? outside(x, y) : covered(panel, x, y)) && !on_control(x, y) && x + dx >= 0 && x + dx < w &&
          y + dy >= 0 && y + dy < ht) {
        grab = {x, y};
        break;
      }
  if (!grab) return false;
  drag_path(grab->first, grab->second, grab->first + dx, grab->second + dy, 1);
  Rect now{h.x, h.y, r.w, r.h};
  if (h.x + r.w < w && h.y + r.h < ht) {
    drag_path(h.x + r.w - 3, h.y + r.h - 3, h.x + h.w - 3, h.y + h.h - 3, 1);
    now = h;
  }
  for (auto& [name, rect] : widgets_)
    if (owner(name) == panel) {
      rect.x += dx;
      rect.y += dy;
    }
  widgets_[panel] = now;
  tally.add("drag window");
  return true;
}

void Monkey::tidy(Tally& tally) {
  int moved = 0;
  for (const std::string panel : {"window:Controls", "window:Heads", "window:Images", "window:Attention map"})
    if (chance(0.7) && drag_home(panel, tally) && ++moved == 2)
      break;  // the others another time: every drag changes what covers what
  // Small patches (K = 4: 15 000 tokens on the safari photo) slow every frame and every
  // drop down; a teacher shows them and goes back to a larger K.
  if (const auto* k = widget("patch"); k && patch_ < 10 && chance(0.8)) {
    bring_to_front(k->first);
    move(k->second.x + k->second.w * 0.6f * std::uniform_real_distribution<float>(0.2f, 0.9f)(rng_),
         k->second.y + k->second.h * 0.5f);
    click(1);
    tally.add("widget click");
  }
  if (ui_scale_ > 1.5f && chance(0.6)) {
    for (int n = static_cast<int>(std::lround((ui_scale_ - 1.25f) / 0.25f)); n > 0; --n) press("ctrl+minus", tally);
  }
  static const std::set<std::string> panels = {"window:Attention map",  "window:Controls", "window:Heads",
                                               "window:Pinned queries", "window:Images",   "window:banner"};
  for (const auto& [name, r] : widgets_) {
    if (name.rfind("window:", 0) != 0 || panels.count(name) || !chance(0.4)) continue;
    move(r.x + r.w - 12 * ui_scale_, r.y + 11 * ui_scale_);  // the close button of its title bar
    click(1);
    tally.add("widget click");
  }
}

bool Monkey::on_control(float x, float y) const {
  for (const auto& [name, o] : widgets_)
    if (name.rfind("window:", 0) != 0 && x >= o.x - 4 && x < o.x + o.w + 4 && y >= o.y - 4 && y < o.y + o.h + 4)
      return true;
  return false;
}

bool Monkey::outside(float x, float y) const {
  return x < 0 || y < 0 || x >= static_cast<float>(width_) || y >= static_cast<float>(height_);
}

bool Monkey::covered(const std::string& window, float x, float y) const {
  if (outside(x, y)) return true;
  for (const auto& [name, o] : widgets_)
    if (name != window && name.rfind("window:", 0) == 0 && x >= o.x && x < o.x + o.w && y >= o.y && y < o.y + o.h)
      return true;
  return false;
}

bool Monkey::raise_window(const std::string& window) {
  const auto it = widgets_.find(window);
  if (it == widgets_.end()) return false;
  const Rect& r = it->second;
  for (float y = r.y + 6; y < r.y + r.h; y += 24)
    for (float x = r.x + 8; x < r.x + r.w - 24; x += 24)
      if (!covered(window, x, y)) {
        move(x, y);
        click(1);
        return true;
      }
  return false;
}

void Monkey::reopen(const std::string& window, int times) {
  static const std::map<std::string, int> entries = {
      {"window:Controls", 0}, {"window:Heads", 1}, {"window:Pinned queries", 2}, {"window:Images", 3}};
  const auto entry = entries.find(window);
  const auto menu = widgets_.find("menu:View");
  if (entry == entries.end() || menu == widgets_.end()) return;
  for (int n = 0; n < times; ++n) {
    move(menu->second.x + menu->second.w * 0.5f, menu->second.y + menu->second.h * 0.5f);
    click(1);
    sleep(0.3);  // ImGui finds the window under the pointer from the last frame's windows
    move(menu->second.x + 20, menu->second.y + menu->second.h * (1.5f + static_cast<float>(entry->second)));
    click(1);
    sleep(0.3);
  }
}

void Monkey::action(Tally& tally) {
  // Weights: where a teacher's and a student's hands go most, and everything else too.
  using Action = void (Monkey::*)(Tally&);
  static const std::vector<std::pair<double, Action>> kinds = {
      {22, &Monkey::widget_click}, {12, &Monkey::random_click}, {10, &Monkey::canvas_click},
      {20, &Monkey::key},          {7, &Monkey::wheel},         {12, &Monkey::drag},
      {3, &Monkey::type_text},     {2, &Monkey::random_resize}, {1.5, &Monkey::open_by_path},
      {5, &Monkey::hover}};
  std::vector<double> weights;
  for (const auto& k : kinds) weights.push_back(k.first);
  (this->*kinds[std::discrete_distribution<size_t>(weights.begin(), weights.end())(rng_)].second)(tally);
}

void Monkey::widget_click(Tally& tally) {
  // Half of the clicks go to the controls the issue names: images, heads, masks, K, τ, menus.
  static const std::vector<std::string> favourites = words(
      "gallery: gallery: head: head: patch_size patch_size mask mask mask temperature menu: menu: pos_mode colormap "
      "normalization tau_one mask_radius mask_ratio paint_mode");
  const auto* w = widget(chance(0.5) ? favourites[pick(favourites.size())] : "");
  if (!w) return random_click(tally);
  // Folding a section hides its controls until it is unfolded: seldom, as people do.
  if (w->first.rfind("section:", 0) == 0 && chance(0.8)) w = widget("");
  if (!w) return random_click(tally);
  if (chance(0.3) && w->first.rfind("menu:", 0) != 0) bring_to_front(w->first);
  const std::string& name = w->first;
  Rect r = w->second;
  if (slider(name)) r.w *= 0.6f;
  const auto [x, y] = inside(r);
  move(x, y);
  click(1);
  const bool list = name == "mask.kind" || name == "pos.mode" || name == "display.colormap" || name == "display.normalization" ||
                    (name.rfind("menu:", 0) == 0 && name.find('/') == std::string::npos);
  if (list && chance(0.75)) {  // a combo or menu opened: pick one of its entries below it
    sleep(0.08);               // the popup appears a frame or two after the click
    move(w->second.x + w->second.w * 0.3f, w->second.y + w->second.h * (1.5f + static_cast<float>(uniform(0, 7))));
    click(1);
  }
  tally.add(name.rfind("gallery:", 0) == 0 ? "gallery image" : "widget click");
}

void Monkey::random_click(Tally& tally) {
  const auto [x, y] = random_point();
  move(static_cast<float>(x), static_cast<float>(y));
  const int r = uniform(0, 99);
  if (r < 5) {
    line("click --repeat 2 --delay 30 1");  // a double click
    sleep(kFrame);
  } else {
    click(r < 80 ? 1 : r < 95 ? 3 : 2);
  }
  tally.add("click");
}

void Monkey::canvas_click(Tally& tally) {
  const auto it = widgets_.find("image_canvas");
  if (it == widgets_.end()) return random_click(tally);
  const auto [x, y] = inside(it->second);
  move(x, y);
  click(chance(0.8) ? 1 : 3);  // pick the query, or pin a patch for comparison
  tally.add("patch click");
}

void Monkey::key(Tally& tally) {
  // No Ctrl+Q and no 'q' at all: the only keys that end the app. No F8: a recording holds its
  // encoder's working memory while it runs (about 200 MiB for a 1280 × 1024 window), which is
  // no leak but would hide one here (RecordUnderXvfb.* records; a recording started from the
  // Export menu by a random click is stopped before the memory is sampled, below).
  static const std::vector<std::string> arrows = {"Left", "Right", "Up", "Down"};
  static const std::vector<std::string> others = words(
      "0 1 2 3 4 5 p Escape Tab shift+Tab Return KP_Enter space BackSpace Delete Home End Prior Next F1 F2 F3 F4 "
      "F5 F6 F7 F9 F10 F11 ctrl+equal ctrl+minus ctrl+KP_Add ctrl+KP_Subtract ctrl+a ctrl+c ctrl+v ctrl+x ctrl+z "
      "shift+Left alt+Left a b c d e f g h i j k l m n o r s t u v w x y z 6 7 8 9 minus period slash bracketleft "
      "bracketright");
  press(chance(0.02) ? "F12" : chance(0.35) ? arrows[pick(arrows.size())] : others[pick(others.size())], tally);
}

void Monkey::press(const std::string& k, Tally& tally) {
  tally.add(k == "F12" ? "F12 export" : k == "F9" ? "F9 csv" : "key");
  if (k == "F5") presentation_ = !presentation_;  // as the app will do, until the next export says
  if (k == "Escape") presentation_ = false;
  if (chance(0.5)) {  // a quick tap: the app's own keys are queued, so no frame is needed
    line("key --delay 0 " + k);
    sleep(0.01);
  } else {  // held for a frame, as ImGui's own widgets need
    line("keydown " + k);
    sleep(kFrame);
    line("keyup " + k);
    sleep(kFrame);
  }
}

void Monkey::wheel(Tally& tally) {
  const auto it = widgets_.find("image_canvas");
  if (it != widgets_.end() && chance(0.6)) {
    const auto [x, y] = inside(it->second);
    move(x, y);
  } else {
    const auto [x, y] = random_point();
    move(static_cast<float>(x), static_cast<float>(y));
  }
  line("click --repeat " + std::to_string(uniform(1, 3)) + " --delay 10 " + (chance(0.5) ? "4" : "5"));
  sleep(kFrame);
  tally.add("wheel");
}

void Monkey::drag_path(float x0, float y0, float x1, float y1, int button, const std::string& modifier) {
  if (!modifier.empty()) line("keydown " + modifier);
  move(x0, y0);
  line("mousedown " + std::to_string(button));
  sleep(kFrame);
  const int steps = uniform(2, 4);
  for (int s = 1; s <= steps; ++s) {
    const float t = static_cast<float>(s) / static_cast<float>(steps);
    move(x0 + (x1 - x0) * t, y0 + (y1 - y0) * t);
    sleep(0.02);
  }
  sleep(kFrame);  // ImGui ends a drag on the frame that sees the release, without its last move
  line("mouseup " + std::to_string(button));
  if (!modifier.empty()) line("keyup " + modifier);
  sleep(kFrame);
}

void Monkey::drag(Tally& tally) {
  const int kind = uniform(0, 99);
  const auto canvas = widgets_.find("image_canvas");
  std::vector<const std::pair<const std::string, Rect>*> windows;
  for (const auto& w : widgets_)
    if (w.first.rfind("window:", 0) == 0) windows.push_back(&w);
  // Windows move and change size a little at a time, or the panels soon hide each other's
  // controls for the rest of the run.
  if (kind < 6 && !windows.empty()) {  // move a window by its title bar
    const Rect& w = windows[pick(windows.size())]->second;
    drag_path(w.x + w.w * 0.5f, w.y + 6, w.x + w.w * 0.5f + static_cast<float>(uniform(-150, 150)),
              w.y + 6 + static_cast<float>(uniform(-100, 100)), 1);
    tally.add("drag window");
  } else if (kind < 12 && !windows.empty()) {  // resize a window by its lower right corner
    const Rect& w = windows[pick(windows.size())]->second;
    drag_path(w.x + w.w - 3, w.y + w.h - 3, w.x + w.w + static_cast<float>(uniform(-120, 120)),
              w.y + w.h + static_cast<float>(uniform(-80, 80)), 1);
    tally.add("resize window");
  } else if (kind < 60 && canvas != widgets_.end()) {  // pan (middle or Ctrl + left), or paint
    const auto [x0, y0] = inside(canvas->second);
    const auto [x1, y1] = inside(canvas->second);
    const int how = uniform(0, 2);
    drag_path(x0, y0, x1, y1, how == 0 ? 2 : 1, how == 1 ? "ctrl" : how == 2 && chance(0.3) ? "shift" : "");
    tally.add("drag on photo");
  } else if (kind < 80) {  // along a slider or a W_q / W_k row
    static const std::vector<std::string> sliders = {
        "patch", "temperature", "display.opacity", "pos.B",      "pos.P",      "pos.lambda",
        "W_q:",  "W_k:",        "mask.radius",     "mask.ratio", "classroom.ui_scale"};
    const auto* w = widget(sliders[pick(sliders.size())]);
    if (!w) return random_click(tally);
    Rect r = w->second;
    if (slider(w->first)) r.w *= 0.6f;
    const auto [x0, y0] = inside(r);
    drag_path(x0, y0, r.x + r.w * std::uniform_real_distribution<float>(-0.2f, 1.2f)(rng_), y0, 1);
    tally.add("drag slider");
  } else {  // anywhere
    // a short one: a drag that starts on a window's empty part moves the window
    const auto [x0, y0] = random_point();
    drag_path(static_cast<float>(x0), static_cast<float>(y0), static_cast<float>(x0 + uniform(-150, 150)),
              static_cast<float>(y0 + uniform(-100, 100)), uniform(0, 3) == 0 ? 3 : 1);
    tally.add("drag");
  }
}

void Monkey::type_text(Tally& tally) {
  static const std::string letters = "abcdefghijklmnoprstuvwxyz0123456789./-_";  // no q
  std::string word;
  for (int n = uniform(1, 8); n > 0; --n) word += letters[pick(letters.size())];
  line("type --delay 5 " + word);
  sleep(kFrame);
  tally.add("typed text");
}

void Monkey::resize(int w, int h, Tally& tally) {
  line("windowsize " + std::to_string(window_) + " " + std::to_string(w) + " " + std::to_string(h));
  sleep(0.08);  // the app lays out the new size
  width_ = w;
  height_ = h;
  tally.add("window resize");
}

void Monkey::random_resize(Tally& tally) {
  static const std::vector<std::pair<int, int>> normal = {{kWidth, kHeight}, {1920, 1080}, {1280, 800}};
  static const std::vector<std::pair<int, int>> odd = {{800, 600}, {640, 480}, {320, 240}, {200, 150},
                                                       {120, 90},  {1, 1},     {60, 700},  {1900, 180}};
  if (!rough_ || chance(0.3)) {
    const auto [w, h] = normal[pick(normal.size())];
    return resize(w, h, tally);
  }
  const int w0 = width_, h0 = height_;
  const auto [w, h] = odd[pick(odd.size())];
  resize(w, h, tally);
  for (int n = uniform(1, 5); n > 0; --n) chance(0.5) ? random_click(tally) : key(tally);
  resize(w0, h0, tally);
}

void Monkey::open_by_path(Tally& tally) {
  const auto clear = widgets_.find("clear_button"), field = widgets_.find("open_path"),
             open = widgets_.find("open_button");
  if (clear == widgets_.end() || field == widgets_.end() || open == widgets_.end()) return random_click(tally);
  auto click_at = [&](const Rect& r) {
    const auto [x, y] = inside(r);
    move(x, y);
    click(1);
  };
  const SoakFile& f = random_file();
  click_at(clear->second);
  click_at(field->second);
  line("type --delay 1 " + f.path.string());
  sleep(kFrame);
  if (chance(0.5)) {
    click_at(open->second);
  } else {
    line("key --delay 0 Return");
    sleep(kFrame);
  }
  tally.add(f.good ? "open by path (good)" : "open by path (bad)");
}

void Monkey::hover(Tally& tally) {
  for (int n = uniform(1, 4); n > 0; --n) {
    const auto [x, y] = random_point();
    move(static_cast<float>(x), static_cast<float>(y));
    sleep(0.015);
  }
  tally.add("hover");
}


// Reads the attention settings of a sidecar the way the documented keys say (independently of
// the app's own reader, so that a mistake there cannot hide itself).
Settings settings_of(const json& j) {
  Settings s{.patch = j.at("patch").get<int>(),
             .edge = j.at("edge").get<std::string>() == "pad" ? EdgeMode::Pad : EdgeMode::Crop,
             .temperature = j.at("temperature").get<float>(),
             .seed = j.at("seed").get<std::uint32_t>()};
  const json& m = j.at("mask");
  const std::map<std::string, MaskKind> kinds = {{"none", MaskKind::None},     {"causal", MaskKind::Causal},
                                                 {"strict", MaskKind::Strict}, {"window", MaskKind::Window},
                                                 {"random", MaskKind::Random}, {"painted", MaskKind::Painted}};
  s.mask.kind = kinds.at(m.at("kind").get<std::string>());
  s.mask.radius = m.at("radius").get<int>();
  s.mask.ratio = m.at("ratio").get<float>();
  s.mask.seed = m.at("seed").get<std::uint32_t>();
  s.mask.painted = m.at("painted").get<std::vector<int>>();
  const json& p = j.at("pos");
  s.pos.mode = parse_pos_mode(p.at("mode").get<std::string>());
  s.pos.B = p.at("B").get<float>();
  s.pos.P = p.at("P").get<int>();
  s.pos.sincos = p.at("sincos").get<bool>();
  s.pos.lambda = p.at("lambda").get<float>();
  s.custom.W_q = j.at("custom").at("W_q").get<std::array<float, 9>>();
  s.custom.W_k = j.at("custom").at("W_k").get<std::array<float, 9>>();
  return s;
}

// What every export must satisfy: the PNG is the window, and the grid, the query and the row
// follow from the image and the settings in the sidecar. Returns the problems found.
std::vector<std::string> export_problems(const json& j, const std::filesystem::path& png) {
  std::vector<std::string> problems;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok) problems.push_back(what);
  };
  const int w = j.at("window").at("width").get<int>(), h = j.at("window").at("height").get<int>();
  // The whole window, or with "map only" (a click may tick it) the crop the sidecar names.
  const json& crop = j.at("export").at("crop");
  const int cx = crop[0].get<int>(), cy = crop[1].get<int>(), cw = crop[2].get<int>(), ch = crop[3].get<int>();
  if (j.at("export").at("scope") == "map") {
    expect(cx >= 0 && cy >= 0 && cw > 0 && ch > 0 && cx + cw <= w && cy + ch <= h,
           "the map's crop " + crop.dump() + " is not inside the window");
    expect(png_size(png) == std::pair{cw, ch}, "the PNG is not the size of the map's crop " + crop.dump());
  } else {
    expect(crop == json::array({0, 0, w, h}), "a window export's crop " + crop.dump() + " is not the window");
    expect(png_size(png) == std::pair{w, h},
           "the PNG is not the window's size " + std::to_string(w) + "x" + std::to_string(h));
  }
  if (!j.contains("grid")) return problems;
  const std::filesystem::path image = j.at("image").get<std::string>();
  expect(std::filesystem::is_regular_file(image), "the image " + image.string() + " is not a file");
  const int iw = j.at("image_size").at("width").get<int>(), ih = j.at("image_size").at("height").get<int>();
  // The photo the sidecar names is the one drawn (a lesson's step that could not be shown once
  // left the step's path over the previous photo).
  const auto [fw, fh] = png_size(image);
  expect(std::pair{fw, fh} == std::pair{iw, ih}, "the image " + image.filename().string() + " is " + std::to_string(fw) + "x" +
                                                     std::to_string(fh) + ", the sidecar's image_size " + j.at("image_size").dump());
  const json& g = j.at("grid");
  const int K = j.at("patch").get<int>();
  expect(g.at("K").get<int>() == K, "grid K differs from the patch size");
  PatchGrid want;
  try {
    want = make_grid(iw, ih, K, j.at("edge").get<std::string>() == "pad" ? EdgeMode::Pad : EdgeMode::Crop);
  } catch (const std::exception& e) {
    problems.push_back(std::string("the settings do not fit the image: ") + e.what());
    return problems;
  }
  expect(g.at("cols").get<int>() == want.cols && g.at("rows").get<int>() == want.rows,
         "grid " + g.dump() + " is not that of a " + std::to_string(iw) + "x" + std::to_string(ih) + " image");
  expect(g.at("N").get<int>() == want.cols * want.rows, "N is not cols x rows");
  const int col = j.at("hand_made").at("cell").at("col").get<int>(), row = j.at("hand_made").at("cell").at("row").get<int>();
  expect(col >= 0 && col < want.cols && row >= 0 && row < want.rows, "the query is outside the grid");
  expect(j.at("query_index").get<int>() == row * want.cols + col, "query_index is not row * cols + col");
  const json& r = j.at("row");
  expect(r.at("min").get<float>() >= 0 && r.at("min").get<float>() <= r.at("max").get<float>() &&
             r.at("max").get<float>() <= 1.0f,
         "row weights outside 0 <= min <= max <= 1");
  return problems;
}

// Runs a command; returns its exit status and leaves its output in `log`.
int run(const std::string& command, const std::filesystem::path& log) {
  const int status = std::system((command + " >" + log.string() + " 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST(SoakUnderXvfb, ThousandsOfRandomActionsThenTheFinalExportMatchesItsSettings) {
  const std::uint64_t seed = env_number("ATTNLAB_SOAK_SEED", 20260607);
  const int actions = static_cast<int>(env_number("ATTNLAB_SOAK_ACTIONS", 3000));
  std::printf("soak: seed %llu, %d actions (ATTNLAB_SOAK_SEED=%llu repeats this sequence)\n",
              static_cast<unsigned long long>(seed), actions, static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  const auto t0 = Clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };

  Xvfb x;
  const auto dir = temp_dir();
  SCOPED_TRACE("seed " + std::to_string(seed) + ", scripts and app.log in " + dir.string());
  // GL errors fail the soak in any build (the Debug tree's callback, asked for by ATTNLAB_GL_DEBUG).
  AppProcess app(x, dir, {}, {"ATTNLAB_GL_DEBUG=1"});
  const unsigned long window = app.wait_for_window();
  ASSERT_NE(window, 0u) << app.log();
  Monkey monkey(seed, window, make_files(dir));
  Tally tally;
  std::map<std::string, int> exports;                 // files found in the export folder, by extension
  // RSS after each batch's export, with the token count N the app then held: memory grows with N
  // legitimately (the tokens, their codes, the heads' rows and the GPU's buffers of all N).
  struct MemorySample {
    int actions = 0;
    double mib = 0;
    long tokens = 0;
  };
  std::vector<MemorySample> memory;
  std::map<std::string, std::set<std::string>> seen;  // what the exports showed
  const bool keep_exports = env_number("ATTNLAB_SOAK_KEEP_EXPORTS", 0) != 0;  // to look at them
  int kept = 0;
  std::ofstream states(dir / "states.txt");  // one line per export, for a failure's story

  // Exports, checks and clears the export folder; the sidecar tells the monkey the layout.
  auto export_and_check = [&](const std::string& when) {
    auto [sidecar, png] = app.export_view(std::chrono::seconds(30), true);
    for (const auto& p : export_problems(sidecar, png)) ADD_FAILURE() << when << ": " << p << "\n" << sidecar.dump();
    monkey.look_at(sidecar);
    const json& panels = sidecar.at("classroom").at("panels");
    states << when << ": " << sidecar.at("window").dump() << " "
           << std::filesystem::path(sidecar.at("image").get<std::string>()).filename().string()
           << " K=" << sidecar.at("patch") << " head " << sidecar.at("hand_made").at("head") << " mask "
           << sidecar.at("mask").at("kind") << " presentation " << sidecar.at("classroom").at("presentation")
           << " panels " << panels.dump() << " views " << sidecar.at("views").dump() << " source "
           << sidecar.value("source", "hand_made") << " image_size " << sidecar.at("image_size").dump() << " lesson "
           << (sidecar.at("widgets").contains("lesson:counter") ? "playing" : "no") << " RSS "
           << resident_bytes(app.pid()) / (1024 * 1024) << " MiB widgets " << sidecar.at("widgets").size() << " banner "
           << sidecar.at("banner").get<std::string>().substr(0, 60) << "\n";
    seen["image"].insert(std::filesystem::path(sidecar.at("image").get<std::string>()).filename().string());
    seen["head"].insert(head_of(sidecar));
    seen["mask"].insert(sidecar.at("mask").at("kind").get<std::string>());
    seen["K"].insert(std::to_string(sidecar.at("patch").get<int>()));
    seen["window"].insert(sidecar.at("window").dump());
    for (const auto& [view, open] : sidecar.at("views").items())
      if (open.get<bool>()) seen["teaching view"].insert(view);
    if (keep_exports) {
      std::ofstream(dir / ("export-" + std::to_string(kept) + ".json")) << sidecar.dump(1) << "\n";
      std::filesystem::copy_file(png, dir / ("export-" + std::to_string(kept++) + ".png"),
                                 std::filesystem::copy_options::overwrite_existing);
    }
    for (const auto& e : std::filesystem::directory_iterator(app.export_dir())) {
      ++exports[e.path().extension().string()];
      std::filesystem::remove(e.path());
    }
    return sidecar;
  };

  // The Train tab's first visit loads Fashion-MNIST and makes the untrained model, once for the
  // session (about 120 MiB): a monkey's first click on it in the last third read as growth in
  // two of ten runs. It is visited first, so that every sample holds what the app loads once.
  click_widget(app, export_and_check("start"), "tab:train");
  export_until(app, [](const json& j) { return j.contains("train_drawn"); });
  click_widget(app, export_and_check("the untrained model made"), "tab:heads");
  ASSERT_EQ(export_and_check("back to the hand-made heads").value("source", "hand_made"), "hand_made");
  const int per_batch = 110;
  int batch = 0, drops_failed = 0;
  double t_script = 0, t_drops = 0, t_export = 0;
  std::vector<std::string> banners;
  while (tally.total < actions) {
    const std::string when = "batch " + std::to_string(batch) + " (after " + std::to_string(tally.total) + " actions)";
    const auto script = dir / ("script-" + std::to_string(batch) + ".txt");
    write_file(script, monkey.batch(per_batch, tally.total > actions * 85 / 100, tally));
    const double ta = seconds();
    app.xdotool(script.string());
    t_script += seconds() - ta;
    ASSERT_TRUE(app.alive()) << "the app died in " << when << "; replay " << script << "\n" << app.log();

    // One or two files dropped on the window, good or bad, at a random place.
    for (int d = batch % 2; d < 2; ++d) {
      const SoakFile& f = monkey.random_file();
      const auto [px, py] = monkey.random_point();
      const XdndResult r = xdnd_drop(x.display(), window, f.path, px, py);
      tally.add(f.good ? "drop (good)" : "drop (bad)");
      if (!r) {
        ++drops_failed;
        ADD_FAILURE() << when << ": dropping " << f.path << " failed: " << r.error;
      }
      ASSERT_TRUE(app.alive()) << "the app died after dropping " << f.path << " in " << when << "\n" << app.log();
    }

    t_drops += seconds() - ta;
    const double tb = seconds();
    json sidecar;
    try {
      sidecar = export_and_check(when);
    } catch (const std::exception& e) {
      FAIL() << "the app stopped answering in " << when << " (no export within 30 s); replay " << script << "\n"
             << e.what();
    }
    // A random click on Export → Record may have left a recording running: its encoder's working
    // memory is no leak, so it is stopped (F8) and written before the memory is sampled. Its
    // status line is in the window's language (the monkey may have chosen one): its state is not.
    for (int tries = 0; tries < 60 && !sidecar.value("recording", std::string()).empty(); ++tries) {
      if (sidecar.at("recording_state") == "recording") app.key("F8");
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      sidecar = export_and_check(when + ", the recording stopped");
      tally.add("recording stopped");
    }
    EXPECT_EQ(sidecar.value("recording", std::string()), "") << when << ": the recording did not stop";
    t_export += seconds() - tb;
    if (const std::string b = sidecar.at("banner").get<std::string>(); !b.empty() && banners.size() < 400)
      banners.push_back(b);
    memory.push_back({tally.total, static_cast<double>(resident_bytes(app.pid())) / (1024.0 * 1024.0),
                      sidecar.at("grid").at("N").get<long>()});
    if (batch % 10 == 0)
      std::printf("soak: %5.1f s  %4d actions  RSS %.0f MiB  %dx%d  K=%d  %s\n", seconds(), tally.total,
                  memory.back().mib, sidecar.at("window").at("width").get<int>(),
                  sidecar.at("window").at("height").get<int>(), sidecar.at("patch").get<int>(),
                  std::filesystem::path(sidecar.at("image").get<std::string>()).filename().c_str());
    // One of the settings the issue names, changed on the fresh layout, and exported at once:
    // what the random actions leave behind at a batch's end is mostly a matter of chance.
    const auto directed = dir / ("directed-" + std::to_string(batch) + ".txt");
    write_file(directed, monkey.directed(tally));
    app.xdotool(directed.string());
    try {
      export_and_check("after the directed change of " + when);
    } catch (const std::exception& e) {
      FAIL() << "the app stopped answering after " << directed << "\n" << e.what();
    }
    ++batch;
  }
  std::printf("soak: %d actions in %d batches, %.1f s (scripts %.1f s, drops %.1f s, exports %.1f s):\n", tally.total,
              batch, seconds(), t_script, t_drops - t_script, t_export);
  for (const auto& [what, n] : tally.count) std::printf("  %-22s %5d\n", what.c_str(), n);
  std::printf("  exports found: %d PNG, %d CSV\n", exports[".png"], exports[".csv"]);
  for (const auto& [what, values] : seen) {
    std::string all;
    for (const auto& v : values) all += (all.empty() ? "" : ", ") + v;
    std::printf("  exports showed %zu %s: %s\n", values.size(), what.c_str(), all.substr(0, 300).c_str());
  }
  // The input reached the app: the images, heads, masks and K of the exports changed (the
  // directed changes alone go round the four settings twice in 1 000 actions).
  if (actions >= 1000) {
    for (const char* what : {"image", "head", "mask", "K"}) EXPECT_GE(seen[what].size(), 2u) << what << " never changed";
  }
  EXPECT_EQ(drops_failed, 0);
  EXPECT_GE(tally.total, actions);

  // What the banners said (bad files, settings that do not fit), each kind once.
  std::set<std::string> kinds;
  for (const auto& b : banners) kinds.insert(b.substr(0, 90));
  for (const auto& k : kinds) std::printf("  banner: %s\n", k.c_str());

  // Memory levels off: the largest RSS of the last third against that of the first third, like
  // for like. A leak grows memory whatever the app holds; a late batch at K = 4 on a large photo
  // holds 16 times the tokens of K = 16 and needs more for them. Seen in a CI run: the first
  // third reached N = 6 144 (eagle.jpg at K = 8) and 208 MiB; the last third held safari.jpg
  // and horses.jpg at K = 4 (N = 15 625 and 24 704) and reached 348 MiB. So the last third's
  // samples compared are those with no more tokens than the first third reached; where the
  // last third has none such, its sample with the fewest tokens.
  ASSERT_GE(memory.size(), 6u);
  const size_t third = memory.size() / 3;
  double warm = 0, late = 0, peak = 0;
  long warm_tokens = 0, fewest_late_tokens = std::numeric_limits<long>::max();
  for (size_t n = 0; n < memory.size(); ++n) {
    if (n < third) {
      warm = std::max(warm, memory[n].mib);
      warm_tokens = std::max(warm_tokens, memory[n].tokens);
    }
    peak = std::max(peak, memory[n].mib);
  }
  for (size_t n = memory.size() - third; n < memory.size(); ++n) fewest_late_tokens = std::min(fewest_late_tokens, memory[n].tokens);
  const long comparable = std::max(warm_tokens, fewest_late_tokens);
  for (size_t n = memory.size() - third; n < memory.size(); ++n)
    if (memory[n].tokens <= comparable) late = std::max(late, memory[n].mib);
  std::printf("soak: RSS first %.0f MiB, largest in the first third %.0f (N up to %ld), in the last third at N up to %ld "
              "%.0f, peak %.0f\n",
              memory.front().mib, warm, warm_tokens, comparable, late, peak);
  EXPECT_LT(late, warm * 1.25 + 64) << "memory grew from " << warm << " to " << late << " MiB";

  // --- The final export, from a known window size, in presentation mode with the view reset.
  const std::string settle = "mouseup 1 mouseup 2 mouseup 3 keyup ctrl shift alt windowsize " + std::to_string(window) +
                             " " + std::to_string(kWidth) + " " + std::to_string(kHeight) +
                             " sleep 0.3 mousemove --window " + std::to_string(window) +
                             " 800 500 key Escape sleep 0.1 key Escape sleep 0.1";
  app.xdotool(settle);
  json s = export_and_check("settle");
  ASSERT_EQ(s.at("window").at("width").get<int>(), kWidth);
  ASSERT_EQ(s.at("window").at("height").get<int>(), kHeight);
  // The gallery's model entry or the "ViT model" tab may have put a ViT's maps on screen: V
  // gives the hand-made heads back, whose map the checks below read.
  // From the training tab V goes to the ViT's, from there to the hand-made heads.
  for (int round = 0; round < 2 && s.value("source", "hand_made") != "hand_made"; ++round) {
    app.key("v");
    s = export_and_check("hand-made heads again");
  }
  ASSERT_EQ(s.value("source", "hand_made"), "hand_made") << "V did not switch back to the hand-made heads";
  // A chapter view the monkey opened (the Chapter menu, the tour) has the map's place, in the
  // window and in presentation mode: its title bar's close button closes it, as a teacher does.
  for (int round = 0; round < 3; ++round) {
    std::string open_view;
    for (const auto& [view, open] : s.at("views").items())
      if (open.get<bool>()) open_view = view;
    if (open_view.empty()) break;
    const auto windows = widgets_of(s);
    const auto w = windows.find("window:" + open_view);
    ASSERT_NE(w, windows.end()) << "the chapter view " << open_view << " is open but not drawn: " << s.dump();
    const float scale = s.at("classroom").at("ui_scale").get<float>();
    app.click(w->second.x + w->second.w - 12 * scale, w->second.y + 11 * scale);
    app.xdotool("mousemove --window " + std::to_string(window) + " 800 500");
    s = export_and_check("close the chapter view " + open_view);
  }
  for (const auto& [view, open] : s.at("views").items())
    ASSERT_FALSE(open.get<bool>()) << "the chapter view " << view << " did not close from its title bar";
  if (!s.at("classroom").at("presentation").get<bool>()) {
    app.key("F5");
    s = export_and_check("presentation");
  }
  ASSERT_TRUE(s.at("classroom").at("presentation").get<bool>());
  // Reset the view. The wheel zooms about the pointer, so at the view's centre it scales the pan
  // with the zoom: zoomed out to 0.25 the pan is a quarter, Ctrl + left drags bring it to about
  // 0, and the wheel zooms back to about 1.
  const std::string to = "mousemove --window " + std::to_string(window) + " ";
  auto at = [&](float px, float py) {
    return to + std::to_string(static_cast<int>(px)) + " " + std::to_string(static_cast<int>(py));
  };
  for (int round = 0; round < 12; ++round) {
    ASSERT_TRUE(s.at("widgets").contains("image_canvas")) << "no map drawn: " << s.dump();
    const Rect c = widgets_of(s).at("image_canvas");
    const float cx = c.x + c.w * 0.5f, cy = c.y + c.h * 0.5f, zoom = s.at("display").at("zoom").get<float>();
    const auto pan = s.at("display").at("pan").get<std::array<float, 2>>();
    if (zoom > 0.3f) {
      const int out = static_cast<int>(std::ceil(std::log(zoom / 0.25f) / std::log(1.15f)));
      app.xdotool(at(cx, cy) + " sleep 0.05 click --repeat " + std::to_string(out) + " --delay 20 5 sleep 0.1");
    } else if (std::hypot(pan[0], pan[1]) > 8) {
      const float dx = std::clamp(-pan[0], -c.w * 0.8f, c.w * 0.8f), dy = std::clamp(-pan[1], -c.h * 0.8f, c.h * 0.8f);
      std::string drag = at(cx - dx * 0.5f, cy - dy * 0.5f) + " keydown ctrl sleep 0.05 mousedown 1 sleep 0.08";
      for (int k = 1; k <= 4; ++k)
        drag += " " + at(cx + dx * (static_cast<float>(k) / 4 - 0.5f), cy + dy * (static_cast<float>(k) / 4 - 0.5f)) +
                " sleep 0.06";
      app.xdotool(drag + " mouseup 1 keyup ctrl sleep 0.1");
    } else {
      break;
    }
    s = export_and_check("reset view");
  }
  {
    ASSERT_TRUE(s.at("widgets").contains("image_canvas")) << "no map drawn: " << s.dump();
    const Rect c = widgets_of(s).at("image_canvas");
    const int in = static_cast<int>(std::lround(-std::log(s.at("display").at("zoom").get<float>()) / std::log(1.15f)));
    app.xdotool(at(c.x + c.w * 0.5f, c.y + c.h * 0.5f) + " sleep 0.05 click --repeat " + std::to_string(in) +
                " --delay 20 4 sleep 0.1");
  }
  // Pin the query with an arrow key, and dismiss a banner that would cover the map.
  app.key(s.at("hand_made").at("cell").at("col").get<int>() > 0 ? "Left" : "Right");
  s = export_and_check("pin");
  if (!s.at("banner").get<std::string>().empty()) {
    const Rect b = widgets_of(s).at("banner_dismiss");
    app.click(b.x + b.w * 0.5f, b.y + b.h * 0.5f);
    app.xdotool("mousemove --window " + std::to_string(window) + " 800 500");
  }
  auto [final_json, final_png] = app.export_view(std::chrono::seconds(30), true);
  const json& f = final_json;
  for (const auto& p : export_problems(f, final_png)) ADD_FAILURE() << "final export: " << p;
  EXPECT_TRUE(f.at("classroom").at("presentation").get<bool>());
  EXPECT_TRUE(f.at("hand_made").at("query_pinned").get<bool>());
  EXPECT_EQ(f.at("banner").get<std::string>(), "");
  EXPECT_NEAR(f.at("display").at("zoom").get<float>(), 1.0f, 0.08f);
  std::filesystem::copy_file(final_png, dir / "final.png", std::filesystem::copy_options::overwrite_existing);
  std::ofstream(dir / "final.json") << f.dump(2) << "\n";

  // The row in the sidecar is the CPU reference's row for the sidecar's settings.
  const Settings settings = settings_of(f);
  const Image image = load_image(f.at("image").get<std::string>());
  const Reference ref(image, settings);
  const int head = f.at("hand_made").at("head").get<int>();
  const RowResult row = ref.row(head, f.at("query_index").get<int>());
  const float tol = 1e-3f * row.weights.maxCoeff() + 1e-7f;
  EXPECT_EQ(f.at("row").at("empty").get<bool>(), row.empty);
  EXPECT_NEAR(f.at("row").at("max").get<float>(), row.weights.maxCoeff(), tol);
  EXPECT_NEAR(f.at("row").at("min").get<float>(), row.weights.minCoeff(), tol);
  for (const auto& l : f.at("row").at("largest")) {
    const int j = l.at("row").get<int>() * ref.grid().cols + l.at("col").get<int>();
    EXPECT_NEAR(l.at("weight").get<float>(), row.weights[j], tol) << l.dump();
  }

  // The same settings drawn headless by `attnlab render --from` give the same picture. The app
  // in presentation mode draws the map full-window at a UI scale of at least 2 (App::apply_ui_scale),
  // so the render gets the window's size and that scale.
  json again = f;
  again["render"] = {{"view", "map"}, {"width", kWidth}, {"height", kHeight}};
  again["classroom"]["ui_scale"] = std::max(f.at("classroom").at("ui_scale").get<float>(), 2.0f);
  std::ofstream(dir / "again-settings.json") << again.dump(2) << "\n";
  ASSERT_EQ(run("EGL_LOG_LEVEL=fatal " + std::string(ATTNLAB_BINARY) + " render --from " +
                    (dir / "again-settings.json").string() + " --out " + (dir / "again.png").string(),
                dir / "again.log"),
            0)
      << read_file(dir / "again.log");
  std::ifstream again_in(dir / "again.json");
  const json r = json::parse(again_in);
  for (const char* key :
       {"image", "patch", "edge", "temperature", "seed", "mask", "pos", "custom", "display", "grid"})
    EXPECT_EQ(r.at(key), f.at(key)) << key;
  for (const char* key : {"head", "cell"}) EXPECT_EQ(r.at("hand_made").at(key), f.at("hand_made").at(key)) << key;
  for (const char* key : {"x", "y", "scale"})
    EXPECT_NEAR(r.at("image_view").at(key).get<float>(), f.at("image_view").at(key).get<float>(), 1e-3f) << key;
  // Pixels of the patch grid inside the view: the photo, the heat map, the mask, the grid lines
  // and the outlines, all drawn from the settings.
  // A "map only" export is the window's pixels from the crop's corner on.
  const Image shot = load_image(final_png), drawn = load_image(dir / "again.png");
  const int ox = f.at("export").at("crop")[0].get<int>(), oy = f.at("export").at("crop")[1].get<int>();
  ASSERT_EQ(shot.width, f.at("export").at("crop")[2].get<int>());
  ASSERT_EQ(shot.height, f.at("export").at("crop")[3].get<int>());
  ASSERT_EQ(drawn.width, kWidth);
  ASSERT_EQ(drawn.height, kHeight);
  const Rect canvas = widgets_of(f).at("image_canvas");
  const float gx = f.at("image_view").at("x").get<float>(), gy = f.at("image_view").at("y").get<float>(),
              scale = f.at("image_view").at("scale").get<float>();
  const int K = f.at("grid").at("K").get<int>();
  const int x0 = static_cast<int>(std::ceil(std::max(canvas.x, gx))) + 1,
            y0 = static_cast<int>(std::ceil(std::max(canvas.y, gy))) + 1,
            x1 = static_cast<int>(std::min(canvas.x + canvas.w,
                                           gx + static_cast<float>(f.at("grid").at("cols").get<int>() * K) * scale)) -
                 1,
            y1 = static_cast<int>(std::min(canvas.y + canvas.h,
                                           gy + static_cast<float>(f.at("grid").at("rows").get<int>() * K) * scale)) -
                 1;
  long compared = 0, differ = 0;
  for (int py = std::max(y0, oy); py < std::min(y1, oy + shot.height); ++py)
    for (int px = std::max(x0, ox); px < std::min(x1, ox + shot.width); ++px) {
      ++compared;
      float d = 0;
      for (int ch = 0; ch < 3; ++ch) d = std::max(d, std::abs(shot.at(px - ox, py - oy, ch) - drawn.at(px, py, ch)));
      if (d > 10.0f / 255.0f) ++differ;
    }
  std::printf("soak: final map %ld pixels compared with attnlab render --from, %ld differ (K=%d, head %s, mask %s)\n",
              compared, differ, K, head_of(f).c_str(),
              f.at("mask").at("kind").get<std::string>().c_str());
  EXPECT_GT(compared, 100000) << "the map covers too little of the window to compare";
  EXPECT_LE(static_cast<double>(differ), 0.002 * static_cast<double>(compared));

  // Alive to the end, and closed cleanly.
  EXPECT_EQ(app.close(), 0) << app.log();
  const std::string log = app.log();
  EXPECT_NE(log.find("interactive frames"), std::string::npos) << log;
  for (const char* sign : {"Segmentation", "Aborted", "terminate called", "core dumped", "Sanitizer", "runtime error"})
    EXPECT_EQ(log.find(sign), std::string::npos) << sign << " in the app's log:\n" << log;
  std::printf("soak: done in %.1f s\n", seconds());
}
