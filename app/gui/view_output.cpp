// Output tokens (eqs. 26.21, 26.28). Placeholder until the view is written.
#include "app/gui/teaching_view.hpp"

#include <imgui.h>

namespace attnlab::app {
namespace {

class OutputView final : public TeachingView {
 public:
  const char* name() const override { return "output"; }
  const char* title() const override { return "Output tokens"; }
  const char* source() const override { return "eqs. 26.21, 26.28"; }
  const char* tour_text() const override { return "Output tokens."; }
  void draw(AppState&, Backend&) override { ImGui::TextUnformatted("Output tokens: not written yet."); }
};

}  // namespace

std::unique_ptr<TeachingView> make_output_view() { return std::make_unique<OutputView>(); }

}  // namespace attnlab::app
