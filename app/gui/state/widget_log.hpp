#pragma once
// The test seam of the app (issue 15): where each control, menu and window was drawn this frame,
// kept apart from the document and the UI state. Export sidecars carry it ("widgets",
// "widget_windows", "labels_cut", "overlays_left_out") so that the real-window tests can reach a
// control with the mouse and check the layout (issue 47: no item outside its window, no label
// cut); the app itself never reads it. One log per process (the window or a headless render).
#include <imgui.h>

#include <array>
#include <map>
#include <string>
#include <vector>

namespace attnlab::app {

struct WidgetLog {
  /// Screen rectangles (x, y, w, h) by name: controls (a setting by its JSON path, "pos.P"; others by a name, "head:3"), menu titles and
  /// items ("menu:View", "menu:View/Images"), windows ("window:Heads").
  std::map<std::string, std::array<float, 4>> rects;
  /// The window each control recorded by record_widget was drawn in: its "window:<name>" when
  /// that window was recorded (note_window), else ImGui's own name of the window ("##MainMenuBar",
  /// a menu's "##Menu_00", presentation mode's "##presentation"). Child windows count as the
  /// window they are in.
  std::map<std::string, std::string> owners;
  /// What ImGui drew shortened: a tab whose label it shrank (drawn with an ellipsis, recorded by
  /// record_tab) and a window whose title its title bar cuts ("window:<name>", note_window).
  std::vector<std::string> labels_cut;
  /// On-screen helpers (the export toast, presentation mode's way out) left out of this frame's
  /// picture because it is being exported.
  std::vector<std::string> overlays_left_out;
  /// The recorded windows of this frame: ImGui's id of the window → "window:<name>".
  std::map<ImGuiID, std::string> windows;
  /// Each on-screen helper's rectangles as it was last drawn ("toast": {"toast", "toast:open_folder"}),
  /// kept across frames: in a frame that leaves the helper out of its picture, where it still is
  /// on screen (the frames before and after draw it), so that a test can reach its buttons.
  std::map<std::string, std::map<std::string, std::array<float, 4>>> overlays_drawn;
  /// At the start of every frame (overlays_drawn stays).
  void clear() {
    rects.clear();
    owners.clear();
    labels_cut.clear();
    overlays_left_out.clear();
    windows.clear();
  }
};

/// The process's log.
WidgetLog& widget_log();

/// Records the last ImGui item's rectangle under `name`, and the window it was drawn in.
void record_widget(const std::string& name);
/// Records a rectangle given by its corner and size, in screen pixels.
inline void record_rect(const std::string& name, ImVec2 at, ImVec2 size) { widget_log().rects[name] = {at.x, at.y, size.x, size.y}; }
/// Records the current window (between Begin and End) as "window:<name>": its rectangle, its
/// name for the controls drawn in it, and whether its title bar cuts its title.
void note_window(const std::string& name);
/// Records the tab just begun (BeginTabItem, before its contents) under `name`, and in
/// labels_cut when the tab bar shrank it narrower than `label` needs.
void record_tab(const std::string& name, const char* label);

}  // namespace attnlab::app
