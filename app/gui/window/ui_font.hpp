#pragma once
// The UI's font for every script (issue 52): ImGui's atlas (1.86: static, its glyphs chosen when
// it is built) made from a chain of TrueType files merged into one ImFont — Noto Sans for Latin
// and Greek, DejaVu Sans for the arrows and operators Noto Sans lacks, Noto Sans CJK SC for
// Chinese — with the glyph ranges of the language in use: the sources' own characters plus every
// character of its catalog (catalog_characters), so nothing is drawn as a missing-glyph box.
#include <imgui.h>

#include <string>
#include <string_view>
#include <vector>

namespace attnlab::app {

/// One font file of the chain: its path (UTF-8) and its face in a collection (.ttc; 0 otherwise).
struct UiFontFile {
  std::string path;
  int face = 0;
};

/// The files the atlas is built from, first the base font then those merged into it, each the
/// first that exists of its kind: <exe>/../share/attnlab/fonts (the Windows installer's), then
/// Debian's (/usr/share/fonts: fonts-noto-core, fonts-dejavu-core, fonts-noto-cjk), then on
/// Windows Segoe UI and Microsoft YaHei. Empty when none exists (ImGui's built-in font, ASCII only).
std::vector<UiFontFile> ui_font_chain();

/// The codepoints the atlas holds for `language` ("en", "de", "zh_CN"…): pairs of first and last
/// codepoint, inclusive, ending in 0, as ImFontAtlas::AddFontFromFileTTF takes them — Latin-1,
/// Greek, punctuation, arrows and operators (the sources' characters; tests/app/test_ui_glyphs.cpp),
/// the Language menu's names, and the characters of `language`'s catalog. The array lives until
/// the next call for another language.
const ImWchar* ui_glyph_ranges_for(std::string_view language);

/// Adds the chain at `px` pixels to `atlas` with `language`'s ranges; returns the font, or nullptr
/// (atlas untouched) when no file of the chain exists.
ImFont* add_ui_font(ImFontAtlas& atlas, float px, std::string_view language);

}  // namespace attnlab::app
