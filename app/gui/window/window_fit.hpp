#pragma once
// Where the window opens (issue 37): inside the work area of a monitor (the screen less the
// task bars), at most the size the app was laid out for, or where it was last closed, put back
// on screen when that monitor is gone or smaller. Plain arithmetic, no GLFW: window_setup.cpp
// asks GLFW for the work areas and the frame, the tests ask this.
#include <optional>
#include <vector>

namespace attnlab::app {

/// A rectangle in screen coordinates (pixels on X11 and Windows): its top-left corner and size.
struct ScreenRect {
  int x = 0, y = 0, width = 0, height = 0;
  bool operator==(const ScreenRect&) const = default;
};

/// The window manager's decorations around the content area, in pixels on each side
/// (glfwGetWindowFrameSize; all 0 without a window manager, as under Xvfb).
struct FrameMargins {
  int left = 0, top = 0, right = 0, bottom = 0;
};

/// The content size the window opens at on a large screen, per unit of the monitor's content
/// scale (the layout's design size; the hover benchmark's window).
inline constexpr int kDefaultWindowWidth = 1600, kDefaultWindowHeight = 1000;

/// The window's content rectangle. `work_areas`: the monitors' work areas, the primary first
/// (empty: none could be read, and the window opens at `remembered` or the default size at
/// (0, 0)). `remembered`: where it was closed, content rectangle. Without one (a first start)
/// it is the default size times `content_scale`, shrunk to the primary work area less the frame,
/// at its top left. With one, on the monitor it overlaps most (the primary when it overlaps none),
/// shrunk to that work area and moved the least so that it and its frame lie inside.
ScreenRect fit_window(const std::vector<ScreenRect>& work_areas, const std::optional<ScreenRect>& remembered,
                      FrameMargins frame = {}, float content_scale = 1.0f);

}  // namespace attnlab::app
