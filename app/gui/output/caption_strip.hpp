#pragma once
// A lesson step's caption drawn (SPEC §15): the presentation's lower third in the window and the
// strip below each slide (`attnlab lesson slides`), the same layout for both. The Markdown subset
// is parsed by app/commands/caption_text.hpp.
#include "app/commands/caption_text.hpp"

#include <cstdint>
#include <vector>

namespace attnlab::app {

/// The caption's text height in pixels, as a multiple of the UI font's size at UI scale 1.
inline constexpr float kCaptionFontFactor = 1.5f;

/// Lays `blocks` out at the current ImGui cursor, wrapped to `width` pixels, text `font_px`
/// pixels high (the UI font scaled), and draws them when `draw` (else only measures). Emphasis,
/// strong text and math each have their own colour; strong text is drawn twice, a pixel apart.
/// Returns the height used, in pixels; when drawing, the cursor moves below it.
float draw_caption(const std::vector<CaptionBlock>& blocks, float width, float font_px, bool draw = true);

/// A slide's caption strip: `caption` drawn headless (HeadlessUi) on the window's background
/// colour, `width` pixels wide, as high as its text needs plus a margin; `ui_scale` the step's.
/// Empty (height 0) for an empty caption. 8-bit RGB, rows from the top.
struct CaptionPixels {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;
};
CaptionPixels caption_strip_pixels(const std::vector<CaptionBlock>& blocks, int width, float ui_scale);

}  // namespace attnlab::app
