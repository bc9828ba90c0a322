#include "core/io/user_config.hpp"

#include <cstdlib>

#include "core/base/platform.hpp"

namespace attnlab {

std::filesystem::path user_config_dir() {
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return std::filesystem::path(x) / "attnlab";
  if (auto app_data = platform::roaming_app_data_folder(); !app_data.empty()) return app_data / "attnlab";  // Windows
  if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".config" / "attnlab";
  return std::filesystem::temp_directory_path() / "attnlab-config";
}

}  // namespace attnlab
