// Lesson files (issue 51, SPEC §15; core/io/lesson.hpp): a lesson written and read back is the
// same lesson, its first entry is the stored mimetype the desktop's MIME database matches, and
// every hostile file is refused in one line before anything it declares is allocated:
// entries named "../x" or "/x", a declared size far over the real one, a billion entries, a
// caption of 100 MB, a future format version, a photo that is not what its name says.
#include <gtest/gtest.h>


#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "core/io/files.hpp"
#include "core/io/lesson.hpp"
#include "core/io/zip_archive.hpp"
#include "test_support.hpp"

using namespace attnlab;

namespace {

std::vector<std::uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

// A small lesson: two steps on one photo (a few bytes standing for a JPEG: the format does not
// decode photos, the window and `render --from` do).
Lesson sample_lesson() {
  Lesson l;
  l.title = "The giraffe's neck";
  const std::string photo = add_lesson_image(l, bytes_of("not really a jpeg, but bytes"), ".JPG");
  LessonStep a;
  a.title = "One query";
  a.caption = "The *colour* head's row for **one** query: `a_ij`";
  a.state = {{"image", photo}, {"patch", 16}, {"render", {{"view", "map"}, {"width", 800}, {"height", 600}}}};
  a.locked = {"patch"};
  a.hidden = {"pos.P"};
  a.models = {{"vit", "dino", std::string(64, 'a'), "timm/vit_small_patch16_224.dino@0123456789abcdef0123456789abcdef01234567"}};
  LessonStep b = a;
  b.title = "A causal mask";
  b.caption = "- keys after the query\n- are masked";
  b.state["mask"] = {{"kind", "causal"}};
  b.models.clear();
  l.steps = {a, b};
  return l;
}

// The zip of `files` as libzip writes it (names as given, no check).
std::vector<std::uint8_t> zip_of(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<ZipFileToAdd> add;
  for (const auto& [name, data] : files)
    add.push_back({name, std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(data.data()), data.size()), true});
  return zip_bytes(add, "test");
}

std::string lesson_json_text(const Lesson& l) { return lesson_to_json(l).dump(); }

// The one-line message of what read_lesson_bytes throws for `bytes` ("" when it reads).
std::string refusal(const std::vector<std::uint8_t>& bytes, const LessonLimits& limits = {}) {
  try {
    read_lesson_bytes(bytes, "hostile.attnlab", limits);
  } catch (const Error& e) {
    if (std::getenv("SHOW_REFUSALS")) std::printf("refused: %s\n", e.what());
    return e.what();
  }
  return "";
}

void expect_refused(const std::vector<std::uint8_t>& bytes, const std::string& part, const LessonLimits& limits = {}) {
  const std::string why = refusal(bytes, limits);
  EXPECT_NE(why.find(part), std::string::npos) << "refused with: '" << why << "', expected it to say '" << part << "'";
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  EXPECT_TRUE(why.starts_with("hostile.attnlab")) << why;
}

// Little-endian fields of a zip record.
void put16(std::vector<std::uint8_t>& b, std::size_t at, std::uint16_t v) {
  b[at] = static_cast<std::uint8_t>(v), b[at + 1] = static_cast<std::uint8_t>(v >> 8);
}
void put32(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * i));
}
void put64(std::vector<std::uint8_t>& b, std::size_t at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::size_t find_sig(const std::vector<std::uint8_t>& b, std::uint32_t sig, std::size_t from = 0) {
  for (std::size_t i = from; i + 4 <= b.size(); ++i)
    if (b[i] == (sig & 0xff) && b[i + 1] == ((sig >> 8) & 0xff) && b[i + 2] == ((sig >> 16) & 0xff) && b[i + 3] == (sig >> 24)) return i;
  return std::string::npos;
}

}  // namespace

TEST(Lesson, WrittenAndReadBackIsTheSameLesson) {
  const Lesson l = sample_lesson();
  const std::vector<std::uint8_t> bytes = lesson_to_bytes(l);
  const Lesson back = read_lesson_bytes(bytes, "sample.attnlab");
  EXPECT_EQ(back, l);
  EXPECT_EQ(back.steps[0].caption, "The *colour* head's row for **one** query: `a_ij`");
  EXPECT_EQ(back.steps[0].locked, std::vector<std::string>{"patch"});
  ASSERT_EQ(back.steps[0].models.size(), 1u);
  EXPECT_EQ(back.steps[0].models[0].hub, "timm/vit_small_patch16_224.dino@0123456789abcdef0123456789abcdef01234567");
  // The same lesson gives the same bytes (fixed times in the zip).
  EXPECT_EQ(lesson_to_bytes(back), bytes);
}

TEST(Lesson, FirstEntryIsTheStoredMimetypeTheDesktopMatches) {
  const std::vector<std::uint8_t> b = lesson_to_bytes(sample_lesson());
  // packaging/attnlab-lesson.xml: "PK\3\4" at 0, "mimetype" + the type at 30 (ODF's layout:
  // a stored first entry without an extra field).
  ASSERT_GT(b.size(), 100u);
  EXPECT_EQ(std::string(b.begin(), b.begin() + 4), std::string("PK\x03\x04", 4));
  const std::string at30(b.begin() + 30, b.begin() + 30 + 8 + std::strlen(kLessonMimeType));
  EXPECT_EQ(at30, std::string("mimetype") + kLessonMimeType);
}

TEST(Lesson, PhotosAreNamedByTheirSha256AndStoredOnce) {
  Lesson l;
  const std::string a = add_lesson_image(l, bytes_of("photo"), ".png");
  const std::string b = add_lesson_image(l, bytes_of("photo"), ".PNG");
  EXPECT_EQ(a, b);
  EXPECT_EQ(l.images.size(), 1u);
  EXPECT_EQ(a, "images/" + bytes_sha256(bytes_of("photo")) + ".png");
  EXPECT_TRUE(is_lesson_image_name(a));
  for (const char* bad : {"images/../x.jpg", "../images/x.jpg", "/images/x.jpg", "images/abc.jpg", "images\\x.jpg",
                          "lesson.json", "images/0000000000000000000000000000000000000000000000000000000000000000.exe"})
    EXPECT_FALSE(is_lesson_image_name(bad)) << bad;
  EXPECT_THROW(add_lesson_image(l, bytes_of("x"), ".exe"), Error);
}

TEST(Lesson, EntriesNamedOutsideTheLessonAreRefused) {
  const std::string json = lesson_json_text(sample_lesson());
  for (const char* name : {"../evil.jpg", "/etc/evil", "images/../../evil.jpg", "C:\\evil.jpg", "images/x/../../evil"}) {
    SCOPED_TRACE(name);
    expect_refused(zip_of({{"mimetype", kLessonMimeType}, {"lesson.json", json}, {name, "x"}}), "an entry named");
  }
}

TEST(Lesson, ADeclaredSizeOverTheRealOneIsRefusedBeforeAnythingIsAllocated) {
  const Lesson l = sample_lesson();
  std::vector<std::uint8_t> b = lesson_to_bytes(l);
  // lesson.json's uncompressed size, in its local header and in the central directory, set to 3 GB.
  const std::size_t local = find_sig(b, 0x04034b50, 1);  // the second local header: lesson.json's
  ASSERT_NE(local, std::string::npos);
  put32(b, local + 22, 3000000000u);
  const std::size_t central = find_sig(b, 0x02014b50, find_sig(b, 0x02014b50) + 1);  // its central record
  ASSERT_NE(central, std::string::npos);
  put32(b, central + 24, 3000000000u);
  expect_refused(b, "declares 3000000000 bytes");
  // Under the limit but more than the data holds: the read stops at the data's end.
  std::vector<std::uint8_t> c = lesson_to_bytes(l);
  const std::size_t json_size = lesson_to_json(l).dump(2).size() + 1;
  put32(c, local + 22, static_cast<std::uint32_t>(json_size + 1000));
  put32(c, central + 24, static_cast<std::uint32_t>(json_size + 1000));
  EXPECT_NE(refusal(c), "");
}

TEST(Lesson, ABillionEntryArchiveIsRefusedWithinTheMemoryBudget) {
  // A zip64 end of central directory declaring 10^9 entries over a central directory of one.
  std::vector<std::uint8_t> b = lesson_to_bytes(sample_lesson());
  const std::size_t eocd = find_sig(b, 0x06054b50);
  ASSERT_NE(eocd, std::string::npos);
  const std::uint32_t cd_size = static_cast<std::uint32_t>(b[eocd + 12] | b[eocd + 13] << 8 | b[eocd + 14] << 16 | b[eocd + 15] << 24);
  const std::uint32_t cd_offset = static_cast<std::uint32_t>(b[eocd + 16] | b[eocd + 17] << 8 | b[eocd + 18] << 16 | b[eocd + 19] << 24);
  std::vector<std::uint8_t> out(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(eocd));
  const std::size_t z64 = out.size();
  out.resize(z64 + 56 + 20 + 22);
  put32(out, z64, 0x06064b50);
  put64(out, z64 + 4, 44);
  put16(out, z64 + 12, 45);
  put16(out, z64 + 14, 45);
  put64(out, z64 + 24, 1000000000ull);  // entries on this disk
  put64(out, z64 + 32, 1000000000ull);  // entries in all
  put64(out, z64 + 40, cd_size);
  put64(out, z64 + 48, cd_offset);
  const std::size_t loc = z64 + 56;
  put32(out, loc, 0x07064b50);
  put64(out, loc + 8, z64);
  put32(out, loc + 16, 1);
  const std::size_t end = loc + 20;
  put32(out, end, 0x06054b50);
  put16(out, end + 8, 0xffff);
  put16(out, end + 10, 0xffff);
  put32(out, end + 12, 0xffffffffu);
  put32(out, end + 16, 0xffffffffu);
  const std::string why = refusal(out);
  EXPECT_NE(why, "");
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  // And an archive of more entries than a lesson may hold, each real: refused by count.
  std::vector<std::pair<std::string, std::string>> many = {{"mimetype", kLessonMimeType}, {"lesson.json", lesson_json_text(sample_lesson())}};
  for (int i = 0; i < 40; ++i) many.push_back({"images/" + bytes_sha256(bytes_of(std::to_string(i))) + ".png", std::to_string(i)});
  LessonLimits few;
  few.max_entries = 32;
  expect_refused(zip_of(many), "a zip archive of 42 entries, more than the 32", few);
}

TEST(Lesson, ACaptionOf100MBIsRefused) {
  Lesson l = sample_lesson();
  l.steps[0].caption.assign(100u << 20, 'a');
  // lesson.json compresses to little, but declares over 100 MB: refused from its header.
  const std::vector<std::uint8_t> b = lesson_to_bytes(l);
  EXPECT_LT(b.size(), 2u << 20);
  expect_refused(b, "more than the 16777216 it may hold");
  // A caption over the text limit inside a lesson.json under its own: refused by the text limit.
  l.steps[0].caption.assign(100u << 10, 'a');
  expect_refused(lesson_to_bytes(l), "its caption is 102400 bytes, more than the 65536");
}

TEST(Lesson, AFutureFormatVersionIsRefusedSayingSo) {
  nlohmann::json j = lesson_to_json(sample_lesson());
  j["format_version"] = kLessonFormatVersion + 1;
  const Lesson l = sample_lesson();
  std::vector<std::pair<std::string, std::string>> files = {{"mimetype", kLessonMimeType}, {"lesson.json", j.dump()}};
  for (const auto& [name, bytes] : l.images) files.push_back({name, std::string(bytes.begin(), bytes.end())});
  expect_refused(zip_of(files), "written by a newer attnlab");
  j["format_version"] = "one";
  files[1].second = j.dump();
  expect_refused(zip_of(files), "no format_version");
}

TEST(Lesson, WhatALessonHoldsIsCheckedBeforeItIsTrusted) {
  const Lesson l = sample_lesson();
  const std::string photo = l.images.begin()->first;
  const std::string json = lesson_json_text(l);
  // A photo whose bytes are not what its name's SHA-256 says.
  expect_refused(zip_of({{"mimetype", kLessonMimeType}, {"lesson.json", json}, {photo, "other bytes"}}), "does not match its SHA-256");
  // A step naming a photo the lesson does not hold.
  expect_refused(zip_of({{"mimetype", kLessonMimeType}, {"lesson.json", json}}), "which the lesson does not hold");
  // Another type's mimetype, no lesson.json, lesson.json not JSON, not a zip at all.
  expect_refused(zip_of({{"mimetype", "application/epub+zip"}, {"lesson.json", json}}), "its mimetype entry is not");
  expect_refused(zip_of({{"mimetype", kLessonMimeType}}), "no lesson.json");
  expect_refused(zip_of({{"lesson.json", "{not json"}}), "is not JSON");
  expect_refused(bytes_of("just text, no zip"), "not a lesson");
  // A state nested a thousand levels deep (whatever walks it later would overflow its stack).
  nlohmann::json deep = nlohmann::json::array();
  for (int i = 0; i < 1000; ++i) deep = nlohmann::json::array({deep});
  nlohmann::json j = lesson_to_json(l);
  j["steps"][0]["state"]["deep"] = deep;
  std::vector<std::pair<std::string, std::string>> files = {{"mimetype", kLessonMimeType}, {"lesson.json", j.dump()}, {photo, std::string(l.images.begin()->second.begin(), l.images.begin()->second.end())}};
  expect_refused(zip_of(files), "nests deeper");
  // A model entry of the wrong shape.
  j = lesson_to_json(l);
  j["steps"][0]["models"][0]["sha256"] = "xyz";
  files[1].second = j.dump();
  expect_refused(zip_of(files), "is not a SHA-256");
}

// A caption per language (issue 52): kept through the file, the language in use's shown, else the
// lesson's first; a code that names no language refused in one line.
TEST(Lesson, CaptionsInSeveralLanguagesComeBackAndTheCurrentOnesIsShown) {
  Lesson l = sample_lesson();
  l.language = "en";
  l.steps[0].captions = {{"de", "Die Zeile des *Farb*kopfs"}, {"zh_CN", "颜色头的一行"}};
  const std::vector<std::uint8_t> bytes = lesson_to_bytes(l);
  const Lesson back = read_lesson_bytes(bytes, "sample.attnlab");
  EXPECT_EQ(back, l);
  EXPECT_EQ(back.language, "en");
  EXPECT_EQ(caption_in(back.steps[0], "de"), "Die Zeile des *Farb*kopfs");
  EXPECT_EQ(caption_in(back.steps[0], "zh_CN"), "颜色头的一行");
  EXPECT_EQ(caption_in(back.steps[0], "fr"), l.steps[0].caption);  // none in French: the lesson's first
  EXPECT_EQ(caption_in(back.steps[0], "en"), l.steps[0].caption);
  EXPECT_EQ(caption_in(back.steps[1], "de"), l.steps[1].caption);  // a step without others
  // A lesson of before (no language, no captions) reads as it did.
  EXPECT_FALSE(lesson_to_json(sample_lesson()).contains("language"));
  EXPECT_FALSE(lesson_to_json(sample_lesson())["steps"][0].contains("captions"));

  for (const char* code : {"de", "zh_CN", "fil", "pt_BR"}) EXPECT_TRUE(is_caption_language(code)) << code;
  for (const char* code : {"", "d", "DE", "de_de", "de-DE", "../x", "zh_CNN", "deutsch"}) EXPECT_FALSE(is_caption_language(code)) << code;
  const std::string photo = l.images.begin()->first;
  const std::string photo_bytes(l.images.begin()->second.begin(), l.images.begin()->second.end());
  const auto with = [&](const nlohmann::json& j) {
    return zip_of({{"mimetype", kLessonMimeType}, {"lesson.json", j.dump()}, {photo, photo_bytes}});
  };
  nlohmann::json j = lesson_to_json(l);
  j["steps"][0]["captions"]["../../etc"] = "x";
  expect_refused(with(j), "is not a language's code");
  j = lesson_to_json(l);
  j["steps"][0]["captions"]["de"] = 42;
  expect_refused(with(j), "its de is not text");
  j = lesson_to_json(l);
  j["steps"][0]["captions"] = "Der Farbkopf";
  expect_refused(with(j), "captions are not a table");
  j = lesson_to_json(l);
  for (int i = 0; i < 17; ++i) j["steps"][0]["captions"]["l" + std::string(1, static_cast<char>('a' + i))] = "x";
  expect_refused(with(j), "at most 16");
  j = lesson_to_json(l);
  j["language"] = "English";
  expect_refused(with(j), "is not a language's code");
  LessonLimits small;
  small.max_text_bytes = 100;
  j = lesson_to_json(l);
  j["steps"][0]["captions"]["de"] = std::string(200, 'x');
  expect_refused(with(j), "more than the 100", small);
}

TEST(Lesson, WrittenWholeAndNeverOverAFileUnasked) {
  const auto dir = attnlab::testing::temp_dir() / "lesson_write";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto path = dir / "l.attnlab";
  write_lesson(sample_lesson(), path);
  EXPECT_EQ(read_lesson(path), sample_lesson());
  { std::ofstream(dir / "other.attnlab") << "mine"; }
  EXPECT_THROW(write_lesson(sample_lesson(), dir / "other.attnlab"), Error);
  std::ifstream in(dir / "other.attnlab");
  std::string kept;
  std::getline(in, kept);
  EXPECT_EQ(kept, "mine");
  write_lesson(sample_lesson(), dir / "other.attnlab", /*overwrite=*/true);
  EXPECT_EQ(read_lesson(dir / "other.attnlab").title, "The giraffe's neck");
  // Nothing but the two lessons in the folder: no temporary left behind.
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  EXPECT_EQ(n, 2);
  std::filesystem::remove_all(dir);
}
