// The controls panel: every setting acts at once.
#include "app/gui/panels/panels.hpp"
#include "app/gui/state/setting_widgets.hpp"

#include "app/gui/output/export.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/hand_made/attention.hpp"
#include "core/base/error.hpp"
#include "core/hand_made/positional.hpp"

#include <imgui_stdlib.h>

#include <chrono>
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

// A collapsing section; its header is recorded so that a test can fold or unfold it.
bool section(const char* title, ImGuiTreeNodeFlags flags = 0) {
  const bool open = ImGui::CollapsingHeader(title, flags);
  record_widget(std::string("section:") + title);
  return open;
}

}  // namespace

void draw_controls_panel(AppState& state, HandMadeSession& hand_made, const std::string& key_help) {
  Settings& a = state.attention;

  if (section("Patches and tokens", ImGuiTreeNodeFlags_DefaultOpen)) {
    int K = a.patch;
    if (ImGui::SliderInt("patch size K", &K, kMinPatchSize, kMaxPatchSize, "%d px")) a.patch = K;
    record_widget("patch_size");
    help_marker("Each K x K patch of the photo is one token (fig. 26.2). Smaller K: more tokens N, and N^2 weights in A.");
    bool pad = a.edge == EdgeMode::Pad;
    if (ImGui::Checkbox("pad the last row/column", &pad)) a.edge = pad ? EdgeMode::Pad : EdgeMode::Crop;
    record_widget("pad_edge");
    if (hand_made.has_image()) {
      const auto& g = hand_made.grid();
      const double N = g.N();
      ImGui::Text("N = %d tokens (%d x %d)", g.N(), g.cols, g.rows);
      ImGui::Text("N^2 = %.0f weights per head", N * N);
      ImGui::Text("A in float32: %s per head", bytes_text(N * N * 4).c_str());
    }
  }

  if (section("Softmax", ImGuiTreeNodeFlags_DefaultOpen)) {
    temperature_slider(state);
    record_widget("temperature");
    help_marker("softmax(Q K^T / (tau sqrt(m))): tau = 1 is eq. 26.20. Small tau saturates the softmax (exercise 12.4): a few keys take all the weight.");
    if (ImGui::Button("tau = 1")) a.temperature = 1.0f;
    record_widget("tau_one");
  }

  if (section("Mask", ImGuiTreeNodeFlags_DefaultOpen)) {
    const char* kinds[] = {"none", "causal (j <= i)", "strict (j < i)", "local window", "random drop", "painted"};
    static_assert(std::size(kinds) == kMaskKindCount);
    int kind = static_cast<int>(a.mask.kind);
    if (ImGui::Combo("mask", &kind, kinds, kMaskKindCount)) a.mask.kind = static_cast<MaskKind>(kind);
    record_widget("mask");
    help_marker("Section 26.10: masked weights are exactly 0 and each row's remaining weights sum to 1. Causal masks follow the raster order of the tokens.");
    if (a.mask.kind == MaskKind::Window) {
      ImGui::SliderInt("radius (patches)", &a.mask.radius, 0, 20);
      record_widget("mask_radius");
    }
    if (a.mask.kind == MaskKind::Random) {
      ImGui::SliderFloat("drop ratio", &a.mask.ratio, 0.0f, 1.0f, "%.2f");
      record_widget("mask_ratio");
      int seed = static_cast<int>(a.mask.seed);
      if (ImGui::InputInt("mask seed", &seed)) a.mask.seed = static_cast<std::uint32_t>(std::max(seed, 0));
      record_widget("mask_seed");
    }
    if (a.mask.kind == MaskKind::Painted) {
      ImGui::Checkbox("paint with the mouse", &state.ui.paint_mode);
      record_widget("paint_mode");
      help_marker("Left-drag over the photo masks keys; Shift + drag unmasks them.");
      ImGui::SameLine();
      if (ImGui::Button("clear")) a.mask.painted.clear();
      record_widget("paint_clear");
      ImGui::Text("%zu keys painted", a.mask.painted.size());
    }
    ImGui::Checkbox("darken masked keys", &state.show_mask);
    record_widget("mask_overlay");
  }

  if (section("Positional codes", ImGuiTreeNodeFlags_DefaultOpen)) {
    const char* modes[] = {"off", "concat (q' = [q; lambda p])", "add (ViT)"};
    int mode = static_cast<int>(a.pos.mode);
    if (ImGui::Combo("codes", &mode, modes, 3)) a.pos.mode = static_cast<PosMode>(mode);
    record_widget("pos_mode");
    help_marker("Eqs. 26.38-26.40: p = [sin(x), sin(x/B), ..., sin(x/B^P)] for the column x and the row y. Concat appends lambda p to every query and key; add maps p to the token width and adds it before W_q, W_k, W_v.");
    // Controls that do nothing in the current mode are disabled and say why.
    auto why_disabled = [](bool disabled, const char* why) {
      if (disabled && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("%s", why);
    };
    const bool off = a.pos.mode == PosMode::None;
    ImGui::BeginDisabled(off);
    ImGui::SliderFloat("B", &a.pos.B, 1.1f, 10.0f, "%.2f");
    why_disabled(off, "The codes are off: B, the base of the code's wavelengths, has no effect.");
    record_widget("pos_B");
    ImGui::SliderInt("P", &a.pos.P, 0, 12);
    why_disabled(off, "The codes are off: P, the number of wavelengths, has no effect.");
    record_widget("pos_P");
    ImGui::EndDisabled();
    const bool no_lambda = a.pos.mode != PosMode::Concat;
    ImGui::BeginDisabled(no_lambda);
    ImGui::SliderFloat("lambda", &a.pos.lambda, 0.0f, 4.0f, "%.2f");
    why_disabled(no_lambda, "lambda weighs the code appended to q and k: it acts only with 'concat'.");
    record_widget("pos_lambda");
    ImGui::EndDisabled();
    ImGui::BeginDisabled(off);
    ImGui::Checkbox("sine-cosine pairs", &a.pos.sincos);
    why_disabled(off, "The codes are off: the sine-cosine pairs have no effect.");
    record_widget("pos_sincos");
    ImGui::EndDisabled();
    ImGui::Text("code length %d", code_length(a.pos));
  }

  if (section("Display", ImGuiTreeNodeFlags_DefaultOpen)) {
    int cm = static_cast<int>(state.colormap);
    if (ImGui::BeginCombo("colormap", std::string(colormap_name(state.colormap)).c_str())) {
      for (int c = 0; c < kColormapCount; ++c) {
        const auto map = static_cast<Colormap>(c);
        std::string label(colormap_name(map));
        if (colormap_is_colour_blind_safe(map)) label += "  (colour-blind safe)";
        if (ImGui::Selectable(label.c_str(), c == cm)) state.colormap = map;
      }
      ImGui::EndCombo();
    }
    record_widget("colormap");
    const char* norms[] = {"min-max (each map)", "absolute (0 to max)", "log"};
    int n = static_cast<int>(state.normalization);
    if (ImGui::Combo("scale", &n, norms, 3)) state.normalization = static_cast<Normalization>(n);
    record_widget("normalization");
    help_marker("At tau = 1 a row is nearly flat (max/min about 1.2 for the colour head), so min-max stretches each map between its own extremes. Absolute shows how flat it really is.");
    ImGui::SliderFloat("opacity", &state.opacity, 0.0f, 1.0f, "%.2f");
    record_widget("opacity");
    ImGui::Checkbox("patch grid", &state.show_grid);
    record_widget("grid");
    if (ImGui::Button("reset zoom")) {
      state.zoom = 1.0f;
      state.pan = {0, 0};
    }
    record_widget("reset_zoom");
  }

  if (section("Classroom")) {
    ImGui::SliderFloat("UI scale", &state.ui_scale, 0.75f, 3.0f, "%.2f");
    record_widget("ui_scale");
    ImGui::Checkbox("presentation mode (F5)", &state.presentation);
    record_widget("presentation");
    ImGui::Checkbox("heads", &state.show_heads);
    record_widget("show_heads");
    ImGui::SameLine();
    ImGui::Checkbox("pinned", &state.show_pinned);
    record_widget("show_pinned");
    ImGui::SameLine();
    ImGui::Checkbox("images", &state.show_images);
    record_widget("show_images");
  }

  if (section("Export", ImGuiTreeNodeFlags_DefaultOpen)) {
    if (ImGui::Button(state.export_map_only ? "Save the map as PNG (F12)" : "Save the window as PNG (F12)"))
      state.commands.export_png();
    record_widget("save_png");
    ImGui::Checkbox("map only, for a slide", &state.export_map_only);
    record_widget("export_map_only");
    help_marker("F12 saves the map with its colour bar only (no panels), or the whole window. A JSON file of every "
                "setting goes beside the picture, and no file is ever overwritten.");
    if (ImGui::Button("Save row as CSV (F9)")) state.commands.export_csv();
    record_widget("save_csv");
    // The folder, chosen by typing its path (a click selects the old one; Enter or "use");
    // remembered between runs.
    ImGui::SetNextItemWidth(-ImGui::CalcTextSize("useChoose...").x - ImGui::GetStyle().FramePadding.x * 4 -
                            ImGui::GetStyle().ItemSpacing.x * 2);
    const bool enter = ImGui::InputText("##export_dir", &state.ui.export_dir_text,
                                        ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll);
    record_widget("export_dir");
    ImGui::SameLine();
    if ((ImGui::Button("use") || enter) && !state.ui.export_dir_text.empty()) {
      try {
        state.export_dir = choose_export_dir(state.ui.export_dir_text);
        state.ui.export_dir_text = state.export_dir.string();
        state.ui.status = "pictures and CSV go to " + state.export_dir.string();
        state.ui.status_since = std::chrono::steady_clock::now();
      } catch (const Error& e) {
        state.show_error(e.what());  // the previous folder stays
        state.ui.export_dir_text = state.export_dir.string();
      }
    }
    record_widget("export_dir_use");
    ImGui::SameLine();
    if (ImGui::Button("Choose...")) state.commands.ask_for_file(FileDialogKind::ExportFolder);
    record_widget("export_dir_choose");
    ImGui::TextDisabled("folder (remembered): %s", state.export_dir.string().c_str());
  }

  ImGui::Separator();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped("Mouse: a click on the query lets it follow the mouse again, right-click pins a patch for comparison, "
                     "wheel zooms, middle-drag pans. Keys (the key table, also in the Keys menu): %s.",
                     key_help.c_str());
  ImGui::PopStyleColor();
}

}  // namespace attnlab::app
