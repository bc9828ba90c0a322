#include "app/gui/app_state.hpp"

#include <cstdio>
#include <cstdlib>

namespace attnlab::app {

void AppState::show_error(const std::string& message) {
  ui.banner = message;
  ui.banner_since = std::chrono::steady_clock::now();
  commands.redraw();  // the banner sizes itself over two frames (AlwaysAutoResize)
  std::fprintf(stderr, "attnlab: %s\n", message.c_str());  // also in the terminal's (or a log's) history
}

bool Commands::pending(Kind kind) const {
  for (const Command& c : queue_)
    if (c.kind == kind) return true;
  return false;
}

std::optional<Commands::Command> Commands::take(Kind kind) {
  std::optional<Command> latest;
  std::erase_if(queue_, [&](Command& c) {
    if (c.kind != kind) return false;
    latest = std::move(c);
    return true;
  });
  return latest;
}

std::filesystem::path config_dir() {
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return std::filesystem::path(x) / "attnlab";
  if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".config" / "attnlab";
  return std::filesystem::temp_directory_path() / "attnlab-config";
}

}  // namespace attnlab::app
