#pragma once
// One widget per setting, shared by every view that offers it: the Controls panel and the
// teaching views draw the same τ slider and the same head chooser, so range, scale and rounding
// cannot differ between copies. Each writes the document (AppState) and returns true when the
// user changed the value this frame.
#include "app/gui/state/app_state.hpp"

namespace attnlab::app {

/// The softmax temperature τ of eq. 26.20 (softmax(Q Kᵀ / (τ √m))), 0.01 … 100 on a log scale,
/// writing state.attention.temperature. `label` is the ImGui label (its "##" part an id);
/// `width_em` the slider's width in font heights (0: the window's default item width).
bool temperature_slider(AppState& state, const char* label = "temperature", float width_em = 0);

/// The main head (state.hand_made.head.head, a HeadKind), the one the image view shows, by name.
bool head_combo(AppState& state, const char* label = "head", float width_em = 0);

}  // namespace attnlab::app
