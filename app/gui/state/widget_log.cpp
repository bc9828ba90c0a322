#include "app/gui/state/widget_log.hpp"

#include <imgui_internal.h>  // the current window's id, title bar and close button; a tab's full size

#include <algorithm>

namespace attnlab::app {

WidgetLog& widget_log() {
  static WidgetLog log;  // the window's or a headless render's: one per process, main thread only
  return log;
}

void record_widget(const std::string& name) {
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  record_rect(name, a, ImVec2(b.x - a.x, b.y - a.y));
  const ImGuiWindow* root = ImGui::GetCurrentWindowRead()->RootWindow;
  WidgetLog& log = widget_log();
  const auto known = log.windows.find(root->ID);
  log.owners[name] = known != log.windows.end() ? known->second : std::string(root->Name);
}

void note_window(const std::string& name) {
  const ImGuiWindow* w = ImGui::GetCurrentWindowRead();
  const std::string key = "window:" + name;
  WidgetLog& log = widget_log();
  log.rects[key] = {w->Pos.x, w->Pos.y, w->Size.x, w->Size.y};
  log.windows[w->RootWindow->ID] = key;
  if (w->Flags & ImGuiWindowFlags_NoTitleBar) return;
  // The title's room as ImGui 1.86 lays it out (RenderWindowTitleBarContents): the frame's
  // padding on both sides, the collapse button on its side and the close button on the right, the
  // inner spacing once on a side with a button; the text is clipped at the right of that room
  // plus the inner spacing (never past the title bar).
  const ImGuiStyle& style = ImGui::GetStyle();
  const float button = ImGui::GetFontSize();
  const bool collapse = !(w->Flags & ImGuiWindowFlags_NoCollapse);
  float pad_l = style.FramePadding.x, pad_r = style.FramePadding.x;
  if (w->HasCloseButton) pad_r += button;
  if (collapse && style.WindowMenuButtonPosition == ImGuiDir_Right) pad_r += button;
  if (collapse && style.WindowMenuButtonPosition == ImGuiDir_Left) pad_l += button;
  if (pad_l > style.FramePadding.x) pad_l += style.ItemInnerSpacing.x;
  if (pad_r > style.FramePadding.x) pad_r += style.ItemInnerSpacing.x;
  const ImRect bar = w->TitleBarRect();
  const float clip = std::min(bar.Max.x - pad_r + style.ItemInnerSpacing.x, bar.Max.x);
  const float title = ImGui::CalcTextSize(w->Name, nullptr, /*hide_text_after_double_hash=*/true).x;
  if (bar.Min.x + pad_l + title > clip + 0.5f) log.labels_cut.push_back(key);
}

void record_tab(const std::string& name, const char* label) {
  record_widget(name);
  const float drawn = ImGui::GetItemRectSize().x;
  if (drawn + 0.5f < ImGui::TabItemCalcSize(label, /*has_close_button=*/false).x) widget_log().labels_cut.push_back(name);
}

}  // namespace attnlab::app
