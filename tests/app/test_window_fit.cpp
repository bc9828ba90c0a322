// Issue 37: where the window opens. A first start fits the primary monitor's work area (a
// 1024 × 768 projector, a 1366 × 768 laptop less its task bar); a remembered window comes back
// where it was, or on screen when its monitor is gone or smaller.
#include <gtest/gtest.h>

#include "app/gui/window/window_fit.hpp"

using attnlab::app::fit_window;
using attnlab::app::FrameMargins;
using attnlab::app::ScreenRect;

namespace {

// The window and its frame lie inside `area`.
void expect_inside(const ScreenRect& r, const ScreenRect& area, FrameMargins f = {}) {
  EXPECT_GE(r.x - f.left, area.x);
  EXPECT_GE(r.y - f.top, area.y);
  EXPECT_LE(r.x + r.width + f.right, area.x + area.width);
  EXPECT_LE(r.y + r.height + f.bottom, area.y + area.height);
}

}  // namespace

TEST(WindowFit, AFirstStartFitsASmallScreen) {
  const ScreenRect projector{0, 0, 1024, 768};
  EXPECT_EQ(fit_window({projector}, std::nullopt), projector);
  // A laptop with a task bar at the bottom and a window manager's title bar.
  const ScreenRect laptop{0, 0, 1366, 728};
  const FrameMargins frame{2, 30, 2, 2};
  const ScreenRect r = fit_window({laptop}, std::nullopt, frame);
  EXPECT_EQ(r.width, 1366 - 4);
  EXPECT_EQ(r.height, 728 - 32);
  expect_inside(r, laptop, frame);
}

TEST(WindowFit, AFirstStartOnALargeScreenIsTheDesignSizeAtTheTopLeft) {
  const ScreenRect r = fit_window({{0, 0, 1920, 1080}}, std::nullopt);
  EXPECT_EQ(r, (ScreenRect{0, 0, 1600, 1000}));
  // Below a task bar at the top, inside a title bar.
  EXPECT_EQ(fit_window({{0, 32, 1920, 1048}}, std::nullopt, {1, 24, 1, 1}), (ScreenRect{1, 56, 1600, 1000}));
  // A high-DPI monitor: the design size times its content scale, still inside.
  const ScreenRect hidpi = fit_window({{0, 0, 3840, 2160}}, std::nullopt, {}, 2.0f);
  EXPECT_EQ(hidpi.width, 3200);
  EXPECT_EQ(hidpi.height, 2000);
  expect_inside(hidpi, {0, 0, 3840, 2160});
  // The primary (listed first) even when it is not at the origin.
  const ScreenRect second{1920, 0, 1280, 1024};
  expect_inside(fit_window({second, {0, 0, 1920, 1080}}, std::nullopt), second);
}

TEST(WindowFit, ARememberedWindowComesBackWhereItWas) {
  const ScreenRect was{100, 50, 1200, 700};
  EXPECT_EQ(fit_window({{0, 0, 1920, 1080}}, was), was);
  // On the second monitor, left there.
  const ScreenRect right{1920, 0, 1920, 1080};
  const ScreenRect there{2100, 100, 1000, 700};
  EXPECT_EQ(fit_window({{0, 0, 1920, 1080}, right}, there), there);
}

TEST(WindowFit, ARememberedWindowIsPutBackOnScreen) {
  const ScreenRect projector{0, 0, 1024, 768};
  // Closed on a large screen, opened on a projector: shrunk and moved inside.
  const ScreenRect big = fit_window({projector}, ScreenRect{300, 200, 1600, 1000});
  EXPECT_EQ(big, projector);
  // Closed on a second monitor that is gone: on the primary, whole.
  const ScreenRect gone = fit_window({projector}, ScreenRect{2500, 300, 800, 600});
  EXPECT_EQ(gone.width, 800);
  EXPECT_EQ(gone.height, 600);
  expect_inside(gone, projector);
  // Half off the bottom right: moved the least, its size kept.
  const ScreenRect half = fit_window({projector}, ScreenRect{600, 500, 600, 400}, {4, 24, 4, 4});
  EXPECT_EQ(half.width, 600);
  EXPECT_EQ(half.height, 400);
  EXPECT_EQ(half.x, 1024 - 4 - 600);
  EXPECT_EQ(half.y, 768 - 4 - 400);
  // Above the top (a title bar out of reach): its frame back on screen.
  const ScreenRect above = fit_window({projector}, ScreenRect{10, -50, 600, 400}, {4, 24, 4, 4});
  EXPECT_EQ(above.y, 24);
  EXPECT_EQ(above.x, 10);
}

TEST(WindowFit, NoMonitorKnownKeepsWhatItHas) {
  EXPECT_EQ(fit_window({}, std::nullopt), (ScreenRect{0, 0, 1600, 1000}));
  EXPECT_EQ(fit_window({}, ScreenRect{5, 6, 700, 500}), (ScreenRect{5, 6, 700, 500}));
}
