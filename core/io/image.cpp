#include "core/io/image.hpp"

#include "core/base/budget.hpp"
#include "core/base/error.hpp"
#include "core/io/files.hpp"
#include "core/base/platform.hpp"
#include "core/base/translate.hpp"

#include <stb_image.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cctype>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <system_error>


namespace attnlab {
namespace {

std::string describe(const std::filesystem::path& p) { return "'" + platform::utf8(p) + "'"; }

// stb_image decodes a JPEG cut short without complaint (it fills the rest with grey), so a
// missing end-of-image marker is checked here: a JPEG must end with FF D9, perhaps followed by
// padding that some cameras append.
bool jpeg_truncated(std::span<const std::uint8_t> b) {
  if (b.size() < 4 || b[0] != 0xFF || b[1] != 0xD8) return false;  // not a JPEG
  for (size_t i = b.size() - 1; i >= 1; --i) {
    if (b[i - 1] == 0xFF && b[i] == 0xD9) return false;
    if (b.size() - i > 4096) break;  // only look at the tail
  }
  return true;
}

}  // namespace

Image load_image_from_memory(std::span<const std::uint8_t> bytes, const std::string& what) {
  // TRANSLATORS: %s is a file's name in quotes ('photo.jpg').
  if (bytes.empty()) throw Error(text_format(_("cannot load %s: the file is empty (0 bytes)"), what.c_str()));
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw Error(text_format(_("cannot load %s: the file is larger than 2 GiB"), what.c_str()));
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int len = static_cast<int>(bytes.size());
  int w = 0, h = 0, comp = 0;
  if (!stbi_info_from_memory(data, len, &w, &h, &comp))
    // TRANSLATORS: %s is a file's name in quotes; stb_image is the library that reads images: keep its name.
    throw Error(text_format(_("cannot load %s: not an image stb_image can read (PNG, JPEG, BMP, TGA, GIF, PSD, PNM)"),
                            what.c_str()));
  if (w <= 0 || h <= 0) throw Error(text_format(_("cannot load %s: the image has zero width or height"), what.c_str()));
  const std::int64_t pixels = static_cast<std::int64_t>(w) * h;
  if (pixels > kMaxImagePixels)
    // TRANSLATORS: %1$s is a file's name in quotes, %2$dx%3$d its width and height, %4$lld the largest pixel count.
    throw Error(text_format(_("cannot load %s: %dx%d pixels is more than the limit of %lld pixels; resize it first"),
                            what.c_str(), w, h, static_cast<long long>(kMaxImagePixels)));
  // The floats kept (3 per pixel) and stb's decoded pixels (up to 4 channels of 16 bits) at once.
  check_memory(checked_product({static_cast<std::size_t>(pixels), 3 * sizeof(float) + 4 * 2}),
               std::max<std::uint64_t>(memory_budget(), kAlwaysAllowedBytes),
               // TRANSLATORS: the work that needs memory, in "... would need 12 MiB, over the ... memory budget";
               // %1$s is a file's name in quotes, %2$dx%3$d its width and height.
               text_format(_("decoding %s (%dx%d pixels)"), what.c_str(), w, h),
               // TRANSLATORS: a hint after "... would need 12 MiB, over the ... memory budget": make the image smaller.
               _("resize it first"));
  if (jpeg_truncated(bytes))
    throw Error(text_format(_("cannot load %s: the JPEG is truncated (no end-of-image marker)"), what.c_str()));

  Image img;
  img.width = w;
  img.height = h;
  img.rgb.resize(static_cast<size_t>(pixels) * 3);
  int gw = 0, gh = 0, gc = 0;
  // Decoded with the file's own channel count, then expanded here: grey is replicated, alpha
  // dropped. (stb's own conversion to 3 channels loses half of a 16-bit PNM.)
  auto convert = [&](const auto* px, float max) {
    // TRANSLATORS: %1$s is a file's name in quotes, %2$s the decoder's reason.
    if (!px) throw Error(text_format(_("cannot load %s: corrupt or truncated image (%s)"), what.c_str(), stbi_failure_reason()));
    if (gc < 1 || gc > 4) throw Error(text_format(_("cannot load %s: unsupported channel count"), what.c_str()));
    if (gw != w || gh != h)
      throw Error(text_format(_("cannot load %s: the decoded size differs from the header"), what.c_str()));
    for (size_t p = 0; p < static_cast<size_t>(pixels); ++p)
      for (int c = 0; c < 3; ++c)
        img.rgb[p * 3 + c] = static_cast<float>(px[p * gc + (gc >= 3 ? c : 0)]) / max;
  };
  if (stbi_is_16_bit_from_memory(data, len)) {
    std::unique_ptr<stbi_us, void (*)(void*)> px(stbi_load_16_from_memory(data, len, &gw, &gh, &gc, 0), stbi_image_free);
    // 16-bit PNM stores the high byte first; this stb_image hands the bytes over as they lie in
    // memory, so on a little-endian machine they are swapped back here.
    const bool pnm = bytes.size() > 2 && bytes[0] == 'P' && (bytes[1] == '5' || bytes[1] == '6');
    if (px && pnm && std::endian::native == std::endian::little)
      for (size_t n = 0; n < static_cast<size_t>(gw) * gh * gc; ++n) px.get()[n] = static_cast<stbi_us>(px.get()[n] << 8 | px.get()[n] >> 8);
    convert(px.get(), 65535.0f);
  } else {
    std::unique_ptr<stbi_uc, void (*)(void*)> px(stbi_load_from_memory(data, len, &gw, &gh, &gc, 0), stbi_image_free);
    convert(px.get(), 255.0f);
  }
  return img;
}

Image load_image(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    throw Error(text_format(_("cannot load %s: no such file"), describe(path).c_str()));
  if (std::filesystem::is_directory(status))
    throw Error(text_format(_("cannot load %s: it is a directory, not an image file"), describe(path).c_str()));
  // Opened without blocking (a FIFO would wait for a writer), then its type and size checked on
  // the open file before a byte is read: only a regular file, and no more than can be decoded.
  int fd = -1;
  std::uint64_t size = 0;
  if (const int err = platform::open_regular_for_reading(path, fd, size)) {
    if (err == platform::ENOTREG_FILE)
      throw Error(text_format(_("cannot load %s: not a regular file (a pipe, a device or a socket), so not an image file"),
                              describe(path).c_str()));
    // TRANSLATORS: %1$s is a file's name in quotes, %2$s the system's reason.
    throw Error(text_format(_("cannot load %s: cannot open it for reading (%s)"), describe(path).c_str(), std::strerror(err)));
  }
  struct Closer {
    int fd;
    ~Closer() { platform::close_file(fd); }
  } closer{fd};
  if (size > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw Error(text_format(_("cannot load %s: the file is larger than 2 GiB"), describe(path).c_str()));
  check_memory(static_cast<std::size_t>(size), std::max<std::uint64_t>(memory_budget(), kAlwaysAllowedBytes),
               // TRANSLATORS: the work that needs memory, in "... would need 12 MiB, over the ... memory budget";
               // %s is a file's name in quotes.
               text_format(_("reading %s"), describe(path).c_str()));
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  std::size_t got = 0;
  while (got < bytes.size()) {
    const long long n = platform::read_some(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      // TRANSLATORS: %1$s is a file's name in quotes, %2$s the system's reason.
      throw Error(text_format(_("cannot load %s: read error (%s)"), describe(path).c_str(), std::strerror(e)));
    }
    if (n == 0) break;  // shortened meanwhile: decoded as far as it goes (and refused if cut)
    got += static_cast<std::size_t>(n);
  }
  bytes.resize(got);
  return load_image_from_memory(bytes, describe(path));
}

Image image_from_rgb8(int width, int height, std::span<const std::uint8_t> rgb8) {
  if (width <= 0 || height <= 0 || rgb8.size() != static_cast<size_t>(width) * height * 3)
    // TRANSLATORS: an internal check; image_from_rgb8 is a function's name; %dx%d a width and height in pixels.
    throw Error(text_format(_("image_from_rgb8: size does not match %dx%d"), width, height));
  Image img{width, height, std::vector<float>(rgb8.size())};
  for (size_t i = 0; i < rgb8.size(); ++i) img.rgb[i] = static_cast<float>(rgb8[i]) / 255.0f;
  return img;
}

std::vector<std::uint8_t> encode_png(int width, int height, int channels, std::span<const std::uint8_t> pixels,
                                     const std::string& what) {
  if (width <= 0 || height <= 0 || channels < 1 || channels > 4 ||
      pixels.size() != static_cast<size_t>(width) * height * channels)
    // TRANSLATORS: %s is a file's name in quotes.
    throw Error(text_format(_("cannot write %s: pixel buffer does not match the image size"), what.c_str()));
  std::vector<std::uint8_t> encoded;
  auto sink = [](void* ctx, void* data, int size) {
    auto* out = static_cast<std::vector<std::uint8_t>*>(ctx);
    const auto* p = static_cast<const std::uint8_t*>(data);
    out->insert(out->end(), p, p + size);
  };
  if (!stbi_write_png_to_func(sink, &encoded, width, height, channels, pixels.data(), width * channels))
    throw Error(text_format(_("cannot write %s: PNG encoding failed"), what.c_str()));
  return encoded;
}

void write_png(const std::filesystem::path& path, int width, int height, int channels,
               std::span<const std::uint8_t> pixels, bool overwrite) {
  const std::vector<std::uint8_t> encoded = encode_png(width, height, channels, pixels, describe(path));
  write_file_safely(path, std::span<const char>(reinterpret_cast<const char*>(encoded.data()), encoded.size()),
                    overwrite);
}

std::vector<std::filesystem::path> image_files_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string ext = e.path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (ext == ".jpg" || ext == ".png" || ext == ".jpeg" || ext == ".bmp" || ext == ".tga") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace attnlab
