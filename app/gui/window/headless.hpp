#pragma once
// Draws the app's views without a window: an EGL context (core's HeadlessContext), a
// framebuffer object of the asked size and an ImGui context rendered by the same OpenGL3
// hand_made as the window, so a view comes out with the same pixels as in the app.
#include "core/gpu/context.hpp"

#include <imgui.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attnlab::app {

class HeadlessUi {
 public:
  /// Makes the context, a width × height RGBA8 framebuffer and an ImGui context with the
  /// app's font. Throws Error (no EGL/GPU, size out of 16..8192) with one line.
  HeadlessUi(int width, int height, float ui_scale = 1.0f);
  ~HeadlessUi();
  HeadlessUi(const HeadlessUi&) = delete;
  HeadlessUi& operator=(const HeadlessUi&) = delete;

  /// Runs `frames` ImGui frames calling `draw` in each (layouts settle after the first), then
  /// more while `busy` says work is under way (a view's worker thread, a pass spread over
  /// frames), 10 ms apart and for at most `patience`, so that a one-shot picture shows the
  /// finished result rather than "computing". Returns the last frame as 8-bit RGB, rows from the
  /// top (width × height × 3 bytes).
  std::vector<std::uint8_t> render(const std::function<void()>& draw, int frames = 3,
                                   const std::function<bool()>& busy = {},
                                   std::chrono::milliseconds patience = std::chrono::minutes(2));

  int width() const { return w_; }
  int height() const { return h_; }
  const GlInfo& gl() const { return context_.info(); }

 private:
  HeadlessContext context_;
  int w_, h_;
  unsigned fbo_ = 0, colour_ = 0;
  ::ImGuiContext* imgui_ = nullptr;
};

/// Sets up the ImGui font and style the app uses (ui_font.hpp's chain: Noto Sans, DejaVu Sans, Noto
/// Sans CJK, with the current language's characters) at `ui_scale`.
/// Needs a current ImGui context; call before the renderer hand_made is initialized. Returns the
/// factor FontGlobalScale needs per unit of UI scale (fonts are rasterized at twice the size).
float setup_app_style(float ui_scale);

/// The UI font's base file: the first of ui_font_chain() (Noto Sans on Linux), as UTF-8; empty
/// when there is none (ImGui's built-in font, ASCII only, is used then).
std::string ui_font_file();

/// The codepoints the UI font's atlas is built with (setup_app_style, load_ui_font) for the current
/// language: ui_glyph_ranges_for(current_language()). A character outside is drawn as ImGui's
/// fallback '?'; tests/app/test_ui_glyphs.cpp checks that every character of the sources' string
/// literals and of every catalog is inside and in the font chain.
const ImWchar* ui_glyph_ranges();

/// Rebuilds the font atlas with the UI's font chain (ui_font.hpp; ui_glyph_ranges()) rasterized at `px` pixels, so text
/// at any UI scale is drawn at its own size, not a scaled bitmap. Call between frames; the
/// caller recreates the renderer's font texture. Returns false (atlas untouched) when the
/// font file is missing.
bool load_ui_font(float px);

}  // namespace attnlab::app
