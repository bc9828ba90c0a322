#pragma once
// Text in the user's language (SPEC §16, issue 52): GNU gettext's catalogs, domain "attnlab",
// looked up in <prefix>/share/locale/<lang>/LC_MESSAGES/attnlab.mo beside the program
// (PREFIX/bin/attnlab and build/bin/attnlab alike). Only messages follow the language: numbers
// keep the C locale's '.' (LC_NUMERIC is never set), and file formats, flags, view names and
// sidecar keys stay English.
//
// Marking text (the keywords po/CMakeLists.txt hands xgettext):
//   _("text")                  the text translated now (gettext);
//   N_("text")                 marked for the catalog, translated later with _(variable) — for tables;
//   tr_n("one", "many", n)     with the plural form the language uses for n (ngettext);
//   tr_c("context", "text")    disambiguated by a context (pgettext), when one English word has two meanings;
//   // TRANSLATORS: ...        a comment on the line before becomes the translators' note (#.).
// A number goes into text with text_format (printf's formats, checked by the compiler and by
// msgfmt --check), never by concatenation, so that a translation may reorder it (%1$s).
// Without gettext (the Windows build, for now) every function returns the English text.
#include <concepts>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlab {

#if defined(__MINGW32__)
// MinGW-w64's C++ uses its C99 printf (__USE_MINGW_ANSI_STDIO), as glibc's: %zu, %lld, %1$d.
#define ATTNLAB_FORMAT_ARG(i) __attribute__((format_arg(i)))
#define ATTNLAB_PRINTF(f, a) __attribute__((format(gnu_printf, f, a)))
#elif defined(__GNUC__)
#define ATTNLAB_FORMAT_ARG(i) __attribute__((format_arg(i)))
#define ATTNLAB_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ATTNLAB_FORMAT_ARG(i)
#define ATTNLAB_PRINTF(f, a)
#endif

/// `msgid` (UTF-8 English) in the current language; `msgid` itself when the catalog lacks it.
/// The result lives as long as the program (gettext's catalog or the literal). "" stays "" (not
/// the catalog's header, as gettext("") would give).
const char* tr(const char* msgid) ATTNLAB_FORMAT_ARG(1);
/// The form of `singular`/`plural` for the count `n` in the current language (ngettext; English:
/// singular for n == 1). `n` is any integer count (an int, a std::size_t): a negative one counts
/// as 0 and one past ngettext's unsigned long (a 64-bit count on Windows, where it is 32 bits)
/// as its largest, so no caller narrows by hand.
template <std::integral Count>
const char* tr_n(const char* singular, const char* plural, Count n) ATTNLAB_FORMAT_ARG(1) ATTNLAB_FORMAT_ARG(2);
/// tr_n's lookup, for the count already narrowed to ngettext's type.
const char* tr_n_count(const char* singular, const char* plural, unsigned long n) ATTNLAB_FORMAT_ARG(1) ATTNLAB_FORMAT_ARG(2);

template <std::integral Count>
const char* tr_n(const char* singular, const char* plural, Count n) {
  using Limits = std::numeric_limits<unsigned long>;
  const unsigned long count = std::cmp_less(n, 0) ? 0 : std::in_range<unsigned long>(n) ? static_cast<unsigned long>(n) : Limits::max();
  return tr_n_count(singular, plural, count);
}
/// `msgid` translated in `context` (pgettext: the catalog key is context "\x04" msgid).
const char* tr_c(const char* context, const char* msgid) ATTNLAB_FORMAT_ARG(2);

/// printf's `format` (C locale: '.' for decimals) filled in, as a std::string. Use with a
/// translated format: text_format(_("patch size K=%d is larger than the image"), K).
std::string text_format(const char* format, ...) ATTNLAB_PRINTF(1, 2);

/// The languages the program has catalogs for, besides English ("en", always first): the folder
/// names under locale_folder() holding LC_MESSAGES/attnlab.mo, sorted ("de", "es", "fr", "zh_CN").
std::vector<std::string> available_languages();

/// Chooses the language of all later text. `code` is a catalog's language ("de", "zh_CN"; "de_DE.UTF-8"
/// and "de_AT" find "de"), "en" for English, or "" for the environment's choice: the first of
/// LANGUAGE's list (colon-separated), LC_ALL, LC_MESSAGES, LANG that has a catalog (on Windows,
/// the user's UI language after LANGUAGE). A code without a catalog gives English. Not thread-safe
/// against concurrent tr(): call between frames or before threads start. Returns the language in
/// use ("en" or one of available_languages()).
std::string use_language(std::string_view code = "");

/// The language in use: "en" or one of available_languages() (this thread's copy, until its next call).
const std::string& current_language();

/// The language's own name for the Language menu ("Deutsch", "简体中文"); nullptr when unknown.
const char* language_name(std::string_view code);

/// Where catalogs are looked for: $ATTNLAB_LOCALEDIR when set, else <exe>/../share/locale.
std::filesystem::path locale_folder();

/// Every character (Unicode codepoints, sorted, unique) of the translations in `code`'s catalog,
/// read from its .mo file (GNU MO format: the translated strings' table); empty for "en" or a
/// missing or malformed catalog. The UI's font atlas is built with them (issue 52).
std::vector<char32_t> catalog_characters(std::string_view code);

}  // namespace attnlab

/// The keywords (see above). Macros, as gettext's convention is: xgettext finds them by name.
#define _(msgid) ::attnlab::tr(msgid)
#define N_(msgid) msgid
