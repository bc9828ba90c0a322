// Every failure of the image loader, each with a real malformed file made here, and the
// conversions docs/MATH.md states ("Pixels, patches, tokens") (grayscale, alpha, 16-bit).
#include "core/base/error.hpp"
#include "core/io/image.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <stb_image_write.h>

using namespace attnlab;
using namespace attnlab::testing;

namespace {

// Expects load_image to throw an Error whose one-line message contains `part`.
void expect_load_error(const std::filesystem::path& p, const std::string& part) {
  try {
    load_image(p);
    ADD_FAILURE() << "loading " << p << " did not fail";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(part), std::string::npos) << "message: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
    EXPECT_NE(msg.find(p.filename().string()), std::string::npos) << "does not name the file: " << msg;
  }
}

std::string le32(uint32_t v) { return std::string{char(v & 255), char(v >> 8 & 255), char(v >> 16 & 255), char(v >> 24 & 255)}; }
std::string le16(uint32_t v) { return std::string{char(v & 255), char(v >> 8 & 255)}; }

// A BMP header (BITMAPINFOHEADER, 24-bit) claiming width×height pixels, with no pixel data.
std::string bmp_header(uint32_t width, uint32_t height) {
  std::string info = le32(40) + le32(width) + le32(height) + le16(1) + le16(24) + le32(0) + le32(0) + le32(2835) +
                     le32(2835) + le32(0) + le32(0);
  return "BM" + le32(14 + 40) + le32(0) + le32(14 + 40) + info;
}

// A 1×1 PNG, 16 bits per channel RGB, its zlib stream a single stored block.
std::string png16_rgb_1x1(uint16_t r, uint16_t g, uint16_t b) {
  auto be32 = [](uint32_t v) { return std::string{char(v >> 24), char(v >> 16 & 255), char(v >> 8 & 255), char(v & 255)}; };
  auto crc32 = [](const std::string& s) {
    uint32_t c = 0xFFFFFFFFu;
    for (unsigned char ch : s) {
      c ^= ch;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
  };
  auto chunk = [&](const std::string& type, const std::string& data) {
    return be32(static_cast<uint32_t>(data.size())) + type + data + be32(crc32(type + data));
  };
  const std::string raw = {0, char(r >> 8), char(r & 255), char(g >> 8), char(g & 255), char(b >> 8), char(b & 255)};
  uint32_t a = 1, bsum = 0;
  for (unsigned char ch : raw) {
    a = (a + ch) % 65521;
    bsum = (bsum + a) % 65521;
  }
  const std::string zlib = std::string{0x78, 0x01, 0x01, char(raw.size()), 0, char(~raw.size() & 255), char(0xFF)} + raw +
                           be32(bsum << 16 | a);
  const std::string ihdr = be32(1) + be32(1) + std::string{16, 2, 0, 0, 0};
  return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) + chunk("IDAT", zlib) + chunk("IEND", "");
}

}  // namespace

TEST(ImageLoader, LoadsTheSafariPhoto) {
  const Image img = load_image(asset("safari.jpg"));
  EXPECT_EQ(img.width, 500);
  EXPECT_EQ(img.height, 500);
  ASSERT_EQ(img.rgb.size(), 500u * 500u * 3u);
  for (float v : img.rgb) ASSERT_TRUE(v >= 0.0f && v <= 1.0f);
}

TEST(ImageLoader, MissingFile) { expect_load_error(temp_dir() / "no-such-photo.png", "no such file"); }

TEST(ImageLoader, Directory) {
  const auto dir = temp_dir() / "folder.png";
  std::filesystem::create_directories(dir);
  expect_load_error(dir, "directory");
}

TEST(ImageLoader, EmptyFile) {
  const auto p = temp_dir() / "empty.png";
  write_file(p, "");
  expect_load_error(p, "empty");
}

TEST(ImageLoader, TextRenamedPng) {
  const auto p = temp_dir() / "notes.png";
  write_file(p, "These are my lecture notes, not a picture.\n");
  expect_load_error(p, "not an image");
}

TEST(ImageLoader, RandomBytes) {
  const auto p = temp_dir() / "noise.jpg";
  std::string bytes(4096, '\0');
  unsigned x = 12345;
  for (auto& b : bytes) b = static_cast<char>((x = x * 1103515245u + 12345u) >> 24);
  write_file(p, bytes);
  expect_load_error(p, "cannot load");
}

TEST(ImageLoader, TruncatedPng) {
  const auto dir = temp_dir();
  const Image src = random_image(64, 64, 3);
  std::vector<unsigned char> px(src.rgb.size());
  for (size_t n = 0; n < px.size(); ++n) px[n] = static_cast<unsigned char>(src.rgb[n] * 255);
  ASSERT_TRUE(stbi_write_png((dir / "full.png").c_str(), 64, 64, 3, px.data(), 64 * 3));
  EXPECT_NO_THROW(load_image(dir / "full.png"));
  const std::string bytes = read_file(dir / "full.png");
  write_file(dir / "cut.png", bytes.substr(0, bytes.size() / 2));
  expect_load_error(dir / "cut.png", "corrupt or truncated");
}

TEST(ImageLoader, TruncatedJpeg) {
  const auto dir = temp_dir();
  const std::string bytes = read_file(asset("safari.jpg"));
  write_file(dir / "cut.jpg", bytes.substr(0, bytes.size() * 2 / 3));
  expect_load_error(dir / "cut.jpg", "truncated");
}

TEST(ImageLoader, HugeHeaderIsRefusedBeforeDecoding) {
  const auto p = temp_dir() / "huge.bmp";
  write_file(p, bmp_header(100000, 100000));
  expect_load_error(p, "more than the limit");
}

TEST(ImageLoader, ZeroSize) {
  const auto p = temp_dir() / "zero.bmp";
  write_file(p, bmp_header(0, 10));
  expect_load_error(p, "cannot load");
}

TEST(ImageLoader, GrayscaleIsReplicated) {
  const auto p = temp_dir() / "gray.png";
  const unsigned char px[4] = {0, 51, 204, 255};
  ASSERT_TRUE(stbi_write_png(p.c_str(), 2, 2, 1, px, 2));
  const Image img = load_image(p);
  ASSERT_EQ(img.width, 2);
  for (int c = 0; c < 3; ++c) {
    EXPECT_FLOAT_EQ(img.at(1, 0, c), 0.2f);
    EXPECT_FLOAT_EQ(img.at(0, 1, c), 0.8f);
  }
}

TEST(ImageLoader, AlphaIsDropped) {
  const auto p = temp_dir() / "alpha.png";
  const unsigned char px[4] = {255, 0, 102, 0};  // one pixel, fully transparent
  ASSERT_TRUE(stbi_write_png(p.c_str(), 1, 1, 4, px, 4));
  const Image img = load_image(p);  // 1×1 is a valid image
  EXPECT_FLOAT_EQ(img.at(0, 0, 0), 1.0f);
  EXPECT_FLOAT_EQ(img.at(0, 0, 1), 0.0f);
  EXPECT_FLOAT_EQ(img.at(0, 0, 2), 0.4f);
  EXPECT_EQ(img.rgb.size(), 3u);
}

TEST(ImageLoader, SixteenBitKeepsPrecision) {
  const auto dir = temp_dir();
  // A 2×1 binary PGM with maxval 65535: values 0x0102 and 0xFFFF (big-endian).
  write_file(dir / "deep.pgm", std::string("P5\n2 1\n65535\n") + std::string{char(0x01), char(0x02), char(0xFF), char(0xFF)});
  const Image pgm = load_image(dir / "deep.pgm");
  EXPECT_FLOAT_EQ(pgm.at(0, 0, 1), 258.0f / 65535.0f);  // not 1/255: the low byte is kept
  EXPECT_FLOAT_EQ(pgm.at(1, 0, 2), 1.0f);
  // A 1×1 16-bit RGB PNG with value (0x0102, 0x8000, 0xFFFF).
  write_file(dir / "deep.png", png16_rgb_1x1(0x0102, 0x8000, 0xFFFF));
  const Image png = load_image(dir / "deep.png");
  EXPECT_FLOAT_EQ(png.at(0, 0, 0), 258.0f / 65535.0f);
  EXPECT_FLOAT_EQ(png.at(0, 0, 1), 32768.0f / 65535.0f);
  EXPECT_FLOAT_EQ(png.at(0, 0, 2), 1.0f);
}

TEST(ImageLoader, WritePngNeverOverwritesSilently) {
  const auto dir = temp_dir();
  const std::vector<std::uint8_t> px(2 * 2 * 3, 128);
  write_png(dir / "a.png", 2, 2, 3, px);
  EXPECT_EQ(load_image(dir / "a.png").width, 2);
  const std::string before = read_file(dir / "a.png");
  const std::vector<std::uint8_t> other(4 * 4 * 3, 7);
  EXPECT_THROW(write_png(dir / "a.png", 4, 4, 3, other), Error);
  EXPECT_EQ(read_file(dir / "a.png"), before);
  write_png(dir / "a.png", 4, 4, 3, other, /*overwrite=*/true);
  EXPECT_EQ(load_image(dir / "a.png").width, 4);
  EXPECT_THROW(write_png(dir / "missing-folder" / "b.png", 2, 2, 3, px), Error);
  for (const auto& e : std::filesystem::directory_iterator(dir))  // no temporary left behind
    EXPECT_EQ(e.path().filename().string().find(".part"), std::string::npos) << e.path();
}

TEST(ImageLoader, AReasonWithALineBreakStaysOneLine) {
  // Found by fuzz_image_loader: stb names an unknown PNG chunk by its four bytes, here "P6\n1",
  // in its failure reason. The message stays one line, the break shown as \n.
  const std::string bytes = read_file(std::filesystem::path(ATTNLAB_SOURCE_DIR) / "tests/fuzz/regressions/image/png-chunk-name-with-newline");
  try {
    load_image_from_memory(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), "chunk.png");
    ADD_FAILURE() << "a PNG with an unknown critical chunk was loaded";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_NE(msg.find("P6\\n1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("chunk.png"), std::string::npos) << msg;
  }
}

TEST(Errors, MessagesAreOneLineAndOnlyALogAddsLines) {
  EXPECT_STREQ(Error("bad name 'a\nb\tc\x1b[31m'").what(), "bad name 'a\\nb\\tc\\x1b[31m'");
  EXPECT_STREQ(Error("photo-\xc3\xa9t\xc3\xa9.png").what(), "photo-\xc3\xa9t\xc3\xa9.png");  // UTF-8 kept
  EXPECT_STREQ(Error::with_log("shader x\n failed:", "0:1: error\n0:2: error").what(),
               "shader x\\n failed:\n0:1: error\n0:2: error");
}
