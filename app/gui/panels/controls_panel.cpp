// The controls panel: every setting acts at once.
#include "app/gui/panels/panels.hpp"
#include "app/gui/state/setting_widgets.hpp"

#include "app/gui/output/export.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/hand_made/attention.hpp"
#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/base/translate.hpp"
#include "app/gui/state/ui_text.hpp"
#include "core/hand_made/positional.hpp"

#include <imgui_stdlib.h>

#include <chrono>
#include <initializer_list>
#include <cmath>
#include <cstdio>

namespace attnlab::app {
namespace {

std::string bytes_text(double b) {
  char buf[64];
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  std::snprintf(buf, sizeof buf, "%.1f %s", b, units[u]);
  return buf;
}

// A collapsing section; its header is recorded so that a test can fold or unfold it. `title` is
// English (N_): shown translated, recorded and keyed (its ImGui id) by the English.
bool section(const char* title, ImGuiTreeNodeFlags flags = 0) {
  const bool open = ImGui::CollapsingHeader(ui_id(_(title), title).c_str(), flags);
  record_widget(std::string("section:") + title);
  return open;
}

void patches_section(AppState& state, HandMadeSession& hand_made) {
  if (!section(N_("Patches"), ImGuiTreeNodeFlags_DefaultOpen)) return;
  setting_widget(state, "patch");
  setting_widget(state, "edge");
  if (hand_made.has_image()) {
    const auto& g = hand_made.grid();
    if (state.ui.wanted_patch) {  // the user's K did not fit this image: it was fitted, and comes back on the next
      // TRANSLATORS: K = the patch size in pixels; the image's width x height in pixels.
      text_wrapped(_("Your K = %d does not fit this %d x %d image: K = %d here."), *state.ui.wanted_patch,
                         g.image_width, g.image_height, g.K);
      record_widget("patch_fitted");
    }
    const double N = g.N();
    // TRANSLATORS: N = the number of tokens (patches), as columns x rows.
    text_wrapped(_("N = %d tokens (%d x %d)"), g.N(), g.cols, g.rows);
    // TRANSLATORS: N^2 = N squared, the attention weights of one head.
    text_wrapped(_("N^2 = %.0f weights per head"), N * N);
    // TRANSLATORS: A = the attention matrix; %s is its size in memory ("1.5 MiB").
    text_wrapped(_("A in float32: %s per head"), bytes_text(N * N * 4).c_str());
  }
}

void softmax_section(AppState& state) {
  if (!section(N_("Softmax"), ImGuiTreeNodeFlags_DefaultOpen)) return;
  setting_widget(state, "temperature");
  // TRANSLATORS: a button that sets the temperature tau (τ) to 1.
  if (ImGui::Button(_("tau = 1"))) state.attention.temperature = 1.0f;
  record_widget("tau_one");
}

void mask_section(AppState& state) {
  // TRANSLATORS: the attention mask (which keys a query may attend to), a section's title.
  if (!section(N_("Mask"), ImGuiTreeNodeFlags_DefaultOpen)) return;
  MaskSpec& m = state.attention.mask;
  setting_widget(state, "mask.kind");
  if (m.kind == MaskKind::Window) setting_widget(state, "mask.radius");
  if (m.kind == MaskKind::Random) {
    setting_widget(state, "mask.ratio");
    setting_widget(state, "mask.seed");
  }
  if (m.kind == MaskKind::Painted) {
    ImGui::Checkbox(_("paint with the mouse"), &state.ui.paint_mode);
    record_widget("paint_mode");
    // TRANSLATORS: keys here are the attention's keys (patches), not keyboard keys.
    help_marker(_("Left-drag over the photo masks keys; Shift + drag unmasks them."));
    ImGui::SameLine();
    if (ImGui::Button(_("clear"))) m.painted.clear();
    record_widget("paint_clear");
    // TRANSLATORS: the attention's keys (patches) masked by painting, not keyboard keys.
    ImGui::Text(_("%zu keys painted"), m.painted.size());
  }
  setting_widget(state, "display.mask_overlay");
}

// Controls that do nothing in the current mode are disabled and say why.
void positional_section(AppState& state) {
  if (!section(N_("Positional codes"), ImGuiTreeNodeFlags_DefaultOpen)) return;
  const PosSpec& pos = state.attention.pos;
  setting_widget(state, "pos.mode");
  const bool off = pos.mode == PosMode::None;
  auto when_off = [off](const char* why) { return WidgetPlace{.disabled_why = off ? why : nullptr}; };
  setting_widget(state, "pos.B", when_off(_("The codes are off: B, the base of the code's wavelengths, has no effect.")));
  setting_widget(state, "pos.P", when_off(_("The codes are off: P, the number of wavelengths, has no effect.")));
  // TRANSLATORS: lambda (λ) weighs the positional code; q and k are the query and the key; 'concat' is a mode's name.
  const char* no_lambda = _("lambda weighs the code appended to q and k: it acts only with 'concat'.");
  setting_widget(state, "pos.lambda", {.disabled_why = pos.mode != PosMode::Concat ? no_lambda : nullptr});
  setting_widget(state, "pos.sincos", when_off(_("The codes are off: the sine-cosine pairs have no effect.")));
  ImGui::Text(_("code length %d"), code_length(pos));
}

void display_section(AppState& state) {
  if (!section(N_("Display"), ImGuiTreeNodeFlags_DefaultOpen)) return;
  setting_widget(state, "display.colormap");
  setting_widget(state, "display.normalization");
  setting_widget(state, "display.opacity");
  setting_widget(state, "display.grid");
  if (ImGui::Button(_("reset zoom"))) {
    state.zoom = 1.0f;
    state.pan = {0, 0};
  }
  record_widget("reset_zoom");
}

void classroom_section(AppState& state) {
  if (!section(N_("Classroom"))) return;
  setting_widget(state, "classroom.ui_scale");
  setting_widget(state, "classroom.presentation");
  setting_widget(state, "classroom.panels.heads");
  ImGui::SameLine();
  setting_widget(state, "classroom.panels.pinned");
  ImGui::SameLine();
  setting_widget(state, "classroom.panels.images");
}

// The folder, chosen by typing its path (a click selects the old one; Enter or "use");
// remembered between runs. Until one is chosen, saves go to <Pictures>/attnlab (export_folder()).
void export_folder_field(AppState& state) {
  // The field and its two buttons on one line while they fit, else the buttons on the next.
  // TRANSLATORS: "use" takes the folder typed in the field beside it.
  const float buttons = button_width(_("use")) + button_width(_("Choose...")), avail = ImGui::GetContentRegionAvail().x;
  ImGui::SetNextItemWidth(avail - buttons >= ImGui::GetFontSize() * 6 ? avail - buttons : avail);
  const bool enter = ImGui::InputText("##export_dir", &state.ui.export_dir_text,
                                      ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll);
  record_widget("export_dir");
  same_line_if_room(button_width(_("use")));
  if ((ImGui::Button(_("use")) || enter) && !state.ui.export_dir_text.empty()) {
    try {
      state.export_dir = choose_export_dir(state.ui.export_dir_text);
      state.ui.export_dir_text = platform::utf8(state.export_dir);
      state.ui.status = text_format(_("pictures and CSV go to %s"), platform::utf8(state.export_dir).c_str());
      state.ui.status_since = std::chrono::steady_clock::now();
    } catch (const Error& e) {
      state.show_error(e.what());  // the previous folder stays
      state.ui.export_dir_text = platform::utf8(export_folder(state));
    }
  }
  record_widget("export_dir_use");
  same_line_if_room(button_width(_("Choose...")));
  if (ImGui::Button(_("Choose..."))) state.commands.ask_for_file(FileDialogKind::ExportFolder);
  record_widget("export_dir_choose");
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  if (state.export_dir.empty()) text_wrapped(_("folder: %s (the default, in your Pictures)"), platform::utf8(export_folder(state)).c_str());
  else text_wrapped(_("folder (remembered): %s"), platform::utf8(state.export_dir).c_str());
  ImGui::PopStyleColor();
}

void export_section(AppState& state) {
  if (!section(N_("Export"), ImGuiTreeNodeFlags_DefaultOpen)) return;
  // The longest label that fits the column (a projector's narrow one at a large UI scale).
  const auto fitting = fitting_label;
  if (ImGui::Button(state.export_map_only ? fitting({_("Save the map as PNG (F12)"), _("Map PNG (F12)"), "F12"})
                                          : fitting({_("Save the window as PNG (F12)"), _("Window PNG (F12)"), "F12"})))
    state.commands.export_png();
  record_widget("save_png");
  setting_widget(state, "export_map_only");
  if (ImGui::Button(fitting({_("Save row as CSV (F9)"), _("Row CSV (F9)"), "F9"}))) state.commands.export_csv();
  record_widget("save_csv");
  export_folder_field(state);
}

}  // namespace

void draw_controls_panel(AppState& state, HandMadeSession& hand_made, const std::string& key_help) {
  patches_section(state, hand_made);
  softmax_section(state);
  mask_section(state);
  positional_section(state);
  display_section(state);
  classroom_section(state);
  export_section(state);

  ImGui::Separator();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  // TRANSLATORS: %s is the list of keys and what they do ("F12 save the window ..., F9 ...").
  text_wrapped(_("Mouse: a click on the query lets it follow the mouse again, right-click pins a patch for comparison, "
                 "wheel zooms, middle-drag pans. Keys (the key table, also in the Keys menu): %s."),
               key_help.c_str());
  ImGui::PopStyleColor();
}

}  // namespace attnlab::app
