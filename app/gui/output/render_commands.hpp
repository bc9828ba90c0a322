#pragma once
// `attnlab render` and `attnlab figure` (README, "Command line"): the app's views drawn without a
// window, for slides, each PNG with a sidecar JSON from which `render --from` redraws it.
#include <string>
#include <vector>

namespace attnlab::app {

/// The names `render --view` accepts: map, heads, and every teaching view.
std::vector<std::string> render_view_names();

/// Runs `attnlab render …` (args after the command). Returns the exit code; throws Error for
/// bad arguments or files (the caller prints one line, exit 2).
int run_render(const std::vector<std::string>& args);

/// Runs `attnlab figure …`: input, query/key features and one map per query in a row (the
/// layout of fig. 26.12).
int run_figure(const std::vector<std::string>& args);

}  // namespace attnlab::app
