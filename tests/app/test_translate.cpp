// Text in the user's language (core/base/translate.hpp, issue 52): a catalog made here with
// msgfmt from a small .po (so the test does not depend on the shipped translations' wording),
// the language chosen from a code and from the environment as translate.hpp documents it,
// plural forms by the catalog's own rule, contexts, and the characters the font atlas needs.
#include "core/base/translate.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include <unistd.h>

namespace fs = std::filesystem;
using namespace attnlab;

namespace {

const char* kGermanPo = R"po(msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\n"

msgid "the image is empty"
msgstr "das Bild ist leer"

msgid "%d token"
msgid_plural "%d tokens"
msgstr[0] "%d Token"
msgstr[1] "%d Tokens"

msgctxt "keyboard"
msgid "Key"
msgstr "Taste"

msgctxt "attention"
msgid "Key"
msgstr "Key"

msgid "patch size K=%d is larger than the image (%dx%d)"
msgstr "Patch-Größe K=%1$d ist größer als das Bild (%2$d×%3$d)"
)po";

const char* kFrenchPo = R"po(msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"
"Plural-Forms: nplurals=2; plural=(n > 1);\n"

msgid "the image is empty"
msgstr "l’image est vide"

msgid "%d token"
msgid_plural "%d tokens"
msgstr[0] "%d jeton"
msgstr[1] "%d jetons"
)po";

const char* kChinesePo = R"po(msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"
"Plural-Forms: nplurals=1; plural=0;\n"

msgid "the image is empty"
msgstr "图像为空"

msgid "%d token"
msgid_plural "%d tokens"
msgstr[0] "%d 个词元"
)po";

class Translate : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("attnlab_translate_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    for (const auto& [lang, po] : std::map<std::string, const char*>{{"de", kGermanPo}, {"fr", kFrenchPo}, {"zh_CN", kChinesePo}}) {
      const fs::path out = dir_ / lang / "LC_MESSAGES";
      fs::create_directories(out);
      std::ofstream(dir_ / (lang + ".po")) << po;
      const std::string cmd = "msgfmt --check -o '" + (out / "attnlab.mo").string() + "' '" + (dir_ / (lang + ".po")).string() + "'";
      ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    }
    for (const char* v : {"ATTNLAB_LOCALEDIR", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"}) {
      const char* was = std::getenv(v);
      saved_[v] = was ? std::optional<std::string>(was) : std::nullopt;
      unsetenv(v);
    }
    setenv("ATTNLAB_LOCALEDIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    for (const auto& [v, was] : saved_) {
      if (was) setenv(v.c_str(), was->c_str(), 1);
      else unsetenv(v.c_str());
    }
    use_language("en");
    fs::remove_all(dir_);
  }
  fs::path dir_;
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST_F(Translate, ACodeChoosesItsCatalogAndEnglishIsTheMessageItself) {
  EXPECT_EQ(available_languages(), (std::vector<std::string>{"de", "fr", "zh_CN"}));
  EXPECT_EQ(use_language("de"), "de");
  EXPECT_STREQ(_("the image is empty"), "das Bild ist leer");
  EXPECT_STREQ(_("a message no catalog has"), "a message no catalog has");
  const char* empty = "";  // gettext("") is the catalog's header; an empty label must stay empty
  EXPECT_STREQ(_(empty), "");
  EXPECT_STREQ(tr_c("menu", empty), "");
  EXPECT_EQ(use_language("zh_CN"), "zh_CN");
  EXPECT_STREQ(_("the image is empty"), "图像为空");
  EXPECT_EQ(current_language(), "zh_CN");
  EXPECT_EQ(use_language("en"), "en");
  EXPECT_STREQ(_("the image is empty"), "the image is empty");
  // A region or codeset finds the language's catalog; "zh" finds the one Chinese there is.
  EXPECT_EQ(use_language("de_AT.UTF-8"), "de");
  EXPECT_EQ(use_language("zh"), "zh_CN");
  EXPECT_EQ(use_language("fr_CA"), "fr");
  // A language without a catalog is English, not the previous language.
  EXPECT_EQ(use_language("pt_BR"), "en");
  EXPECT_STREQ(_("the image is empty"), "the image is empty");
}

TEST_F(Translate, PluralFormsFollowEachLanguagesRule) {
  use_language("de");  // n != 1
  EXPECT_EQ(text_format(tr_n("%d token", "%d tokens", 1), 1), "1 Token");
  EXPECT_EQ(text_format(tr_n("%d token", "%d tokens", 0), 0), "0 Tokens");
  use_language("fr");  // n > 1: zero is singular in French
  EXPECT_EQ(text_format(tr_n("%d token", "%d tokens", 0), 0), "0 jeton");
  EXPECT_EQ(text_format(tr_n("%d token", "%d tokens", 2), 2), "2 jetons");
  use_language("zh_CN");  // one form
  EXPECT_EQ(text_format(tr_n("%d token", "%d tokens", 5), 5), "5 个词元");
  use_language("en");
  EXPECT_EQ(text_format(tr_n("%d token", "%d tokens", 1), 1), "1 token");
  EXPECT_EQ(text_format(tr_n("%d token", "%d tokens", 0), 0), "0 tokens");
}

// tr_n takes a count of any integer type and narrows it to ngettext's unsigned long itself: a
// negative count is 0 (not 2^64 - 1, which French would make plural), and a std::size_t past 32
// bits stays plural where unsigned long has 32 bits (Windows), never wrapping to 1.
TEST_F(Translate, ACountOfAnyIntegerTypeChoosesTheFormOfItsValue) {
  use_language("fr");  // n > 1 is plural: 0 and 1 are singular
  EXPECT_EQ(text_format(tr_n("%d token", "%d tokens", -1), 0), "0 jeton");
  EXPECT_EQ(text_format(tr_n("%d token", "%d tokens", std::numeric_limits<long long>::min()), 0), "0 jeton");
  EXPECT_EQ(text_format(tr_n("%d token", "%d tokens", std::size_t{1}), 1), "1 jeton");
  EXPECT_EQ(text_format(tr_n("%d token", "%d tokens", std::size_t{2}), 2), "2 jetons");
  EXPECT_EQ(text_format(tr_n("%d token", "%d tokens", (std::uint64_t{1} << 32) + 1), 2), "2 jetons");
  EXPECT_EQ(text_format(tr_n("%d token", "%d tokens", std::numeric_limits<std::uint64_t>::max()), 2), "2 jetons");
  EXPECT_EQ(text_format(tr_n("%d token", "%d tokens", static_cast<short>(1)), 1), "1 jeton");
  use_language("en");
  EXPECT_EQ(text_format(tr_n("%d token", "%d tokens", -1), 0), "0 tokens");
  EXPECT_EQ(text_format(tr_n("%d token", "%d tokens", std::size_t{1}), 1), "1 token");
}

TEST_F(Translate, AContextSeparatesTwoMeaningsAndATranslationMayReorderItsNumbers) {
  use_language("de");
  EXPECT_STREQ(tr_c("keyboard", "Key"), "Taste");
  EXPECT_STREQ(tr_c("attention", "Key"), "Key");
  EXPECT_STREQ(tr_c("unknown context", "Key"), "Key");
  EXPECT_EQ(text_format(_("patch size K=%d is larger than the image (%dx%d)"), 40, 30, 20),
            "Patch-Größe K=40 ist größer als das Bild (30×20)");
  // Numbers keep the C locale's decimal point whatever the language (SPEC §16).
  EXPECT_EQ(text_format("%.2f", 0.5), "0.50");
}

TEST_F(Translate, TheEnvironmentChoosesAsGettextDoesEvenWithoutGeneratedLocales) {
  setenv("LANG", "de_DE.UTF-8", 1);  // no such locale need exist on this machine
  EXPECT_EQ(use_language(), "de");
  EXPECT_STREQ(_("the image is empty"), "das Bild ist leer");
  setenv("LC_MESSAGES", "fr_FR.UTF-8", 1);  // LC_MESSAGES before LANG
  EXPECT_EQ(use_language(), "fr");
  setenv("LC_ALL", "zh_CN.UTF-8", 1);  // LC_ALL before both
  EXPECT_EQ(use_language(), "zh_CN");
  setenv("LANGUAGE", "pt:de:fr", 1);  // LANGUAGE's list first; the first with a catalog
  EXPECT_EQ(use_language(), "de");
  setenv("LANGUAGE", "pt", 1);  // nothing in LANGUAGE: the locale's
  EXPECT_EQ(use_language(), "zh_CN");
  unsetenv("LANGUAGE");
  setenv("LC_ALL", "C", 1);
  EXPECT_EQ(use_language(), "en");
  // A code given (--lang, the Language menu) wins over the environment.
  setenv("LANGUAGE", "fr", 1);
  EXPECT_EQ(use_language("de"), "de");
  EXPECT_STREQ(_("the image is empty"), "das Bild ist leer");
}

TEST_F(Translate, TheCatalogsCharactersAreEveryCharacterOfItsTranslations) {
  const std::vector<char32_t> zh = catalog_characters("zh_CN");
  for (const char32_t c : {U'图', U'像', U'为', U'空', U'个', U'词', U'元', U'%', U'd'})
    EXPECT_TRUE(std::binary_search(zh.begin(), zh.end(), c)) << static_cast<unsigned>(c);
  EXPECT_TRUE(std::is_sorted(zh.begin(), zh.end()));
  EXPECT_EQ(std::adjacent_find(zh.begin(), zh.end()), zh.end());
  const std::vector<char32_t> de = catalog_characters("de");
  EXPECT_TRUE(std::binary_search(de.begin(), de.end(), U'ö'));
  EXPECT_TRUE(std::binary_search(de.begin(), de.end(), U'×'));
  EXPECT_FALSE(std::binary_search(de.begin(), de.end(), U'图'));
  EXPECT_TRUE(catalog_characters("en").empty());
  EXPECT_TRUE(catalog_characters("pt").empty());
  // A truncated or foreign file is no catalog: no characters, no crash.
  const fs::path mo = dir_ / "fr" / "LC_MESSAGES" / "attnlab.mo";
  std::string bytes;
  {
    std::ifstream in(mo, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(mo, std::ios::binary | std::ios::trunc) << bytes.substr(0, 40);
  EXPECT_TRUE(catalog_characters("fr").empty());
  std::ofstream(mo, std::ios::binary | std::ios::trunc) << "not a catalog at all, just text";
  EXPECT_TRUE(catalog_characters("fr").empty());
}

TEST_F(Translate, LanguageNamesAreInTheirOwnScript) {
  EXPECT_STREQ(language_name("de"), "Deutsch");
  EXPECT_STREQ(language_name("zh_CN"), "简体中文");
  EXPECT_STREQ(language_name("en"), "English");
  EXPECT_EQ(language_name("xx"), nullptr);
}

}  // namespace
