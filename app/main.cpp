// attnlab: the command line when a command is given, otherwise the app's window.
#include "app/cli.hpp"
#include "app/gui/gui.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (auto code = attnlab::app::run_cli(args)) return *code;
    return attnlab::app::run_gui(args.empty() ? std::string() : args[0]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlab: %s\n", e.what());
    return 2;
  }
}
