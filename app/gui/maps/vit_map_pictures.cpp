// Pieces the ViT views share: the choices in AppState resolved against a source, the values of
// the main map, coloured textures of maps and the photo under them.
#include "app/gui/maps/map_source.hpp"
#include "app/gui/maps/vit_map_pictures.hpp"

#include <cstdio>

#include <algorithm>

namespace attnlab::app {


std::vector<float> vit_main_values(const AppState& state, const SourceChoice& choice, const VitRun& source) {
  const int layer = choice_layer(choice, source.layers());
  if (state.vit_norms) {
    const std::vector<float> norms = source.token_norms(layer);
    return std::vector<float>(norms.begin() + source.grid().prefix, norms.end());
  }
  const int token = choice_query(choice, source.grid());
  const HeadChoice head = choice_head(choice, source.heads());
  if (state.vit_rollout) return source.rollout_row(layer, head.head >= 0 ? HeadFusion::Mean : head.fusion, token);
  return source.patch_row(layer, head, token);
}

ImTextureID vit_map_texture(VitSession& vit, const AppState& state, const std::string& slot, const std::string& key,
                            const std::vector<float>& values) {
  return vit_map_texture(vit, state, slot, key, [&] { return values; });
}

ImTextureID vit_map_texture(VitSession& vit, const AppState& state, const std::string& slot, const std::string& key,
                            const std::function<std::vector<float>()>& values, std::optional<ValueRange> range) {
  const SourceGrid g = vit.run()->grid();
  std::string full = std::to_string(vit.generation()) + "|" + key + "|" + std::string(colormap_name(state.colormap)) +
                     "|" + std::string(normalization_name(state.normalization));
  if (range) {  // exactly (hexadecimal floats): two ranges that print alike at 6 digits stay apart
    char r[80];
    std::snprintf(r, sizeof r, "|%a,%a", static_cast<double>(range->lo), static_cast<double>(range->hi));
    full += r;
  }
  return vit.textures().get(slot, full, g.cols, g.rows, [&] {
    return range ? colormap_pixels(values(), {}, state.colormap, state.normalization, *range)
                 : apply_colormap(values(), {}, state.colormap, state.normalization);
  }, state.bilinear);
}

ImU32 vit_head_colour(int h) {
  static constexpr ImU32 colours[] = {IM_COL32(0, 255, 255, 255),  IM_COL32(255, 0, 255, 255), IM_COL32(255, 255, 0, 255),
                                      IM_COL32(0, 255, 0, 255),    IM_COL32(255, 128, 0, 255), IM_COL32(80, 160, 255, 255),
                                      IM_COL32(255, 80, 80, 255),  IM_COL32(255, 255, 255, 255)};
  return colours[static_cast<std::size_t>(h) % std::size(colours)];
}

}  // namespace attnlab::app
