// Issue 38: a remembered settings.json that cannot be read at start is reported and kept as it
// is; the session's settings are saved beside it (before: written over with the defaults).
#include "app/gui/shell/app.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include <unistd.h>

using namespace attnlab::app;
namespace fs = std::filesystem;

namespace {

std::string text_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST(SettingsKept, AnInvalidSettingsFileIsNeverWrittenOver) {
  const fs::path home = fs::temp_directory_path() / ("attnlab-settings-" + std::to_string(::getpid()));
  fs::remove_all(home);
  fs::create_directories(home / "attnlab");
  const char* old = std::getenv("XDG_CONFIG_HOME");
  const std::string saved_env = old ? old : "";
  ::setenv("XDG_CONFIG_HOME", home.c_str(), 1);
  const std::string mine = "{\"classroom\": {\"panels\": {\"diagnostics\": tru";  // cut short while editing
  std::ofstream(home / "attnlab" / "settings.json") << mine;

  AppState state = initial_state(nullptr, std::nullopt);
  EXPECT_NE(state.ui.banner.find("settings.json"), std::string::npos) << state.ui.banner;
  EXPECT_NE(state.ui.banner.find("kept"), std::string::npos) << state.ui.banner;
  save_remembered(state);
  EXPECT_EQ(text_of(home / "attnlab" / "settings.json"), mine) << "the user's file was written over";
  EXPECT_TRUE(fs::exists(home / "attnlab" / "settings.new.json"));

  // A valid file is read and saved again in place, as before.
  fs::remove(home / "attnlab" / "settings.json");
  fs::remove(home / "attnlab" / "settings.new.json");
  save_remembered(initial_state(nullptr, std::nullopt));
  AppState again = initial_state(nullptr, std::nullopt);
  EXPECT_TRUE(again.ui.banner.empty()) << again.ui.banner;
  save_remembered(again);
  EXPECT_TRUE(fs::exists(home / "attnlab" / "settings.json"));
  EXPECT_FALSE(fs::exists(home / "attnlab" / "settings.new.json"));

  if (old)
    ::setenv("XDG_CONFIG_HOME", saved_env.c_str(), 1);
  else
    ::unsetenv("XDG_CONFIG_HOME");
  fs::remove_all(home);
}
