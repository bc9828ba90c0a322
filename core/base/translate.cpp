// GNU gettext behind tr()/tr_n()/tr_c() (translate.hpp). The language is resolved here, not left
// to gettext's own rules, so that it is the same on every machine: gettext ignores LANGUAGE
// under the C locale and needs a generated locale for LANG=de_DE.UTF-8, while a classroom
// machine has neither; so LC_MESSAGES is set from the environment when that locale exists and
// to C.UTF-8 otherwise, and LANGUAGE is set to the one catalog chosen.
#include "core/base/translate.hpp"

#include "core/base/platform.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <clocale>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <system_error>

#if defined(ATTNLAB_HAVE_GETTEXT)
#include <libintl.h>
// glibc's and GNU libintl's catalog generation counter: incremented, it makes gettext drop its
// cache of looked-up messages after LANGUAGE changes (the gettext manual, "Being a gettext grok").
extern "C" int _nl_msg_cat_cntr;
#endif
#ifdef _WIN32
#include <windows.h>
#endif

namespace attnlab {
namespace {

constexpr const char* kDomain = "attnlab";

// The language in use, written by use_language() (the window's thread, between frames) while
// the scheduler's workers may be translating an error: the code under a mutex, and whether it
// is English (no catalog to ask) as an atomic for tr()'s fast path.
std::mutex& language_mutex() {
  static std::mutex m;
  return m;
}

std::string& language_in_use() {  // under language_mutex()
  static std::string lang = "en";
  return lang;
}

std::atomic<bool>& english() {
  static std::atomic<bool> yes{true};
  return yes;
}

// "de_DE.UTF-8@euro" → "de_DE"; "C", "POSIX" and "" → "".
std::string strip_locale(std::string_view name) {
  std::string s(name.substr(0, name.find_first_of(".@")));
  if (s == "C" || s == "POSIX") return {};
  return s;
}

// The catalog for `code` among `have`: "de_AT" → "de_AT" or else "de"; "en…" → "en".
std::string catalog_for(const std::string& code, const std::vector<std::string>& have) {
  if (code.empty()) return {};
  const std::string base = code.substr(0, code.find('_'));
  if (base == "en") return "en";
  if (std::find(have.begin(), have.end(), code) != have.end()) return code;
  if (std::find(have.begin(), have.end(), base) != have.end()) return base;
  // "zh" alone finds the one Chinese catalog there is.
  for (const std::string& h : have)
    if (h.substr(0, h.find('_')) == code) return h;
  return {};
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

#ifdef _WIN32
// The user's UI language as "ll_CC" (GetUserDefaultUILanguage).
std::string windows_ui_language() {
  const LCID lcid = MAKELCID(GetUserDefaultUILanguage(), SORT_DEFAULT);
  char lang[16] = {}, country[16] = {};
  if (!GetLocaleInfoA(lcid, LOCALE_SISO639LANGNAME, lang, sizeof lang)) return {};
  GetLocaleInfoA(lcid, LOCALE_SISO3166CTRYNAME, country, sizeof country);
  return country[0] ? std::string(lang) + "_" + country : std::string(lang);
}
#endif

// LANGUAGE as the user set it. use_language() sets LANGUAGE to its choice (gettext reads it), so
// a value equal to the one it last set stands for the user's earlier value.
struct LanguageVariable {
  std::string set_by_us, users;
  bool set = false;
};

LanguageVariable& language_variable() {
  static LanguageVariable v;
  return v;
}

std::string users_language_variable() {
  LanguageVariable& v = language_variable();
  const char* now = std::getenv("LANGUAGE");
  if (!v.set || !now || v.set_by_us != now) {
    v.users = now ? now : "";
    v.set = false;
  }
  return v.users;
}

// The environment's choice (use_language("")): LANGUAGE's list, then the locale variables.
std::vector<std::string> environment_choices(const std::string& list) {
  std::vector<std::string> out;
  for (size_t at = 0; at <= list.size();) {
    const size_t colon = std::min(list.find(':', at), list.size());
    if (colon > at) out.push_back(strip_locale(std::string_view(list).substr(at, colon - at)));
    at = colon + 1;
  }
#ifdef _WIN32
  out.push_back(windows_ui_language());
#endif
  for (const char* v : {"LC_ALL", "LC_MESSAGES", "LANG"}) {
    const std::string value = env(v);
    if (value.empty()) continue;
    out.push_back(strip_locale(value));
    break;  // the first set one is the locale's; later ones do not count (POSIX)
  }
  return out;
}

#if defined(ATTNLAB_HAVE_GETTEXT)
void bind_catalogs() {
  static std::once_flag once;
  std::call_once(once, [] {
    bindtextdomain(kDomain, platform::utf8(locale_folder()).c_str());
    bind_textdomain_codeset(kDomain, "UTF-8");
  });
}
#endif

std::uint32_t read_u32(const std::string& bytes, size_t at, bool swap) {
  std::uint32_t v = 0;
  std::memcpy(&v, bytes.data() + at, 4);
  if (swap) v = (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
  return v;
}

// Appends the codepoints of UTF-8 `s` (invalid bytes skipped).
void add_codepoints(std::string_view s, std::vector<char32_t>& out) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int extra = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    if (extra < 0 || i + static_cast<size_t>(extra) >= s.size()) {
      ++i;
      continue;
    }
    char32_t cp = extra == 0 ? c : c & (0x3f >> extra);
    bool ok = true;
    for (int k = 1; k <= extra; ++k) {
      const auto b = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
      if ((b & 0xc0) != 0x80) ok = false;
      cp = (cp << 6) | (b & 0x3f);
    }
    i += ok ? static_cast<size_t>(extra) + 1 : 1;
    if (ok) out.push_back(cp);
  }
}

}  // namespace

const char* tr(const char* msgid) {
#if defined(ATTNLAB_HAVE_GETTEXT)
  // "" is the catalog's header's key: an empty text stays empty.
  return english().load(std::memory_order_acquire) || !*msgid ? msgid : dgettext(kDomain, msgid);
#else
  return msgid;
#endif
}

const char* tr_n_count(const char* singular, const char* plural, unsigned long n) {
#if defined(ATTNLAB_HAVE_GETTEXT)
  if (!english().load(std::memory_order_acquire)) return dngettext(kDomain, singular, plural, n);
#endif
  return n == 1 ? singular : plural;
}

const char* tr_c(const char* context, const char* msgid) {
#if defined(ATTNLAB_HAVE_GETTEXT)
  if (english().load(std::memory_order_acquire) || !*msgid) return msgid;
  // The catalog's key is context "\x04" msgid; gettext returns its argument when the key is
  // missing, so the key must outlive the answer: kept, one per (language, key), for the program.
  static std::mutex m;
  static std::map<std::string, std::string> keys;
  std::string key = std::string(context) + '\x04' + msgid;
  std::string lang;
  {
    std::lock_guard lock(language_mutex());
    lang = language_in_use();
  }
  std::lock_guard lock(m);
  auto [at, added] = keys.try_emplace(lang + '\x04' + key, key);
  const char* found = dgettext(kDomain, at->second.c_str());
  return found == at->second.c_str() ? msgid : found;
#else
  (void)context;
  return msgid;
#endif
}

std::string text_format(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  // Unqualified: on Windows libintl.h makes it libintl_vsnprintf, which takes a translation's
  // positional %1$d as glibc's does.
  const int n = vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string out;
  if (n > 0) {
    out.resize(static_cast<size_t>(n));
    vsnprintf(out.data(), out.size() + 1, format, again);
  }
  va_end(again);
  return out;
}

std::filesystem::path locale_folder() {
  if (const std::string v = env("ATTNLAB_LOCALEDIR"); !v.empty()) return platform::path_from_utf8(v);
  const auto exe = platform::executable_path();
  if (exe.empty()) return "locale";
  return exe.parent_path().parent_path() / "share" / "locale";
}

std::vector<std::string> available_languages() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(locale_folder(), ec)) {
    std::error_code e2;
    if (std::filesystem::is_regular_file(entry.path() / "LC_MESSAGES" / "attnlab.mo", e2))
      out.push_back(platform::utf8(entry.path().filename()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string use_language(std::string_view code) {
  const std::vector<std::string> have = available_languages();
  std::string chosen;
  if (!code.empty()) {
    chosen = catalog_for(strip_locale(code), have);
  } else {
    for (const std::string& c : environment_choices(users_language_variable())) {
      chosen = catalog_for(c, have);
      if (!chosen.empty()) break;
    }
  }
  if (chosen.empty()) chosen = "en";
#if defined(ATTNLAB_HAVE_GETTEXT)
  bind_catalogs();
  textdomain(kDomain);
  // Messages only: the environment's LC_MESSAGES when that locale is generated, else C.UTF-8
  // (under which gettext honours LANGUAGE, unlike under "C").
  const char* set = ::setlocale(LC_MESSAGES, "");
  if (!set || std::strcmp(set, "C") == 0 || std::strcmp(set, "POSIX") == 0) ::setlocale(LC_MESSAGES, "C.UTF-8");
  users_language_variable();  // remembers the user's value before it is replaced
#ifdef _WIN32
  _putenv_s("LANGUAGE", chosen.c_str());
#else
  setenv("LANGUAGE", chosen.c_str(), 1);
#endif
  language_variable().set_by_us = chosen;
  language_variable().set = true;
  ++_nl_msg_cat_cntr;
#endif
  {
    std::lock_guard lock(language_mutex());
    language_in_use() = chosen;
  }
  english().store(chosen == "en", std::memory_order_release);
  return chosen;
}

const std::string& current_language() {
  // A copy per thread, so that the reference stays whole while another thread switches.
  thread_local std::string copy;
  std::lock_guard lock(language_mutex());
  copy = language_in_use();
  return copy;
}

const char* language_name(std::string_view code) {
  static constexpr std::array<std::pair<const char*, const char*>, 5> kNames = {{
      {"en", "English"}, {"de", "Deutsch"}, {"es", "Español"}, {"fr", "Français"}, {"zh_CN", "简体中文"},
  }};
  for (const auto& [c, name] : kNames)
    if (code == c) return name;
  return nullptr;
}

std::vector<char32_t> catalog_characters(std::string_view code) {
  std::vector<char32_t> out;
  if (code.empty() || code == "en") return out;
  const auto path = locale_folder() / platform::path_from_utf8(std::string(code)) / "LC_MESSAGES" / "attnlab.mo";
  std::ifstream in(path, std::ios::binary);
  if (!in) return out;
  constexpr std::streamsize kMaxBytes = 64 << 20;  // a catalog is well under a megabyte
  std::string bytes;
  bytes.resize(static_cast<size_t>(kMaxBytes) + 1);
  in.read(bytes.data(), kMaxBytes + 1);
  const auto got = static_cast<size_t>(in.gcount());
  if (got > static_cast<size_t>(kMaxBytes) || got < 28) return out;
  bytes.resize(got);
  // GNU MO: magic 0x950412de (either byte order), revision, N, offset of the originals' table,
  // offset of the translations' table; each table entry is (length, offset).
  std::uint32_t magic = 0;
  std::memcpy(&magic, bytes.data(), 4);
  const bool swap = magic == 0xde120495u;
  if (!swap && magic != 0x950412deu) return out;
  const std::uint64_t n = read_u32(bytes, 8, swap), table = read_u32(bytes, 16, swap);
  if (table + n * 8 > got) return out;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t len = read_u32(bytes, static_cast<size_t>(table + i * 8), swap);
    const std::uint64_t at = read_u32(bytes, static_cast<size_t>(table + i * 8 + 4), swap);
    if (at + len > got) return {};
    add_codepoints(std::string_view(bytes).substr(static_cast<size_t>(at), static_cast<size_t>(len)), out);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace attnlab
