// The panels' layout (panel_layout.hpp).
#include "app/gui/window/panel_layout.hpp"

#include <algorithm>

namespace attnlab::app {

// Where the panels go (PanelLayout): the controls on the left; the map right of them, as large as
// the room allows; the heads right of the map when the map (at its picture's aspect) leaves them
// a column, else in the lower row with the pinned queries (or the ViT's and the Train tab's own
// views) and the images. Issue 47: on a 1024 × 768 projector the map is the largest thing on
// screen at every UI scale, and Ctrl + does not shrink it (up to scale 2): the controls and the
// lower row give way as the UI gets cramped, and what no longer fits in them scrolls.
PanelLayout panel_layout(float width, float height, float menu_h, float ui_scale, float aspect, float map_chrome_w, float map_chrome_h, LowerRow row) {
  PanelLayout l;
  // How cramped the UI is: 0 from 1000 px of UI across (1024 px at scale 1), 1 at 700 and under
  // (1024 px at 1.5): the lower row gives the map its room gradually, and at 1 the lower row's
  // panels become sections at the foot of the controls column, the map as tall as the window.
  const float cramped = std::clamp((1000.0f - width / ui_scale) / 300.0f, 0.0f, 1.0f);
  l.lower_in_controls = row.controls && cramped >= 1.0f && (row.heads || row.pinned || row.images);
  if (l.lower_in_controls) row.heads = row.pinned = row.images = false;
  const float below_menu = height - menu_h;
  l.controls_w = row.controls ? std::min(340.0f * ui_scale, width * (l.lower_in_controls ? 0.25f : 0.27f + 0.02f * cramped)) : 0.0f;
  const float main_w = width - l.controls_w;
  const bool lower = row.pinned || row.images || row.heads;
  float map_h = lower ? below_menu * (0.73f + 0.07f * cramped) : below_menu;
  // The map window's width that holds its picture at the full height, with the colour bar.
  const float want_w = std::max(aspect, 0.1f) * std::max(map_h - map_chrome_h, 50.0f) + map_chrome_w;
  const float heads_min = 150.0f * ui_scale;
  l.heads_right = row.heads && main_w - want_w >= heads_min;
  if (!(row.pinned || row.images || (row.heads && !l.heads_right))) map_h = below_menu;  // nothing below: the map to the bottom
  l.heads_w = l.heads_right ? std::min(main_w - want_w, 560.0f * ui_scale) : 0.0f;
  if (row.controls) l.controls = {0, menu_h, l.controls_w, map_h};
  l.map = {l.controls_w, menu_h, main_w - l.heads_w, map_h};
  if (l.heads_right) l.heads = {l.controls_w + l.map[2], menu_h, l.heads_w, map_h};
  // The lower row, under the controls and the map across the whole width: the source's own views
  // (pinned queries, the ViT's, the Train tab's) get twice the width of the heads and the images
  // (three times in the Train tab, whose charts need it).
  const float top = menu_h + map_h, h = height - top;
  const float wide = row.train ? 3.0f : 2.0f;
  const float total = (row.pinned ? wide : 0.0f) + (row.heads && !l.heads_right ? 1.0f : 0.0f) + (row.images ? 1.0f : 0.0f);
  float x = 0;
  auto next = [&](float weight) {
    const std::array<float, 4> r{x, top, width * weight / std::max(total, 1.0f), h};
    x += r[2];
    return r;
  };
  if (row.pinned) l.pinned = next(wide);
  if (row.heads && !l.heads_right) l.heads = next(1.0f);
  if (row.images) l.images = next(1.0f);
  return l;
}

}  // namespace attnlab::app
