#include "app/gui/state/widget_log.hpp"

namespace attnlab::app {

WidgetLog& widget_log() {
  static WidgetLog log;  // the window's or a headless render's: one per process, main thread only
  return log;
}

void record_widget(const std::string& name) {
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  record_rect(name, a, ImVec2(b.x - a.x, b.y - a.y));
}

}  // namespace attnlab::app
