#include "app/gui/output/sweeps.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <cstdio>

namespace attnlab::app {

const std::vector<std::string>& sweep_kinds() {
  static const std::vector<std::string> kinds = {"query-row", "query-path", "layer", "head", "tau", "K"};
  return kinds;
}

std::string sweep_label(const std::string& kind) {
  // TRANSLATORS: the sweeps of Export > Record, shown as "Sweep the query along its row".
  if (kind == "query-row") return _("the query along its row");
  if (kind == "query-path") return _("the query along the pinned patches");
  if (kind == "layer") return _("the layers");
  if (kind == "head") return _("the heads");
  if (kind == "tau") return _("the temperature");
  // TRANSLATORS: K is the patch size in pixels.
  if (kind == "K") return _("the patch size K");
  return kind;
}

std::string sweep_unavailable(const std::string& kind, const SweepShape& shape) {
  const auto& kinds = sweep_kinds();
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
    // TRANSLATORS: the names in parentheses are the sweeps' names on the command line (kept as they are).
    return text_format(_("no sweep '%s' (query-row, query-path, layer, head, tau or K)"), kind.c_str());
  if (shape.cols <= 0 || shape.rows <= 0) return _("nothing is shown to sweep yet");
  if (kind == "query-path" && shape.pins < 2)
    // TRANSLATORS: P is the key that pins a patch.
    return _("pin two or more patches (right-click on the map, or P) for the query to walk along them");
  if (kind == "layer" && !shape.vit) return _("the hand-made heads have one layer: open a ViT to sweep its layers");
  if ((kind == "tau" || kind == "K") && shape.vit)
    return kind == "tau" ? std::string(_("the window's temperature is the hand-made heads' (attnlab render --model --sweep tau sweeps a ViT's)"))
                         // TRANSLATORS: K is the patch size in pixels.
                         : std::string(_("a ViT's patch size is its own: K is swept on the hand-made heads"));
  return "";
}

std::vector<SweepStep> plan_sweep(const std::string& kind, const AppState& state, const SweepShape& shape) {
  if (const std::string why = sweep_unavailable(kind, shape); !why.empty()) throw Error(text_format(_("cannot sweep: %s"), why.c_str()));
  // The choice the steps change: the shown source's (a ViT's, or the hand-made heads').
  const bool vit = shape.vit;
  auto choice = [vit](AppState& s) -> SourceChoice& { return vit ? shown_choice(s) : s.hand_made; };
  const SourceChoice& now = vit ? shown_choice(state) : state.hand_made;
  std::vector<SweepStep> steps;
  char text[32];
  if (kind == "query-row") {
    const int row = now.prefix_token >= 0 ? shape.rows / 2 : std::clamp(now.cell.row, 0, shape.rows - 1);
    for (int c = 0; c < shape.cols; ++c)
      steps.push_back({std::to_string(c) + "," + std::to_string(row), [=](AppState& s) {
                         SourceChoice& q = choice(s);
                         q.prefix_token = -1;
                         q.cell = {c, row};
                         q.query_pinned = true;
                       }});
  } else if (kind == "query-path") {  // the pins in the order they were made
    for (const Cell& pin : now.pins)
      steps.push_back({std::to_string(pin.col) + "," + std::to_string(pin.row), [=](AppState& s) {
                         SourceChoice& q = choice(s);
                         q.prefix_token = -1;
                         q.cell = pin;
                         q.query_pinned = true;
                       }});
  } else if (kind == "layer") {
    for (int l = 0; l < shape.layers; ++l)
      steps.push_back({std::to_string(l), [=](AppState& s) {
                         choice(s).layer = l;
                         choice(s).query_pinned = true;
                       }});
  } else if (kind == "head") {
    for (int h = 0; h < shape.heads; ++h)
      steps.push_back({std::to_string(h), [=](AppState& s) {
                         choice(s).head = HeadChoice{h, HeadFusion::Mean};
                         choice(s).query_pinned = true;
                       }});
  } else if (kind == "tau") {
    for (const float tau : kSweepTemperatures) {
      std::snprintf(text, sizeof text, "%g", static_cast<double>(tau));
      steps.push_back({text, [=](AppState& s) {
                         s.attention.temperature = tau;
                         s.hand_made.query_pinned = true;
                       }});
    }
  } else {  // K: the sizes between the widget's bounds that fit the photo
    const int largest = std::min({kMaxPatchSize, shape.image_width, shape.image_height});
    for (const int k : kSweepPatchSizes)
      if (k >= kMinPatchSize && k <= largest)
        steps.push_back({std::to_string(k), [=](AppState& s) {
                           s.attention.patch = k;
                           s.hand_made.query_pinned = true;
                         }});
    // TRANSLATORS: K is the patch size in pixels.
    if (steps.empty()) throw Error(_("cannot sweep: the photo is smaller than the smallest K swept"));
  }
  return steps;
}

}  // namespace attnlab::app
