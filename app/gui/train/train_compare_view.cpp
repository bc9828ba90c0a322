// The Train tab's two runs side by side (issue 29, item 4): run A's and run B's main maps for the
// same layer, head and query (Document::train), each from its own VitMapSource's main_map — no
// map code here — labelled with the run's step, test accuracy and switches, beside both runs'
// loss and test accuracy on shared axes.
#include "app/gui/train/train_views.hpp"

#include "app/gui/state/widget_log.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <cstdio>

namespace attnlab::app {

namespace {
// Each run's colour, in its label and its curves.
constexpr ImU32 kRunColours[2] = {IM_COL32(255, 160, 60, 255), IM_COL32(175, 130, 255, 255)};
}  // namespace

void draw_train_comparison(AppState& state, TrainRuns& runs, MapSource& a, MapSource& b) {
  MapSource* sources[2] = {&a, &b};
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float gap = ImGui::GetStyle().ItemSpacing.x, line = ImGui::GetTextLineHeightWithSpacing();
  // Four columns: the two maps (square, under their labels) and the two plots.
  const float column = std::max((avail.x - 3 * gap) / 4, 60.0f);
  const float side = std::max(std::min(avail.y - 5 * line - 4, column), 40.0f);
  const float plot_h = std::max(avail.y - line - 6, 60.0f);
  nlohmann::json compared = nlohmann::json::array();
  for (int r = 0; r < 2; ++r) {
    TrainSession& run = runs[r];
    MapSource& source = *sources[r];
    if (r) ImGui::SameLine();
    ImGui::BeginGroup();
    const float test = run.test_accuracy();
    const bool masked = run.task() == VitTask::MaskedPatches;
    std::string head;
    if (run.started() && masked)
      // TRANSLATORS: the run (A or B) and its step; on a second line its loss on the fixed crops.
      head = text_format(_("run %s, step %lld\nfixed-crops loss %.4f"), run.name().c_str(), static_cast<long long>(run.step()),
                         static_cast<double>(std::max(run.fixed_loss(), 0.0f)));
    else if (run.started())
      // TRANSLATORS: the run (A or B) and its step; on a second line its test accuracy in percent.
      head = text_format(_("run %s, step %lld\ntest accuracy %.1f %%"), run.name().c_str(), static_cast<long long>(run.step()),
                         test >= 0 ? 100.0 * test : 0.0);
    else
      // TRANSLATORS: the run (A or B).
      head = text_format(_("run %s\nnot started"), run.name().c_str());
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + column);
    ImGui::PushStyleColor(ImGuiCol_Text, kRunColours[r]);
    text_wrapped("%s", head.c_str());
    ImGui::PopStyleColor();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    text_wrapped("%s", run.switches().c_str());
    ImGui::PopStyleColor();
    ImGui::PopTextWrapPos();
    const std::string id = r ? "train:compare_b" : "train:compare_a";
    const float top = ImGui::GetCursorPosY();
    if (const CnnSnapshot* snap = run.cnn_snapshot()) {
      // A CNN's column: the probe with its input gradient (it has no attention to map).
      ImGui::Image(run.cnn_texture(), ImVec2(side, side));
      record_widget(id);
      const auto& labels = snap->model->arch.labels;
      const std::string predicted = snap->klass >= 0 && snap->klass < static_cast<int>(labels.size()) ? labels[static_cast<std::size_t>(snap->klass)] : "?";
      compared.push_back({{"run", run.name()},
                          {"model", "cnn"},
                          {"step", run.step()},
                          {"switches", run.switches()},
                          {"task", task_name(run.task())},
                          {"test_accuracy", test},
                          {"probe", run.shown_probe()},
                          {"predicted", predicted},
                          {"probability", snap->probability},
                          {"shows", "input gradient"}});
    } else if (const SourceInfo info = source.info(); info.ready) {
      const MainMap map = source.main_map(state.train);
      std::vector<Cell> outline;
      if (const auto c = query_cell(info.grid, map.query)) outline.push_back(*c);
      source_thumbnail(id, source, [&] { return map.texture; }, state, ImVec2(side, side), outline, r == state.train_run);
      compared.push_back({{"run", run.name()},
                          {"model", "vit"},
                          {"step", run.step()},
                          {"switches", run.switches()},
                          {"pooling", pooling_name(run.shape().pooling)},
                          {"task", task_name(run.shape().task)},
                          {"test_accuracy", test},
                          {"fixed_loss", run.fixed_loss()},
                          {"probe", run.shown_probe()},
                          {"layer", map.layer},
                          {"head", head_choice_json(map.head)},
                          {"token", map.query},
                          {"shows", map.shows},
                          {"values", map.values}});
    } else {
      ImGui::Dummy(ImVec2(side, side));
      record_widget(id);
    }
    // The labels above may wrap to fewer lines in one run than the other: the maps end level,
    // and the column keeps its width.
    ImGui::SetCursorPosY(std::max(ImGui::GetCursorPosY(), top + side));
    ImGui::Dummy(ImVec2(column, 0));
    ImGui::EndGroup();
  }
  state.report.train_compared = compared;
  // Both runs' curves on the same axes.
  // The second plot: test accuracy, or the fixed crops' loss when both runs reconstruct masked patches.
  const bool both_masked = runs.a.task() == VitTask::MaskedPatches && runs.b.task() == VitTask::MaskedPatches;
  PlotSeries loss[2], accuracy[2];
  float loss_hi = 0.5f;
  for (int r = 0; r < 2; ++r) {
    const ImU32 colours[3] = {kRunColours[r], kRunColours[r], kRunColours[r]};
    RunCurves c = run_curves(runs[r].points(), runs[r].name() + " ", colours);
    loss[r] = std::move(c.loss);
    accuracy[r] = std::move(both_masked ? c.fixed : c.test);
    loss_hi = std::max(loss_hi, c.loss_hi);
  }
  ImGui::SameLine();
  ImGui::BeginGroup();
  step_plot("train:compare_loss", _("loss, runs A and B"), ImVec2(column, plot_h), {loss[0], loss[1]}, 0.0f, loss_hi);
  ImGui::EndGroup();
  ImGui::SameLine();
  ImGui::BeginGroup();
  if (both_masked)
    step_plot("train:compare_accuracy", _("fixed-crops loss, A and B"), ImVec2(column, plot_h), {accuracy[0], accuracy[1]}, 0.0f, loss_hi);
  else
    step_plot("train:compare_accuracy", _("test accuracy, A and B"), ImVec2(column, plot_h), {accuracy[0], accuracy[1]}, 0.0f, 1.0f);
  ImGui::EndGroup();
}

}  // namespace attnlab::app
