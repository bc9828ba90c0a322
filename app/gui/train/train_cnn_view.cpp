// The main map's place for a CNN run of the Train tab (issue 50, item 2): a CNN has no attention
// matrix, so the map shows what the CNN's snapshot has, its probe and the input gradient of its
// prediction (TrainSession::cnn_snapshot), as large as the room allows.
#include "app/gui/train/train_views.hpp"

#include "app/gui/state/widget_log.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <cstdio>

namespace attnlab::app {

void draw_cnn_run_map(AppState& state, TrainSession& run) {
  const CnnSnapshot* snap = run.cnn_snapshot();
  // Every word above the picture: below it, in presentation mode, is where the F5 hint sits.
  // TRANSLATORS: the run (A or B), the other run, then what is shown below. "The maps show" is the Train tab's
  // choice of run, as it is labelled there.
  const std::string line = text_format(_("Run %s is a CNN (ResNet): no attention matrix to map (the ViT's maps: \"The maps show\" run %s). %s"),
                                       run.name().c_str(), run.name() == "A" ? "B" : "A",
                                       snap ? _("Shown: the probe with where its prediction is sensitive, |d logit / d pixel|.")
                                            : _("Its first snapshot is on its way..."));
  wrap_text(line);
  if (!snap) return;
  const auto& labels = snap->model->arch.labels;
  const std::string predicted = snap->klass >= 0 && snap->klass < static_cast<int>(labels.size()) ? labels[static_cast<std::size_t>(snap->klass)] : "?";
  // TRANSLATORS: the training step, the probe image, the class predicted and its probability in percent.
  ImGui::TextDisabled(_("step %lld, on %s: predicts %s (%.0f %%)"), static_cast<long long>(run.step()), run.shown_probe().c_str(), predicted.c_str(),
                      100.0 * snap->probability);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float side = std::max(std::min(avail.x, avail.y), 32.0f);
  ImGui::Image(run.cnn_texture(), ImVec2(side, side));
  record_widget("train:cnn_map");
  state.report.train_cnn = {{"run", run.name()}, {"step", run.step()}, {"probe", run.shown_probe()}, {"predicted", predicted},
                            {"probability", snap->probability}};
}

}  // namespace attnlab::app
