// A loaded ViT as a MapSource (map_source.hpp): VitSession's source, the document's vit
// choice. Its attention is on the CPU already (the forward pass ran on the Eigen reference on
// a pool thread), so a map is the source's row coloured here and uploaded, kept in the
// session's textures: the current query's maps in a slot per layer and head, a pinned query's
// in a slot per pinned query.
#include "app/gui/maps/map_source.hpp"
#include "app/gui/maps/vit_map_pictures.hpp"
#include "app/gui/sessions/vit_gradient_jobs.hpp"
#include "app/gui/state/widget_log.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/vit/token_norms.hpp"

#include <algorithm>
#include <cstdio>

namespace attnlab::app {
namespace {

// Outlines around the kept cells of a cols × rows mask: an edge wherever a kept cell meets a
// dropped one or the border.
void mask_outline(ImDrawList* dl, const std::vector<std::uint8_t>& keep, int cols, int rows, ImVec2 origin, float cell_w,
                  float cell_h, ImU32 colour, float inset, float thickness = 2.0f) {
  auto kept = [&](int c, int r) { return c >= 0 && r >= 0 && c < cols && r < rows && keep[static_cast<std::size_t>(r * cols + c)]; };
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      if (!kept(c, r)) continue;
      const float x0 = origin.x + static_cast<float>(c) * cell_w + inset, y0 = origin.y + static_cast<float>(r) * cell_h + inset;
      const float x1 = origin.x + static_cast<float>(c + 1) * cell_w - inset, y1 = origin.y + static_cast<float>(r + 1) * cell_h - inset;
      if (!kept(c, r - 1)) dl->AddLine(ImVec2(x0, y0), ImVec2(x1, y0), colour, thickness);
      if (!kept(c, r + 1)) dl->AddLine(ImVec2(x0, y1), ImVec2(x1, y1), colour, thickness);
      if (!kept(c - 1, r)) dl->AddLine(ImVec2(x0, y0), ImVec2(x0, y1), colour, thickness);
      if (!kept(c + 1, r)) dl->AddLine(ImVec2(x1, y0), ImVec2(x1, y1), colour, thickness);
    }
}

// The header's first line, what the map is: "layer 4 (of 0-5), head 1, query patch (3,4)"
// (layers and heads from 0, as the command line and the sidecar's vit_drawn count them).
std::string legend(const MainMap& map, const VitRun& src) {
  const SourceGrid g = src.grid();
  // TRANSLATORS: after "layer 4": the layers there are, counted from 0.
  const std::string layers = text_format(_(" (of 0-%d)"), src.layers() - 1);
  // TRANSLATORS: ||x|| is a token's norm; the last %s is " (of 0-5)".
  if (map.shows == "norms") return text_format(_("token norms ||x|| after layer %d%s"), map.layer, layers.c_str());
  // TRANSLATORS: %s says what the map shows ("relevance of 'zebra' by chefer"); "Why?" is the view's name.
  if (map.shows == "relevance") return text_format(_("%s (Why?; the whole model, not one layer)"), map.note.c_str());
  if (map.shows == "rollout") {
    // TRANSLATORS: the rollout's heads: their mean.
    const std::string heads = map.head.head >= 0 ? std::string(_("mean")) : head_choice_label(map.head);
    // TRANSLATORS: the layer, " (of 0-5)", the heads ("mean", "max of heads"), the query token ("patch (3,4)", "CLS").
    return text_format(_("rollout up to layer %d%s (%s), query %s"), map.layer, layers.c_str(), heads.c_str(),
                       token_label(g, map.query).c_str());
  }
  // TRANSLATORS: the layer, " (of 0-5)", the head ("head 1", "mean of heads"), the query token ("patch (3,4)", "CLS").
  return text_format(_("layer %d%s, %s, query %s"), map.layer, layers.c_str(), head_choice_label(map.head).c_str(),
                     token_label(g, map.query).c_str());
}

constexpr ImU32 kHighNormColour = IM_COL32(255, 0, 255, 255);  // as the Norms view's threshold (vit_norms_view.cpp)

}  // namespace

SourceInfo VitMapSource::info() const {
  SourceInfo out;
  out.empty_text = which_ == ShownSource::Train ? _("No model trained yet: press Start in the Train tab of the controls.")
                                                 : _("No model loaded: open one in the Model tab of the controls.");
  if (const VitRun* run = vit_.run())
    out = SourceInfo{true, out.empty_text, run->grid(), run->layers(), run->heads(), choice_query(choice(), run->grid())};
  return out;
}

HeadInfo VitMapSource::head_info(int layer, HeadChoice head) const {
  HeadInfo out;
  out.label = head_choice_label(head);
  if (head.head < 0) return out;
  // TRANSLATORS: the head's mean attention distance in pixels.
  out.tooltip = text_format(_("layer %d, head %d: mean distance %.1f px"), layer, head.head,
                            static_cast<double>(vit_.run()->distance()(layer, head.head)));
  out.colour = vit_head_colour(head.head);
  const SourceChoice& c = choice();
  out.shown = layer == choice_layer(c, vit_.run()->layers()) && head == c.head && !state_.vit_rollout && !state_.vit_norms &&
              !state_.relevance_on_map;
  return out;
}

void VitMapSource::changed(ChoiceChange what) {
  if (what == ChoiceChange::MapChosen) {  // a map of A chosen: the main map shows rows of A again
    state_.vit_rollout = false;
    state_.vit_norms = false;
    state_.relevance_on_map = false;
  } else {
    state_.vit_view = "pinned";  // a pin added: the lower panel shows the pinned queries
  }
}

void VitMapSource::draw_photo(ImDrawList* dl, ImVec2 origin, float scale) {
  const SourceGrid g = vit_.run()->grid();
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
  if (head.head >= src.heads()) throw Error(text_format(_("head %d is outside 0…%d"), head.head, src.heads() - 1));
  const std::vector<float>& rows = attention_rows(layer, query);
  const int T = src.grid().T(), prefix = src.grid().prefix, N = T - prefix;
  auto patch_keys = [&](int h) {  // head h's row over the patch keys, 1 × N
    return Matrix(Eigen::Map<const Matrix>(rows.data() + static_cast<std::size_t>(h) * T + prefix, 1, N));
  };
  const Matrix out = head.head >= 0 ? patch_keys(head.head) : fuse_heads(src.heads(), head.fusion, patch_keys);
  return {out.data(), out.data() + out.size()};
}

SourceMap VitMapSource::map(int layer, HeadChoice head, int query) {
  const std::string what = std::to_string(layer) + ":" + std::to_string(head.head) + ":" + std::to_string(static_cast<int>(head.fusion));
  const std::string slot = query == choice_query(choice(), vit_.run()->grid()) ? "map:" + what : "pinned:" + std::to_string(query);
  // The row is computed only when the slot's texture is made again (its key changed); the
  // largest weight from the cached rows.
  SourceMap out;
  out.texture = vit_map_texture(vit_, state_, slot, what + "|" + std::to_string(query), [&] { return cached_patch_row(layer, head, query); });
  const std::vector<float> row = cached_patch_row(layer, head, query);
  out.max = row.empty() ? 0.0f : *std::max_element(row.begin(), row.end());
  return out;
}

void VitMapSource::keep_pinned(const std::vector<int>& queries) {
  vit_.textures().erase_if([&](const std::string& slot) {
    if (!slot.starts_with("pinned:")) return false;
    return std::find(queries.begin(), queries.end(), std::stoi(slot.substr(7))) == queries.end();
  });
}

// The main map: the row of A, the rollout row or the token norms (vit_main_values), with the
// share of the row that went to the prefix tokens or (norms) the prefix tokens' norms.
MainMap VitMapSource::main_map(const SourceChoice& choice) {
  const VitRun& src = *vit_.run();
  MainMap map;
  map.layer = choice_layer(choice, src.layers());
  map.head = choice_head(choice, src.heads());
  map.query = choice_query(choice, src.grid());
  map.shows = state_.vit_norms ? "norms" : state_.vit_rollout ? "rollout" : "row";
  // The class's relevance (Why?) in place of the row, once its gradient job has run; the row
  // meanwhile, with a note.
  const std::vector<float>* relevance = state_.relevance_on_map ? relevance_for_map(state_, vit_, map.note) : nullptr;
  if (relevance) map.shows = "relevance";
  map.values = relevance ? *relevance
               : state_.vit_norms || state_.vit_rollout ? vit_main_values(state_, choice, src)
                                                        : cached_patch_row(map.layer, map.head, map.query);
  map.value_name = state_.vit_norms ? "||x||" : relevance ? "R" : "a_ij";
  map.explore = !state_.vit_norms;
  const std::string key = std::to_string(map.layer) + "|" + std::to_string(map.head.head) + "|" +
                          std::to_string(static_cast<int>(map.head.fusion)) + "|" + std::to_string(map.query) + "|" + map.shows +
                          (relevance ? "|" + map.note : "");
  own_range_ = normalization_range(map.values, {}, state_.normalization);
  value_name_ = map.value_name;
  map.range = range_;
  map.texture = vit_map_texture(vit_, state_, "main", key, [&] { return map.values; }, range_);
  if (map.shows == "row") {
    // How nearly uniform the drawn row is, over the patch keys (the weights renormalized to sum
    // 1 there): the note a model being trained shows falling as its heads focus.
    std::vector<float> patch = map.values;
    double sum = 0.0;
    for (const float v : patch) sum += v;
    if (sum > 0)
      for (float& v : patch) v = static_cast<float>(v / sum);
    map.flat = row_flatness(patch, {});
  }
  if (map.shows == "row") {  // VitRun::prefix_share, from the cached rows
    const std::vector<float>& rows = attention_rows(map.layer, map.query);
    const int T = src.grid().T();
    double share = 0.0;
    for (int h = 0; h < src.heads(); ++h) {
      if (map.head.head >= 0 && h != map.head.head) continue;
      for (int j = 0; j < src.grid().prefix; ++j) share += rows[static_cast<std::size_t>(h) * T + j];
    }
    if (map.head.head < 0) share /= src.heads();
    map.prefix_share = static_cast<float>(std::clamp(share, 0.0, 1.0));
  }
  if (state_.vit_norms) {
    const std::vector<float> all = src.token_norms(map.layer);
    map.prefix_norms.assign(all.begin(), all.begin() + src.grid().prefix);
  }
  return map;
}

// What the map is, and what it leaves out: the share of the row that went to the prefix
// tokens, or (norms shown) the prefix tokens' norms beside the patches' median and largest, so
// the high-norm outliers (and the registers that take them over) show.
void VitMapSource::draw_map_header(const MainMap& map) {
  const VitRun& src = *vit_.run();
  const SourceGrid g = src.grid();
  if (compact_) {
    wrap_text(legend(map, src));
    record_widget("map:what");
    return;
  }
  ImGui::TextUnformatted(legend(map, src).c_str());
  record_widget("map:what");
  if (map.shows != "relevance" && !map.note.empty()) {  // the relevance asked for, not yet drawn
    ImGui::TextDisabled("%s", map.note.c_str());
    record_widget("map:note");
  }
  if (map.shows == "row") {  // beside the legend when it fits, else on its own line (never cut)
    // TRANSLATORS: the share of the attention row that went to the prefix tokens: "CLS" or "CLS and registers".
    const std::string share = text_format(_("%.1f %% of this row went to %s (not drawn)"), 100.0 * map.prefix_share,
                                          g.prefix > 1 ? _("CLS and registers") : "CLS");
    same_line_if_room(ImGui::CalcTextSize(share.c_str()).x + ImGui::GetStyle().ItemSpacing.x);
    ImGui::TextColored(map.prefix_share > 0.5f ? ImVec4(1, 0.75f, 0.3f, 1) : ImVec4(0.7f, 0.7f, 0.7f, 1), "%s", share.c_str());
    record_widget("map:prefix_share");
  }
  if (map.shows == "row" && map.flat.n > 0) {  // how flat the row is, beside the share when it fits (the map keeps a line)
    // TRANSLATORS: "row" (of the attention matrix A) or "nearly uniform row"; max/min is the ratio of its largest weight to its
    // smallest, H its entropy, N the number of tokens.
    const std::string flat = text_format(_("%s: max/min %s, H/log N = %s"),
                                         map.flat.nearly_uniform ? _("nearly uniform row") : tr_c("attention matrix", "row"),
                                         format_number(map.flat.max_over_min, 3).c_str(),
                                         format_number(map.flat.entropy_ratio, 3).c_str());
    same_line_if_room(ImGui::CalcTextSize(flat.c_str()).x + ImGui::GetStyle().ItemSpacing.x * 3);
    ImGui::TextColored(map.flat.nearly_uniform ? ImVec4(1.0f, 0.8f, 0.3f, 1.0f) : ImVec4(0.7f, 0.7f, 0.7f, 1), "%s",
                       flat.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", _("H/log N: 1 for a uniform row, 0 for one key"));
  }
  // Presentation mode: what the model decided, for the class (the ViT panel that lists it is hidden).
  if (const auto top = src.top_classes(5); state_.presentation && !top.empty()) {
    const auto& labels = src.model().arch.labels;
    std::string line = _("Prediction:");
    for (std::size_t n = 0; n < top.size(); ++n) {
      const auto& [c, p] = top[n];
      const std::string name =
          c < static_cast<int>(labels.size()) ? labels[static_cast<std::size_t>(c)] : text_format(_("class %d"), c);
      char item[160];
      std::snprintf(item, sizeof item, "%s %s\u00a0%.1f\u00a0%%", n ? "," : "", name.c_str(), 100.0 * p);
      line += item;
    }
    wrap_text(line);
    record_widget("presentation:top5");
  }
  if (map.shows == "norms") {
    std::string prefix;
    for (int t = 0; t < g.prefix; ++t) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%s %s", t ? ", " : "", token_label(g, t).c_str(),
                    format_number(map.prefix_norms[static_cast<size_t>(t)], 3).c_str());
      prefix += buf;
    }
    std::vector<float> sorted = map.values;
    std::sort(sorted.begin(), sorted.end());
    const auto top = std::max_element(map.values.begin(), map.values.end()) - map.values.begin();
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.7f, 0.7f, 0.7f, 1));
    // TRANSLATORS: the prefix tokens' norms (not on the map), then the patches' median and largest norm and where it is
    // (column,row).
    text_wrapped(_("not drawn: %s;  patches: median %s, largest %s at (%d,%d)"), prefix.c_str(),
                 format_number(sorted[sorted.size() / 2], 3).c_str(),
                 format_number(sorted.back(), 3).c_str(), static_cast<int>(top % g.cols), static_cast<int>(top / g.cols));
    ImGui::PopStyleColor();
  }
  // The model's line; a model being trained has a long label (its switches), so its input's size
  // goes to the line's tooltip and the map keeps the line.
  // TRANSLATORS: the model's input in pixels, its grid of patches, the patch's side in pixels.
  const std::string input = text_format(_("input %d x %d, grid %d x %d, patch %d px"), src.input_width(), src.input_height(),
                                        g.cols, g.rows, src.patch());
  if (!note_.empty()) {  // in the model line's place: the map keeps the room
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.85f, 0.35f, 1.0f));
    wrap_text(note_);
    ImGui::PopStyleColor();
    record_widget("map:note");
    return;
  }
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  const char* busy = vit_.busy() ? _("   (new maps on the way...)") : "";
  if (which_ == ShownSource::Train) text_wrapped("%s%s", vit_.label().c_str(), busy);
  else text_wrapped("%s   %s%s", vit_.label().c_str(), input.c_str(), busy);
  ImGui::PopStyleColor();
  if (which_ == ShownSource::Train && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", input.c_str());
  record_widget("map:model_line");
}

// DINO-style masks: one outline per head around the patches that hold the chosen share of the
// CLS row's mass in this layer (DINO's fig. 3), with their legend over the canvas's top left.
void VitMapSource::draw_overlays(const MainMap& map, ImDrawList* dl, ImVec2 origin, float scale, ImVec2 canvas) {
  const VitRun& src = *vit_.run();
  const SourceGrid g = src.grid();
  const float cell_w = static_cast<float>(g.covered_w) * scale / static_cast<float>(g.cols);
  const float cell_h = static_cast<float>(g.covered_h) * scale / static_cast<float>(g.rows);
  // What an export's sidecar says the ViT's map drew (tests click by it and compare its values).
  // (The model's name is made before the braces: a conditional's temporary inside them is
  // miscompiled by GCC 12, its string read uninitialised.)
  std::string model = vit_.file().string();
  if (which_ == ShownSource::Train) model = vit_.label();
  nlohmann::json& drawn = which_ == ShownSource::Train ? state_.report.train_drawn : state_.report.vit_drawn;
  drawn = {{"model", model},
           {"sha256", vit_.sha256()},
           {"backend", src.path()},
           {"backend_why", vit_.backend_why()},
           {"busy", vit_.busy()},  // new maps on the way (a new image, a video's next frame)
           {"layer", map.layer},
           {"head", head_choice_json(map.head)},
           {"head_label", head_choice_label(map.head)},
           {"token", map.query},
           {"token_label", token_label(g, map.query)},
           {"legend", legend(map, src)},
           {"shows", map.shows},
           {"note", map.note},
           {"prefix_share", map.prefix_share},
           {"prefix_norms", map.prefix_norms},
           {"flatness", {{"max_over_min", map.flat.max_over_min}, {"entropy_ratio", map.flat.entropy_ratio},
                         {"nearly_uniform", map.flat.nearly_uniform}, {"n", map.flat.n}}},
           {"grid", {{"cols", g.cols}, {"rows", g.rows}, {"prefix", g.prefix}}},
           {"input", {{"width", src.input_width()}, {"height", src.input_height()}}},
           {"origin", {origin.x, origin.y}},
           {"cell", {cell_w, cell_h}},
           {"values", map.values}};
  // The colour scale the map and its bar span: the values' own, or Compare's one for both.
  const ValueRange scale_range = map.range ? *map.range : own_range_;
  drawn["scale"] = {{"lo", scale_range.lo}, {"hi", scale_range.hi}, {"shared", map.range.has_value()}};
  if (state_.vit_mark_high_norm) {  // the high-norm patches of this layer (core/vit/token_norms.hpp), outlined in red
    const std::vector<float> all = src.token_norms(map.layer);
    const HighNormTokens high = high_norm_tokens(std::span<const float>(all).subspan(static_cast<std::size_t>(g.prefix)), state_.vit_norm_ratio);
    mask_outline(dl, high.marked, g.cols, g.rows, origin, cell_w, cell_h, kHighNormColour, 0.0f, 3.0f);
    // Its legend over the canvas's top left, under the masks' legend when they are on (at the
    // bottom, presentation mode's "F5 or Esc" line covered it).
    // TRANSLATORS: a legend over the map, short (a narrow map): the number of patches whose norm ||x|| is over the threshold.
    const std::string label = text_format(_("%d high-norm, ||x|| > %.3g"), high.count, static_cast<double>(high.threshold));
    const ImVec2 size = ImGui::CalcTextSize(label.c_str());
    const float y = canvas.y + 3 + (state_.vit_masks ? size.y + 4 : 0.0f);
    dl->AddRectFilled(ImVec2(canvas.x + 2, y - 2), ImVec2(canvas.x + 6 + size.x, y + size.y + 2), IM_COL32(0, 0, 0, 200));
    dl->AddText(ImVec2(canvas.x + 4, y), kHighNormColour, label.c_str());
    drawn["high_norm"] = {{"ratio", state_.vit_norm_ratio}, {"threshold", high.threshold}, {"marked", high.indices()}};
  }
  if (!state_.vit_masks) return;
  const int layer = map.layer;
  for (int h = 0; h < src.heads(); ++h) {
    const auto keep = vit_mass_mask(src.patch_row(layer, HeadChoice{h, HeadFusion::Mean}, 0), state_.vit_mass);
    mask_outline(dl, keep, g.cols, g.rows, origin, cell_w, cell_h, vit_head_colour(h), 1.0f + static_cast<float>(h % 4));
  }
  float x = canvas.x + 4;
  for (int h = 0; h < src.heads(); ++h) {
    const std::string label = text_format(_("head %d"), h) + "  ";
    const ImVec2 size = ImGui::CalcTextSize(label.c_str());
    dl->AddRectFilled(ImVec2(x - 2, canvas.y + 2), ImVec2(x + size.x, canvas.y + 4 + size.y), IM_COL32(0, 0, 0, 200));
    dl->AddText(ImVec2(x, canvas.y + 3), vit_head_colour(h), label.c_str());
    x += size.x;
  }
}

}  // namespace attnlab::app
