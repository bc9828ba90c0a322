// Positional codes (fig. 26.20, eqs. 26.38-26.40). Placeholder until the view is written.
#include "app/gui/teaching_view.hpp"

#include <imgui.h>

namespace attnlab::app {
namespace {

class PositionalView final : public TeachingView {
 public:
  const char* name() const override { return "positional"; }
  const char* title() const override { return "Positional codes"; }
  const char* source() const override { return "fig. 26.20, eqs. 26.38-26.40"; }
  const char* tour_text() const override { return "Positional codes."; }
  void draw(AppState&, Backend&) override { ImGui::TextUnformatted("Positional codes: not written yet."); }
};

}  // namespace

std::unique_ptr<TeachingView> make_positional_view() { return std::make_unique<PositionalView>(); }

}  // namespace attnlab::app
