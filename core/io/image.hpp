#pragma once
// Image loading (stb_image) into RGB floats in [0,1], as docs/MATH.md states ("Pixels, patches, tokens").
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace attnlab {

/// An RGB image: `rgb` holds width*height*3 floats in [0,1], row-major from the top-left
/// pixel, channels interleaved (r,g,b). Values are the file's stored values / max (no gamma).
struct Image {
  int width = 0;
  int height = 0;
  std::vector<float> rgb;

  /// Channel c (0=r,1=g,2=b) of pixel (x,y); x in [0,width), y in [0,height), y=0 at the top.
  float at(int x, int y, int c) const { return rgb[(static_cast<size_t>(y) * width + x) * 3 + c]; }
  float& at(int x, int y, int c) { return rgb[(static_cast<size_t>(y) * width + x) * 3 + c]; }
  bool empty() const { return width == 0 || height == 0; }
};

/// Largest image accepted, in pixels (about 64 megapixels, e.g. 8192×8192). Checked from the
/// header before any pixel is decoded, so a file that claims 100 000×100 000 costs nothing.
inline constexpr std::int64_t kMaxImagePixels = 8192LL * 8192LL;

/// Loads a PNG, JPEG, BMP, TGA, GIF (first frame), PSD, HDR-free PNM… file with stb_image.
/// Grayscale is replicated to three channels, alpha is dropped, 16-bit channels are reduced to
/// [0,1] with their full precision. Throws attnlab::Error with one line for: a missing path, a
/// directory, an unreadable or empty file, a file that is not an image, a truncated or corrupt
/// image, zero width or height, and more than kMaxImagePixels pixels.
Image load_image(const std::filesystem::path& path);

/// The image files directly in `dir` (extensions .jpg, .jpeg, .png, .bmp, .tga, any case: what
/// load_image() reads), sorted by name; empty when the folder cannot be read.
std::vector<std::filesystem::path> image_files_in(const std::filesystem::path& dir);

/// The same from bytes in memory; `what` names the source in error messages.
Image load_image_from_memory(std::span<const std::uint8_t> bytes, const std::string& what);

/// Builds an image from 8-bit interleaved RGB (e.g. a GPU read-back), 3*width*height bytes.
Image image_from_rgb8(int width, int height, std::span<const std::uint8_t> rgb8);

/// 8-bit RGB(A) pixels encoded as PNG bytes (for a file written with others:
/// write_files_together()). Throws Error naming `what` for a buffer of the wrong size.
std::vector<std::uint8_t> encode_png(int width, int height, int channels, std::span<const std::uint8_t> pixels,
                                     const std::string& what);

/// Writes 8-bit RGB(A) pixels as PNG. Refuses to overwrite an existing file unless `overwrite`;
/// writes through write_file_safely(), so a failure leaves nothing.
/// Throws attnlab::Error naming the path and the reason.
void write_png(const std::filesystem::path& path, int width, int height, int channels,
               std::span<const std::uint8_t> pixels, bool overwrite = false);

} // namespace attnlab
