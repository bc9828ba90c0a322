#include "app/gui/chapter/teaching_view.hpp"

#include <imgui.h>

namespace attnlab::app {

void TeachingView::draw(ViewSource& source) { draw(source.state, *source.hand_made); }

void TeachingView::draw(AppState& state, HandMadeSession& hand_made) {
  if (!hand_made.has_image()) {
    ImGui::TextUnformatted(_("No image loaded."));
    return;
  }
  draw_contents(state, hand_made);
}

}  // namespace attnlab::app
