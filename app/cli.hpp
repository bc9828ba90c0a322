#pragma once
// The headless command line (README, "Command line"): `attnlab row …`, `--help`, `--version`.
// Every bad argument or file is one line on stderr and exit code 2; nothing is written.
#include "core/settings.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace attnlab::app {

/// Exit code for bad arguments or files.
inline constexpr int kExitUsage = 2;

/// Options shared by the commands that compute attention for one image and one query.
struct QueryOptions {
  std::filesystem::path image;
  Settings settings;
  int col = -1, row = -1;  ///< the query patch
  HeadKind head = HeadKind::Colour;
  std::vector<std::array<int, 2>> painted_cells;  ///< for --mask painted:…
};

/// Parses `--image IMG --patch K --query COL,ROW [--head NAME] [--mask MASK]
/// [--pos none|concat|add] [--temperature T] [--lambda L] [--base B] [--power P] [--sincos]
/// [--edge crop|pad] [--seed S]` from args (after the command name). Throws Error naming the
/// first bad argument. `known_extra` lists further `--name value` options the caller handles;
/// their values are returned in `extra`.
QueryOptions parse_query_options(const std::vector<std::string>& args, const std::vector<std::string>& known_extra,
                                 std::vector<std::pair<std::string, std::string>>* extra);

/// Runs the command line. Returns the exit code, or nullopt when the arguments ask for the GUI
/// (no command, or a single image path).
std::optional<int> run_cli(const std::vector<std::string>& args);

/// The window's arguments: `[IMAGE] [--model PATH]` in any order. Throws Error with one line
/// for an unknown option, a second image or --model without a path.
struct GuiArgs {
  std::string image, model;
};
GuiArgs parse_gui_args(const std::vector<std::string>& args);

/// The usage text of the whole program.
std::string usage();

/// The bundled assets folder (assets/ of the source tree, or beside the executable).
std::filesystem::path assets_dir();

}  // namespace attnlab::app
