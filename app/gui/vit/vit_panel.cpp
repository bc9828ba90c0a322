// The model panel: open a ViT checkpoint (by path, from the recent list, or dropped on the
// window), see what it is and what it predicts, and choose what its maps show.
#include "app/gui/vit/vit_views.hpp"
#include "app/gui/state/setting_widgets.hpp"
#include "app/gui/state/widget_log.hpp"
#include "app/gui/state/ui_text.hpp"
#include "core/base/translate.hpp"

#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace attnlab::app {
namespace {

void open_section(AppState& state, VitSession& vit) {
  wrap_text(_("Open a checkpoint (.safetensors, .pth or its folder; or drop it on the window)"));
  // TRANSLATORS: the button that opens the model file typed beside it (as "Open##model").
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize(_("Open")).x - ImGui::GetStyle().ItemSpacing.x - ImGui::GetStyle().FramePadding.x * 2);
  const bool enter = ImGui::InputText("##model_path", &state.ui.model_path_text, ImGuiInputTextFlags_EnterReturnsTrue);
  record_widget("model_path");
  ImGui::SameLine();
  // TRANSLATORS: opens the model file typed beside it; keep "##model".
  const bool open = ImGui::Button(_("Open##model"));
  record_widget("model_open");
  if ((open || enter) && !state.ui.model_path_text.empty()) state.commands.open_model(state.ui.model_path_text);
  if (vit.busy()) {
    ImGui::ProgressBar(vit.progress(), ImVec2(-ImGui::CalcTextSize(_("Cancel")).x - ImGui::GetStyle().FramePadding.x * 4, 0),
                       vit.stage().c_str());
    ImGui::SameLine();
    if (ImGui::Button(_("Cancel##model"))) vit.cancel();
    record_widget("model_cancel");
    state.commands.redraw();  // the bar moves and the result shows without an event
  }
  {  // the longest label that fits the column
    const float room = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().FramePadding.x * 2;
    const char* label = ImGui::CalcTextSize(_("Gallery (Hugging Face Hub)...")).x <= room ? _("Gallery (Hugging Face Hub)...") : _("Gallery...");
    if (ImGui::Button(label)) state.ui.show_hub_gallery = true;
  }
  record_widget("model_gallery");
  if (!state.recent_models.empty() && ImGui::TreeNode(ui_id(_("Recent models"), "Recent models").c_str())) {  // i18n: English (the id)
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
  // TRANSLATORS: the start of the model file's SHA-256 checksum.
  ImGui::TextDisabled(_("SHA-256 %s"), vit.sha256().substr(0, 16).c_str());
  // TRANSLATORS: the input's width x height, the patch grid's columns x rows = N patches; T is the number of tokens.
  text_wrapped(_("input %d x %d pixels, grid %d x %d = %d patches, T = %d tokens"), src.input_width(), src.input_height(), g.cols,
               g.rows, g.N(), g.T());
  // TRANSLATORS: "attnlab vit --info" is the command that prints the same (typed as it is).
  if (ImGui::TreeNode(ui_id(_("Architecture (attnlab vit --info)"), "Architecture (attnlab vit --info)").c_str())) {  // i18n: English (the id)
    ImGui::TextUnformatted(vit.info().c_str());
    ImGui::TreePop();
  }
  const auto top = src.top_classes(5);
  if (!top.empty()) {
    ImGui::Separator();
    ImGui::TextUnformatted(_("Prediction (top 5)"));
    const auto& labels = src.model().arch.labels;
    for (const auto& [c, p] : top) {
      // TRANSLATORS: a class without a name in the model, by its number.
      const std::string name = c < static_cast<int>(labels.size()) ? labels[static_cast<std::size_t>(c)] : text_format(_("class %d"), c);
      char label[160];
      std::snprintf(label, sizeof label, "%5.1f %%  %s##top%d", 100.0 * p, name.c_str(), c);
      // The bar where the column has room for it and the line; the line never past the column.
      const float bar = ImGui::GetFontSize() * 6, spacing = ImGui::GetStyle().ItemSpacing.x;
      if (ImGui::GetContentRegionAvail().x >= bar + spacing + ImGui::CalcTextSize(label, nullptr, true).x) {
        ImGui::ProgressBar(p, ImVec2(bar, 0), "");
        ImGui::SameLine();
      }
      // A click asks why: the relevance view explains that class (issue 49).
      if (ImGui::Selectable(label, state.vit_view == "relevance" && state.relevance_class == std::to_string(c), 0,  // i18n: English (a view name)
                            ImVec2(std::max(1.0f, ImGui::GetContentRegionAvail().x), 0))) {
        state.relevance_class = std::to_string(c);
        state.vit_view = "relevance";
      }
      record_widget("vit_top:" + std::to_string(c));
      // TRANSLATORS: %s is a class's name.
      if (ImGui::IsItemHovered()) ImGui::SetTooltip(_("Why %s? Shows which patches this class's score depended on"), name.c_str());
    }
  }
}

void choice_section(AppState& state, const VitRun& src) {
  const SourceGrid g = src.grid();
  ImGui::Separator();
  ImGui::TextUnformatted(_("What the map shows"));
  SourceChoice& c = state.vit;
  int layer = choice_layer(c, src.layers());
  // Short labels, the keys in the tooltips: nothing cut in a projector's narrow column.
  // TRANSLATORS: the ViT's layer (a slider's label).
  if (ImGui::SliderInt(_("layer"), &layer, 0, src.layers() - 1)) c.layer = layer;
  record_widget("vit_layer");
  // TRANSLATORS: PgUp, PgDn, Home and End are keys.
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", _("PgUp / PgDn: the layer before / after; Home, End: the first, the last"));
  const HeadChoice head = choice_head(c, src.heads());
  // TRANSLATORS: the attention head (a combo's label).
  if (ImGui::BeginCombo(_("head"), head_choice_label(head).c_str())) {
    for (const HeadFusion f : {HeadFusion::Mean, HeadFusion::Max, HeadFusion::Min})
      if (ImGui::Selectable(head_choice_label(HeadChoice{-1, f}).c_str(), head == HeadChoice{-1, f})) c.head = HeadChoice{-1, f};
    for (int h = 0; h < src.heads(); ++h)
      if (ImGui::Selectable(head_choice_label(HeadChoice{h, HeadFusion::Mean}).c_str(), head.head == h)) c.head = HeadChoice{h, HeadFusion::Mean};
    ImGui::EndCombo();
  }
  record_widget("vit_head");
  // TRANSLATORS: 0-9 and A are keys.
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", _("0-9: that head; A: the heads' mean"));
  // TRANSLATORS: the query token, chosen by the buttons after it.
  ImGui::TextUnformatted(_("query:"));
  // TRANSLATORS: the CLS token as the query; C is its key.
  const char* const cls_label = _("CLS (C)");
  same_line_if_room(ImGui::CalcTextSize(cls_label).x + ImGui::GetFrameHeight() * 2);
  if (ImGui::RadioButton(cls_label, c.prefix_token == 0)) c.prefix_token = 0;
  record_widget("vit_query_cls");
  for (int r = 1; r < g.prefix; ++r) {
    const std::string label = token_label(g, r);  // "register 0" is token 1
    same_line_if_room(ImGui::CalcTextSize(label.c_str()).x + ImGui::GetFrameHeight() * 2);
    if (ImGui::RadioButton(label.c_str(), c.prefix_token == r)) c.prefix_token = r;
  }
  // TRANSLATORS: the query patch by its column and row.
  const std::string patch = text_format(_("patch (%d,%d)"), c.cell.col, c.cell.row);
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
  // xgettext:no-c-format
  // TRANSLATORS: a slider's label (not a format): the share, in percent, of the CLS token's attention row the outlines hold.
  const char* const mass_label = _("% of the CLS row");
  same_line_if_room(ImGui::GetFontSize() * 5 + ImGui::CalcTextSize((std::string(mass_label) + " (?)").c_str()).x);
  float percent = state.vit_mass * 100.0f;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 4);
  if (ImGui::SliderFloat(narrow(mass_label, ImGui::GetFontSize() * 4) ? "##vit_mass" : mass_label, &percent, 5.0f,
                         95.0f, "%.0f"))
    state.vit_mass = percent / 100.0f;
  record_widget("vit_mass");
  help_marker(_("Per head, an outline around the fewest patches that hold this share of the CLS token's attention over "
                "the patches in this layer, as DINO (Caron et al. 2021) draws them."));
  setting_widget(state, "vit.bilinear");
  int resize = state.vit_resize;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
  // TRANSLATORS: the model's input size: the short side in pixels.
  const char* const size_label = _("input size");
  if (ImGui::InputInt(narrow(size_label, ImGui::GetFontSize() * 6) ? "##input size" : size_label, &resize, src.patch(), src.patch() * 4, ImGuiInputTextFlags_EnterReturnsTrue))
    state.vit_resize = std::clamp(resize, 0, 4096);
  record_widget("vit_resize");
  help_marker(_("The input's short side in pixels (0: the size the model was trained at)."));
}

}  // namespace

void draw_vit_panel(AppState& state, VitSession& vit) {
  open_section(state, vit);
  const VitRun* src = vit.run();
  if (!src) {
    ImGui::Separator();
    // TRANSLATORS: "Images", "Gallery" and "Model → Gallery" name the window's panel, button and menu item as they are shown;
    // "section Models" is the README's (English).
    text_wrapped("%s", _("No model loaded. The bundled Fashion-MNIST ViT is in the Images panel's gallery; DINO, DINOv2, DeiT "
                         "and ViT download from the Hugging Face Hub through the Gallery button (or Model → Gallery); any "
                         "timm, DINO or Hugging Face checkpoint (.safetensors, .pth, .bin or its folder) opens above (README, "
                         "section Models)."));
    return;
  }
  ImGui::Separator();
  about_section(state, *src, vit);
  choice_section(state, *src);
}

}  // namespace attnlab::app
