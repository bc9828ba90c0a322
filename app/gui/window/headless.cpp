#include "app/gui/window/headless.hpp"

#include "app/gui/window/frame.hpp"
#include "app/gui/window/ui_font.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/gpu/gl.hpp"
#include "core/base/platform.hpp"

#include <backends/imgui_impl_opengl3.h>
#include <epoxy/gl.h>
#include <imgui.h>

#include <filesystem>
#include <string>
#include <thread>

namespace attnlab::app {

std::string ui_font_file() {
  const auto chain = ui_font_chain();
  return chain.empty() ? std::string() : chain.front().path;
}

const ImWchar* ui_glyph_ranges() { return ui_glyph_ranges_for(current_language()); }

bool load_ui_font(float px) {
  if (ui_font_chain().empty()) return false;
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  return add_ui_font(*io.Fonts, px, current_language()) != nullptr;
}

float setup_app_style(float ui_scale) {
  constexpr float kBaseFontPx = 16.0f, kLoadScale = 2.0f;  // rasterized at 2× for crisp scaling
  ImGuiIO& io = ImGui::GetIO();
  ImGui::StyleColorsDark();
  float font_scale = 1.0f;
  if (add_ui_font(*io.Fonts, kBaseFontPx * kLoadScale, current_language()))
    font_scale = 1.0f / kLoadScale;
  ImGui::GetStyle().ScaleAllSizes(ui_scale);
  io.FontGlobalScale = ui_scale * font_scale;
  return font_scale;
}

HeadlessUi::HeadlessUi(int width, int height, float ui_scale) : w_(width), h_(height) {
  if (width < 16 || height < 16 || width > 8192 || height > 8192)
    throw Error(text_format(_("image size %dx%d is outside 16..8192 pixels per side"), width, height));
  glGenRenderbuffers(1, &colour_);
  glBindRenderbuffer(GL_RENDERBUFFER, colour_);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
  glGenFramebuffers(1, &fbo_);
  glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, colour_);
  if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
    throw Error(text_format(_("cannot make a %dx%d framebuffer"), width, height));
  imgui_ = ImGui::CreateContext();
  ImGui::SetCurrentContext(imgui_);
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // nothing remembered from headless runs
  io.DisplaySize = ImVec2(static_cast<float>(width), static_cast<float>(height));
  io.DeltaTime = 1.0f / 60.0f;
  setup_app_style(ui_scale);
  ImGui_ImplOpenGL3_Init("#version 330 core");
}

HeadlessUi::~HeadlessUi() {
  if (imgui_) {
    ImGui::SetCurrentContext(imgui_);
    ImGui_ImplOpenGL3_Shutdown();
    ImGui::DestroyContext(imgui_);
  }
  if (fbo_) glDeleteFramebuffers(1, &fbo_);
  if (colour_) glDeleteRenderbuffers(1, &colour_);
}

std::vector<std::uint8_t> HeadlessUi::render(const std::function<void()>& draw, int frames,
                                             const std::function<bool()>& busy, std::chrono::milliseconds patience) {
  ImGui::SetCurrentContext(imgui_);
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(-1, -1);  // no pointer: no hover effects or tooltips
  const auto give_up = std::chrono::steady_clock::now() + patience;
  for (int f = 0; f < frames || (busy && busy() && std::chrono::steady_clock::now() < give_up); ++f) {
    if (f >= frames) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ui_frame({}, draw, FrameTarget{fbo_, w_, h_});  // the window's frame (frame.hpp), into the framebuffer object
  }
  std::vector<std::uint8_t> rgba(static_cast<size_t>(w_) * h_ * 4);
  glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, w_, h_, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
  gl::count_readback(rgba.size());
  std::vector<std::uint8_t> rgb(static_cast<size_t>(w_) * h_ * 3);
  for (int y = 0; y < h_; ++y)  // GL rows start at the bottom
    for (int x = 0; x < w_; ++x)
      for (int c = 0; c < 3; ++c)
        rgb[(static_cast<size_t>(y) * w_ + x) * 3 + c] = rgba[(static_cast<size_t>(h_ - 1 - y) * w_ + x) * 4 + c];
  return rgb;
}

}  // namespace attnlab::app
