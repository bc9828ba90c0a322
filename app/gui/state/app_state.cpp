#include "app/gui/state/app_state.hpp"

#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/base/translate.hpp"
#include "core/io/user_config.hpp"

#include <cstdio>
#include <cstdlib>

namespace attnlab::app {

void AppState::show_error(const std::string& message) {
  ui.banner = message;
  ui.banner_since = std::chrono::steady_clock::now();
  commands.redraw();  // the banner sizes itself over two frames (AlwaysAutoResize)
  std::fprintf(stderr, "attnlab: %s\n", message.c_str());  // also in the terminal's (or a log's) history; i18n: English (the program's name)
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

std::filesystem::path config_dir() { return user_config_dir(); }

std::filesystem::path default_export_folder() {
  std::error_code ec;
  const std::filesystem::path pictures = platform::pictures_folder();
  return std::filesystem::absolute(pictures.empty() ? std::filesystem::path("attnlab") : pictures / "attnlab", ec);
}

std::filesystem::path export_folder(const Document& d) { return d.export_dir.empty() ? default_export_folder() : d.export_dir; }

std::filesystem::path make_export_folder(const Document& d) {
  const std::filesystem::path folder = export_folder(d);
  if (!d.export_dir.empty()) return folder;
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  // TRANSLATORS: the folder, and the system's reason.
  if (ec) throw Error(text_format(_("cannot make the folder '%s' for saves: %s"), platform::utf8(folder).c_str(), ec.message().c_str()));
  return folder;
}

}  // namespace attnlab::app
