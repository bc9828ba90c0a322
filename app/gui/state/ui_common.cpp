#include "app/gui/state/ui_common.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/gpu/gl.hpp"

#include <imgui_internal.h>  // the window's text wrap position, as ImGui::TextWrapped reads it

#include <algorithm>
#include <optional>
#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace attnlab::app {

GuiTexture::~GuiTexture() {
  if (id_) glDeleteTextures(1, &id_);
}

void set_texture_filter(ImTextureID texture, bool smooth) {
  const auto id = static_cast<GLuint>(reinterpret_cast<std::intptr_t>(texture));
  if (id == 0) return;
  GLint previous = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &previous);
  glBindTexture(GL_TEXTURE_2D, id);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, smooth ? GL_LINEAR : GL_NEAREST);
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(previous));
}

void GuiTexture::set(int width, int height, int channels, std::span<const std::uint8_t> pixels, bool smooth) {
  GLint previous = 0, align = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &previous);
  glGetIntegerv(GL_UNPACK_ALIGNMENT, &align);
  if (!id_) glGenTextures(1, &id_);
  glBindTexture(GL_TEXTURE_2D, id_);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  const GLenum format = channels == 4 ? GL_RGBA : GL_RGB;
  glTexImage2D(GL_TEXTURE_2D, 0, channels == 4 ? GL_RGBA8 : GL_RGB8, width, height, 0, format, GL_UNSIGNED_BYTE,
               pixels.data());
  gl::count_upload(pixels.size());
  const GLint filter = smooth ? GL_LINEAR : GL_NEAREST;
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ALIGNMENT, align);
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(previous));
  w_ = width;
  h_ = height;
}

void GuiTexture::set_photo(const Image& image, bool smooth) {
  const size_t texels = image.rgb.size() / 3;
  std::vector<std::uint8_t> px(texels * 4, 255);
  for (size_t t = 0; t < texels; ++t)
    for (size_t c = 0; c < 3; ++c)
      px[t * 4 + c] = static_cast<std::uint8_t>(std::lround(std::clamp(image.rgb[t * 3 + c], 0.0f, 1.0f) * 255.0f));
  set(image.width, image.height, 4, px, smooth);
}

ImU32 rgb(std::uint8_t r, std::uint8_t g, std::uint8_t b, float alpha) {
  return IM_COL32(r, g, b, static_cast<int>(std::lround(alpha * 255.0f)));
}

std::string format_number(double v, int digits) {
  char buf[48];
  const double a = std::abs(v);
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  if (a == 0) return "0";
  if (a < 1e-6 || a >= 1e6) {  // only far outside what a weight, score or colour is
    std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
    return buf;
  }
  const int decimals = std::max(digits - 1 - static_cast<int>(std::floor(std::log10(a))), 0);
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string format_weight(double w) { return format_number(w, 4); }

namespace {

// The weight at t ∈ [0,1] along a colour bar over `range` (the log of the weights for Log).
double bar_value_at(Normalization n, ValueRange range, float t) {
  const double v = range.lo + (range.hi - range.lo) * t;
  return n == Normalization::Log ? std::exp(v) : v;
}

// Where the weight `uniform` (1/N) lies along the bar, t ∈ [0,1], if it does (and uniform > 0).
std::optional<float> bar_place_of(Normalization n, ValueRange range, double uniform) {
  if (uniform <= 0 || range.hi <= range.lo) return std::nullopt;
  const double t = ((n == Normalization::Log ? std::log(uniform) : uniform) - range.lo) / (range.hi - range.lo);
  if (t < 0 || t > 1) return std::nullopt;
  return static_cast<float>(t);
}

}  // namespace

void colour_bar(Colormap c, Normalization n, ValueRange range, float height, double uniform) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = ui_px(9);
  constexpr int kSteps = 64;
  for (int k = 0; k < kSteps; ++k) {  // top = 1, bottom = 0
    const float t0 = 1.0f - static_cast<float>(k) / kSteps, t1 = 1.0f - static_cast<float>(k + 1) / kSteps;
    const auto a = colormap_rgb8(c, t0), b = colormap_rgb8(c, t1);
    const float y0 = p.y + height * static_cast<float>(k) / kSteps, y1 = p.y + height * static_cast<float>(k + 1) / kSteps;
    dl->AddRectFilledMultiColor(ImVec2(p.x, y0), ImVec2(p.x + w, y1), rgb(a[0], a[1], a[2]), rgb(a[0], a[1], a[2]),
                                rgb(b[0], b[1], b[2]), rgb(b[0], b[1], b[2]));
  }
  dl->AddRect(p, ImVec2(p.x + w, p.y + height), IM_COL32(200, 200, 200, 255));
  const float text_h = ImGui::GetTextLineHeight();
  // Where 1/N sits on the bar, if it does.
  std::optional<float> uniform_y;
  if (const auto t = bar_place_of(n, range, uniform)) uniform_y = p.y + height * (1.0f - *t);
  for (float t : {1.0f, 0.5f, 0.0f}) {
    const float y = std::clamp(p.y + height * (1.0f - t) - text_h * 0.5f, p.y, p.y + height - text_h);
    if (uniform_y && std::abs(y + text_h * 0.5f - *uniform_y) < text_h) continue;  // the 1/N label goes there
    const std::string label = format_weight(bar_value_at(n, range, t));
    dl->AddText(ImVec2(p.x + w + 6, y), ImGui::GetColorU32(ImGuiCol_Text), label.c_str());
  }
  if (uniform_y) {
    const ImU32 mark = IM_COL32(90, 220, 255, 255);
    dl->AddLine(ImVec2(p.x - 5, *uniform_y), ImVec2(p.x + w + 4, *uniform_y), mark, 2.0f);
    const std::string label = "1/N";
    dl->AddText(ImVec2(p.x + w + 6, std::clamp(*uniform_y - text_h * 0.5f, p.y, p.y + height - text_h)), mark, label.c_str());
  }
  ImGui::Dummy(ImVec2(w + 6 + ImGui::CalcTextSize("0.0000000e-00").x, height));
}

ImU32 pinned_colour(std::size_t n) {
  constexpr ImU32 colours[] = {IM_COL32(255, 0, 255, 255), IM_COL32(255, 255, 0, 255), IM_COL32(0, 255, 0, 255),
                               IM_COL32(255, 128, 0, 255)};
  return colours[n % 4];
}

void pinned_swatch(std::size_t n) {
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float box = ImGui::GetTextLineHeight();
  ImGui::GetWindowDrawList()->AddRect(ImVec2(p.x + 1, p.y + 1), ImVec2(p.x + box - 1, p.y + box - 1), pinned_colour(n), 0, 0, 2.0f);
  ImGui::Dummy(ImVec2(box, box));
}

float colour_bar_space() {
  return ui_px(9) + ImGui::CalcTextSize("0.0000000e-00").x + ImGui::GetStyle().ItemSpacing.x * 2;
}

void colour_bar_below(Colormap c, Normalization n, ValueRange range, float width, const std::string& name, double uniform) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float h = ui_px(9), gap = ui_px(3), text_h = ImGui::GetTextLineHeight();
  constexpr int kSteps = 64;
  for (int k = 0; k < kSteps; ++k) {  // left = 0, right = 1
    const float t0 = static_cast<float>(k) / kSteps, t1 = static_cast<float>(k + 1) / kSteps;
    const auto a = colormap_rgb8(c, t0), b = colormap_rgb8(c, t1);
    dl->AddRectFilledMultiColor(ImVec2(p.x + width * t0, p.y), ImVec2(p.x + width * t1, p.y + h), rgb(a[0], a[1], a[2]),
                                rgb(b[0], b[1], b[2]), rgb(b[0], b[1], b[2]), rgb(a[0], a[1], a[2]));
  }
  dl->AddRect(p, ImVec2(p.x + width, p.y + h), IM_COL32(200, 200, 200, 255));
  auto value_at = [&](float t) { return bar_value_at(n, range, t); };
  // The labels left to right, each placed where it does not run into the one before it.
  const float y = p.y + h + gap;
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), mark = IM_COL32(90, 220, 255, 255);
  float taken = p.x;  // the right end of the last label drawn
  auto label = [&](const std::string& s, float centre, ImU32 colour, bool first) {
    const float w = ImGui::CalcTextSize(s.c_str()).x;
    const float x = std::clamp(centre - w * 0.5f, p.x, p.x + width - w);
    if (!first && x < taken + ui_px(8)) return;
    dl->AddText(ImVec2(x, y), colour, s.c_str());
    taken = x + w;
  };
  const std::optional<float> uniform_t = bar_place_of(n, range, uniform);
  label(name + "  " + format_weight(value_at(0.0f)), p.x, text, true);
  if (uniform_t) {
    const float x = p.x + width * *uniform_t;
    dl->AddLine(ImVec2(x, p.y - 4), ImVec2(x, p.y + h + 2), mark, 2.0f);
    label("1/N", x, mark, false);
  }
  if (!uniform_t || std::abs(*uniform_t - 0.5f) > 0.15f) label(format_weight(value_at(0.5f)), p.x + width * 0.5f, text, false);
  const std::string hi = format_weight(value_at(1.0f));
  const float hi_w = ImGui::CalcTextSize(hi.c_str()).x;
  if (p.x + width - hi_w >= taken + ui_px(8)) dl->AddText(ImVec2(p.x + width - hi_w, y), text, hi.c_str());
  ImGui::Dummy(ImVec2(width, h + gap + text_h));
}

float colour_bar_below_space() {
  return ui_px(9) + ui_px(3) + ImGui::GetTextLineHeight() + ImGui::GetStyle().ItemSpacing.y;
}

void same_line_if_room(float width) {
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < width) ImGui::NewLine();
}

namespace {

float text_width(std::string_view t) { return ImGui::CalcTextSize(t.data(), t.data() + t.size()).x; }

// The longest prefix of `word` (whole UTF-8 characters, at least one) no wider than `width`.
std::size_t fitting_prefix(std::string_view word, float width) {
  std::size_t end = 0;
  for (std::size_t i = 1; i <= word.size(); ++i) {
    if (i < word.size() && (static_cast<unsigned char>(word[i]) & 0xC0) == 0x80) continue;  // inside a character
    if (end > 0 && text_width(word.substr(0, i)) > width) break;
    end = i;
  }
  return std::max<std::size_t>(end, 1);
}

}  // namespace

void wrap_text(std::string_view text) {
  // As ImGui::TextWrapped: at the wrap position pushed (PushTextWrapPos), else the content's edge.
  const float wrap_pos = std::max(ImGui::GetCurrentWindow()->DC.TextWrapPos, 0.0f);
  const float width = std::max(ImGui::CalcWrapWidthForPos(ImGui::GetCursorScreenPos(), wrap_pos), ImGui::GetFontSize() * 4);
  std::string line;
  auto emit = [&] {
    ImGui::TextUnformatted(line.data(), line.data() + line.size());
    line.clear();
  };
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t nl = std::min(text.find('\n', at), text.size());
    std::string_view paragraph = text.substr(at, nl - at);
    bool started = false;
    while (!paragraph.empty()) {
      const std::size_t sp = std::min(paragraph.find(' '), paragraph.size());
      std::string_view word = paragraph.substr(0, sp);
      paragraph.remove_prefix(std::min(sp + 1, paragraph.size()));
      const std::string joined = line.empty() ? std::string(word) : line + " " + std::string(word);
      if (text_width(joined) <= width) {
        line = joined;
        continue;
      }
      if (!line.empty()) emit();
      while (text_width(word) > width) {  // a word wider than the room: broken at the edge
        const std::size_t n = fitting_prefix(word, width);
        line = std::string(word.substr(0, n));
        emit();
        word.remove_prefix(n);
      }
      line = std::string(word);
      started = true;
    }
    if (!line.empty() || !started) emit();
    if (nl >= text.size()) break;
    at = nl + 1;
  }
}

void text_wrapped(const char* fmt, ...) {
  va_list args, again;
  va_start(args, fmt);
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, args);
  va_end(args);
  std::string text(static_cast<std::size_t>(std::max(n, 0)), '\0');
  if (n > 0) std::vsnprintf(text.data(), text.size() + 1, fmt, again);
  va_end(again);
  wrap_text(text);
}

const char* fitting_label(std::initializer_list<const char*> labels) {
  const float room = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().FramePadding.x * 2;
  for (const char* l : labels)
    if (ImGui::CalcTextSize(l).x <= room) return l;
  return *(labels.end() - 1);
}

int flowed_choices(const std::vector<std::string>& labels, const std::vector<std::string>& names, int selected) {
  int clicked = -1;
  for (std::size_t t = 0; t < labels.size(); ++t) {
    const std::string shown = labels[t].substr(0, labels[t].find("##"));
    const float w = ImGui::CalcTextSize(shown.c_str()).x;
    if (t > 0) same_line_if_room(w + ImGui::GetStyle().ItemSpacing.x);
    if (ImGui::Selectable(shown.c_str(), static_cast<int>(t) == selected, 0, ImVec2(w, 0))) clicked = static_cast<int>(t);
    record_widget(names[t]);
  }
  return clicked;
}

bool tabs_fit(const std::vector<std::string>& labels) {
  const ImGuiStyle& st = ImGui::GetStyle();
  const float room = ImGui::GetWindowWidth() - st.WindowPadding.x * 2 - st.ScrollbarSize;
  float w = 0;
  for (const std::string& l : labels) {
    const std::size_t hidden = l.find("##");  // ImGui's id part is not drawn
    w += ImGui::CalcTextSize(l.substr(0, hidden).c_str()).x + st.FramePadding.x * 2 + st.ItemInnerSpacing.x * 2;
  }
  return w <= room;
}

bool tabs_fit(std::initializer_list<const char*> labels) { return tabs_fit(std::vector<std::string>(labels.begin(), labels.end())); }

std::string fit_label(const char* label, float width, bool help) {
  const ImGuiStyle& st = ImGui::GetStyle();
  const float avail = ImGui::GetContentRegionAvail().x;
  const float extra = help ? st.ItemSpacing.x + ImGui::CalcTextSize("(?)").x : 0.0f;
  if (width + st.ItemInnerSpacing.x + ImGui::CalcTextSize(label).x + extra <= avail) {
    ImGui::SetNextItemWidth(width);
    return label;
  }
  ImGui::TextUnformatted(label);
  ImGui::SetNextItemWidth(std::min(width, avail - extra));
  return std::string("##") + label;
}

float radio_width(const char* label) {
  const ImGuiStyle& st = ImGui::GetStyle();
  return ImGui::GetFrameHeight() + st.ItemInnerSpacing.x + ImGui::CalcTextSize(label).x + st.ItemSpacing.x;
}

float button_width(const char* label) {
  const ImGuiStyle& st = ImGui::GetStyle();
  return ImGui::CalcTextSize(label).x + st.FramePadding.x * 2 + st.ItemSpacing.x;
}

void help_marker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30.0f);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

}  // namespace attnlab::app
