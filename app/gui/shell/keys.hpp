#pragma once
// The app's keys, in one table (keys.cpp): the key, the modifiers it needs, when it acts, what it
// does and the action, a small function over the document. The README's key list and the Keys
// menu are made from it; tests/app/test_keys.cpp checks that the README lists every key of the
// table and no other.
#include "app/gui/state/app_state.hpp"

#include <span>
#include <string>
#include <vector>

namespace attnlab {
class VitRun;
}

namespace attnlab::app {

class HandMadeSession;

/// What a key's action may read and change.
struct KeyContext {
  AppState& state;
  const HandMadeSession& hand_made;
  const VitRun* vit = nullptr;  ///< the ViT's finished run, when one is loaded
  bool typing = false;          ///< a text field has the keyboard
  bool quit = false;            ///< set by the action that closes the window
  const VitRun* train = nullptr;  ///< the snapshot of the model being trained (the Train tab), once there is one
};

/// When a key acts.
enum class KeyScope {
  Always,     ///< even while a text field has the keyboard
  NotTyping,  ///< unless a text field has the keyboard
  HandMade,   ///< not typing, the hand-made heads the source, an image loaded
  Vit,        ///< not typing, the ViT the source and its run finished
  EitherMap,  ///< HandMade or Vit
  Lesson,     ///< not typing, a lesson playing (app/gui/shell/lesson.cpp)
};

struct KeyBinding {
  int key;         ///< GLFW key code
  int last_key;    ///< the range key…last_key (digits); = key for one key
  int keypad_key;  ///< the keypad's key that does the same; 0: none
  int mods;        ///< modifiers that must be held (GLFW_MOD_*; others are ignored)
  KeyScope scope;
  const char* keys;  ///< as the README and the Keys menu write it: "F12", "Ctrl +", "1-6"
  const char* what;  ///< what it does, one line (English, marked N_: translate where shown, _(what))
  void (*act)(KeyContext&, int key);
};

/// The table, in the order keys are matched (the first binding that matches acts).
std::span<const KeyBinding> key_table();

/// Acts on one key press (the first binding of the table whose key, modifiers and scope match).
/// True when one did.
bool press_key(KeyContext& c, int key, int mods);

/// Where a scope is written in the README and the Keys menu: "always", "hand-made heads"… (English,
/// marked N_: the Keys menu shows _(scope_name(s))).
const char* scope_name(KeyScope scope);

/// The keys that act while the hand-made heads (`vit` false) or the ViT (`vit` true) is the
/// source, as one line for the panels' help: "F12 save the window ..., F9 ..." (translated).
std::string key_help(bool vit);

/// The README's key list, made from the table: a Markdown table, one line per binding
/// (`| keys | when | what |`) after its two header lines.
std::vector<std::string> key_list_markdown();

}  // namespace attnlab::app
