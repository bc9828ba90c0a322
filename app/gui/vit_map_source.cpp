// A loaded ViT as a MapSource (map_source.hpp): VitSession's source, the document's vit_*
// choices. Its attention is on the CPU already (the forward pass ran on the Eigen reference on
// a pool thread), so a map is the source's row coloured here and uploaded, kept in the
// session's textures: the current query's maps in a slot per layer and head, a pinned query's
// in a slot per pinned query.
#include "app/gui/map_source.hpp"
#include "app/gui/vit_views.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <cstdio>

namespace attnlab::app {
namespace {

// Outlines around the kept cells of a cols × rows mask: an edge wherever a kept cell meets a
// dropped one or the border.
void mask_outline(ImDrawList* dl, const std::vector<std::uint8_t>& keep, int cols, int rows, ImVec2 origin, float cell_w,
                  float cell_h, ImU32 colour, float inset) {
  auto kept = [&](int c, int r) { return c >= 0 && r >= 0 && c < cols && r < rows && keep[static_cast<std::size_t>(r * cols + c)]; };
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      if (!kept(c, r)) continue;
      const float x0 = origin.x + static_cast<float>(c) * cell_w + inset, y0 = origin.y + static_cast<float>(r) * cell_h + inset;
      const float x1 = origin.x + static_cast<float>(c + 1) * cell_w - inset, y1 = origin.y + static_cast<float>(r + 1) * cell_h - inset;
      if (!kept(c, r - 1)) dl->AddLine(ImVec2(x0, y0), ImVec2(x1, y0), colour, 2.0f);
      if (!kept(c, r + 1)) dl->AddLine(ImVec2(x0, y1), ImVec2(x1, y1), colour, 2.0f);
      if (!kept(c - 1, r)) dl->AddLine(ImVec2(x0, y0), ImVec2(x0, y1), colour, 2.0f);
      if (!kept(c + 1, r)) dl->AddLine(ImVec2(x1, y0), ImVec2(x1, y1), colour, 2.0f);
    }
}

}  // namespace

bool VitMapSource::ready() const { return vit_.run() != nullptr; }
SourceGrid VitMapSource::grid() const { return vit_.run()->grid(); }
int VitMapSource::layers() const { return vit_.run()->layers(); }
int VitMapSource::heads() const { return vit_.run()->heads(); }

std::string VitMapSource::head_label(HeadChoice head) const {
  if (head.head >= 0) return vit_head_label(head.head);
  return vit_head_label(head.fusion == HeadFusion::Max ? kVitHeadMax : head.fusion == HeadFusion::Min ? kVitHeadMin : kVitHeadMean);
}

std::string VitMapSource::map_tooltip(int layer, int head) const {
  char line[96];
  std::snprintf(line, sizeof line, "layer %d, head %d: mean distance %.1f px", layer + 1, head + 1,
                vit_.run()->distance()(layer, head));
  return line;
}

std::optional<ImU32> VitMapSource::head_colour(int head) const { return vit_head_colour(head); }

int VitMapSource::layer() const { return vit_layer(state_, *vit_.run()); }
HeadChoice VitMapSource::head() const { return vit_head_choice(std::min(state_.vit_head, heads() - 1)); }
int VitMapSource::query() const { return vit_query_token(state_, *vit_.run()); }

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

const std::vector<float>& VitMapSource::attention_rows(int layer, int query) {
  if (rows_generation_ != vit_.generation()) {
    rows_.clear();
    rows_generation_ = vit_.generation();
  }
  const auto key = std::make_pair(layer, query);
  if (const auto it = rows_.find(key); it != rows_.end()) return it->second;
  if (rows_.size() >= 256) rows_.clear();  // a few queries' worth of every layer
  return rows_[key] = vit_attention_rows(vit_.run()->pass(), layer, query);
}

// VitRun::patch_row from the cached rows: the same weights, fused by the same rule.
std::vector<float> VitMapSource::cached_patch_row(int layer, HeadChoice head, int query) {
  const VitRun& src = *vit_.run();
  if (head.head >= src.heads()) throw Error("head " + std::to_string(head.head) + " is outside 0…" + std::to_string(src.heads() - 1));
  const std::vector<float>& rows = attention_rows(layer, query);
  const int T = src.grid().T(), prefix = src.grid().prefix, N = T - prefix;
  auto patch_keys = [&](int h) {  // head h's row over the patch keys, 1 × N
    return Matrix(Eigen::Map<const Matrix>(rows.data() + static_cast<std::size_t>(h) * T + prefix, 1, N));
  };
  const Matrix out = head.head >= 0 ? patch_keys(head.head) : fuse_heads(src.heads(), head.fusion, patch_keys);
  return {out.data(), out.data() + out.size()};
}

ImTextureID VitMapSource::map(int layer, HeadChoice head, int query) {
  const std::string what = std::to_string(layer) + ":" + std::to_string(head.head) + ":" + std::to_string(static_cast<int>(head.fusion));
  const std::string slot = query == this->query() ? "map:" + what : "pinned:" + std::to_string(query);
  // The row is computed only when the slot's texture is made again (its key changed).
  return vit_map_texture(vit_, state_, slot, what + "|" + std::to_string(query), [&] { return cached_patch_row(layer, head, query); });
}

std::optional<float> VitMapSource::map_max(int layer, HeadChoice head, int query) {
  const std::vector<float> row = cached_patch_row(layer, head, query);
  return row.empty() ? 0.0f : *std::max_element(row.begin(), row.end());
}

void VitMapSource::keep_pinned(const std::vector<int>& queries) {
  vit_.textures().erase_if([&](const std::string& slot) {
    if (!slot.starts_with("pinned:")) return false;
    return std::find(queries.begin(), queries.end(), std::stoi(slot.substr(7))) == queries.end();
  });
}

// The main map: the row of A, the rollout row or the token norms (vit_main_values).
MainMap VitMapSource::main_map() {
  const VitRun& src = *vit_.run();
  const int layer = this->layer(), token = query(), head = std::min(state_.vit_head, src.heads() - 1);
  MainMap map;
  map.values = state_.vit_norms || state_.vit_rollout ? vit_main_values(state_, src)
                                                     : cached_patch_row(layer, vit_head_choice(head), token);
  map.value_name = state_.vit_norms ? "||x||" : "a_ij";
  map.explore = !state_.vit_norms;
  const std::string key = std::to_string(layer) + "|" + std::to_string(head) + "|" + std::to_string(token) + "|" +
                          (state_.vit_norms ? "norms" : state_.vit_rollout ? "rollout" : "row");
  map.texture = vit_map_texture(vit_, state_, "main", key, [&] { return map.values; });
  share_ = 0.0f;
  if (!state_.vit_norms && !state_.vit_rollout) {  // VitRun::prefix_share, from the cached rows
    const std::vector<float>& rows = attention_rows(layer, token);
    const int T = src.grid().T();
    double share = 0.0;
    for (int h = 0; h < src.heads(); ++h) {
      if (head >= 0 && h != head) continue;
      for (int j = 0; j < src.grid().prefix; ++j) share += rows[static_cast<std::size_t>(h) * T + j];
    }
    if (head < 0) share /= src.heads();
    share_ = static_cast<float>(std::clamp(share, 0.0, 1.0));
  }
  prefix_norms_.clear();
  if (state_.vit_norms) {
    const std::vector<float> all = src.token_norms(layer);
    prefix_norms_.assign(all.begin(), all.begin() + src.grid().prefix);
  }
  return map;
}

// What the map is, and what it leaves out: the share of the row that went to the prefix
// tokens, or (norms shown) the prefix tokens' norms beside the patches' median and largest, so
// the high-norm outliers (and the registers that take them over) show.
void VitMapSource::draw_map_header(const MainMap& map) {
  const VitRun& src = *vit_.run();
  const SourceGrid g = src.grid();
  const int layer = this->layer(), token = query(), head = std::min(state_.vit_head, src.heads() - 1);
  std::string what;
  if (state_.vit_norms) what = "token norms ||x|| after layer " + std::to_string(layer + 1);
  else if (state_.vit_rollout)
    what = "rollout up to layer " + std::to_string(layer + 1) + " (" + (head >= 0 ? "mean" : vit_head_label(head)) + "), query " +
           token_label(g, token);
  else what = "layer " + std::to_string(layer + 1) + " of " + std::to_string(src.layers()) + ", " + vit_head_label(head) +
              ", query " + token_label(g, token);
  ImGui::TextUnformatted(what.c_str());
  if (!state_.vit_norms && !state_.vit_rollout) {
    ImGui::SameLine();
    ImGui::TextColored(share_ > 0.5f ? ImVec4(1, 0.75f, 0.3f, 1) : ImVec4(0.7f, 0.7f, 0.7f, 1),
                       "  %.1f %% of this row went to %s (not drawn)", 100.0 * share_, g.prefix > 1 ? "CLS and registers" : "CLS");
  }
  if (state_.vit_norms) {
    std::string prefix;
    for (int t = 0; t < g.prefix; ++t) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%s %.3g", t ? ", " : "", token_label(g, t).c_str(),
                    static_cast<double>(prefix_norms_[static_cast<size_t>(t)]));
      prefix += buf;
    }
    std::vector<float> sorted = map.values;
    std::sort(sorted.begin(), sorted.end());
    const auto top = std::max_element(map.values.begin(), map.values.end()) - map.values.begin();
    ImGui::TextColored(ImVec4(0.7f, 0.7f, 0.7f, 1), "not drawn: %s;  patches: median %.3g, largest %.3g at (%d,%d)", prefix.c_str(),
                       static_cast<double>(sorted[sorted.size() / 2]), static_cast<double>(sorted.back()),
                       static_cast<int>(top % g.cols), static_cast<int>(top / g.cols));
  }
  ImGui::TextDisabled("%s   input %d x %d, grid %d x %d, patch %d px%s", vit_.file().filename().string().c_str(), src.input_width(),
                      src.input_height(), g.cols, g.rows, src.patch(), vit_.busy() ? "   (new maps on the way...)" : "");
}

void VitMapSource::hover_query(Cell cell) {
  if (state_.vit_token < 0) state_.vit_cell = cell;  // a prefix token stays the query until a click
}

void VitMapSource::pins_changed(bool added) {
  if (added) state_.vit_tab = 1;  // the lower panel shows the pinned queries
}

// DINO-style masks: one outline per head around the patches that hold the chosen share of the
// CLS row's mass in this layer (DINO's fig. 3), with their legend over the canvas's top left.
void VitMapSource::draw_overlays(ImDrawList* dl, ImVec2 origin, float scale, ImVec2 canvas) {
  if (!state_.vit_masks) return;
  const VitRun& src = *vit_.run();
  const SourceGrid g = src.grid();
  const float cell_w = static_cast<float>(g.covered_w) * scale / static_cast<float>(g.cols);
  const float cell_h = static_cast<float>(g.covered_h) * scale / static_cast<float>(g.rows);
  for (int h = 0; h < src.heads(); ++h) {
    const auto keep = vit_mass_mask(src.patch_row(layer(), HeadChoice{h, HeadFusion::Mean}, 0), state_.vit_mass);
    mask_outline(dl, keep, g.cols, g.rows, origin, cell_w, cell_h, vit_head_colour(h), 1.0f + static_cast<float>(h % 4));
  }
  float x = canvas.x + 4;
  for (int h = 0; h < src.heads(); ++h) {
    const std::string label = "head " + std::to_string(h + 1) + "  ";
    const ImVec2 size = ImGui::CalcTextSize(label.c_str());
    dl->AddRectFilled(ImVec2(x - 2, canvas.y + 2), ImVec2(x + size.x, canvas.y + 4 + size.y), IM_COL32(0, 0, 0, 200));
    dl->AddText(ImVec2(x, canvas.y + 3), vit_head_colour(h), label.c_str());
    x += size.x;
  }
}

// What an export's sidecar says the ViT's map drew (tests click by it and compare its values).
void VitMapSource::drew_map(const MainMap& map, ImVec2 origin, float scale) {
  const VitRun& src = *vit_.run();
  const SourceGrid g = src.grid();
  const int token = query(), head = std::min(state_.vit_head, src.heads() - 1);
  const float cell_w = static_cast<float>(g.covered_w) * scale / static_cast<float>(g.cols);
  const float cell_h = static_cast<float>(g.covered_h) * scale / static_cast<float>(g.rows);
  state_.report.vit_drawn = {{"model", vit_.file().string()},
                      {"sha256", vit_.sha256()},
                      {"backend", src.path()},
                      {"backend_why", vit_.backend_why()},
                      {"layer", layer()},
                      {"head", head},
                      {"head_label", vit_head_label(head)},
                      {"token", token},
                      {"token_label", token_label(g, token)},
                      {"shows", state_.vit_norms ? "norms" : state_.vit_rollout ? "rollout" : "row"},
                      {"prefix_share", share_},
                      {"prefix_norms", prefix_norms_},
                      {"grid", {{"cols", g.cols}, {"rows", g.rows}, {"prefix", g.prefix}}},
                      {"input", {{"width", src.input_width()}, {"height", src.input_height()}}},
                      {"origin", {origin.x, origin.y}},
                      {"cell", {cell_w, cell_h}},
                      {"values", map.values}};
}

}  // namespace attnlab::app
