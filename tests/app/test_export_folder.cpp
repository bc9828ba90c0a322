// Where saves go (issue 47): F12, F9 and F8 into <Pictures>/attnlab until the user chooses a folder.
// The Pictures folder as xdg-user-dirs gives it (XDG_PICTURES_DIR, else the line of
// $XDG_CONFIG_HOME/user-dirs.dirs, else ~/Pictures: core/base/platform.hpp), the default folder
// made only when first saved to, "." of older settings read as the default, a chosen folder kept.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "app/commands/document.hpp"
#include "app/gui/state/app_state.hpp"
#include "core/base/error.hpp"
#include "core/base/platform.hpp"

using namespace attnlab;
using namespace attnlab::app;
namespace fs = std::filesystem;

namespace {

// The variables pictures_folder() reads, set for one test and put back after it.
class UserFolders : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("attnlab-pictures-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(home());
    for (const char* name : {"HOME", "XDG_CONFIG_HOME", "XDG_PICTURES_DIR"}) {
      const char* v = std::getenv(name);
      saved_.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
    }
    ::setenv("HOME", home().c_str(), 1);
    ::unsetenv("XDG_CONFIG_HOME");
    ::unsetenv("XDG_PICTURES_DIR");
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  fs::path home() const { return root_ / "home"; }
  void write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  fs::path root_;
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

}  // namespace

TEST_F(UserFolders, WithoutAnyLineThePicturesFolderIsHomesPictures) {
  EXPECT_EQ(platform::pictures_folder(), home() / "Pictures");
  EXPECT_EQ(default_export_folder(), home() / "Pictures" / "attnlab");
}

TEST_F(UserFolders, TheEnvironmentVariableWins) {
  write(home() / ".config" / "user-dirs.dirs", "XDG_PICTURES_DIR=\"$HOME/Bilder\"\n");
  ::setenv("XDG_PICTURES_DIR", (root_ / "slides").c_str(), 1);
  EXPECT_EQ(platform::pictures_folder(), root_ / "slides");
  EXPECT_EQ(default_export_folder(), root_ / "slides" / "attnlab");
  // Not a path: ignored, as the format allows only absolute ones.
  ::setenv("XDG_PICTURES_DIR", "relative/pics", 1);
  EXPECT_EQ(platform::pictures_folder(), home() / "Bilder");
}

TEST_F(UserFolders, UserDirsInTheDefaultConfigFolderWithHome) {
  write(home() / ".config" / "user-dirs.dirs",
        "# This file is written by xdg-user-dirs-update\n"
        "XDG_DESKTOP_DIR=\"$HOME/Desktop\"\n"
        "XDG_PICTURES_DIR=\"$HOME/Bilder\"\n"
        "XDG_VIDEOS_DIR=\"$HOME/Videos\"\n");
  EXPECT_EQ(platform::pictures_folder(), home() / "Bilder");
  EXPECT_EQ(default_export_folder(), home() / "Bilder" / "attnlab");
}

TEST_F(UserFolders, UserDirsInXdgConfigHomeWithAnAbsolutePath) {
  write(home() / ".config" / "user-dirs.dirs", "XDG_PICTURES_DIR=\"$HOME/not-this-one\"\n");
  ::setenv("XDG_CONFIG_HOME", (root_ / "config").c_str(), 1);
  write(root_ / "config" / "user-dirs.dirs",
        "  XDG_PICTURES_DIR = \"" + (root_ / "Fotos mit \\\"Leer\\\"").string() + "\"\n");
  EXPECT_EQ(platform::pictures_folder(), root_ / "Fotos mit \"Leer\"");
}

TEST_F(UserFolders, TheFilesOtherFormsAreIgnored) {
  const fs::path h = "/home/ana";
  EXPECT_EQ(platform::xdg_user_dir_in("XDG_PICTURES_DIR=\"$HOME\"\n", "PICTURES", h), h);
  EXPECT_EQ(platform::xdg_user_dir_in("XDG_PICTURES_DIR=\"$HOME/a/b\"", "PICTURES", h), h / "a" / "b");
  EXPECT_EQ(platform::xdg_user_dir_in("XDG_PICTURES_DIR=\"Pictures\"\n", "PICTURES", h), fs::path());  // relative
  EXPECT_EQ(platform::xdg_user_dir_in("XDG_PICTURES_DIR=\"$HOME/open\n", "PICTURES", h),
            fs::path());  // no closing quote
  EXPECT_EQ(platform::xdg_user_dir_in("XDG_PICTURES_DIR=$HOME/Pictures\n", "PICTURES", h), fs::path());  // no quotes
  EXPECT_EQ(platform::xdg_user_dir_in("# XDG_PICTURES_DIR=\"/x\"\n", "PICTURES", h), fs::path());
  EXPECT_EQ(platform::xdg_user_dir_in("XDG_PICTURES_DIRS=\"/x\"\n", "PICTURES", h), fs::path());
  EXPECT_EQ(platform::xdg_user_dir_in("XDG_PICTURES_DIR=\"$HOMEWORK\"\n", "PICTURES", h), fs::path());
  // The last line wins, as when a shell sources the file.
  EXPECT_EQ(platform::xdg_user_dir_in("XDG_PICTURES_DIR=\"/a\"\nXDG_PICTURES_DIR=\"/b\"\n", "PICTURES", h),
            fs::path("/b"));
}

// The default folder is made when first saved to, with its parents; a chosen folder never is
// (one that has gone is that save's error, as before).
TEST_F(UserFolders, TheDefaultFolderIsMadeWhenSavedToAndAChosenOneIsNot) {
  Document d;
  ASSERT_TRUE(d.export_dir.empty()) << "no folder is chosen at first";
  EXPECT_EQ(export_folder(d), home() / "Pictures" / "attnlab");
  EXPECT_FALSE(fs::exists(home() / "Pictures")) << "made before a save";
  EXPECT_EQ(make_export_folder(d), home() / "Pictures" / "attnlab");
  EXPECT_TRUE(fs::is_directory(home() / "Pictures" / "attnlab"));
  d.export_dir = root_ / "gone";
  EXPECT_EQ(export_folder(d), root_ / "gone");
  EXPECT_EQ(make_export_folder(d), root_ / "gone");
  EXPECT_FALSE(fs::exists(root_ / "gone"));
  // A default that cannot be made: one line naming it, nothing else.
  write(home() / "file", "x");
  ::setenv("XDG_PICTURES_DIR", (home() / "file").c_str(), 1);
  d.export_dir.clear();
  try {
    make_export_folder(d);
    ADD_FAILURE() << "a folder under a file was made";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find((home() / "file" / "attnlab").string()), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

// Settings written before issue 47 hold "export_dir": "." (the old default, never a user's
// choice): read as the default folder. A chosen folder is kept, and written back as it was.
TEST_F(UserFolders, DotOfOlderSettingsIsTheDefaultAndAChosenFolderIsKept) {
  Document d;
  d.export_dir = "/somewhere/chosen";
  apply_json(nlohmann::json{{"export_dir", "."}}, d);
  EXPECT_TRUE(d.export_dir.empty()) << d.export_dir;
  EXPECT_EQ(export_folder(d), home() / "Pictures" / "attnlab");
  EXPECT_EQ(to_json(d).at("export_dir"), "") << "the default is written as no choice, not as a folder";
  apply_json(nlohmann::json{{"export_dir", "/home/ana/slides"}}, d);
  EXPECT_EQ(d.export_dir, fs::path("/home/ana/slides"));
  EXPECT_EQ(export_folder(d), fs::path("/home/ana/slides"));
  EXPECT_EQ(to_json(d).at("export_dir"), "/home/ana/slides");
  Document fresh;
  EXPECT_EQ(to_json(fresh).at("export_dir"), "");
}
