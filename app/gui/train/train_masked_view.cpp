// The Train tab's second task (issue 29, item 7): masked-patch reconstruction on crops of the
// window's photo (VitTask::MaskedPatches, core/vit/photo_crops.hpp). Its switches (the task, the
// crops' side, the share of patches masked, the patch sizes that divide the crop) and the
// reconstruction the lower panel shows: the whole photo at the crop size under a fixed mask,
// with its masked patches grey, as the model being trained fills them in, and as it is.
#include "app/gui/train/train_views.hpp"

#include "app/gui/state/widget_log.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

namespace attnlab::app {

namespace {
constexpr int kCrops[] = {32, 48, 64, 96, 128};
}  // namespace

bool task_switch(TrainConfig& c) {
  // TRANSLATORS: the Train tab's choice of what the model learns (classify, or fill in masked patches).
  ImGui::TextUnformatted(_("task"));
  const VitTask tasks[2] = {VitTask::Classify, VitTask::MaskedPatches};
  const char* const names[2] = {_("classify Fashion-MNIST"), _("masked patches of the photo")};
  // TRANSLATORS: shorter forms of "classify Fashion-MNIST" and "masked patches of the photo", for a narrow column.
  const char* const short_names[2] = {_("classify"), _("masked patches")}, *const shortest[2] = {_("classify"), _("masked")};
  for (int t = 0; t < 2; ++t) {  // beside the word while it fits, else below, shorter in a narrow column
    const float room = ImGui::GetContentRegionAvail().x;
    const char* name = radio_width(names[t]) <= room ? names[t] : radio_width(short_names[t]) <= room ? short_names[t] : shortest[t];
    same_line_if_room(radio_width(name));
    // A switch of task takes that task's defaults (its model, data and rate differ).
    if (ImGui::RadioButton(name, c.shape.task == tasks[t]) && c.shape.task != tasks[t]) c.set_task(tasks[t]);
    record_widget(t ? "train:task_masked" : "train:task_classify");
  }
  return c.shape.task == VitTask::MaskedPatches;
}

void masked_switches(TrainConfig& c, float width) {
  ImGui::TextDisabled("%s", c.photo ? text_format(_("crops of %s, 20-100 %% of its area, flipped half the time"), c.photo_name.c_str()).c_str()
                                    : _("no photo open: open one to train on it"));
  int crop = static_cast<int>(std::find(std::begin(kCrops), std::end(kCrops), c.shape.image_cols) - std::begin(kCrops));
  std::string crop_texts[std::size(kCrops)];
  const char* crop_names[std::size(kCrops)];
  for (std::size_t i = 0; i < std::size(kCrops); ++i) {
    // TRANSLATORS: a crop's side in pixels.
    crop_texts[i] = text_format(_("%d px"), kCrops[i]);
    crop_names[i] = crop_texts[i].c_str();
  }
  ImGui::SetNextItemWidth(width);
  if (ImGui::Combo(_("crop side"), &crop, crop_names, static_cast<int>(std::size(kCrops)))) {
    c.shape.image_rows = c.shape.image_cols = kCrops[crop];
    while (c.shape.patch > 1 && (c.shape.image_cols % c.shape.patch != 0 || c.shape.image_cols / c.shape.patch < 2)) c.shape.patch /= 2;
  }
  record_widget("train:crop");
  // The patch sizes that cut the crop into at least 2 × 2 patches.
  std::vector<int> patches;
  std::vector<std::string> names;
  for (const int p : {4, 8, 16, 32})
    if (c.shape.image_cols % p == 0 && c.shape.image_cols / p >= 2) {
      patches.push_back(p);
      const int g = c.shape.image_cols / p;
      // TRANSLATORS: a patch size in pixels, then the grid of patches it cuts the crop into.
      names.push_back(text_format(_("%d (%d x %d patches)"), p, g, g));
    }
  int patch = static_cast<int>(std::find(patches.begin(), patches.end(), c.shape.patch) - patches.begin());
  ImGui::SetNextItemWidth(width);
  // TRANSLATORS: the patch size (pixels).
  if (ImGui::BeginCombo(_("patch"), patch < static_cast<int>(names.size()) ? names[static_cast<std::size_t>(patch)].c_str() : "?")) {
    for (std::size_t i = 0; i < patches.size(); ++i)
      if (ImGui::Selectable(names[i].c_str(), static_cast<int>(i) == patch)) c.shape.patch = patches[i];
    ImGui::EndCombo();
  }
  record_widget("train:patch");
  int percent = static_cast<int>(std::lround(c.shape.mask_ratio * 100.0f));
  ImGui::SetNextItemWidth(width);
  // xgettext:no-c-format
  // TRANSLATORS: the share of patches masked, in percent (a slider's label, not a format).
  if (ImGui::SliderInt(_("masked (% of patches)"), &percent, 10, 90)) c.shape.mask_ratio = static_cast<float>(std::clamp(percent, 10, 90)) / 100.0f;
  record_widget("train:mask_ratio");
}

void draw_reconstruction(TrainSession& run, ImVec2 size) {
  // Text wrapped to the column, pictures as large as the rest of it allows.
  const float x0 = ImGui::GetCursorPosX(), top = ImGui::GetCursorPosY();
  ImGui::PushTextWrapPos(x0 + size.x);
  // TRANSLATORS: the captions of the three pictures below, left to right.
  text_wrapped("%s", _("masked / filled in by the model / the photo"));
  const MaskedPatchPictures* pics = run.pictures();
  const float gap = ImGui::GetStyle().ItemSpacing.x, line = ImGui::GetTextLineHeightWithSpacing();
  const float room = size.y - (ImGui::GetCursorPosY() - top) - 2 * line;
  const float side = std::max(std::min((size.x - 2 * gap) / 3, room), 16.0f);
  for (int i = 0; i < 3; ++i) {
    if (i) ImGui::SameLine();
    if (pics) ImGui::Image(run.picture_texture(i), ImVec2(side, side));
    else ImGui::Dummy(ImVec2(side, side));
    record_widget(i == 0 ? "train:recon_masked" : i == 1 ? "train:recon_filled" : "train:recon_original");
  }
  const float loss = run.fixed_loss();
  if (loss >= 0) ImGui::TextDisabled(_("loss on %d fixed crops %.4f (0: every masked pixel right)"), kTrainFixedCrops, static_cast<double>(loss));
  ImGui::PopTextWrapPos();
  ImGui::Dummy(ImVec2(size.x, 0));  // the column keeps its width
}

}  // namespace attnlab::app
