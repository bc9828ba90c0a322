#pragma once
// The headless command line (README, "Command line"): `attnlab row …`, `vit …`, `render …`,
// `figure …`, `--help`, `--version`. The commands themselves are in app/commands/ (row, vit,
// the shared options) and app/gui/output/render_commands (render, figure); this only dispatches.
// Every bad argument or file is one line on stderr and exit code 2; nothing is written.
#include <optional>
#include <string>
#include <vector>

namespace attnlab::app {

/// Runs the command line. Returns the exit code, or nullopt when the arguments ask for the GUI
/// (no command, or a single image path).
std::optional<int> run_cli(const std::vector<std::string>& args);

}  // namespace attnlab::app
