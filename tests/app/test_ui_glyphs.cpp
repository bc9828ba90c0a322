// Every character the interface can draw is in its font atlas (issue 47: "Model ? Gallery", an
// arrow outside the atlas drawn as ImGui's fallback). The string literals of app/ and core/ are
// read with a small C++ lexer (comments skipped; ordinary, prefixed and raw literals; escapes
// decoded), and each non-ASCII character must be inside the ranges the app builds its atlas with
// (ui_glyph_ranges(), the one list load_ui_font and setup_app_style use) and have a glyph of its
// own in the UI font's file (an ImFontAtlas built here with that file and those ranges).
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <imgui.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "app/gui/window/headless.hpp"
#include "app/gui/window/ui_font.hpp"
#include "core/base/translate.hpp"

namespace {

using attnlab::app::ui_font_file;
using attnlab::app::ui_glyph_ranges;

// A string literal's contents as bytes (escapes decoded, \u and \U as UTF-8) and its line.
struct Literal {
  std::string bytes;
  int line = 0;
};

void append_utf8(std::string& out, std::uint32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The string literals of a C++ source: "…" with an optional encoding prefix (u8, u, U, L) and raw
// strings R"delim(…)delim"; comments (// and /* */) and character literals ('x', '"') skipped, a
// digit separator (1'000) taken as part of its number.
std::vector<Literal> string_literals(const std::string& s) {
  std::vector<Literal> out;
  int line = 1;
  std::size_t i = 0;
  const std::size_t n = s.size();
  auto advance_to = [&](std::size_t j) {
    for (; i < j && i < n; ++i)
      if (s[i] == '\n') ++line;
  };
  while (i < n) {
    const char c = s[i];
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      const std::size_t end = s.find('\n', i);
      advance_to(end == std::string::npos ? n : end);
    } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      const std::size_t end = s.find("*/", i + 2);
      advance_to(end == std::string::npos ? n : end + 2);
    } else if (c == '\'' && i > 0 && hex_value(s[i - 1]) >= 0 && i + 1 < n && hex_value(s[i + 1]) >= 0 &&
               !(i >= 2 && (s[i - 1] == 'u' || s[i - 1] == 'U' || s[i - 1] == 'L') && !is_identifier_char(s[i - 2]))) {
      ++i;  // a digit separator: 1'000, 0xFF'FF
    } else if (c == '\'') {
      std::size_t j = i + 1;
      while (j < n && s[j] != '\'' && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
      advance_to(j + 1);
    } else if (c == '"') {
      // An encoding prefix or R before the quote (not the end of an identifier such as `fooR`).
      std::size_t p = i;
      while (p > 0 && is_identifier_char(s[p - 1])) --p;
      const std::string prefix = s.substr(p, i - p);
      const bool raw = prefix == "R" || prefix == "u8R" || prefix == "uR" || prefix == "UR" || prefix == "LR";
      Literal lit;
      lit.line = line;
      if (raw) {
        const std::size_t open = s.find('(', i + 1);
        const std::string close = ")" + s.substr(i + 1, open - i - 1) + "\"";
        const std::size_t end = s.find(close, open + 1);
        lit.bytes = s.substr(open + 1, end - open - 1);
        advance_to(end + close.size());
      } else {
        std::size_t j = i + 1;
        while (j < n && s[j] != '"' && s[j] != '\n') {
          if (s[j] != '\\' || j + 1 >= n) {
            lit.bytes += s[j++];
            continue;
          }
          const char e = s[j + 1];
          j += 2;
          switch (e) {
            case 'n':
              lit.bytes += '\n';
              break;
            case 't':
              lit.bytes += '\t';
              break;
            case 'r':
              lit.bytes += '\r';
              break;
            case 'x': {
              unsigned v = 0;
              while (j < n && hex_value(s[j]) >= 0) v = v * 16 + static_cast<unsigned>(hex_value(s[j++]));
              lit.bytes += static_cast<char>(v & 0xFF);
              break;
            }
            case 'u':
            case 'U': {
              std::uint32_t v = 0;
              const int digits = e == 'u' ? 4 : 8;
              for (int k = 0; k < digits && j < n && hex_value(s[j]) >= 0; ++k)
                v = v * 16 + static_cast<std::uint32_t>(hex_value(s[j++]));
              append_utf8(lit.bytes, v);
              break;
            }
            default:
              if (e >= '0' && e <= '7') {  // up to three octal digits
                unsigned v = static_cast<unsigned>(e - '0');
                for (int k = 0; k < 2 && j < n && s[j] >= '0' && s[j] <= '7'; ++k)
                  v = v * 8 + static_cast<unsigned>(s[j++] - '0');
                lit.bytes += static_cast<char>(v & 0xFF);
              } else {
                lit.bytes += e;  // \" \\ \' \? and the others: the character itself
              }
          }
        }
        advance_to(j + 1);
      }
      out.push_back(std::move(lit));
    } else {
      advance_to(i + 1);
    }
  }
  return out;
}

// The codepoints of UTF-8 text; a byte that starts no valid sequence is 0xFFFD.
std::vector<std::uint32_t> codepoints(const std::string& text) {
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    const int extra = b < 0x80 ? 0 : (b >> 5) == 6 ? 1 : (b >> 4) == 14 ? 2 : (b >> 3) == 30 ? 3 : -1;
    if (extra < 0 || i + static_cast<std::size_t>(extra) >= text.size()) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    std::uint32_t c = extra == 0 ? b : extra == 1 ? (b & 0x1Fu) : extra == 2 ? (b & 0x0Fu) : (b & 0x07u);
    bool ok = true;
    for (int k = 1; k <= extra; ++k) {
      const auto cb = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
      if ((cb & 0xC0) != 0x80) ok = false;
      c = (c << 6) | (cb & 0x3Fu);
    }
    out.push_back(ok ? c : 0xFFFD);
    i += ok ? static_cast<std::size_t>(extra) + 1 : 1;
  }
  return out;
}

bool in_ranges(const ImWchar* ranges, std::uint32_t c) {
  for (; ranges[0]; ranges += 2)
    if (c >= ranges[0] && c <= ranges[1]) return true;
  return false;
}

std::string utf8_of(std::uint32_t c) {
  std::string s;
  append_utf8(s, c);
  return s;
}

std::string hex(std::uint32_t c) {
  char b[16];
  std::snprintf(b, sizeof b, "U+%04X", c);
  return b;
}

// Where each non-ASCII character of the sources' string literals is used first: "app/x.cpp:12".
std::map<std::uint32_t, std::string> non_ascii_in_sources(int& literals) {
  std::map<std::uint32_t, std::string> out;
  literals = 0;
  const std::filesystem::path root = ATTNLAB_SOURCE_DIR;
  for (const char* top : {"app", "core"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(root / top)) {
      const auto ext = e.path().extension();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".h" && ext != ".inc")) continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      for (const Literal& lit : string_literals(text.str())) {
        ++literals;
        for (const std::uint32_t c : codepoints(lit.bytes))
          if (c >= 0x80 && !out.count(c))
            out[c] = std::filesystem::relative(e.path(), root).string() + ":" + std::to_string(lit.line);
      }
    }
  }
  return out;
}

}  // namespace

// The lexer itself: what it must take and what it must leave.
TEST(UiGlyphs, TheLexerReadsLiteralsAndSkipsComments) {
  const std::string source =
      "// a comment \xE2\x86\x92 \"not a literal\"\n"
      "/* block \"also not\" \xE2\x80\xA6 */ int n = 1'000;\n"
      "const char* a = \"Model \xE2\x86\x92 Gallery\"; char q = '\"'; char r = '\\'';\n"
      "auto b = u8\"x\\u2212y\\\"z\"; auto c = R\"sep(raw \"quoted\" )\" \xC3\x97)sep\";\n"
      "auto d = \"\\xE2\\x80\\xA6\"; auto e = L\"wide\";\n";
  const auto lits = string_literals(source);
  ASSERT_EQ(lits.size(), 5u);
  EXPECT_EQ(lits[0].bytes, "Model \xE2\x86\x92 Gallery");
  EXPECT_EQ(lits[0].line, 3);
  EXPECT_EQ(lits[1].bytes, "x\xE2\x88\x92y\"z");
  EXPECT_EQ(lits[2].bytes, "raw \"quoted\" )\" \xC3\x97");
  EXPECT_EQ(lits[3].bytes, "\xE2\x80\xA6");
  EXPECT_EQ(lits[4].bytes, "wide");
  EXPECT_EQ(codepoints(lits[0].bytes),
            (std::vector<std::uint32_t>{'M', 'o', 'd', 'e', 'l', ' ', 0x2192, ' ', 'G', 'a', 'l', 'l', 'e', 'r', 'y'}));
}

// Every non-ASCII character of a string literal in app/ and core/ is in the atlas's ranges and has
// its own glyph in the UI font (not the fallback).
TEST(UiGlyphs, EveryCharacterOfTheUiStringsIsInTheFontAtlas) {
  int literals = 0;
  const auto used = non_ascii_in_sources(literals);
  EXPECT_GT(literals, 1000) << "the sources' literals were not found under " << ATTNLAB_SOURCE_DIR;
  ASSERT_TRUE(used.count(0xD7)) << "no '\xC3\x97' found: the lexer misses literals it should read";
  const std::string font = ui_font_file();
  ASSERT_FALSE(font.empty()) << "no UI font file (Debian's fonts-noto-core) is installed";
  ImFontAtlas atlas;
  ImFont* f = attnlab::app::add_ui_font(atlas, 16.0f, "en");
  ASSERT_NE(f, nullptr) << font;
  ASSERT_TRUE(atlas.Build()) << font;
  for (const auto& [c, where] : used) {
    EXPECT_TRUE(in_ranges(ui_glyph_ranges(), c)) << hex(c) << " '" << utf8_of(c) << "' (" << where
                                                 << ") is outside the UI font's glyph ranges (ui_glyph_ranges())";
    EXPECT_TRUE(c <= 0xFFFF && f->FindGlyphNoFallback(static_cast<ImWchar>(c)) != nullptr)
        << hex(c) << " '" << utf8_of(c) << "' (" << where << ") has no glyph in the atlas built from " << font;
  }
}

namespace {

// Every character of every catalog's translations (the .mo files the build made from po/) is in
// that language's atlas ranges and has a glyph of its own in the font chain (issue 52: no
// missing-glyph box in German, French, Spanish or Chinese).
TEST(UiGlyphs, EveryCharacterOfEachCatalogIsInItsLanguagesAtlas) {
  const std::vector<std::string> langs = attnlab::available_languages();
  ASSERT_EQ(langs, (std::vector<std::string>{"de", "es", "fr", "zh_CN"}))
      << "the catalogs were not built beside the tests (" << attnlab::locale_folder().string() << ")";
  for (const std::string& lang : langs) {
    const std::vector<char32_t> chars = attnlab::catalog_characters(lang);
    EXPECT_GT(chars.size(), 60u) << lang << ": its catalog holds next to no text";
    ImFontAtlas atlas;
    ImFont* f = attnlab::app::add_ui_font(atlas, 16.0f, lang);
    ASSERT_NE(f, nullptr) << lang;
    ASSERT_TRUE(atlas.Build()) << lang;
    const ImWchar* ranges = attnlab::app::ui_glyph_ranges_for(lang);
    int missing = 0;
    for (const char32_t c : chars) {
      if (c < 0x20) continue;  // line breaks and tabs are not drawn as glyphs
      const bool in = in_ranges(ranges, c);
      const bool drawn = c <= 0xFFFF && f->FindGlyphNoFallback(static_cast<ImWchar>(c)) != nullptr;
      if ((!in || !drawn) && ++missing <= 20)
        ADD_FAILURE() << lang << ": " << hex(c) << " '" << utf8_of(c) << "' is " << (in ? "in the ranges but has no glyph" : "outside the atlas's ranges");
    }
    EXPECT_EQ(missing, 0) << lang << ": characters of its catalog the atlas cannot draw";
  }
  // The Language menu names each language in its own script, whatever the language shown.
  ImFontAtlas atlas;
  ImFont* f = attnlab::app::add_ui_font(atlas, 16.0f, "de");
  ASSERT_TRUE(f && atlas.Build());
  for (const char32_t c : {U'\u7B80', U'\u4F53', U'\u4E2D', U'\u6587', U'\u00F1', U'\u00E7'})
    EXPECT_NE(f->FindGlyphNoFallback(static_cast<ImWchar>(c)), nullptr) << hex(c);
}

}  // namespace
