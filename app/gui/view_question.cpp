// Question token (figs. 26.7, 26.8). Placeholder until the view is written.
#include "app/gui/teaching_view.hpp"

#include <imgui.h>

namespace attnlab::app {
namespace {

class QuestionView final : public TeachingView {
 public:
  const char* name() const override { return "question"; }
  const char* title() const override { return "Question token"; }
  const char* source() const override { return "figs. 26.7, 26.8"; }
  const char* tour_text() const override { return "Question token."; }
  void draw(AppState&, Backend&) override { ImGui::TextUnformatted("Question token: not written yet."); }
};

}  // namespace

std::unique_ptr<TeachingView> make_question_view() { return std::make_unique<QuestionView>(); }

}  // namespace attnlab::app
