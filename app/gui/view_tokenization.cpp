// Tokenization (fig. 26.2, section 26.9.1). Placeholder until the view is written.
#include "app/gui/teaching_view.hpp"

#include <imgui.h>

namespace attnlab::app {
namespace {

class TokenizationView final : public TeachingView {
 public:
  const char* name() const override { return "tokenization"; }
  const char* title() const override { return "Tokenization"; }
  const char* source() const override { return "fig. 26.2, section 26.9.1"; }
  const char* tour_text() const override { return "Tokenization."; }
  void draw(AppState&, Backend&) override { ImGui::TextUnformatted("Tokenization: not written yet."); }
};

}  // namespace

std::unique_ptr<TeachingView> make_tokenization_view() { return std::make_unique<TokenizationView>(); }

}  // namespace attnlab::app
