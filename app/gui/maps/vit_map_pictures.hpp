#pragma once
// What the ViT's map views (the map source, the ViT and Train tabs) share: the main map's values,
// a cached map texture and the heads' colours (vit_map_pictures.cpp).
#include "app/gui/sessions/vit_session.hpp"
#include "app/gui/state/app_state.hpp"
#include "app/gui/state/source_choice.hpp"
#include "core/vit/vit_run.hpp"

#include <imgui.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace attnlab::app {

/// What the main map shows for `choice`: the row of A, the rollout row or the token norms, N values.
std::vector<float> vit_main_values(const AppState& state, const SourceChoice& choice, const VitRun& source);
/// A texture of N values coloured with the state's colormap and normalization, cached in `slot`
/// under `key`.
ImTextureID vit_map_texture(VitSession& vit, const AppState& state, const std::string& slot, const std::string& key,
                            const std::vector<float>& values);
/// The same with the values computed only when the slot's texture is made again (its key
/// changed), coloured over `range` when given (Compare's one scale), else their own range.
ImTextureID vit_map_texture(VitSession& vit, const AppState& state, const std::string& slot, const std::string& key,
                            const std::function<std::vector<float>()>& values, std::optional<ValueRange> range = std::nullopt);
/// Colour of head h in the masks and the distance plot.
ImU32 vit_head_colour(int h);

}  // namespace attnlab::app
