// Attention matrix (figs. 26.18, 26.21). Placeholder until the view is written.
#include "app/gui/teaching_view.hpp"

#include <imgui.h>

namespace attnlab::app {
namespace {

class MatrixView final : public TeachingView {
 public:
  const char* name() const override { return "matrix"; }
  const char* title() const override { return "Attention matrix"; }
  const char* source() const override { return "figs. 26.18, 26.21"; }
  const char* tour_text() const override { return "Attention matrix."; }
  void draw(AppState&, Backend&) override { ImGui::TextUnformatted("Attention matrix: not written yet."); }
};

}  // namespace

std::unique_ptr<TeachingView> make_matrix_view() { return std::make_unique<MatrixView>(); }

}  // namespace attnlab::app
