#pragma once
// `attnlab render` and `attnlab figure` (README, "Command line"): the app's views drawn without a
// window, for slides, each PNG with a sidecar JSON from which `render --from` redraws it.
#include <filesystem>
#include <string>
#include <vector>

namespace attnlab::app {

/// The names `render --view` accepts: map, heads, and every teaching view.
std::vector<std::string> render_view_names();

/// The names `render --model` and `render --from` of a ViT's sidecar accept: map, vit-grid,
/// vit-rollout, vit-mask, vit-norms and vit-NAME for each view under a ViT's map.
std::vector<std::string> render_vit_view_names();

/// Runs `attnlab render …` (args after the command). Returns the exit code; throws Error for
/// bad arguments or files (the caller prints one line, exit 2).
int run_render(const std::vector<std::string>& args);

/// Draws what the sidecar `from` describes into `out` (a PNG, its sidecar beside it, both
/// replaced) exactly as `attnlab render --from FROM --out OUT --force` does, without its line on
/// stdout (`lesson slides` draws each step so). Throws Error as run_render.
void render_from_quietly(const std::filesystem::path& from, const std::filesystem::path& out);

/// Runs `attnlab figure …`: input, query/key features and one map per query in a row (the
/// layout of fig. 26.12).
int run_figure(const std::vector<std::string>& args);

}  // namespace attnlab::app
