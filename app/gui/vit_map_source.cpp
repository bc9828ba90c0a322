// A loaded ViT as a MapSource (map_source.hpp): VitSession's source, the document's vit_*
// choices. Its attention is on the CPU already (the forward pass ran on the Eigen reference on
// a pool thread), so a map is the source's row coloured here and uploaded, kept in the
// session's textures: the current query's maps in a slot per layer and head, a pinned query's
// in a slot per pinned query.
#include "app/gui/map_source.hpp"
#include "app/gui/vit_views.hpp"

#include <algorithm>

namespace attnlab::app {

bool VitMapSource::ready() const { return vit_.source() != nullptr; }
SourceGrid VitMapSource::grid() const { return vit_.source()->grid(); }
int VitMapSource::layers() const { return vit_.source()->layers(); }
int VitMapSource::heads() const { return vit_.source()->heads(); }

std::string VitMapSource::head_label(HeadChoice head) const {
  if (head.head >= 0) return vit_head_label(head.head);
  return vit_head_label(head.fusion == HeadFusion::Max ? kVitHeadMax : head.fusion == HeadFusion::Min ? kVitHeadMin : kVitHeadMean);
}

std::string VitMapSource::map_tooltip(int layer, int head) const {
  char line[96];
  std::snprintf(line, sizeof line, "layer %d, head %d: mean distance %.1f px", layer + 1, head + 1,
                vit_.source()->distance()(layer, head));
  return line;
}

std::optional<ImU32> VitMapSource::head_colour(int head) const { return vit_head_colour(head); }

int VitMapSource::layer() const { return vit_layer(state_, *vit_.source()); }
HeadChoice VitMapSource::head() const { return vit_head_choice(std::min(state_.vit_head, heads() - 1)); }
int VitMapSource::query() const { return vit_query_token(state_, *vit_.source()); }

bool VitMapSource::showing(int layer, int head) const {
  return layer == this->layer() && head == state_.vit_head && !state_.vit_rollout && !state_.vit_norms;
}

void VitMapSource::choose(int layer, int head) {
  state_.vit_layer = layer;
  state_.vit_head = head;
  state_.vit_rollout = false;
  state_.vit_norms = false;
}

void VitMapSource::choose_query(Cell cell) {
  state_.vit_cell = cell;
  state_.vit_token = -1;
  state_.query_pinned = true;
}

void VitMapSource::draw_photo(ImDrawList* dl, ImVec2 origin, float scale) {
  const SourceGrid g = grid();
  const float W = static_cast<float>(vit_.photo_width()), H = static_cast<float>(vit_.photo_height());
  const float w = static_cast<float>(g.covered_w), h = static_cast<float>(g.covered_h);
  dl->AddImage(vit_.photo(), origin, ImVec2(origin.x + w * scale, origin.y + h * scale), ImVec2(0, 0), ImVec2(w / W, h / H));
}

ImTextureID VitMapSource::map(int layer, HeadChoice head, int query) {
  const std::string what = std::to_string(layer) + ":" + std::to_string(head.head) + ":" + std::to_string(static_cast<int>(head.fusion));
  const std::string slot = query == this->query() ? "map:" + what : "pinned:" + std::to_string(query);
  return vit_map_texture(vit_, state_, slot, what + "|" + std::to_string(query), vit_.source()->patch_row(layer, head, query));
}

std::optional<float> VitMapSource::map_max(int layer, HeadChoice head, int query) {
  const std::vector<float> row = vit_.source()->patch_row(layer, head, query);
  return row.empty() ? 0.0f : *std::max_element(row.begin(), row.end());
}

void VitMapSource::keep_pinned(const std::vector<int>& queries) {
  vit_.textures().erase_if([&](const std::string& slot) {
    if (!slot.starts_with("pinned:")) return false;
    return std::find(queries.begin(), queries.end(), std::stoi(slot.substr(7))) == queries.end();
  });
}

}  // namespace attnlab::app
