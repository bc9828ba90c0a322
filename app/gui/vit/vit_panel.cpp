// The model panel: open a ViT checkpoint (by path, from the recent list, or dropped on the
// window), see what it is and what it predicts, and choose what its maps show.
#include "app/gui/vit/vit_views.hpp"
#include "app/gui/state/setting_widgets.hpp"
#include "app/gui/state/widget_log.hpp"

#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace attnlab::app {
namespace {

void open_section(AppState& state, VitSession& vit) {
  wrap_text("Open a checkpoint (.safetensors, .pth or its folder; or drop it on the window)");
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("Open").x - ImGui::GetStyle().ItemSpacing.x - ImGui::GetStyle().FramePadding.x * 2);
  const bool enter = ImGui::InputText("##model_path", &state.ui.model_path_text, ImGuiInputTextFlags_EnterReturnsTrue);
  record_widget("model_path");
  ImGui::SameLine();
  const bool open = ImGui::Button("Open##model");
  record_widget("model_open");
  if ((open || enter) && !state.ui.model_path_text.empty()) state.commands.open_model(state.ui.model_path_text);
  if (vit.busy()) {
    ImGui::ProgressBar(vit.progress(), ImVec2(-ImGui::CalcTextSize("Cancel").x - ImGui::GetStyle().FramePadding.x * 4, 0),
                       vit.stage().c_str());
    ImGui::SameLine();
    if (ImGui::Button("Cancel##model")) vit.cancel();
    record_widget("model_cancel");
    state.commands.redraw();  // the bar moves and the result shows without an event
  }
  {  // the longest label that fits the column
    const float room = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().FramePadding.x * 2;
    const char* label = ImGui::CalcTextSize("Gallery (Hugging Face Hub)...").x <= room ? "Gallery (Hugging Face Hub)..." : "Gallery...";
    if (ImGui::Button(label)) state.ui.show_hub_gallery = true;
  }
  record_widget("model_gallery");
  if (!state.recent_models.empty() && ImGui::TreeNode("Recent models")) {
    for (const std::string& p : state.recent_models) {
      if (ImGui::Selectable(p.c_str(), p == state.model_path.string())) state.commands.open_model(p);
      record_widget("recent:" + p);
    }
    ImGui::TreePop();
  }
}

void about_section(AppState& state, const VitRun& src, VitSession& vit) {
  const SourceGrid g = src.grid();
  text_wrapped("%s", vit.file().string().c_str());
  ImGui::TextDisabled("SHA-256 %s", vit.sha256().substr(0, 16).c_str());
  text_wrapped("input %d x %d pixels, grid %d x %d = %d patches, T = %d tokens", src.input_width(), src.input_height(), g.cols,
              g.rows, g.N(), g.T());
  if (ImGui::TreeNode("Architecture (attnlab vit --info)")) {
    ImGui::TextUnformatted(vit.info().c_str());
    ImGui::TreePop();
  }
  const auto top = src.top_classes(5);
  if (!top.empty()) {
    ImGui::Separator();
    ImGui::TextUnformatted("Prediction (top 5)");
    const auto& labels = src.model().arch.labels;
    for (const auto& [c, p] : top) {
      const std::string name = c < static_cast<int>(labels.size()) ? labels[static_cast<std::size_t>(c)] : "class " + std::to_string(c);
      char label[160];
      std::snprintf(label, sizeof label, "%5.1f %%  %s##top%d", 100.0 * p, name.c_str(), c);
      // The bar where the column has room for it and the line; the line never past the column.
      const float bar = ImGui::GetFontSize() * 6, spacing = ImGui::GetStyle().ItemSpacing.x;
      if (ImGui::GetContentRegionAvail().x >= bar + spacing + ImGui::CalcTextSize(label, nullptr, true).x) {
        ImGui::ProgressBar(p, ImVec2(bar, 0), "");
        ImGui::SameLine();
      }
      // A click asks why: the relevance view explains that class (issue 49).
      if (ImGui::Selectable(label, state.vit_view == "relevance" && state.relevance_class == std::to_string(c), 0,
                            ImVec2(std::max(1.0f, ImGui::GetContentRegionAvail().x), 0))) {
        state.relevance_class = std::to_string(c);
        state.vit_view = "relevance";
      }
      record_widget("vit_top:" + std::to_string(c));
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("Why %s? Shows which patches this class's score depended on", name.c_str());
    }
  }
}

void choice_section(AppState& state, const VitRun& src) {
  const SourceGrid g = src.grid();
  ImGui::Separator();
  ImGui::TextUnformatted("What the map shows");
  SourceChoice& c = state.vit;
  int layer = choice_layer(c, src.layers());
  // Short labels, the keys in the tooltips: nothing cut in a projector's narrow column.
  if (ImGui::SliderInt("layer", &layer, 0, src.layers() - 1)) c.layer = layer;
  record_widget("vit_layer");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("PgUp / PgDn: the layer before / after; Home, End: the first, the last");
  const HeadChoice head = choice_head(c, src.heads());
  if (ImGui::BeginCombo("head", head_choice_label(head).c_str())) {
    for (const HeadFusion f : {HeadFusion::Mean, HeadFusion::Max, HeadFusion::Min})
      if (ImGui::Selectable(head_choice_label(HeadChoice{-1, f}).c_str(), head == HeadChoice{-1, f})) c.head = HeadChoice{-1, f};
    for (int h = 0; h < src.heads(); ++h)
      if (ImGui::Selectable(head_choice_label(HeadChoice{h, HeadFusion::Mean}).c_str(), head.head == h)) c.head = HeadChoice{h, HeadFusion::Mean};
    ImGui::EndCombo();
  }
  record_widget("vit_head");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("0-9: that head; A: the heads' mean");
  ImGui::TextUnformatted("query:");
  same_line_if_room(ImGui::CalcTextSize("CLS (C)").x + ImGui::GetFrameHeight() * 2);
  if (ImGui::RadioButton("CLS (C)", c.prefix_token == 0)) c.prefix_token = 0;
  record_widget("vit_query_cls");
  for (int r = 1; r < g.prefix; ++r) {
    const std::string label = token_label(g, r);  // "register 0" is token 1
    same_line_if_room(ImGui::CalcTextSize(label.c_str()).x + ImGui::GetFrameHeight() * 2);
    if (ImGui::RadioButton(label.c_str(), c.prefix_token == r)) c.prefix_token = r;
  }
  const std::string patch = "patch (" + std::to_string(c.cell.col) + "," + std::to_string(c.cell.row) + ")";
  same_line_if_room(ImGui::CalcTextSize(patch.c_str()).x + ImGui::GetFrameHeight() * 2);
  if (ImGui::RadioButton(patch.c_str(), c.prefix_token < 0)) c.prefix_token = -1;
  record_widget("vit_query_patch");
  setting_widget(state, "vit.rollout");
  setting_widget(state, "vit.norms");
  setting_widget(state, "vit.masks");
  // A label that does not fit beside its widget goes on the line above (a projector's narrow column).
  auto narrow = [](const char* label, float widget_w) {
    const float whole = widget_w + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label).x + ImGui::CalcTextSize("(?)").x;
    if (whole <= ImGui::GetContentRegionAvail().x) return false;
    ImGui::TextUnformatted(label);
    return true;
  };
  same_line_if_room(ImGui::GetFontSize() * 5 + ImGui::CalcTextSize("% of the CLS row (?)").x);
  float percent = state.vit_mass * 100.0f;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 4);
  if (ImGui::SliderFloat(narrow("% of the CLS row", ImGui::GetFontSize() * 4) ? "##vit_mass" : "% of the CLS row", &percent, 5.0f,
                         95.0f, "%.0f"))
    state.vit_mass = percent / 100.0f;
  record_widget("vit_mass");
  help_marker("Per head, an outline around the fewest patches that hold this share of the CLS token's attention over "
              "the patches in this layer, as DINO (Caron et al. 2021) draws them.");
  setting_widget(state, "vit.bilinear");
  int resize = state.vit_resize;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
  if (ImGui::InputInt(narrow("input size", ImGui::GetFontSize() * 6) ? "##input size" : "input size", &resize, src.patch(), src.patch() * 4, ImGuiInputTextFlags_EnterReturnsTrue))
    state.vit_resize = std::clamp(resize, 0, 4096);
  record_widget("vit_resize");
  help_marker("The input's short side in pixels (0: the size the model was trained at).");
}

}  // namespace

void draw_vit_panel(AppState& state, VitSession& vit) {
  open_section(state, vit);
  const VitRun* src = vit.run();
  if (!src) {
    ImGui::Separator();
    text_wrapped("No model loaded. The bundled Fashion-MNIST ViT is in the Images panel's gallery; DINO, DINOv2, DeiT "
                       "and ViT download from the Hugging Face Hub through the Gallery button (or Model → Gallery); any "
                       "timm, DINO or Hugging Face checkpoint (.safetensors, .pth, .bin or its folder) opens above (README, "
                       "section Models).");
    return;
  }
  ImGui::Separator();
  about_section(state, *src, vit);
  choice_section(state, *src);
}

}  // namespace attnlab::app
