#pragma once
// Translated labels with a fixed ImGui id (issue 52). ImGui keys a window's position, a tab's
// selection and a tree node's openness by its label; a label in the user's language would
// lose them whenever the language changes. "Shown text###id" keeps the id of the English name.
#include "core/base/translate.hpp"

#include <string>
#include <string_view>

namespace attnlab::app {

/// `shown` (already translated, e.g. _("Heads")) followed by "###" and `id` (English, stable):
/// ImGui draws `shown` and keys the item by `id` whatever the language.
inline std::string ui_id(std::string_view shown, std::string_view id) {
  std::string out(shown);
  out += "###";
  out += id;
  return out;
}

}  // namespace attnlab::app
