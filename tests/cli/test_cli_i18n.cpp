// The command line in the class's language (issue 52): the language from LANGUAGE, from LANG
// without a generated locale, and from --lang; its one-line errors, --help and `render`'s
// pictures in it. The expected text is the catalog's own (the .mo files the build made from po/,
// read here through the same gettext), so the tests hold whatever the translators' wording.
#include "command_support.hpp"
#include "core/base/translate.hpp"
#include "core/io/image.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

using namespace attnlab;
using namespace attnlab::testing;

namespace {

CommandRun run(const std::string& args, const std::string& prefix = "") {
  return run_attnlab_binary(ATTNLAB_BINARY, args, "i18n", prefix);
}

const std::vector<std::string> kLanguages = {"de", "es", "fr", "zh_CN"};

// `msgid` in `lang` (read through the build's catalogs), its one %s (or %1$s) replaced by `value`.
std::string in_language(const std::string& lang, const char* msgid, const std::string& value = "") {
  use_language(lang);
  std::string text = tr(msgid);
  use_language("en");
  for (const char* spec : {"%1$s", "%s"})
    if (const auto at = text.find(spec); at != std::string::npos) return text.replace(at, std::strlen(spec), value);
  return text;
}

// The flags a --help text names (--image, --patch …), as a set.
std::set<std::string> flags_in(const std::string& help) {
  std::set<std::string> out;
  const std::regex flag("--[a-z][a-z0-9-]*");
  for (auto it = std::sregex_iterator(help.begin(), help.end(), flag); it != std::sregex_iterator(); ++it) out.insert(it->str());
  return out;
}

TEST(CliLanguage, AMissingImagesErrorIsOneLineInTheLanguageOfLANGUAGE) {
  const std::string args = "row --image missing.jpg --patch 20 --query 1,1";
  const CommandRun en = run(args, "LANGUAGE=en ");
  expect_one_line_error(en, "missing.jpg");
  EXPECT_EQ(en.err, "attnlab: cannot load 'missing.jpg': no such file\n");
  for (const std::string& lang : kLanguages) {
    const std::string want = "attnlab: " + in_language(lang, "cannot load %s: no such file", "'missing.jpg'") + "\n";
    ASSERT_NE(want, en.err) << lang << ": the catalog does not translate the message";
    const CommandRun r = run(args, "LANGUAGE=" + lang + " ");
    expect_one_line_error(r, "missing.jpg");
    EXPECT_EQ(r.err, want) << lang;
    // The same from --lang, and from LANG alone when no such locale is generated on the machine.
    EXPECT_EQ(run(args + " --lang " + lang, "LANGUAGE=en ").err, want) << lang;
    EXPECT_EQ(run(args, "env -u LANGUAGE -u LC_ALL -u LC_MESSAGES LANG=" + lang + ".UTF-8 ").err, want) << lang;
  }
  // A language with no catalog: one line that names it and those there are; nothing else runs.
  const CommandRun none = run(args + " --lang xx");
  expect_one_line_error(none, "'xx'");
  EXPECT_NE(none.err.find("zh_CN"), std::string::npos) << none.err;
  expect_one_line_error(run("row --lang"), "--lang");
}

TEST(CliLanguage, HelpIsTranslatedWithEveryFlagKept) {
  const CommandRun en = run("--help", "LANGUAGE=en ");
  ASSERT_EQ(en.code, 0);
  const std::set<std::string> flags = flags_in(en.out);
  ASSERT_GT(flags.size(), 40u);
  for (const std::string& lang : kLanguages) {
    const CommandRun r = run("--help --lang " + lang);
    ASSERT_EQ(r.code, 0) << lang << r.err;
    EXPECT_NE(r.out, en.out) << lang;
    EXPECT_NE(r.out.find(in_language(lang, "Usage:")), std::string::npos) << lang;
    EXPECT_NE(in_language(lang, "Usage:"), "Usage:") << lang;
    EXPECT_EQ(flags_in(r.out), flags) << lang << ": a flag of the English help is missing or misspelt";
    EXPECT_EQ(run("--help", "LANGUAGE=" + lang + " ").out, r.out) << lang;
    // A command's own --help is the same text.
    EXPECT_EQ(run("render --help --lang " + lang).out, r.out) << lang;
  }
}

TEST(CliLanguage, RenderDrawsTheInterfaceInTheLanguageAsked) {
  const auto dir = std::filesystem::temp_directory_path() / ("attnlab-i18n-render-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto picture = [&](const std::string& lang) {
    const auto png = dir / (lang + ".png");
    const CommandRun r = run("render --view tokenization --size 1024x768 --lang " + lang + " --out '" + png.string() + "'");
    EXPECT_EQ(r.code, 0) << lang << ": " << r.err;
    return load_image(png);
  };
  const Image en = picture("en");
  for (const std::string& lang : {std::string("de"), std::string("zh_CN")}) {
    const Image other = picture(lang);
    ASSERT_EQ(other.width, en.width);
    ASSERT_EQ(other.height, en.height);
    // The photo and the grid are the same; the text differs.
    long differ = 0;
    for (size_t i = 0; i < en.rgb.size(); ++i) differ += std::abs(en.rgb[i] - other.rgb[i]) > 0.1f;
    EXPECT_GT(differ, 2000) << lang << ": the picture looks like the English one";
  }
  std::filesystem::remove_all(dir);
}

// A lesson's caption in two languages (issue 52): `lesson make --caption de::...` after a step, and
// `lesson slides` in each language draws that language's caption under the same picture.
TEST(CliLanguage, ALessonsCaptionIsShownInTheLanguageInUse) {
  const auto dir = std::filesystem::temp_directory_path() / ("attnlab-i18n-lesson-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto q = [](const std::filesystem::path& p) { return "'" + p.string() + "'"; };
  ASSERT_EQ(run("render --view map --size 640x400 --out " + q(dir / "s1.png"), "LANGUAGE=en ").code, 0);
  const std::string lesson = q(dir / "L.attnlab");
  const CommandRun made = run("lesson make --out " + lesson + " --step " + q(dir / "s1.json") +
                                  "::'The *colour* head' --caption 'de::Der *Farb*kopf' --caption 'zh_CN::颜色头'",
                              "LANGUAGE=en ");
  ASSERT_EQ(made.code, 0) << made.err;
  std::map<std::string, Image> slide;
  for (const std::string lang : {"en", "de", "fr", "zh_CN"}) {
    const auto out = dir / ("slides-" + lang);
    const CommandRun r = run("lesson slides " + lesson + " --out " + q(out) + " --lang " + lang);
    ASSERT_EQ(r.code, 0) << lang << ": " << r.err;
    slide[lang] = load_image(out / "step-01.png");
  }
  const auto rows_differ = [](const Image& a, const Image& b, int from, int to) {
    long n = 0;
    for (int y = from; y < to; ++y)
      for (int x = 0; x < a.width; ++x)
        for (int c = 0; c < 3; ++c) n += std::abs(a.at(x, y, c) - b.at(x, y, c)) > 0.1f;
    return n;
  };
  const Image& en = slide["en"];
  ASSERT_GT(en.height, 400);  // the picture, then the caption's strip
  for (const std::string lang : {"de", "zh_CN"}) {
    ASSERT_EQ(slide[lang].width, en.width);
    ASSERT_EQ(slide[lang].height, en.height) << lang;
    EXPECT_GT(rows_differ(en, slide[lang], 400, en.height), 50) << lang << ": the caption is the English one";
  }
  // No French caption: the lesson's first (English) under the French picture.
  EXPECT_EQ(rows_differ(en, slide["fr"], 400, en.height), 0);
  // --caption with no --step before it, or without a language: one line each, nothing written.
  expect_one_line_error(run("lesson make --out " + q(dir / "M.attnlab") + " --caption de::x --step " + q(dir / "s1.json")), "--caption");
  expect_one_line_error(run("lesson make --out " + q(dir / "M.attnlab") + " --step " + q(dir / "s1.json") + " --caption 'Der Kopf'"),
                        "LANG::TEXT");
  EXPECT_FALSE(std::filesystem::exists(dir / "M.attnlab"));
  std::filesystem::remove_all(dir);
}

}  // namespace
