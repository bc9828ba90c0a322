// The one table of the views under a ViT's map (vit_views.hpp, lower_views): the ViT tab
// (app/gui/shell/layout.cpp), the Train tab (app/gui/train/train_panel.cpp) and `render --model
// --view vit-NAME` (app/gui/output/render_commands.cpp) draw from it.
#include "app/gui/vit/vit_views.hpp"

#include <imgui.h>

#include <algorithm>

namespace attnlab::app {

const std::vector<LowerView>& lower_views() {
  static const std::vector<LowerView> views = {
      {"distance", "Distance", [](LowerViewContext& c) { draw_vit_distance_view(c.state, c.vit, c.choice); }},
      {"pinned", "Pinned",
       [](LowerViewContext& c) {
         if (c.map.info().ready) draw_pinned_maps(c.state, c.map);
         else ImGui::TextDisabled("No model yet: its pinned queries show once it has run.");
       }},
      {"matrix", "Matrix", [](LowerViewContext& c) { draw_vit_matrix_view(c.state, c.vit, c.choice); }},
      {"step", "Step by step", [](LowerViewContext& c) { draw_vit_step_view(c.vit, c.choice); }},
      {"cka", "CKA", [](LowerViewContext& c) { c.draw_cka(); }},
      {"high-norm", "Norms", [](LowerViewContext& c) { draw_vit_norms_view(c.state, c.vit, c.choice); }},
  };
  return views;
}

const LowerView* find_lower_view(std::string_view name) {
  const auto& views = lower_views();
  const auto at = std::find_if(views.begin(), views.end(), [&](const LowerView& v) { return name == v.name; });
  return at == views.end() ? nullptr : &*at;
}

}  // namespace attnlab::app
