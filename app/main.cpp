// attnlab: the command line when a command is given, otherwise the app's window.
#include "app/cli.hpp"
#include "app/commands/options.hpp"
#include "app/gui/shell/gui.hpp"
#include "core/base/platform.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  attnlab::platform::keep_freed_memory_for_reuse();  // before the first allocation that matters
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (auto code = attnlab::app::run_cli(args)) return *code;
    const auto gui = attnlab::app::parse_gui_args(args);
    return attnlab::app::run_gui(gui);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlab: %s\n", e.what());
    return 2;
  }
}
