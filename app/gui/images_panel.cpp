// Images: the bundled gallery (safari first), open any PNG/JPEG/BMP/TGA by path; files dropped
// on the window arrive through AppState::commands too.
#include "app/gui/views.hpp"
#include "app/gui/widget_log.hpp"

#include <imgui_stdlib.h>

namespace attnlab::app {

void draw_images_panel(AppState& state, const std::vector<std::filesystem::path>& gallery) {
  ImGui::TextUnformatted("Gallery");
  for (const auto& p : gallery) {
    const bool current = p == state.image_path;
    if (ImGui::Selectable(p.filename().string().c_str(), current)) state.commands.open_image(p);
    record_widget("gallery:" + p.filename().string());
  }
  ImGui::Separator();
  ImGui::TextUnformatted("Open a file (or drop one on the window)");
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("Open Clear").x - ImGui::GetStyle().ItemSpacing.x * 2 -
                          ImGui::GetStyle().FramePadding.x * 4);
  const bool enter = ImGui::InputText("##path", &state.ui.open_path_text, ImGuiInputTextFlags_EnterReturnsTrue);
  record_widget("open_path");
  ImGui::SameLine();
  const bool open = ImGui::Button("Open");
  record_widget("open_button");
  if ((open || enter) && !state.ui.open_path_text.empty()) state.commands.open_image(state.ui.open_path_text);
  ImGui::SameLine();
  if (ImGui::Button("Clear")) state.ui.open_path_text.clear();
  record_widget("clear_button");
  ImGui::TextDisabled("current: %s", state.image_path.string().c_str());
}

}  // namespace attnlab::app
