#include "app/gui/window/window_fit.hpp"

#include <algorithm>
#include <cmath>

namespace attnlab::app {
namespace {

long long overlap(const ScreenRect& a, const ScreenRect& b) {
  const long long w = std::min(a.x + a.width, b.x + b.width) - std::max(a.x, b.x);
  const long long h = std::min(a.y + a.height, b.y + b.height) - std::max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

// One coordinate of the content's corner: the window (content `size`, frame `before` and
// `after` it) moved the least so that it lies in [lo, lo + room).
int place_inside(int at, int size, int before, int after, int lo, int room) {
  const int first = lo + before, last = lo + room - after - size;  // the corner's allowed range
  return last < first ? first : std::clamp(at, first, last);
}

}  // namespace

ScreenRect fit_window(const std::vector<ScreenRect>& work_areas, const std::optional<ScreenRect>& remembered,
                      FrameMargins frame, float content_scale) {
  const float scale = std::clamp(content_scale, 1.0f, 4.0f);
  const int default_w = static_cast<int>(std::lround(kDefaultWindowWidth * scale));
  const int default_h = static_cast<int>(std::lround(kDefaultWindowHeight * scale));
  const bool known = remembered && remembered->width > 0 && remembered->height > 0;
  if (work_areas.empty()) return known ? *remembered : ScreenRect{0, 0, default_w, default_h};
  // The monitor: the primary on a first start, else the one the remembered window overlaps most.
  const ScreenRect* area = &work_areas.front();
  if (known) {
    const ScreenRect with_frame{remembered->x - frame.left, remembered->y - frame.top,
                                remembered->width + frame.left + frame.right,
                                remembered->height + frame.top + frame.bottom};
    long long best = 0;
    for (const ScreenRect& a : work_areas)
      if (const long long o = overlap(a, with_frame); o > best) {
        best = o;
        area = &a;
      }
  }
  // The content fits the work area less the frame; never below 320 × 240 (a window that small
  // is the screen's problem, not a reason to vanish).
  const int room_w = std::max(area->width - frame.left - frame.right, 320);
  const int room_h = std::max(area->height - frame.top - frame.bottom, 240);
  ScreenRect r;
  r.width = std::min(known ? remembered->width : default_w, room_w);
  r.height = std::min(known ? remembered->height : default_h, room_h);
  // A first start at the work area's top left (where X put the window before, and where
  // scripts driving it with absolute pointer positions expect it).
  const int x = known ? remembered->x : area->x + frame.left;
  const int y = known ? remembered->y : area->y + frame.top;
  r.x = place_inside(x, r.width, frame.left, frame.right, area->x, area->width);
  r.y = place_inside(y, r.height, frame.top, frame.bottom, area->y, area->height);
  return r;
}

}  // namespace attnlab::app
