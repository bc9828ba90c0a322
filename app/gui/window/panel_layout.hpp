#pragma once
// Where the window's panels go (issue 47: a lecture on a 1024 × 768 projector): the controls on
// the left, the map as large as the room allows, the heads beside it or below, the lower row.
// Plain arithmetic, no ImGui: app/gui/shell/layout.cpp hands it the window's size and the map's
// chrome in pixels, the tests ask it directly.
#include <array>

namespace attnlab::app {

/// Which panels are shown (the lower row's, and the controls).
struct LowerRow {
  bool controls = true;  ///< the Controls column on the left
  bool heads = true;     ///< the heads (or layers × heads) grid
  bool pinned = true;    ///< the pinned queries, or the ViT's / Train tab's own views
  bool images = true;    ///< the images panel
  bool train = false;    ///< the Train tab: its views (charts) get the lower row's largest share
};

/// The panels' rectangles in pixels from the window's top left: x, y, width, height (all 0: not shown).
struct PanelLayout {
  float controls_w = 0;
  std::array<float, 4> controls{}, map{}, heads{}, pinned{}, images{};
  /// Under 700 px of UI across (a 1024 px projector from UI scale 1.5 on): the lower row's panels
  /// (heads, pinned queries or the source's views, images) are sections at the foot of the controls
  /// column, and their rectangles stay 0.
  bool lower_in_controls = false;
  bool heads_right = false;  ///< the heads are a column right of the map (else in the lower row)
  float heads_w = 0;
};

/// The layout of a `width` × `height` window (pixels) whose menu bar is `menu_h` tall, at UI scale
/// `ui_scale` (0.75–3). `aspect`: the map's picture, width / height. `map_chrome_w`, `map_chrome_h`:
/// what the map window needs around its picture (padding, title bar, header lines, colour bar), in
/// pixels. The controls take at most 340 px × ui_scale and 27 % of the width, as tall as the map;
/// the map's height is 73 % of the room below the menu, and the lower row spans the whole width
/// under both. Under 1000 px of UI across (width / ui_scale) the lower row gives way gradually (the
/// map up to 80 %); at 700 px and under it is folded into the controls column (lower_in_controls,
/// the column 25 % of the width) and the map takes the whole height, so that a larger UI scale on a
/// projector does not shrink the map. The heads go right of the map when the map at its height
/// leaves them 150 px × ui_scale (at most 560 px × ui_scale), else into the lower row, which the
/// source's own views share with the heads and the images in the ratio 2 : 1 : 1 (3 : 1 : 1 in the
/// Train tab).
PanelLayout panel_layout(float width, float height, float menu_h, float ui_scale, float aspect, float map_chrome_w,
                         float map_chrome_h, LowerRow row);

}  // namespace attnlab::app
