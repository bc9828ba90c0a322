// A lesson step's caption drawn (app/gui/output/caption_strip.hpp).
#include "app/gui/output/caption_strip.hpp"

#include "app/gui/window/headless.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string_view>

namespace attnlab::app {
namespace {

ImU32 style_colour(CaptionStyle style) {
  switch (style) {
    case CaptionStyle::Emphasis: return IM_COL32(255, 214, 110, 255);
    case CaptionStyle::Math: return IM_COL32(140, 210, 255, 255);
    case CaptionStyle::Strong:
    case CaptionStyle::Plain: break;
  }
  return ImGui::GetColorU32(ImGuiCol_Text);
}

}  // namespace

float draw_caption(const std::vector<CaptionBlock>& blocks, float width, float font_px, bool draw) {
  ImFont* font = ImGui::GetFont();
  ImDrawList* list = draw ? ImGui::GetWindowDrawList() : nullptr;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float line_h = std::round(font_px * 1.25f);
  const float space = font->CalcTextSizeA(font_px, FLT_MAX, 0, " ").x;
  const float indent = std::round(font_px * 1.3f);
  float y = 0;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const CaptionBlock& block = blocks[b];
    if (b > 0) y += std::round(line_h * 0.35f);
    const float x0 = block.item ? indent : 0;
    if (block.item && list) list->AddText(font, font_px, ImVec2(origin.x + indent * 0.3f, origin.y + y), ImGui::GetColorU32(ImGuiCol_Text), "\u2022");
    float x = x0;
    bool pending_space = false;
    for (const CaptionSpan& span : block.spans) {
      std::string_view rest = span.text;
      while (!rest.empty()) {
        if (rest.front() == ' ') {
          pending_space = true;
          rest.remove_prefix(1);
          continue;
        }
        const std::size_t end = std::min(rest.find(' '), rest.size());
        const std::string_view word = rest.substr(0, end);
        rest.remove_prefix(end);
        const float w = font->CalcTextSizeA(font_px, FLT_MAX, 0, word.data(), word.data() + word.size()).x;
        if (pending_space && x > x0) x += space;
        if (x > x0 && x + w > width) {
          x = x0;
          y += line_h;
        }
        pending_space = false;
        if (list) {
          const ImVec2 at(origin.x + x, origin.y + y);
          const ImU32 colour = style_colour(span.style);
          list->AddText(font, font_px, at, colour, word.data(), word.data() + word.size());
          if (span.style == CaptionStyle::Strong) list->AddText(font, font_px, ImVec2(at.x + 1, at.y), colour, word.data(), word.data() + word.size());
        }
        x += w + (span.style == CaptionStyle::Strong ? 1 : 0);
      }
    }
    y += line_h;
  }
  if (draw) ImGui::Dummy(ImVec2(width, y));
  return y;
}

CaptionPixels caption_strip_pixels(const std::vector<CaptionBlock>& blocks, int width, float ui_scale) {
  CaptionPixels out;
  if (blocks.empty()) return out;
  // Measured in a context of its own (the font's size is the UI's at `ui_scale`), then drawn at that height.
  float text_h = 0, margin = 0;
  {
    HeadlessUi measure(std::max(width, 16), 16, ui_scale);
    measure.render(
        [&] {
          const float px = ImGui::GetFontSize() * kCaptionFontFactor;
          margin = std::round(px * 0.6f);
          text_h = draw_caption(blocks, static_cast<float>(width) - 2 * margin, px, false);
        },
        1);
  }
  out.width = width;
  out.height = std::clamp(static_cast<int>(std::ceil(text_h + 2 * margin)), 16, 8192);
  HeadlessUi ui(std::max(width, 16), out.height, ui_scale);
  out.rgb = ui.render([&] {
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(margin, margin));
    ImGui::Begin("##caption", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoMove);
    const float px = ImGui::GetFontSize() * kCaptionFontFactor;
    draw_caption(blocks, static_cast<float>(width) - 2 * margin, px);
    ImGui::End();
    ImGui::PopStyleVar();
  });
  return out;
}

}  // namespace attnlab::app
