#include "app/gui/state/source_choice.hpp"

#include "core/base/translate.hpp"

#include <GLFW/glfw3.h>

#include <algorithm>

namespace attnlab::app {

std::string head_choice_label(HeadChoice head) {
  // TRANSLATORS: an attention head, by its number (from 0).
  if (head.head >= 0) return text_format(_("head %d"), head.head);
  // TRANSLATORS: the heads' attention fused: their maximum, minimum or mean, weight by weight.
  if (head.fusion == HeadFusion::Max) return _("max over heads");
  if (head.fusion == HeadFusion::Min) return _("min over heads");
  return _("mean of heads");
}

ChoiceKey choice_key(int key, SourceChoice& c, const ChoiceShape& shape) {
  const SourceGrid& g = shape.grid;
  const int layer = choice_layer(c, shape.layers);
  auto move = [&](int dc, int dr) {
    if (c.prefix_token >= 0 && g.prefix > 0) {  // from a prefix token: the patch query where it was
      c.cell.col = std::clamp(c.cell.col, 0, g.cols - 1);
      c.cell.row = std::clamp(c.cell.row, 0, g.rows - 1);
    }
    c.cell.col = std::clamp(c.cell.col + dc, 0, g.cols - 1);
    c.cell.row = std::clamp(c.cell.row + dr, 0, g.rows - 1);
    c.prefix_token = -1;
    c.query_pinned = true;
    return ChoiceKey::Changed;
  };
  auto set_layer = [&](int l) {
    if (shape.layers <= 1) return ChoiceKey::Ignored;
    c.layer = std::clamp(l, 0, shape.layers - 1);
    return ChoiceKey::Changed;
  };
  switch (key) {
    case GLFW_KEY_LEFT: return move(-1, 0);
    case GLFW_KEY_RIGHT: return move(1, 0);
    case GLFW_KEY_UP: return move(0, -1);
    case GLFW_KEY_DOWN: return move(0, 1);
    case GLFW_KEY_PAGE_UP: return set_layer(layer - 1);
    case GLFW_KEY_PAGE_DOWN: return set_layer(layer + 1);
    case GLFW_KEY_HOME: return set_layer(0);
    case GLFW_KEY_END: return set_layer(shape.layers - 1);
    case GLFW_KEY_A:
      if (!shape.fusions) return ChoiceKey::Ignored;
      c.head = HeadChoice{-1, HeadFusion::Mean};
      return ChoiceKey::Changed;
    case GLFW_KEY_C:
      if (g.prefix <= 0) return ChoiceKey::Ignored;
      c.prefix_token = 0;
      return ChoiceKey::Changed;
    case GLFW_KEY_P: {
      if (c.prefix_token >= 0 && g.prefix > 0) return ChoiceKey::Changed;  // a prefix token is no patch: nothing to pin
      if (std::find(c.pins.begin(), c.pins.end(), c.cell) != c.pins.end()) return ChoiceKey::Changed;  // pinned already
      c.pins.push_back(c.cell);
      return ChoiceKey::Pinned;
    }
    default:
      if (key >= GLFW_KEY_0 && key <= GLFW_KEY_9) {
        const int h = key - GLFW_KEY_0;
        if (h >= shape.heads) return ChoiceKey::Changed;  // a head the source does not have: taken, nothing changes
        c.head = HeadChoice{h, HeadFusion::Mean};
        return ChoiceKey::Changed;
      }
      return ChoiceKey::Ignored;
  }
}

}  // namespace attnlab::app
