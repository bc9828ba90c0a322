#pragma once
// The teaching views (issue: the chapter's remaining concepts, each as an interactive view).
// Each view is its own file (view_*.cpp) with a class deriving from TeachingView, a View
// (app/gui/maps/view.hpp) that needs the hand-made heads; it reads the one AppState, gets its
// numbers from the HandMadeSession (the GPU engine, or the CPU reference), and may own GL
// textures (destroyed with the app, before the context goes).
#include "app/gui/maps/view.hpp"
#include "app/gui/state/app_state.hpp"
#include "app/gui/sessions/hand_made_session.hpp"
#include "core/base/translate.hpp"

#include <memory>
#include <string>
#include <vector>

namespace attnlab::app {

/// The chapter the views follow, named in full once (the Chapter menu's first line); the views,
/// the tour and the menu's items cite it short after ("fig. 26.2, section 26.9.1"). A citation of
/// the English book: it stays English (not in the catalog).
inline constexpr const char* kChapterCitation =
    "Torralba, Isola, Freeman, Foundations of Computer Vision (MIT Press, 2024), ch. 26 \"Transformers\"";

/// What a teaching view says of itself: the menus, the window title and the tour show it. The
/// name is an identifier (English); the other three are English marked N_() where the view is
/// made, and translated where shown (View::title(), chapter_reference(), tour_text()).
struct TeachingViewText {
  const char* name;               ///< short name on the command line (`attnlab render --view NAME`) and in AppState
  const char* title;              ///< window title (N_)
  const char* chapter_reference;  ///< where the idea is in the chapter (kChapterCitation), e.g. "figs. 26.8, 26.10" (N_)
  const char* tour_text;          ///< one or two sentences of the project's own words, for the guided tour (N_)
};

/// A view of the chapter (view.hpp's one interface): it needs the hand-made heads' session.
class TeachingView : public View {
 public:
  explicit TeachingView(const TeachingViewText& text)
      : View(ViewText{text.name, text.title, text.title, text.chapter_reference, text.tour_text}, kNeedRows | kNeedHandMadeHeads) {}
  /// One line when no image is loaded, else its contents (draw_contents).
  void draw(ViewSource& source) final;
  /// The same on the hand-made heads alone (`attnlab render --view NAME`, the tour's windows).
  void draw(AppState& state, HandMadeSession& hand_made);

 protected:
  /// The view's contents; called only with an image loaded.
  virtual void draw_contents(AppState& state, HandMadeSession& hand_made) = 0;
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
// Every view, these in the order of the chapter (the guided tour's): app/gui/views/view_registry.cpp.

}  // namespace attnlab::app
