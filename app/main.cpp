// attnlab: the command line when a command is given, otherwise the app's window.
#include "app/cli.hpp"
#include "app/commands/options.hpp"
#include "app/gui/shell/gui.hpp"
#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/base/translate.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

// Takes `--lang CODE` (or --lang=CODE) out of `args`, for every command and the window alike
// (issue 52): the language of all the program's text. Returns CODE, "" when not given. Throws
// Error when CODE is missing or no catalog has it.
std::string take_language(std::vector<std::string>& args) {
  std::string code;
  bool given = false;
  for (auto it = args.begin(); it != args.end();) {
    if (*it == "--lang") {
      if (it + 1 == args.end()) throw attnlab::Error(_("--lang needs a language code (en, de, es, fr, zh_CN)"));
      code = *(it + 1);
      it = args.erase(it, it + 2);
      given = true;
    } else if (it->starts_with("--lang=")) {
      code = it->substr(7);
      it = args.erase(it);
      given = true;
    } else {
      ++it;
    }
  }
  if (!given) return {};
  if (attnlab::use_language(code) == "en" && code.substr(0, 2) != "en") {
    std::string have = "en";
    for (const std::string& l : attnlab::available_languages()) have += ", " + l;
    throw attnlab::Error(attnlab::text_format(_("no translation for language '%s' (there are: %s)"), code.c_str(), have.c_str()));
  }
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  attnlab::platform::keep_freed_memory_for_reuse();  // before the first allocation that matters
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    attnlab::use_language();  // the environment's (LANGUAGE, LC_ALL, LC_MESSAGES, LANG)
    const std::string language = take_language(args);
    if (auto code = attnlab::app::run_cli(args)) return *code;
    auto gui = attnlab::app::parse_gui_args(args);
    gui.language = language;
    return attnlab::app::run_gui(gui);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlab: %s\n", e.what());  // i18n: English (the program's name before a message)
    return 2;
  }
}
