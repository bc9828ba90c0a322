// The desktop's Open dialog (issue 37): Ctrl+O and the buttons open GTK's file chooser (a real
// window of its own on the X server), a path typed into it with xdotool opens, Cancel changes
// nothing, and the export folder is chosen the same way. The Windows half (IFileOpenDialog)
// is app/platform/file_dialog_win32.cpp.
#include "test_support.hpp"
#include "xvfb_session.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>

using namespace attnlab::testing;

namespace {

// The dialog's window, found by its title (app/platform/file_dialog.hpp); 0 when it has not
// appeared (or, with `gone`, has not gone) within 20 s.
bool wait_for_dialog(const Xvfb& x, const std::string& title, bool gone = false, int seconds = 20) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end) {
    const bool shown = !run_capture("DISPLAY=" + x.display() + " xdotool search --onlyvisible --name '" + title + "' 2>/dev/null").empty();
    if (shown != gone) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

// Keys to the dialog's window (given the keyboard focus first, as a click on it would).
void keys_to_dialog(const AppProcess& app, const Xvfb& x, const std::string& title, const std::string& xdotool_args) {
  const std::string id = run_capture("DISPLAY=" + x.display() + " xdotool search --onlyvisible --name '" + title + "' 2>/dev/null | head -1");
  if (id.empty()) return;  // gone already: the keys would go to the app's window
  app.xdotool("windowfocus --sync " + id);
  app.xdotool(xdotool_args);
}

// Types `text` into the dialog's focused field: ASCII runs with `xdotool type`, each other
// character through GTK's own Unicode entry (Ctrl+Shift+U, its hex code, space). xdotool types a
// character the keymap lacks by remapping a key for a moment, and on a loaded machine GTK read
// the key after the mapping was put back: the "ö" of the path was lost (seen in CI).
void type_text(const AppProcess& app, const Xvfb& x, const std::string& title, const std::string& text) {
  std::string ascii;
  const auto flush = [&] {
    if (!ascii.empty()) keys_to_dialog(app, x, title, "type --delay 20 '" + ascii + "'");
    ascii.clear();
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      ascii += text[i++];
      continue;
    }
    const int length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    unsigned code = lead & (0x7Fu >> length);
    for (int k = 1; k < length; ++k) code = (code << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3Fu);
    i += static_cast<std::size_t>(length);
    flush();
    char hex[16];
    std::snprintf(hex, sizeof hex, "%x", code);
    keys_to_dialog(app, x, title, "key ctrl+shift+u");
    keys_to_dialog(app, x, title, std::string("type '") + hex + "'");
    keys_to_dialog(app, x, title, "key space");
  }
  flush();
}

// Types a path into GTK's chooser: Ctrl+L opens its location field, Ctrl+A selects what is in
// it, Return accepts. True once the dialog has gone. Tried again (up to three times) while the
// dialog stays: on a loaded machine GTK can map its window before it takes keys.
bool type_into_dialog(const AppProcess& app, const Xvfb& x, const std::string& title, const std::string& path) {
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  for (int attempt = 0; attempt < 3; ++attempt) {
    keys_to_dialog(app, x, title, "key ctrl+l");
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    keys_to_dialog(app, x, title, "key ctrl+a");
    type_text(app, x, title, path);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    keys_to_dialog(app, x, title, "key Return");
    if (wait_for_dialog(x, title, true, 8)) return true;
  }
  return false;
}

}  // namespace

TEST(FileDialogUnderXvfb, CtrlOOpensTheDialogATypedPathOpensAndCancelChangesNothing) {
  Xvfb x;
  const auto dir = temp_dir();
  const auto pictures = dir / "Bilder ö";
  std::filesystem::create_directories(pictures);
  std::filesystem::copy_file(asset("dog.jpg"), pictures / "dog ö.jpg");
  AppProcess app(x, dir, {}, {"ATTNLAB_FILE_DIALOG=gtk"});
  ASSERT_NE(app.wait_for_window(), 0u) << app.log();

  app.key("ctrl+o");
  ASSERT_TRUE(wait_for_dialog(x, "Open an image")) << "no Open dialog after Ctrl+O; log:\n" << app.log();
  ASSERT_TRUE(type_into_dialog(app, x, "Open an image", (pictures / "dog ö.jpg").string())) << "the dialog stayed open";
  const auto opened = export_until(app, [](const nlohmann::json& j) {
    return j.at("image").get<std::string>().ends_with("dog ö.jpg");
  });
  EXPECT_TRUE(opened.at("image").get<std::string>().ends_with("Bilder ö/dog ö.jpg")) << opened.at("image");

  // Cancel (Escape): the image stays, no banner.
  app.key("ctrl+o");
  ASSERT_TRUE(wait_for_dialog(x, "Open an image"));
  // Escape again if the first came before GTK took keys (its window mapped, its handlers not yet
  // set: seen in the sanitized tree, where GTK starts slowly, and there once not closed after
  // four Escapes in 20 s on a loaded machine: now up to 45 s, and what was on the screen is said).
  // (A fresh-clone CI run saw nine Escapes in 45 s not close it, with nothing else on the screen;
  // it did not come back in 20 runs here, under load and beside the other dialog tests.) Every
  // other try presses the Cancel button by its access key (Alt+C, "_Cancel"): the same cancel,
  // by the dialog's other way; a failure says which window had the keyboard focus.
  bool closed = false;
  for (int attempt = 0; attempt < 9 && !closed; ++attempt) {
    keys_to_dialog(app, x, "Open an image", attempt % 2 == 0 ? "key Escape" : "key alt+c");
    closed = wait_for_dialog(x, "Open an image", true, 5);
  }
  ASSERT_TRUE(closed) << "neither Escape nor Cancel closed the dialog; the windows shown:\n"
                      << run_capture("DISPLAY=" + x.display() +
                                     " sh -c 'for w in $(xdotool search --onlyvisible --name .); do xdotool getwindowname $w; done'")
                      << "the keyboard focus: "
                      << run_capture("DISPLAY=" + x.display() + " sh -c 'xdotool getwindowfocus getwindowname 2>&1'");
  const auto [after, after_png] = app.export_view();
  EXPECT_EQ(after.at("image"), opened.at("image"));
  EXPECT_EQ(after.at("banner").get<std::string>(), "") << after.at("banner");
  EXPECT_EQ(app.close(), 0) << app.log();
}

TEST(FileDialogUnderXvfb, TheExportFolderIsChosenInTheDialog) {
  Xvfb x;
  const auto dir = temp_dir();
  const auto slides = dir / "slides";
  std::filesystem::create_directories(slides);
  AppProcess app(x, dir, {}, {"ATTNLAB_FILE_DIALOG=gtk"});
  ASSERT_NE(app.wait_for_window(), 0u) << app.log();
  const auto [start, start_png] = app.export_view();
  ASSERT_TRUE(start.at("widgets").contains("export_dir_choose")) << "no Choose... button beside the export folder";
  click_widget(app, start, "export_dir_choose");  // scrolled into view first
  ASSERT_TRUE(wait_for_dialog(x, "Choose the export folder")) << app.log();
  ASSERT_TRUE(type_into_dialog(app, x, "Choose the export folder", slides.string() + "/")) << "the dialog stayed open";
  // The next F12 goes to the chosen folder.
  app.xdotool("mousemove 40 40");
  app.key("F12");
  const auto json = wait_for_file(slides, ".json");
  EXPECT_FALSE(json.empty()) << "no export in the chosen folder; log:\n" << app.log();
  EXPECT_EQ(app.close(), 0) << app.log();
}

// With dialogs off (the other window tests), Ctrl+O says so in one line and nothing changes.
TEST(FileDialogUnderXvfb, WithoutADialogCtrlOSaysWhyInOneLine) {
  Xvfb x;
  const auto dir = temp_dir();
  AppProcess app(x, dir);
  ASSERT_NE(app.wait_for_window(), 0u) << app.log();
  const auto [start, start_png] = app.export_view();
  app.key("ctrl+o");
  const auto after = export_until(app, [](const nlohmann::json& j) { return !j.at("banner").get<std::string>().empty(); });
  EXPECT_NE(after.at("banner").get<std::string>().find("file dialogs are off"), std::string::npos) << after.at("banner");
  EXPECT_EQ(after.at("image"), start.at("image"));
  EXPECT_EQ(app.close(), 0) << app.log();
}
