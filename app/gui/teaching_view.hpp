#pragma once
// The teaching views (issue: the chapter's remaining concepts, each as an interactive view).
// Each view is its own file (view_*.cpp) with a class deriving from TeachingView; it reads the
// one AppState, gets its numbers from the HandMadeSession (the GPU engine, or the CPU reference), and
// may own GL textures (destroyed with the app, before the context goes).
#include "app/gui/app_state.hpp"
#include "app/gui/hand_made_session.hpp"

#include <memory>
#include <vector>

namespace attnlab::app {

class TeachingView {
 public:
  virtual ~TeachingView() = default;
  /// Short name used on the command line (`attnlab render --view NAME`) and in AppState.
  virtual const char* name() const = 0;
  /// Window title.
  virtual const char* title() const = 0;
  /// Where the idea is in the chapter, e.g. "figs. 26.8, 26.10".
  virtual const char* chapter_reference() const = 0;
  /// One or two sentences of the project's own words, shown by the guided tour.
  virtual const char* tour_text() const = 0;
  /// Draws the view's contents into the current ImGui window.
  virtual void draw(AppState& state, HandMadeSession& backend) = 0;
};

// One factory per view file.
std::unique_ptr<TeachingView> make_step_view();          // view_step.cpp
std::unique_ptr<TeachingView> make_matrix_view();        // view_matrix.cpp
std::unique_ptr<TeachingView> make_output_view();        // view_output.cpp
std::unique_ptr<TeachingView> make_positional_view();    // view_positional.cpp
std::unique_ptr<TeachingView> make_permutation_view();   // view_permutation.cpp
std::unique_ptr<TeachingView> make_question_view();      // view_question.cpp
std::unique_ptr<TeachingView> make_tokenization_view();  // view_tokenization.cpp
std::unique_ptr<TeachingView> make_cost_view();          // view_cost.cpp

/// Every teaching view, in the order of the chapter (the guided tour's order).
std::vector<std::unique_ptr<TeachingView>> make_teaching_views();

}  // namespace attnlab::app
