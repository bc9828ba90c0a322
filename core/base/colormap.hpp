#pragma once
// Heat-map colours for rows of A: colormaps (perceptually uniform, colour-blind-safe options)
// and the normalizations of docs/MATH.md ("Colour scales"). The CPU version here is the reference for the GPU
// colormap pass and what the CPU fallback draws with.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace attnlab {

/// Peter Kovesi's perceptually uniform CET maps (colorcet, CC-BY 4.0), committed as data in
/// core/base/colormap_tables.inc. Heat (CET-L4, black–red–yellow) is the default: its top stays a
/// saturated yellow over the photo and on a projector, where Fire's (CET-L3) white top fades.
enum class Colormap { Heat, Fire, Bmy, Kbgyw, Blue, Gray, CbBlueYellow, CbRedCyan };
inline constexpr int kColormapCount = 8;
/// What a map starts with: the colormap, and its opacity over the photo (0 photo only, 1 map only).
inline constexpr Colormap kDefaultColormap = Colormap::Heat;
inline constexpr float kDefaultOverlayOpacity = 0.65f;

/// How weights map to [0,1] before the colormap. MinMax stretches each map between its own
/// min and max (the default: a row at τ = 1 is nearly flat); Absolute divides by the max, so 0
/// stays 0 and a flat row looks flat; Log maps log a between log(min a>0) and log(max a).
enum class Normalization { MinMax, Absolute, Log };
inline constexpr int kNormalizationCount = 3;

std::string_view colormap_name(Colormap c);
Colormap parse_colormap(std::string_view name);  ///< Throws Error listing the names.
bool colormap_is_colour_blind_safe(Colormap c);
std::string_view normalization_name(Normalization n);
Normalization parse_normalization(std::string_view name);  ///< Throws Error listing the names.

/// The colormap's 256 RGB entries in [0,1], 768 floats.
std::span<const float> colormap_table(Colormap c);

/// Colour of t in [0,1] (clamped): nearest of the 256 entries, 8-bit.
std::array<std::uint8_t, 3> colormap_rgb8(Colormap c, float t);

/// The range [lo, hi] of the kept values used by a normalization (lo = 0 for Absolute;
/// logs of the positive values for Log). Both 0 when nothing is kept.
struct ValueRange {
  float lo = 0, hi = 0;
};
ValueRange normalization_range(std::span<const float> values, std::span<const std::uint8_t> keep, Normalization n);

/// t in [0,1] for one value under a normalization and range (0 when the range is empty).
float normalize_value(float v, ValueRange r, Normalization n);

/// RGBA8 pixels, one per value, for a given range, so that two
/// maps can share one scale (a map and the same map after undoing a shuffle) or a fixed one
/// (codes in [−1,1]). Kept values get alpha 255, dropped ones (keep[j] == 0) are transparent
/// black; `keep` may be empty (everything kept). An empty range (lo >= hi) gives colour 0.
/// Throws Error when `keep` is neither empty nor as long as `values`.
std::vector<std::uint8_t> colormap_pixels(std::span<const float> values, std::span<const std::uint8_t> keep, Colormap c,
                                          Normalization n, ValueRange range);

/// colormap_pixels() over the range the normalization takes from the kept values themselves:
/// kept values coloured, alpha 255; masked values (keep == 0) transparent black.
std::vector<std::uint8_t> apply_colormap(std::span<const float> values, std::span<const std::uint8_t> keep,
                                         Colormap c, Normalization n);

} // namespace attnlab
