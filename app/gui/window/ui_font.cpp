#include "app/gui/window/ui_font.hpp"

#include "core/base/platform.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <system_error>

namespace attnlab::app {
namespace {

bool is_file(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

// The first existing of `candidates`, as a chain entry; nullopt-like empty path when none.
UiFontFile first_of(const std::vector<UiFontFile>& candidates) {
  for (const UiFontFile& f : candidates)
    if (!f.path.empty() && is_file(platform::path_from_utf8(f.path))) return f;
  return {};
}

}  // namespace

std::vector<UiFontFile> ui_font_chain() {
  const auto exe = platform::executable_path();
  const auto bundled = exe.empty() ? std::filesystem::path() : exe.parent_path().parent_path() / "share" / "attnlab" / "fonts";
  const auto in_bundle = [&](const char* name) { return bundled.empty() ? std::string() : platform::utf8(bundled / name); };
  std::vector<UiFontFile> latin = {{in_bundle("NotoSans-Regular.ttf"), 0},
                                   {"/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf", 0}};
  std::vector<UiFontFile> symbols = {{in_bundle("DejaVuSans.ttf"), 0}};
  std::vector<UiFontFile> cjk = {{in_bundle("NotoSansCJK-Regular.ttc"), 2},  // face 2: Noto Sans CJK SC
                                 {"/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", 2}};
  // The system's own (Segoe UI on Windows, DejaVu Sans on Linux) as the last resort for each kind.
  for (const auto& f : platform::ui_font_files()) {
    latin.push_back({platform::utf8(f), 0});
    symbols.push_back({platform::utf8(f), 0});
    if (f.filename() == "segoeui.ttf") cjk.push_back({platform::utf8(f.parent_path() / "msyh.ttc"), 0});
  }
  std::vector<UiFontFile> chain;
  for (const auto* kind : {&latin, &symbols, &cjk}) {
    UiFontFile f = first_of(*kind);
    if (f.path.empty()) continue;
    if (std::none_of(chain.begin(), chain.end(), [&](const UiFontFile& c) { return c.path == f.path && c.face == f.face; }))
      chain.push_back(f);
  }
  return chain;
}

const ImWchar* ui_glyph_ranges_for(std::string_view language) {
  // One array per language, kept for the program: ImGui reads a font's ranges when the atlas is
  // built, which may be after another language's array was made.
  static std::mutex m;
  static std::map<std::string, std::vector<ImWchar>, std::less<>> made;
  std::lock_guard lock(m);
  if (auto it = made.find(language); it != made.end()) return it->second.data();
  static const ImWchar fixed[] = {
      0x0020, 0x00FF,  // Basic Latin and Latin-1 Supplement (ImGui's default): × ² ·
      0x0370, 0x03FF,  // Greek: the chapter's τ, λ, α
      0x2000, 0x206F,  // General Punctuation: – — … ‖ (and ImGui's own ellipsis for cut text)
      0x2190, 0x21FF,  // Arrows: → (Model → Gallery)
      0x2200, 0x22FF,  // Mathematical Operators: − ≤ ≥ ≈ √
      0,
  };
  // ImGui's own builder merges the blocks, the catalog's characters and the Language menu's
  // names (every language in its own script) into sorted runs.
  ImFontGlyphRangesBuilder builder;
  builder.AddRanges(fixed);
  for (const char32_t c : catalog_characters(language))
    if (c >= 0x20 && c <= 0xFFFF) builder.AddChar(static_cast<ImWchar>(c));  // ImWchar is 16 bits in Debian's ImGui
  for (const std::string& code : available_languages())
    if (const char* name = language_name(code)) builder.AddText(name);
  ImVector<ImWchar> built;
  builder.BuildRanges(&built);
  std::vector<ImWchar> r(built.begin(), built.end());  // ends with its 0
  return made.emplace(std::string(language), std::move(r)).first->second.data();
}

ImFont* add_ui_font(ImFontAtlas& atlas, float px, std::string_view language) {
  const std::vector<UiFontFile> chain = ui_font_chain();
  if (chain.empty()) return nullptr;
  const ImWchar* ranges = ui_glyph_ranges_for(language);
  ImFont* font = nullptr;
  for (size_t i = 0; i < chain.size(); ++i) {
    ImFontConfig cfg;
    cfg.FontNo = chain[i].face;
    cfg.MergeMode = i > 0;  // glyphs a font before it has are kept (ImGui skips them)
    ImFont* f = atlas.AddFontFromFileTTF(chain[i].path.c_str(), px, &cfg, ranges);
    if (i == 0) font = f;
    if (!f && i == 0) return nullptr;
  }
  return font;
}

}  // namespace attnlab::app
