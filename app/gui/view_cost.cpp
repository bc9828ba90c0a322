// Cost (exercises 12.1, 12.5). Placeholder until the view is written.
#include "app/gui/teaching_view.hpp"

#include <imgui.h>

namespace attnlab::app {
namespace {

class CostView final : public TeachingView {
 public:
  const char* name() const override { return "cost"; }
  const char* title() const override { return "Cost"; }
  const char* source() const override { return "exercises 12.1, 12.5"; }
  const char* tour_text() const override { return "Cost."; }
  void draw(AppState&, Backend&) override { ImGui::TextUnformatted("Cost: not written yet."); }
};

}  // namespace

std::unique_ptr<TeachingView> make_cost_view() { return std::make_unique<CostView>(); }

}  // namespace attnlab::app
