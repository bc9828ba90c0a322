// The registry of views (view_registry.hpp). Adding a view: its own file with a class deriving
// from View (app/gui/maps/view.hpp) and a factory, and one line here (docs/DEVELOPING.md).
#include "app/gui/views/view_registry.hpp"

#include "app/gui/chapter/teaching_view.hpp"
#include "app/gui/cnn/cnn_view.hpp"
#include "app/gui/train/cka_view.hpp"
#include "app/gui/vit/vit_views.hpp"

namespace attnlab::app {

std::vector<std::unique_ptr<View>> make_views() {
  std::vector<std::unique_ptr<View>> v;
  // The chapter's (the hand-made heads' session), in the chapter's order.
  v.push_back(make_tokenization_view());  // section 26.9.1, fig. 26.2
  v.push_back(make_question_view());      // figs. 26.7, 26.8
  v.push_back(make_step_view());          // figs. 26.8, 26.10
  v.push_back(make_output_view());        // eq. 26.21, 26.28
  v.push_back(make_permutation_view());   // section 26.8, fig. 26.15
  v.push_back(make_matrix_view());        // figs. 26.18, 26.21
  v.push_back(make_positional_view());    // fig. 26.20
  v.push_back(make_cost_view());          // exercises 12.1, 12.5
  // Under a map: the tabs of the ViT and Train tabs, in their order.
  v.push_back(make_vit_distance_view());  // ViT paper (Dosovitskiy et al. 2021), fig. 7
  v.push_back(make_pinned_view());        // fig. 26.12: rows of A only, every source
  v.push_back(make_vit_matrix_view());    // eq. 26.6's A, whole
  v.push_back(make_vit_step_view());      // eqs. 26.5, 26.6 for one row
  v.push_back(make_similarity_view());    // Kornblith et al. 2019 (CKA)
  v.push_back(make_vit_norms_view());     // Darcet et al. 2023
  v.push_back(make_vit_relevance_view()); // Chefer, Gur, Wolf 2021; SPEC §13
  v.push_back(make_vit_field_view());     // Luo et al. 2016; Raghu et al. 2021
  v.push_back(make_cnn_view());           // issue 50: a ResNet beside the ViT (Raghu et al. 2021)
  return v;
}

std::vector<View*> chapter_views(const std::vector<std::unique_ptr<View>>& views) {
  std::vector<View*> out;
  for (const auto& v : views)
    if (v->tour_text()) out.push_back(v.get());
  return out;
}

}  // namespace attnlab::app
