#pragma once
// The Train tab (issue 29, item 4): ViTs trained in the window — run A and run B — their shape
// and run controls, their curves and the mean attention distance of their heads against the
// training step, and the two runs side by side. The models being trained are MapSources
// (VitMapSource over each run's TrainSession::vit()), drawn by the map views.
#include "app/gui/state/app_state.hpp"
#include "app/gui/train/cka_view.hpp"
#include "app/gui/maps/map_source.hpp"
#include "app/gui/maps/view.hpp"
#include "app/gui/sessions/train_session.hpp"

#include <imgui.h>

#include <string>
#include <vector>

namespace attnlab::app {

/// The left column's Train tab: which run the maps show (A or B, with how the two share the
/// training thread), the shown run's shape and experiment switches (pooling, position
/// embedding, patch, depth, heads, D; batch, rate, steps, seed; a copy of the other run's),
/// Start / Pause / Resume / Reset, steps/s and the last numbers, the probe (a test image or the
/// photo), save checkpoint and open it as a ViT.
void draw_train_panel(AppState& state, TrainRuns& runs);
/// The lower panel while the Train tab is shown: the shown run's curves (loss, train and test
/// accuracy) and the mean attention distance of every head of the chosen layer against the
/// step; both runs side by side (draw_train_comparison); the shown run's pinned queries; the
/// similarity of its layers (CKA, computed by `cka`): the views of `views` that work on the run
/// (app/gui/maps/view.hpp, the registry's). `a` and `b` are the runs' map sources.
void draw_train_lower(AppState& state, TrainRuns& runs, MapSource& a, MapSource& b, CkaJob& cka,
                      const std::vector<std::unique_ptr<View>>& views);
/// Run A's and run B's main maps for the same choice (Document::train: layer, head, query),
/// through MapSource::main_map of each, labelled with the run's switches, step and test
/// accuracy, beside their loss and test accuracy curves on shared axes. Records what it drew in
/// the frame's report (train_compared).
void draw_train_comparison(AppState& state, TrainRuns& runs, MapSource& a, MapSource& b);

/// The main map's place when the shown run is a CNN (train_cnn_view.cpp): it has no attention
/// matrix, so the probe as the CNN sees it, with the input gradient of its prediction over it
/// (|∂ logit/∂ pixel|, summed over colour), what it predicts, and where the ViT's maps are.
void draw_cnn_run_map(AppState& state, TrainSession& run);

/// A line of a plot against the training step.
struct PlotSeries {
  std::vector<float> x, y;
  ImU32 colour;
  std::string label;
};
/// Lines over the step axis in a box of `size` at the cursor, `title` above it: the y range
/// [lo, hi] written at the left, the steps under it, each series' label in its colour at the top.
void step_plot(const std::string& id, const char* title, ImVec2 size, const std::vector<PlotSeries>& series, float lo, float hi);

/// A run's curves as plot lines: the loss, the train accuracy and the test accuracy (where
/// measured), and masked patches' loss on the fixed crops, against the step, in `colours` (loss,
/// train, test and fixed), labelled `prefix` + "loss", "train", "test", "fixed crops";
/// `loss_hi` the largest loss (at least 0.5).
struct RunCurves {
  PlotSeries loss, train, test, fixed;
  float loss_hi = 0.5f;
};
RunCurves run_curves(const std::vector<TrainPoint>& points, const std::string& prefix, const ImU32 (&colours)[3]);

// The masked-patch task's pieces (train_masked_view.cpp).
/// The task's two radio buttons (classify Fashion-MNIST, masked patches of the photo); a switch
/// takes the task's defaults (TrainConfig::set_task). Returns whether the task is masked patches.
bool task_switch(TrainConfig& c);
/// Masked patches' own switches, `width` pixels wide: the crops' side, the patch sizes that cut
/// it into at least 2 × 2, and the share of patches masked (10 to 90 %).
void masked_switches(TrainConfig& c, float width);
/// The reconstruction of the run's probe (the whole photo) under its fixed mask, three pictures
/// in `size` (masked, filled in by the model, original), and the fixed crops' loss.
void draw_reconstruction(TrainSession& run, ImVec2 size);

}  // namespace attnlab::app
