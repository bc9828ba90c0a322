// The dispatcher of the command line (README, "Command line"): row, vit, explain, cka, train, models, video, render, figure, lesson,
// --help, --version. Part of the attnlab program, not of a library: it is the one place that
// sees both the window-free commands (app/commands/) and the headless renderer (app/gui/).
#include "app/cli.hpp"

#include "app/commands/cka_command.hpp"
#include "app/commands/explain_command.hpp"
#include "app/commands/models_command.hpp"
#include "app/commands/options.hpp"
#include "app/commands/row_command.hpp"
#include "app/commands/train_command.hpp"
#include "app/commands/video_command.hpp"
#include "app/commands/vit_command.hpp"
#include "app/gui/output/lesson_commands.hpp"
#include "app/gui/output/render_commands.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>

namespace attnlab::app {
namespace {

/// A command of the command line: its name and what runs it (the arguments after the name).
struct CommandEntry {
  const char* name;
  int (*run)(const std::vector<std::string>&);
};

constexpr CommandEntry kCommands[] = {
    {"row", run_row},     {"render", run_render}, {"figure", run_figure}, {"vit", run_vit},
    {"models", run_models}, {"video", run_video}, {"train", run_train}, {"explain", run_explain},
    {"cka", run_cka},     {"lesson", run_lesson},
};

}  // namespace

std::optional<int> run_cli(const std::vector<std::string>& args) {
  if (args.empty()) return std::nullopt;
  const std::string& cmd = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  try {
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      std::fputs(usage().c_str(), stdout);
      return 0;
    }
    if (cmd == "--version") {
      std::printf("attnlab %s\n", ATTNLAB_VERSION);
      return 0;
    }
    for (const CommandEntry& c : kCommands) {
      if (cmd != c.name) continue;
      if (!rest.empty() && (rest[0] == "--help" || rest[0] == "-h")) {  // each command's help is the whole usage
        std::fputs(usage().c_str(), stdout);
        return 0;
      }
      return c.run(rest);
    }
    const auto gui_flags = gui_flag_names();  // the window's own options: no command, the window's table
    const auto is_gui_option = [&gui_flags](const std::string& a) {
      return std::any_of(gui_flags.begin(), gui_flags.end(), [&a](const CommandFlagName& f) { return f.flag == a; });
    };
    const bool gui_option = is_gui_option(cmd);
    if (cmd.starts_with("-") && !gui_option) throw Error(text_format(_("unknown option '%s' (see attnlab --help)"), cmd.c_str()));
    if (args.size() == 1 && !gui_option) return std::nullopt;  // attnlab IMAGE: the GUI
    if (std::find_if(args.begin(), args.end(), is_gui_option) != args.end()) {
      parse_gui_args(args);  // throws on anything else
      return std::nullopt;
    }
    throw Error(text_format(_("unknown command '%s' (see attnlab --help)"), cmd.c_str()));
  } catch (const std::exception& e) {
    std::string msg = e.what();
    if (const auto nl = msg.find('\n'); nl != std::string::npos) msg = msg.substr(0, nl);
    std::fprintf(stderr, "attnlab: %s\n", msg.c_str());  // i18n: English (the program's name before a message)
    return kExitUsage;
  }
}

}  // namespace attnlab::app
