#pragma once
// A source's choice (Document's SourceChoice: layer, head, query, pins) resolved against the
// source it is for, and the window's keys over it: the same keys for the hand-made heads (one
// layer, six heads) and a ViT (L layers × H heads, a CLS token), written once here; the app's
// key handling calls choice_key and does the rest (presentation, export, the source's own
// toggles). Layers, heads and registers count from 0, as everywhere.
#include "app/commands/document.hpp"
#include "core/vit/attention_source.hpp"

#include <string>

namespace attnlab::app {

/// What a choice is resolved against: the source's grid (with its prefix tokens), layers and heads.
struct ChoiceShape {
  SourceGrid grid;
  int layers = 1, heads = 1;
  bool fusions = false;  ///< whether the source fuses heads (mean, max, min over them): a ViT
};

/// The layer the choice shows: its layer, or the last one for -1 (and for one past the source's).
int choice_layer(const SourceChoice& c, int layers);
/// The head the choice shows: a head past the source's is its last one.
HeadChoice choice_head(const SourceChoice& c, int heads);
/// The query token: the prefix token (clamped to the source's), or the patch `cell` (clamped to
/// the grid) as prefix + row · cols + col.
int choice_query(const SourceChoice& c, const SourceGrid& grid);

/// "head 3", "mean of heads", "max over heads", "min over heads" (heads from 0).
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
