#include "core/base/colormap.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace attnlab {
namespace {
// The CET tables, committed as data with their source and licence (core/base/colormap_tables.inc).
constexpr float kColormapTables[kColormapCount][256 * 3] = {
#include "core/base/colormap_tables.inc"
};
}  // namespace

std::string_view colormap_name(Colormap c) {
  constexpr std::string_view names[] = {"heat", "fire", "bmy", "kbgyw", "blue", "gray", "cb-blue-yellow", "cb-red-cyan"};
  return names[static_cast<int>(c)];
}

Colormap parse_colormap(std::string_view name) {
  for (int c = 0; c < kColormapCount; ++c)
    if (colormap_name(static_cast<Colormap>(c)) == name) return static_cast<Colormap>(c);
  std::string all;
  for (int c = 0; c < kColormapCount; ++c) all += (c ? ", " : "") + std::string(colormap_name(static_cast<Colormap>(c)));
  // TRANSLATORS: %2$s lists the colormaps' names (command-line values, in English).
  throw Error(text_format(_("unknown colormap '%s' (expected %s)"), std::string(name).c_str(), all.c_str()));
}

bool colormap_is_colour_blind_safe(Colormap c) {
  return c == Colormap::CbBlueYellow || c == Colormap::CbRedCyan || c == Colormap::Gray || c == Colormap::Blue;
}

std::string_view normalization_name(Normalization n) {
  constexpr std::string_view names[] = {"minmax", "absolute", "log"};
  return names[static_cast<int>(n)];
}

Normalization parse_normalization(std::string_view name) {
  for (int n = 0; n < kNormalizationCount; ++n)
    if (normalization_name(static_cast<Normalization>(n)) == name) return static_cast<Normalization>(n);
  // TRANSLATORS: minmax, absolute and log are values of a command-line flag: keep them in English.
  throw Error(text_format(_("unknown normalization '%s' (expected minmax, absolute or log)"), std::string(name).c_str()));
}

std::span<const float> colormap_table(Colormap c) {
  return std::span<const float>(kColormapTables[static_cast<int>(c)], 256 * 3);
}

std::array<std::uint8_t, 3> colormap_rgb8(Colormap c, float t) {
  const auto table = colormap_table(c);
  const float tc = std::isfinite(t) ? std::clamp(t, 0.0f, 1.0f) : 0.0f;
  const int k = static_cast<int>(std::lround(tc * 255.0f));
  std::array<std::uint8_t, 3> rgb{};
  for (int ch = 0; ch < 3; ++ch) rgb[ch] = static_cast<std::uint8_t>(std::lround(table[k * 3 + ch] * 255.0f));
  return rgb;
}

ValueRange normalization_range(std::span<const float> values, std::span<const std::uint8_t> keep, Normalization n) {
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  for (size_t j = 0; j < values.size(); ++j) {
    if (!keep.empty() && !keep[j]) continue;
    float v = values[j];
    if (n == Normalization::Log) {
      if (!(v > 0)) continue;
      v = std::log(v);
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (!(lo <= hi)) return {};
  if (n == Normalization::Absolute) lo = 0;
  return {lo, hi};
}

float normalize_value(float v, ValueRange r, Normalization n) {
  if (n == Normalization::Log) v = v > 0 ? std::log(v) : r.lo;
  if (!(r.hi > r.lo)) return 0.0f;
  return std::clamp((v - r.lo) / (r.hi - r.lo), 0.0f, 1.0f);
}

std::vector<std::uint8_t> colormap_pixels(std::span<const float> values, std::span<const std::uint8_t> keep, Colormap c,
                                          Normalization n, ValueRange range) {
  if (!keep.empty() && keep.size() != values.size())
    // TRANSLATORS: an internal check: "keep flags" say which values are drawn (the others are masked).
    throw Error(text_format(_("colormap: %zu keep flags for %zu values"), keep.size(), values.size()));
  std::vector<std::uint8_t> out(values.size() * 4, 0);
  for (size_t j = 0; j < values.size(); ++j) {
    if (!keep.empty() && !keep[j]) continue;  // masked: transparent
    const auto rgb = colormap_rgb8(c, normalize_value(values[j], range, n));
    out[j * 4 + 0] = rgb[0];
    out[j * 4 + 1] = rgb[1];
    out[j * 4 + 2] = rgb[2];
    out[j * 4 + 3] = 255;
  }
  return out;
}

std::vector<std::uint8_t> apply_colormap(std::span<const float> values, std::span<const std::uint8_t> keep,
                                         Colormap c, Normalization n) {
  return colormap_pixels(values, keep, c, n, normalization_range(values, keep, n));
}

} // namespace attnlab
