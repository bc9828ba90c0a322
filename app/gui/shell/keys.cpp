// The key table (keys.hpp). Each action is a small function over the document; the table says
// which key runs it, when, and how the README and the Keys menu write it.
#include "app/gui/shell/keys.hpp"

#include "app/gui/sessions/hand_made_session.hpp"
#include "app/gui/state/source_choice.hpp"
#include "core/hand_made/hand_made_source.hpp"
#include "app/gui/vit/vit_compare.hpp"
#include "app/gui/vit/vit_views.hpp"
#include "core/vit/vit_run.hpp"

#include "core/base/translate.hpp"

#include <GLFW/glfw3.h>

#include <algorithm>
#include <array>

namespace attnlab::app {
namespace {

// --- everywhere ------------------------------------------------------------------------------

void quit(KeyContext& c, int) { c.quit = true; }
void export_png(KeyContext& c, int) { c.state.commands.export_png(); }
void export_csv(KeyContext& c, int) { c.state.commands.export_csv(); }
void record(KeyContext& c, int) { c.state.commands.record(); }
void toggle_presentation(KeyContext& c, int) { c.state.presentation = !c.state.presentation; }
// One step of the UI scale, within the range of its widget (the field table's).
void step_ui(KeyContext& c, float step) {
  const FieldUi ui = setting_ref(c.state, "classroom.ui_scale").ui;
  c.state.ui_scale = std::clamp(c.state.ui_scale + step, static_cast<float>(ui.lo), static_cast<float>(ui.hi));
}
void larger_ui(KeyContext& c, int) { step_ui(c, 0.25f); }
void smaller_ui(KeyContext& c, int) { step_ui(c, -0.25f); }
void toggle_source(KeyContext& c, int) {  // the source tabs
  c.state.source = c.state.source == ShownSource::Vit ? ShownSource::HandMade : ShownSource::Vit;
}
// Leaves presentation mode, never changes the map (Esc also closes menus).
void leave_presentation(KeyContext& c, int) { c.state.presentation = false; }

// --- a lesson (app/gui/shell/lesson.cpp): what presentation clickers send steps it --------------

void next_step(KeyContext& c, int) { ++c.state.ui.lesson_move; }
void previous_step(KeyContext& c, int) { --c.state.ui.lesson_move; }
void leave_lesson(KeyContext& c, int) { c.state.ui.lesson_leave = true; }
void add_step(KeyContext& c, int) { c.state.ui.lesson_add_step = true; }

// --- either source: the layer, the head, the query and pins --------------------------------------

// The ViT the window shows (a loaded one, or the model being trained), null for the hand-made heads.
const VitRun* shown_vit(const KeyContext& c) {
  if (c.state.source == ShownSource::Vit) return c.vit;
  if (c.state.source == ShownSource::Train) return c.train;
  return nullptr;
}

// The layer, the head, the query and pins: the same keys over whichever source is shown, on its
// SourceChoice (source_choice.hpp: a key a source cannot take, e.g. a layer key on the hand-made
// heads' one layer, does nothing).
void choose(KeyContext& c, int key) {
  const VitRun* run = shown_vit(c);
  SourceChoice& choice = run ? shown_choice(c.state) : c.state.hand_made;
  const ChoiceShape shape = run ? vit_choice_shape(*run)
                                : ChoiceShape{hand_made_source_grid(c.hand_made.grid()), 1, kHeadCount, false};
  if (choice_key(key, choice, shape) == ChoiceKey::Pinned && run == c.vit) c.state.vit_view = "pinned";  // the lower panel shows the pins
}

// --- the hand-made heads: the mask and K, one key each for a teacher in front of a class --------

// The next mask kind, in the order of the controls' list (section 26.10).
void next_mask(KeyContext& c, int) {
  const int next = (static_cast<int>(c.state.attention.mask.kind) + 1) % kMaskKindCount;
  c.state.attention.mask.kind = static_cast<MaskKind>(next);
}
// K halved: four times the tokens N (fig. 26.2).
void halve_patch(KeyContext& c, int) { c.state.attention.patch = std::max(c.state.attention.patch / 2, kMinPatchSize); }
void double_patch(KeyContext& c, int) { c.state.attention.patch = std::min(c.state.attention.patch * 2, kMaxPatchSize); }

// --- the ViT: rollout, norms and masks ---------------------------------------------------------

void toggle_rollout(KeyContext& c, int) { c.state.vit_rollout = !c.state.vit_rollout; }
void toggle_norms(KeyContext& c, int) { c.state.vit_norms = !c.state.vit_norms; }
void toggle_masks(KeyContext& c, int) { c.state.vit_masks = !c.state.vit_masks; }
void swap_compared(KeyContext& c, int) { swap_compared_models(c.state); }

// The desktop's Open dialog, shown before the next frame (App::take_file_dialog).
void open_image_dialog(KeyContext& c, int) { c.state.commands.ask_for_file(FileDialogKind::Image); }

constexpr int kCtrl = GLFW_MOD_CONTROL;
using S = KeyScope;
// clang-format off
const std::array kKeys = {
  //          key                     last                  keypad                 mods   scope        keys           what
  // TRANSLATORS: what the keys do (the Keys menu, the panels' help), one line each; the key names stay.
  KeyBinding{GLFW_KEY_Q,             GLFW_KEY_Q,            0,                     kCtrl, S::Always,    "Ctrl Q",      N_("quit"), quit},
  KeyBinding{GLFW_KEY_O,             GLFW_KEY_O,            0,                     kCtrl, S::Always,    "Ctrl O",      N_("open an image with the desktop's Open dialog"), open_image_dialog},
  KeyBinding{GLFW_KEY_F12,           GLFW_KEY_F12,          0,                     0,     S::Always,    "F12",         N_("save the window (or the map only) as PNG with a sidecar JSON"), export_png},
  KeyBinding{GLFW_KEY_F9,            GLFW_KEY_F9,           0,                     0,     S::Always,    "F9",          N_("save the query's row as CSV"), export_csv},
  KeyBinding{GLFW_KEY_F8,            GLFW_KEY_F8,           0,                     0,     S::Always,    "F8",          N_("record what F12 saves (the window or the map) as MP4 or GIF; F8 again stops"), record},
  KeyBinding{GLFW_KEY_F5,            GLFW_KEY_F5,           0,                     0,     S::Always,    "F5",          N_("presentation mode on or off"), toggle_presentation},
  KeyBinding{GLFW_KEY_EQUAL,         GLFW_KEY_EQUAL,        GLFW_KEY_KP_ADD,       kCtrl, S::Always,    "Ctrl +",      N_("larger UI (up to 3)"), larger_ui},
  KeyBinding{GLFW_KEY_MINUS,         GLFW_KEY_MINUS,        GLFW_KEY_KP_SUBTRACT,  kCtrl, S::Always,    "Ctrl -",      N_("smaller UI (down to 0.75)"), smaller_ui},
  KeyBinding{GLFW_KEY_V,             GLFW_KEY_V,            0,                     0,     S::NotTyping, "V",           N_("the ViT's attention or the hand-made heads'"), toggle_source},
  KeyBinding{GLFW_KEY_F6,            GLFW_KEY_F6,           0,                     0,     S::NotTyping, "F6",          N_("add this view as the lesson's next step (Lesson menu)"), add_step},
  KeyBinding{GLFW_KEY_PAGE_UP,       GLFW_KEY_PAGE_UP,      0,                     kCtrl, S::Vit,       "Ctrl PageUp", N_("the layer before (PageUp alone while a lesson plays)"), choose},
  KeyBinding{GLFW_KEY_PAGE_DOWN,     GLFW_KEY_PAGE_DOWN,    0,                     kCtrl, S::Vit,       "Ctrl PageDown", N_("the next layer (PageDown alone while a lesson plays)"), choose},
  KeyBinding{GLFW_KEY_PAGE_DOWN,     GLFW_KEY_PAGE_DOWN,    0,                     0,     S::Lesson,    "PageDown",    N_("the lesson's next step (what a presentation clicker sends)"), next_step},
  KeyBinding{GLFW_KEY_SPACE,         GLFW_KEY_SPACE,        0,                     0,     S::Lesson,    "Space",       N_("the lesson's next step"), next_step},
  KeyBinding{GLFW_KEY_PAGE_UP,       GLFW_KEY_PAGE_UP,      0,                     0,     S::Lesson,    "PageUp",      N_("the lesson's step before"), previous_step},
  KeyBinding{GLFW_KEY_BACKSPACE,     GLFW_KEY_BACKSPACE,    0,                     0,     S::Lesson,    "Backspace",   N_("the lesson's step before"), previous_step},
  KeyBinding{GLFW_KEY_ESCAPE,        GLFW_KEY_ESCAPE,       0,                     0,     S::Lesson,    "Esc",         N_("leave the lesson: your own settings come back"), leave_lesson},
  KeyBinding{GLFW_KEY_ESCAPE,        GLFW_KEY_ESCAPE,       0,                     0,     S::EitherMap, "Esc",         N_("leave presentation mode (never changes the map)"), leave_presentation},
  KeyBinding{GLFW_KEY_LEFT,          GLFW_KEY_LEFT,         0,                     0,     S::EitherMap, "Left",        N_("query one patch left"), choose},
  KeyBinding{GLFW_KEY_RIGHT,         GLFW_KEY_RIGHT,        0,                     0,     S::EitherMap, "Right",       N_("query one patch right"), choose},
  KeyBinding{GLFW_KEY_UP,            GLFW_KEY_UP,           0,                     0,     S::EitherMap, "Up",          N_("query one patch up"), choose},
  KeyBinding{GLFW_KEY_DOWN,          GLFW_KEY_DOWN,         0,                     0,     S::EitherMap, "Down",        N_("query one patch down"), choose},
  KeyBinding{GLFW_KEY_0,             GLFW_KEY_9,            0,                     0,     S::EitherMap, "0-9",         N_("the head the main map shows (heads count from 0; the hand-made heads are 0-5)"), choose},
  KeyBinding{GLFW_KEY_P,             GLFW_KEY_P,            0,                     0,     S::EitherMap, "P",           N_("pin the query patch"), choose},
  KeyBinding{GLFW_KEY_A,             GLFW_KEY_A,            0,                     0,     S::Vit,       "A",           N_("the heads' mean"), choose},
  KeyBinding{GLFW_KEY_PAGE_UP,       GLFW_KEY_PAGE_UP,      0,                     0,     S::Vit,       "PageUp",      N_("the layer before"), choose},
  KeyBinding{GLFW_KEY_PAGE_DOWN,     GLFW_KEY_PAGE_DOWN,    0,                     0,     S::Vit,       "PageDown",    N_("the next layer"), choose},
  KeyBinding{GLFW_KEY_HOME,          GLFW_KEY_HOME,         0,                     0,     S::Vit,       "Home",        N_("the first layer (layer 0)"), choose},
  KeyBinding{GLFW_KEY_END,           GLFW_KEY_END,          0,                     0,     S::Vit,       "End",         N_("the last layer"), choose},
  KeyBinding{GLFW_KEY_C,             GLFW_KEY_C,            0,                     0,     S::Vit,       "C",           N_("the CLS token as the query"), choose},
  KeyBinding{GLFW_KEY_M,             GLFW_KEY_M,            0,                     0,     S::HandMade,  "M",           N_("the next mask"), next_mask},
  KeyBinding{GLFW_KEY_LEFT_BRACKET,  GLFW_KEY_LEFT_BRACKET, 0,                     0,     S::HandMade,  "[",           N_("halve the patch size K"), halve_patch},
  KeyBinding{GLFW_KEY_RIGHT_BRACKET, GLFW_KEY_RIGHT_BRACKET,0,                     0,     S::HandMade,  "]",           N_("double the patch size K"), double_patch},
  KeyBinding{GLFW_KEY_R,             GLFW_KEY_R,            0,                     0,     S::Vit,       "R",           N_("attention rollout on or off"), toggle_rollout},
  KeyBinding{GLFW_KEY_N,             GLFW_KEY_N,            0,                     0,     S::Vit,       "N",           N_("token norms on or off"), toggle_norms},
  KeyBinding{GLFW_KEY_D,             GLFW_KEY_D,            0,                     0,     S::Vit,       "D",           N_("DINO-style mask outlines on or off"), toggle_masks},
  KeyBinding{GLFW_KEY_S,             GLFW_KEY_S,            0,                     0,     S::Vit,       "S",           N_("swap the two models of View > Compare"), swap_compared},
};
// clang-format on

bool in_scope(const KeyContext& c, KeyScope scope) {
  const bool vit = !c.typing && shown_vit(c);
  const bool hand_made = !c.typing && !vit && c.hand_made.has_image();
  switch (scope) {
    case KeyScope::Always: return true;
    case KeyScope::NotTyping: return !c.typing;
    case KeyScope::HandMade: return hand_made;
    case KeyScope::Vit: return vit;
    case KeyScope::EitherMap: return vit || hand_made;
    case KeyScope::Lesson: return !c.typing && c.state.ui.lesson_playing;
  }
  return false;
}

}  // namespace

std::span<const KeyBinding> key_table() { return kKeys; }

bool press_key(KeyContext& c, int key, int mods) {
  for (const KeyBinding& b : kKeys) {
    const bool is_key = (key >= b.key && key <= b.last_key) || (b.keypad_key != 0 && key == b.keypad_key);
    if (is_key && (mods & b.mods) == b.mods && in_scope(c, b.scope)) {
      b.act(c, key);
      return true;
    }
  }
  return false;
}

const char* scope_name(KeyScope scope) {
  switch (scope) {
    // TRANSLATORS: when a key acts (the Keys menu's second column).
    case KeyScope::Always: return N_("always");
    case KeyScope::NotTyping: return N_("not typing");
    case KeyScope::HandMade: return N_("hand-made heads");
    // TRANSLATORS: a key that acts while the Vision Transformer (ViT) is the source.
    case KeyScope::Vit: return N_("ViT");
    case KeyScope::EitherMap: return N_("either source");
    case KeyScope::Lesson: return N_("a lesson playing");
  }
  return "?";
}

std::string key_help(bool vit) {
  std::string out;
  for (const KeyBinding& b : kKeys) {
    const bool acts = b.scope == KeyScope::Always || b.scope == KeyScope::NotTyping || b.scope == KeyScope::EitherMap ||
                      b.scope == (vit ? KeyScope::Vit : KeyScope::HandMade);
    if (acts) out += (out.empty() ? "" : ", ") + std::string(b.keys) + " " + _(b.what);
  }
  return out;
}

std::vector<std::string> key_list_markdown() {
  std::vector<std::string> out = {"| Key | When | What |", "|---|---|---|"};
  for (const KeyBinding& b : kKeys) out.push_back(std::string("| ") + b.keys + " | " + scope_name(b.scope) + " | " + b.what + " |");
  return out;
}

}  // namespace attnlab::app
