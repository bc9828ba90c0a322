#pragma once
// The Train tab (issue 29, item 4): a ViT trained in the window, its shape and run controls,
// its curves and the mean attention distance of its heads against the training step. The model
// being trained is a MapSource (VitMapSource over TrainSession::vit()), drawn by the map views.
#include "app/gui/app_state.hpp"
#include "app/gui/cka_view.hpp"
#include "app/gui/map_source.hpp"
#include "app/gui/train_session.hpp"

namespace attnlab::app {

/// The left column's Train tab: the shape and the experiment switches (pooling, position
/// embedding, patch, depth, heads, D; batch, rate, steps, seed), Start / Pause / Resume / Reset,
/// steps/s and the last numbers, the probe image, save checkpoint and open it as a ViT.
void draw_train_panel(AppState& state, TrainSession& train);
/// The lower panel while the Train tab is shown: the curves (loss, train and test accuracy),
/// the mean attention distance of every head of the chosen layer against the step, the pinned
/// queries of `source` (the model being trained), and the similarity of its layers (CKA,
/// computed by `cka`).
void draw_train_lower(AppState& state, TrainSession& train, MapSource& source, CkaJob& cka);

}  // namespace attnlab::app
