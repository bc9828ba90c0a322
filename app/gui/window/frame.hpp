#pragma once
// One frame of the UI, the same for the window (app.cpp) and for `attnlab render` / `figure`
// (headless.cpp): the renderer's and the platform's new frame, ImGui's new frame, the views,
// ImGui's render, then the target cleared and the draw data drawn into it.
#include <array>
#include <chrono>
#include <functional>

namespace attnlab::app {

/// Where a frame is drawn: a framebuffer (0: the window's), its size and the colour it is
/// cleared to before the draw data.
struct FrameTarget {
  unsigned framebuffer = 0;
  int width = 0, height = 0;
  std::array<float, 3> clear{0.08f, 0.08f, 0.09f};
};

/// Runs one frame: `platform_new_frame` (the GLFW hand_made's; nothing headless, where the
/// display size is fixed), ImGui's new frame, `views`, ImGui::Render, then `target` cleared and
/// drawn. Returns when ImGui's draw lists were built (before the GL draw): the hover
/// benchmark's "drawn" mark.
std::chrono::steady_clock::time_point ui_frame(const std::function<void()>& platform_new_frame, const std::function<void()>& views,
                                               const FrameTarget& target);

}  // namespace attnlab::app
