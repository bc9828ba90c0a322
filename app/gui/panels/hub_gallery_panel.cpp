// The Model → Gallery window: models that teach, downloaded from the Hugging Face Hub into the
// cache huggingface_hub shares (core/io/hub.hpp), then opened like any checkpoint.
#include <imgui.h>

#include <string>

#include "app/gui/state/app_state.hpp"
#include "app/gui/sessions/hub_session.hpp"
#include "app/gui/state/ui_common.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/translate.hpp"

namespace attnlab::app {
namespace {

// The pull under way: which file, a bar over its bytes, the rate and time left, and Cancel.
void draw_progress(AppState& state, HubSession& hub) {
  const hub::TransferStatus s = hub.status();
  const float fraction =
      s.bytes_total ? static_cast<float>(static_cast<double>(s.bytes_done) / static_cast<double>(s.bytes_total)) : 0.0f;
  const std::string label =
      s.file.empty() ? std::string(_("asking the hub...")) : hub::format_status(s);  // "[2/3] model.safetensors 12 MB / 87 MB, ..."
  // TRANSLATORS: %s is the model's name on the Hugging Face Hub.
  ImGui::TextUnformatted(text_format(_("Downloading %s"), hub.pulling().c_str()).c_str());
  const float cancel_w = ImGui::CalcTextSize(_("Cancel")).x + ImGui::GetStyle().FramePadding.x * 2;
  ImGui::ProgressBar(fraction, ImVec2(-cancel_w - ImGui::GetStyle().ItemSpacing.x, 0), label.c_str());
  record_widget("hub_progress");
  ImGui::SameLine();
  if (ImGui::Button((std::string(_("Cancel")) + "##hub").c_str())) hub.cancel();
  record_widget("hub_cancel");
  state.commands.redraw();  // the bar moves without an input event
}

}  // namespace

void draw_hub_gallery(AppState& state, HubSession& hub) {
  const hub::HubConfig& config = hub.config();
  // TRANSLATORS: huggingface_hub and timm are Python packages (names that stay); %s is the cache's folder.
  text_wrapped(
      _("Trained ViTs from the Hugging Face Hub, kept in the cache Python's huggingface_hub and timm use "
        "(%s): a model downloaded by either is not downloaded again."),
      config.cache_dir.string().c_str());
  if (config.offline)
    // TRANSLATORS: HF_HUB_OFFLINE is an environment variable's name.
    ImGui::TextColored(ImVec4(1, 0.7f, 0.3f, 1), "%s", _("HF_HUB_OFFLINE is set: only models in the cache open."));
  if (hub.busy()) draw_progress(state, hub);
  ImGui::Separator();
  const auto models = hub::gallery();
  const auto& cached = hub.cached();
  if (!ImGui::BeginTable("hub_gallery", 3,
                         ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_BordersInnerH))
    return;
  ImGui::TableSetupColumn("model", ImGuiTableColumnFlags_WidthStretch, 1.4f);
  ImGui::TableSetupColumn("what it shows", ImGuiTableColumnFlags_WidthStretch, 2.0f);
  ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed,
                          ImGui::CalcTextSize(_("Download")).x + ImGui::GetStyle().FramePadding.x * 2);
  for (std::size_t i = 0; i < models.size(); ++i) {
    const hub::GalleryEntry& m = models[i];
    const std::string repo(m.repo_id);
    const bool in_cache = i < cached.size() && cached[i].has_value();
    ImGui::PushID(static_cast<int>(i));
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(std::string(m.title).c_str());
    ImGui::TextDisabled("%s", repo.c_str());
    ImGui::TextDisabled("%s, %s", hub::format_bytes(m.approx_bytes).c_str(), std::string(m.licence).c_str());
    ImGui::TableNextColumn();
    text_wrapped("%s", _(m.shows.data()));  // marked N_ in core/io/hub.cpp
    if (in_cache) {
      ImGui::TextColored(ImVec4(0.4f, 0.85f, 0.4f, 1), "%s", _("in the cache"));
      record_widget("hub_cached:" + repo);
    }
    ImGui::TableNextColumn();
    if (in_cache) {
      // TRANSLATORS: opens the downloaded model (a button).
      if (ImGui::Button(_("Open"))) {
        if (m.resnet) {  // beside the ViT: the ViT views' CNN tab
          state.cnn_model = *cached[i];
          state.vit_view = "cnn";
        } else {
          state.commands.open_model(*cached[i]);
        }
        state.ui.show_hub_gallery = false;  // the map it opens on is under the window
      }
    } else {
      ImGui::BeginDisabled(hub.busy() || config.offline);
      if (ImGui::Button(_("Download"))) hub.pull(hub::RepoRef{repo});
      ImGui::EndDisabled();
    }
    record_widget("hub:" + repo);
    ImGui::PopID();
  }
  ImGui::EndTable();
}

}  // namespace attnlab::app
