#pragma once
// The test seam of the app (issue 15): where each control, menu and window was drawn this frame,
// kept apart from the document and the UI state. Export sidecars carry it ("widgets",
// "overlays_left_out") so that the real-window tests can reach a control with the mouse; the
// app itself never reads it. One log per process (the window or a headless render).
#include <imgui.h>

#include <array>
#include <map>
#include <string>
#include <vector>

namespace attnlab::app {

struct WidgetLog {
  /// Screen rectangles (x, y, w, h) by name: controls (a setting by its JSON path, "pos.P"; others by a name, "head:3"), menu titles and
  /// items ("menu:Panels", "menu:Panels/Images"), windows ("window:Heads").
  std::map<std::string, std::array<float, 4>> rects;
  /// On-screen helpers (the export toast, presentation mode's way out) left out of this frame's
  /// picture because it is being exported.
  std::vector<std::string> overlays_left_out;
  /// Each on-screen helper's rectangles as it was last drawn ("toast": {"toast", "toast:open_folder"}),
  /// kept across frames: in a frame that leaves the helper out of its picture, where it still is
  /// on screen (the frames before and after draw it), so that a test can reach its buttons.
  std::map<std::string, std::map<std::string, std::array<float, 4>>> overlays_drawn;
  /// At the start of every frame (overlays_drawn stays).
  void clear() {
    rects.clear();
    overlays_left_out.clear();
  }
};

/// The process's log.
WidgetLog& widget_log();

/// Records the last ImGui item's rectangle under `name`.
void record_widget(const std::string& name);
/// Records a rectangle given by its corner and size, in screen pixels.
inline void record_rect(const std::string& name, ImVec2 at, ImVec2 size) { widget_log().rects[name] = {at.x, at.y, size.x, size.y}; }

}  // namespace attnlab::app
