#pragma once
// Small pieces shared by the views: a texture the UI draws (works on OpenGL 3.3 too, for the
// CPU fallback), colour conversion for ImGui, and the colour bar.
#include "core/base/colormap.hpp"
#include "core/io/image.hpp"

#include <epoxy/gl.h>
#include <imgui.h>

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlab::app {

/// A move-only RGBA8 (or RGB8) 2D texture for drawing with ImGui, nearest or linear filtered.
class GuiTexture {
 public:
  GuiTexture() = default;
  ~GuiTexture();
  GuiTexture(GuiTexture&& o) noexcept : id_(std::exchange(o.id_, 0)), w_(o.w_), h_(o.h_) {}
  GuiTexture& operator=(GuiTexture&& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(w_, o.w_);
    std::swap(h_, o.h_);
    return *this;
  }
  GuiTexture(const GuiTexture&) = delete;
  GuiTexture& operator=(const GuiTexture&) = delete;

  /// Replaces the contents: `channels` 3 or 4, 8-bit, rows from the top.
  void set(int width, int height, int channels, std::span<const std::uint8_t> pixels, bool smooth);
  /// Replaces the contents with a photo (RGB in [0, 1]) as RGBA8, alpha 255: llvmpipe samples
  /// 4-byte texels on its fast path and 3-byte ones several times slower, and a photo is drawn
  /// under every map of every frame.
  void set_photo(const Image& image, bool smooth);
  GLuint id() const { return id_; }
  int width() const { return w_; }
  int height() const { return h_; }
  ImTextureID im() const { return to_im(id_); }
  static ImTextureID to_im(GLuint id) { return reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(id)); }

 private:
  GLuint id_ = 0;
  int w_ = 0, h_ = 0;
};

/// Sets a texture's magnification filter: nearest (each patch one block, the honest default)
/// or bilinear (smoothed between patch centres), for maps of any source.
void set_texture_filter(ImTextureID texture, bool smooth);

/// `px` pixels at UI scale 1, in pixels at the current UI scale (the font's size over 16 px,
/// the size of the UI's font at scale 1).
inline float ui_px(float px) { return px * ImGui::GetFontSize() / 16.0f; }

/// ImGui colour from 8-bit RGB and alpha in [0,1].
ImU32 rgb(std::uint8_t r, std::uint8_t g, std::uint8_t b, float alpha = 1.0f);

/// A vertical colour bar at the cursor, `height` pixels tall, labelled with the real weights
/// at its bottom, middle and top for the normalization (docs/MATH.md, "Colour scales"). `uniform` > 0 marks
/// that weight (1/N, every key's weight in a flat row) with a tick labelled "1/N" when it lies
/// in the range.
void colour_bar(Colormap c, Normalization n, ValueRange range, float height, double uniform = 0);
/// The width a map view leaves right of its canvas for colour_bar() and the spacing around it.
float colour_bar_space();
/// colour_bar() lying under a map, `width` pixels wide (left = the range's low end): the strip,
/// then `name` and the weights at its low end, middle and high end on one line; `uniform` as in
/// colour_bar(). For maps side by side on a narrow screen, where a bar beside each would take
/// much of each map's width (Compare in presentation mode).
void colour_bar_below(Colormap c, Normalization n, ValueRange range, float width, const std::string& name, double uniform = 0);
/// The height a map view leaves under its canvas for colour_bar_below() and the spacing above it.
float colour_bar_below_space();

/// The outline colour of the n-th pinned patch, on the main map and beside its map in the
/// pinned panel (magenta, yellow, green, orange, then again).
ImU32 pinned_colour(std::size_t n);
/// A square one text line tall outlined in pinned_colour(n), at the cursor (a legend entry).
void pinned_swatch(std::size_t n);

/// The app's one number format: `digits` significant digits in fixed notation (0.001568,
/// 0.00002018, 12.35), so that the numbers of a panel read alike; scientific notation only
/// below 1e-6 and from 1e6 on (2.018e-07), where fixed notation would be a row of zeros.
std::string format_number(double v, int digits = 4);
/// A weight a_ij: format_number with 4 significant digits, enough to tell weights near 1/N apart.
std::string format_weight(double w);

/// Text wrapped to the room left on the line, as ImGui::TextWrapped but broken only at spaces
/// (ImGui breaks after '.' and ',' too, splitting "0.004487" into "0." and "004487"); a word
/// wider than the room (a path) is broken where it reaches the edge. '\n' starts a new line.
void wrap_text(std::string_view text);
/// wrap_text of a printf-style text.
void text_wrapped(const char* fmt, ...) IM_FMTARGS(1);

/// The first of `labels` (longest first) whose button fits the room left on the line, else the
/// last: a button's label on a projector's narrow column, never cut.
const char* fitting_label(std::initializer_list<const char*> labels);
/// For a widget `width` pixels wide with its label (and a help marker when `help`): the label to
/// give the widget, after setting the next item's width. Beside the widget while both fit the room
/// left on the line; else the label is drawn on the line above and the widget takes the room
/// ("##label": a projector's narrow column, where one of them would be cut).
std::string fit_label(const char* label, float width, bool help = false);
/// A radio button's width with its label and the spacing after it, pixels.
float radio_width(const char* label);
/// A button's width with its label and the spacing after it, pixels (for same_line_if_room).
float button_width(const char* label);

/// Whether tabs with these labels fit the window's width as one row (else a view flows them over
/// a few lines, flowed_choices(): a projector's narrow column, where tabs would be cut or scrolled
/// out of sight). Decided on
/// the width less a scroll bar, shown or not, so that the choice stays the same every frame.
bool tabs_fit(std::initializer_list<const char*> labels);
bool tabs_fit(const std::vector<std::string>& labels);
/// Where tabs do not fit: the labels (text after "##" not shown) as selectables flowed over as
/// few lines as the column allows, none cut, `selected` marked; each recorded under its entry of
/// `names` (widget_log.hpp). Returns the index clicked, or −1.
int flowed_choices(const std::vector<std::string>& labels, const std::vector<std::string>& names, int selected);

/// Help marker: "(?)" with a tooltip.
void help_marker(const char* text);
/// On the line of the previous item when `width` pixels fit there, else on the next line.
void same_line_if_room(float width);

}  // namespace attnlab::app
