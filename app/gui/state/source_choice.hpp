#pragma once
// The window's keys over a source's choice (Document's SourceChoice: layer, head, query, pins):
// the same keys for the hand-made heads (one layer, six heads) and a ViT (L layers × H heads, a
// CLS token), written once here; the app's key handling calls choice_key and does the rest
// (presentation, export, the source's own toggles). The choice resolved against its source
// (ChoiceShape, choice_layer, choice_head, choice_query) and read from the command line is
// window-free: app/commands/source_choice.hpp. Layers, heads and registers count from 0.
#include "app/commands/source_choice.hpp"

#include <string>

namespace attnlab::app {

/// "head 3", "mean of heads", "max over heads", "min over heads" (heads from 0), in the language
/// in use (English in the tests; the report's "head_label" takes it as shown).
std::string head_choice_label(HeadChoice head);

/// What a key did to the choice.
enum class ChoiceKey {
  Ignored,  ///< not a key of the choice (the caller's, or none)
  Changed,  ///< the choice changed (or was already so)
  Pinned,   ///< the patch query was pinned for comparison (P)
};

/// The keys over a choice (GLFW key codes), the same for every source:
///   arrows        the patch query one patch over; it stays there (query_pinned)
///   0 … 9         head 0 … 9 (those the source has)
///   A             the heads' mean (a source that fuses heads)
///   PgUp / PgDn   the layer before / after;  Home / End  the first / last layer
///   C             the CLS token as the query (a source with one)
///   P             pin the patch query for comparison
ChoiceKey choice_key(int key, SourceChoice& c, const ChoiceShape& shape);

}  // namespace attnlab::app
