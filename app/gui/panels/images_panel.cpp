// Images: the bundled gallery (safari first), open any PNG/JPEG/BMP/TGA by path, or a video
// (Open video) or a camera (Look for cameras), played as the image; files dropped on the window
// arrive through AppState::commands too.
#include "app/gui/panels/panels.hpp"
#include "app/gui/maps/map_pictures.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/translate.hpp"

#include "core/io/video.hpp"

#include <imgui_stdlib.h>

#include <optional>
#include <vector>

namespace attnlab::app {

void draw_images_panel(AppState& state, const std::vector<std::filesystem::path>& gallery) {
  // TRANSLATORS: the bundled pictures to choose from.
  ImGui::TextUnformatted(_("Gallery"));
  for (const auto& p : gallery) {
    const bool current = p == state.image_path;
    if (ImGui::Selectable(p.filename().string().c_str(), current)) state.commands.open_image(p);
    record_widget("gallery:" + p.filename().string());
  }
  ImGui::Separator();
  wrap_text(_("Open a file (or drop one on the window)"));
  // The path field, then its buttons on the same line while they fit, else on the next (a narrow
  // panel on a projector): nothing is cut at the panel's edge.
  const ImGuiStyle& st = ImGui::GetStyle();
  auto button_w = [&](const char* label) { return ImGui::CalcTextSize(label).x + st.FramePadding.x * 2 + st.ItemSpacing.x; };
  // TRANSLATORS: "Open" opens the image whose path is typed in the field beside it.
  const float buttons = button_w(_("Open")) + button_w(_("Browse...")) + button_w(_("Open video")) + button_w(_("Clear"));
  const float avail = ImGui::GetContentRegionAvail().x;
  ImGui::SetNextItemWidth(avail - buttons >= ImGui::GetFontSize() * 8 ? avail - buttons : avail);
  const bool enter = ImGui::InputText("##path", &state.ui.open_path_text, ImGuiInputTextFlags_EnterReturnsTrue);
  record_widget("open_path");
  same_line_if_room(button_w(_("Open")));
  const bool open = ImGui::Button(_("Open"));
  record_widget("open_button");
  same_line_if_room(button_w(_("Browse...")));
  if (ImGui::Button(_("Browse..."))) state.commands.ask_for_file(FileDialogKind::Image);  // Ctrl+O
  record_widget("browse_button");
  if ((open || enter) && !state.ui.open_path_text.empty()) state.commands.open_image(state.ui.open_path_text);
  same_line_if_room(button_w(_("Open video")));
  // A video (MP4, WebM, MKV, MOV, animated GIF…) played through the sources, newest frame wins.
  if (ImGui::Button(_("Open video")) && !state.ui.open_path_text.empty())
    state.commands.open_video(state.ui.open_path_text);
  record_widget("open_video_button");
  same_line_if_room(button_w(_("Clear")));
  if (ImGui::Button(_("Clear"))) state.ui.open_path_text.clear();
  record_widget("clear_button");
  ImGui::PushStyleColor(ImGuiCol_Text, st.Colors[ImGuiCol_TextDisabled]);
  // TRANSLATORS: %s is the image file shown.
  wrap_text(text_format(_("current: %s"), state.image_path.string().c_str()));
  ImGui::PopStyleColor();
  // Cameras (libavdevice: v4l2 on Linux), looked for when asked (opening each device takes a
  // moment): none found is said, not an error. The list is kept between frames in state.ui.
  std::optional<std::vector<CameraInfo>>& cameras = state.ui.cameras;
  if (ImGui::Button(fitting_label({_("Look for cameras"), _("Cameras")}))) cameras = list_cameras();
  record_widget("look_for_cameras");
  if (cameras && cameras->empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", _("no camera found"));
    record_widget("no_camera_found");
  }
  if (cameras)
    for (const CameraInfo& c : *cameras) {
      if (ImGui::Selectable((c.name + " (" + c.device + ")").c_str())) state.commands.open_video("camera:" + c.device);
      record_widget("camera:" + c.device);
    }
  if (state.ui.video_open) {
    if (ImGui::Button(state.ui.video_paused ? _("Play") : _("Pause"))) state.commands.pause_video();
    record_widget("video_pause");
    ImGui::SameLine();
    text_wrapped("%s", state.ui.video_status.c_str());
  }
}

}  // namespace attnlab::app
