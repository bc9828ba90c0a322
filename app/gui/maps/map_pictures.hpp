#pragma once
// What every map view shares: where the main map drew the photo (ViewGeometry, for exports and
// tests), the picture a "map only" export keeps, the photo under a map and the one thumbnail
// (map_pictures.cpp).
#include "app/gui/state/app_state.hpp"
#include "app/gui/sessions/hand_made_session.hpp"
#include "core/vit/attention_source.hpp"

#include <imgui.h>

#include <array>
#include <functional>
#include <vector>

namespace attnlab::app {

/// Where the main map view drew the photo: screen position of pixel (0,0) and screen pixels per
/// photo pixel. Recorded in export sidecars so tests can click on a patch. `head` is the head
/// whose map it drew, −1 for heads fused (a click in the heads view later in the frame changes
/// the main head).
struct ViewGeometry {
  float x = 0, y = 0, scale = 0;
  bool valid = false;
  int head = 0;
  /// What a "map only" export keeps (x, y, w, h in window pixels): the map as drawn inside its
  /// canvas, and its colour bar.
  std::array<float, 4> picture{};
  /// The query token the main map drew (in its source's numbering), -1 before one is drawn.
  int query = -1;
};

/// The picture of a map view for a "map only" export: the map's drawn rectangle [map0, map1]
/// clipped to its canvas [canvas0, canvas1], joined with the last item (the colour bar's group,
/// just ended) unless `join_last_item` is false (a map drawn without its colour bar).
std::array<float, 4> map_picture(ImVec2 canvas0, ImVec2 canvas1, ImVec2 map0, ImVec2 map1, bool join_last_item = true);

/// Draws the part of the photo the patch grid covers (in crop mode the pixels past the last
/// whole patch are left out), pixel (0,0) at `origin`, `scale` screen pixels per image pixel;
/// the grid's cells past the image (pad mode) black.
void draw_photo(ImDrawList* dl, HandMadeSession& hand_made, ImVec2 origin, float scale);

/// Draws the map `heat()` over a photo (`photo(dl, origin, scale)` draws the covered part of
/// `grid`) into a box of `size` at the cursor, keeping the covered part's aspect; `outlines`
/// around those patches, a frame when `selected`, the map at least `min_opacity` opaque. `heat`
/// is not called when the box is scrolled away. Returns true when clicked. The one thumbnail of
/// every view: the map views' (source_thumbnail) and the chapter's (map_thumbnail).
bool draw_map_thumbnail(const char* id, const SourceGrid& grid, const std::function<void(ImDrawList*, ImVec2, float)>& photo,
                        const std::function<ImTextureID()>& heat, const AppState& state, ImVec2 size,
                        const std::vector<Cell>& outlines, bool selected, float min_opacity);
/// Draws a head's map for a query over the photo into a `size` box at the cursor (thumbnails).
/// Returns true when clicked.
bool map_thumbnail(const char* id, HandMadeSession& hand_made, ImTextureID heat, const AppState& state, ImVec2 size,
                   const std::vector<Cell>& outlines, bool selected);

}  // namespace attnlab::app
