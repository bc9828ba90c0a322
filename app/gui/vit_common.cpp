// Pieces the ViT views share: the choices in AppState resolved against a source, the values of
// the main map, coloured textures of maps and the photo under them.
#include "app/gui/map_source.hpp"
#include "app/gui/vit_views.hpp"

#include <algorithm>

namespace attnlab::app {

HeadChoice vit_head_choice(int head) {
  if (head >= 0) return HeadChoice{head, HeadFusion::Mean};
  if (head == kVitHeadMax) return HeadChoice{-1, HeadFusion::Max};
  if (head == kVitHeadMin) return HeadChoice{-1, HeadFusion::Min};
  return HeadChoice{-1, HeadFusion::Mean};
}

std::string vit_head_label(int head) {
  if (head >= 0) return "head " + std::to_string(head + 1);
  if (head == kVitHeadMax) return "max over heads";
  if (head == kVitHeadMin) return "min over heads";
  return "mean of heads";
}

int vit_layer(const AppState& state, const VitRun& source) {
  const int L = source.layers();
  return state.vit_layer < 0 || state.vit_layer >= L ? L - 1 : state.vit_layer;
}

int vit_query_token(const AppState& state, const VitRun& source) {
  const SourceGrid g = source.grid();
  if (state.vit_token >= 0) return std::min(state.vit_token, g.prefix - 1);
  const int c = std::clamp(state.vit_cell.col, 0, g.cols - 1), r = std::clamp(state.vit_cell.row, 0, g.rows - 1);
  return g.prefix + r * g.cols + c;
}


std::vector<float> vit_main_values(const AppState& state, const VitRun& source) {
  const int layer = vit_layer(state, source);
  if (state.vit_norms) {
    const std::vector<float> norms = source.token_norms(layer);
    return std::vector<float>(norms.begin() + source.grid().prefix, norms.end());
  }
  const int token = vit_query_token(state, source);
  const HeadChoice head = vit_head_choice(std::min(state.vit_head, source.heads() - 1));
  if (state.vit_rollout) return source.rollout_row(layer, head.head >= 0 ? HeadFusion::Mean : head.fusion, token);
  return source.patch_row(layer, head, token);
}

ImTextureID vit_map_texture(VitSession& vit, const AppState& state, const std::string& slot, const std::string& key,
                            const std::vector<float>& values) {
  return vit_map_texture(vit, state, slot, key, [&] { return values; });
}

ImTextureID vit_map_texture(VitSession& vit, const AppState& state, const std::string& slot, const std::string& key,
                            const std::function<std::vector<float>()>& values) {
  const SourceGrid g = vit.run()->grid();
  const std::string full = std::to_string(vit.generation()) + "|" + key + "|" + std::string(colormap_name(state.colormap)) +
                           "|" + std::string(normalization_name(state.normalization));
  return vit.textures().get(slot, full, g.cols, g.rows, [&] {
    return apply_colormap(values(), {}, state.colormap, state.normalization);
  }, state.bilinear);
}

ImU32 vit_head_colour(int h) {
  static constexpr ImU32 colours[] = {IM_COL32(0, 255, 255, 255),  IM_COL32(255, 0, 255, 255), IM_COL32(255, 255, 0, 255),
                                      IM_COL32(0, 255, 0, 255),    IM_COL32(255, 128, 0, 255), IM_COL32(80, 160, 255, 255),
                                      IM_COL32(255, 80, 80, 255),  IM_COL32(255, 255, 255, 255)};
  return colours[static_cast<std::size_t>(h) % std::size(colours)];
}

}  // namespace attnlab::app
