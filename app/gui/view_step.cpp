// Step by step (figs. 26.8, 26.10). Placeholder until the view is written.
#include "app/gui/teaching_view.hpp"

#include <imgui.h>

namespace attnlab::app {
namespace {

class StepView final : public TeachingView {
 public:
  const char* name() const override { return "step"; }
  const char* title() const override { return "Step by step"; }
  const char* source() const override { return "figs. 26.8, 26.10"; }
  const char* tour_text() const override { return "Step by step."; }
  void draw(AppState&, Backend&) override { ImGui::TextUnformatted("Step by step: not written yet."); }
};

}  // namespace

std::unique_ptr<TeachingView> make_step_view() { return std::make_unique<StepView>(); }

}  // namespace attnlab::app
