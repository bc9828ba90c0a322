#pragma once
// Every view of the app, one registration line each (view_registry.cpp): the one list the
// window's sources and `attnlab render` take their views from. A source offers the views that
// work on it (views_for, app/gui/maps/view.hpp), in this order, keyed by name.
#include "app/gui/maps/view.hpp"

#include <memory>
#include <vector>

namespace attnlab::app {

/// A new instance of every view (views keep per-window state: textures, jobs), in the order
/// they are offered: the chapter's views in the chapter's order (the guided tour's), then the
/// views under a map (attention distance, pinned queries, attention matrix, step by step,
/// similarity, high-norm tokens).
std::vector<std::unique_ptr<View>> make_views();

/// The chapter's views among `views` (those with a tour text), in their order: the Chapter
/// menu and the guided tour.
std::vector<View*> chapter_views(const std::vector<std::unique_ptr<View>>& views);

}  // namespace attnlab::app
