#include "app/gui/window/frame.hpp"

#include <backends/imgui_impl_opengl3.h>
#include <epoxy/gl.h>
#include <imgui.h>

namespace attnlab::app {

std::chrono::steady_clock::time_point ui_frame(const std::function<void()>& platform_new_frame, const std::function<void()>& views,
                                               const FrameTarget& target) {
  ImGui_ImplOpenGL3_NewFrame();
  if (platform_new_frame) platform_new_frame();
  ImGui::NewFrame();
  views();
  ImGui::Render();
  const auto drawn = std::chrono::steady_clock::now();
  glBindFramebuffer(GL_FRAMEBUFFER, target.framebuffer);
  glViewport(0, 0, target.width, target.height);
  glClearColor(target.clear[0], target.clear[1], target.clear[2], 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  return drawn;
}

}  // namespace attnlab::app
