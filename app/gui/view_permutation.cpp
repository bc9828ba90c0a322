// Permutation (section 26.8, fig. 26.15). Placeholder until the view is written.
#include "app/gui/teaching_view.hpp"

#include <imgui.h>

namespace attnlab::app {
namespace {

class PermutationView final : public TeachingView {
 public:
  const char* name() const override { return "permutation"; }
  const char* title() const override { return "Permutation"; }
  const char* source() const override { return "section 26.8, fig. 26.15"; }
  const char* tour_text() const override { return "Permutation."; }
  void draw(AppState&, Backend&) override { ImGui::TextUnformatted("Permutation: not written yet."); }
};

}  // namespace

std::unique_ptr<TeachingView> make_permutation_view() { return std::make_unique<PermutationView>(); }

}  // namespace attnlab::app
