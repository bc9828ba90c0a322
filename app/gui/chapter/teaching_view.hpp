#pragma once
// The teaching views (issue: the chapter's remaining concepts, each as an interactive view).
// Each view is its own file (view_*.cpp) with a class deriving from TeachingView; it reads the
// one AppState, gets its numbers from the HandMadeSession (the GPU engine, or the CPU reference), and
// may own GL textures (destroyed with the app, before the context goes).
#include "app/gui/state/app_state.hpp"
#include "app/gui/sessions/hand_made_session.hpp"

#include <memory>
#include <string>
#include <vector>

namespace attnlab::app {

/// The chapter the views follow, named in full once (the Chapter menu's first line); the views,
/// the tour and the menu's items cite it short after ("fig. 26.2, section 26.9.1").
inline constexpr const char* kChapterCitation =
    "Torralba, Isola, Freeman, Foundations of Computer Vision (MIT Press, 2024), ch. 26 \"Transformers\"";

/// What a teaching view says of itself: the menus, the window title and the tour show it.
struct TeachingViewText {
  const char* name;               ///< short name on the command line (`attnlab render --view NAME`) and in AppState
  const char* title;              ///< window title
  const char* chapter_reference;  ///< where the idea is in the chapter (kChapterCitation), e.g. "figs. 26.8, 26.10"
  const char* tour_text;          ///< one or two sentences of the project's own words, for the guided tour
};

class TeachingView {
 public:
  explicit TeachingView(const TeachingViewText& text) : text_(text) {}
  /// Cancels the view's jobs ("NAME:…" on the scheduler it used): their continuations would reach
  /// a view that is gone.
  virtual ~TeachingView() {
    if (scheduler_) scheduler_->cancel_prefix(std::string(text_.name) + ":");
  }
  const char* name() const { return text_.name; }
  const char* title() const { return text_.title; }
  const char* chapter_reference() const { return text_.chapter_reference; }
  const char* tour_text() const { return text_.tour_text; }
  /// Draws the view into the current ImGui window: one line when no image is loaded, else its
  /// contents (draw_contents).
  void draw(AppState& state, HandMadeSession& hand_made);

 protected:
  /// The view's contents; called only with an image loaded.
  virtual void draw_contents(AppState& state, HandMadeSession& hand_made) = 0;

  /// Where the view's jobs went (set when it submits the first, keyed "NAME:…"), or none.
  Scheduler* scheduler_ = nullptr;

 private:
  TeachingViewText text_;
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
