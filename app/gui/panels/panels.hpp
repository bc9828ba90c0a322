#pragma once
// The side panels: each lives in its own file, reads the one AppState, draws, and writes the
// user's changes back into it; the main loop (shell/app.cpp) applies them to the sessions.
#include "app/gui/state/app_state.hpp"
#include "app/gui/sessions/hand_made_session.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace attnlab::app {

class VitSession;

/// Patch size, temperature, mask, positional codes, colormap, normalization, opacity, UI.
/// `key_help`: the keys in one line (the key table's key_help, which lives in the shell).
void draw_controls_panel(AppState& state, HandMadeSession& hand_made, const std::string& key_help);
/// Developer readouts away from the map: driver and versions, frame and row-pass times, the
/// engine's row against the CPU reference (fills state.report.checks), the views' own checks,
/// and which runner does a ViT's forward pass (auto, gpu, cpu: state.vit_backend) and why.
void draw_diagnostics_panel(AppState& state, HandMadeSession& hand_made, const VitSession& vit);
/// The bundled gallery, open by path; dropped files arrive as commands (AppState::commands).
void draw_images_panel(AppState& state, const std::vector<std::filesystem::path>& gallery);

}  // namespace attnlab::app
