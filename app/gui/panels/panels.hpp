#pragma once
// The side panels: each lives in its own file, reads the one AppState, draws, and writes the
// user's changes back into it; the main loop (shell/app.cpp) applies them to the sessions.
#include "app/gui/state/app_state.hpp"
#include "app/gui/sessions/hand_made_session.hpp"
#include "app/gui/state/memo.hpp"
#include "core/hand_made/reference.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace attnlab::app {

class VitSession;

/// Patch size, temperature, mask, positional codes, colormap, normalization, opacity, UI.
/// `key_help`: the keys in one line (the key table's key_help, which lives in the shell).
void draw_controls_panel(AppState& state, HandMadeSession& hand_made, const std::string& key_help);
/// The Diagnostics panel's live check of the engine against the CPU reference, kept between
/// frames by the panel's owner (the App).
struct EngineRowCheck {
  /// The CPU reference for the hand-made session's image and settings (null, with the error,
  /// when it cannot be made); key: HandMadeSession::generation().
  struct Made {
    std::unique_ptr<Reference> reference;
    std::string error;
  };
  Memo<unsigned, Made> reference;
  /// The largest absolute difference between the engine's row and the reference's, every head;
  /// key: (generation, the query whose rows the engine had).
  Memo<std::pair<unsigned, int>, double> max_diff;
};

/// Developer readouts away from the map: driver and versions, frame and row-pass times, the
/// engine's row against the CPU reference (fills state.report.checks), the views' own checks,
/// and which runner does a ViT's forward pass (auto, gpu, cpu: state.vit_backend) and why.
/// `check`: the row check kept between frames.
void draw_diagnostics_panel(AppState& state, HandMadeSession& hand_made, const VitSession& vit, EngineRowCheck& check);
/// The bundled gallery, open by path; dropped files arrive as commands (AppState::commands).
void draw_images_panel(AppState& state, const std::vector<std::filesystem::path>& gallery);

}  // namespace attnlab::app
