#include "app/gui/chapter/teaching_view.hpp"

#include <imgui.h>

namespace attnlab::app {

void TeachingView::draw(AppState& state, HandMadeSession& hand_made) {
  if (!hand_made.has_image()) {
    ImGui::TextUnformatted("No image loaded.");
    return;
  }
  draw_contents(state, hand_made);
}

std::vector<std::unique_ptr<TeachingView>> make_teaching_views() {
  std::vector<std::unique_ptr<TeachingView>> v;
  v.push_back(make_tokenization_view());  // section 26.9.1, fig. 26.2
  v.push_back(make_question_view());      // figs. 26.7, 26.8
  v.push_back(make_step_view());          // figs. 26.8, 26.10
  v.push_back(make_output_view());        // eq. 26.21, 26.28
  v.push_back(make_permutation_view());   // section 26.8, fig. 26.15
  v.push_back(make_matrix_view());        // figs. 26.18, 26.21
  v.push_back(make_positional_view());    // fig. 26.20
  v.push_back(make_cost_view());          // exercises 12.1, 12.5
  return v;
}

}  // namespace attnlab::app
