#pragma once
// The one interface of a view (issue 48: any view of any source). A view says what it needs
// from a source (ViewNeed) and draws into the current ImGui window from what a source hands it
// (ViewSource); it works on every source that offers all it needs. The chapter's views
// (app/gui/chapter, TeachingView) need the hand-made heads' own session; the views under a
// ViT's map (app/gui/vit) need a ViT's pass; the pinned queries need only rows of A and so work
// on every source. Each view is its own file; app/gui/views/view_registry.cpp lists them all,
// one line each, in the order they are offered (docs/DEVELOPING.md, "Add a view in one file").
#include "app/gui/maps/map_source.hpp"
#include "app/gui/sessions/hand_made_session.hpp"
#include "app/gui/sessions/vit_session.hpp"
#include "app/gui/state/app_state.hpp"
#include "app/gui/state/scheduler.hpp"
#include "core/base/translate.hpp"

#include <functional>
#include <memory>
#include <string_view>
#include <string>
#include <vector>

namespace attnlab::app {

/// What a view needs from a source, and what a source offers (bits of a mask).
enum ViewNeed : unsigned {
  kNeedRows = 1u << 0,        ///< rows of A through the source's MapSource (any source: eq. 26.6's softmax rows)
  kNeedHandMadeHeads = 1u << 1,  ///< the hand-made heads' session: tokens, Q, K, V, the settings (the chapter's views)
  kNeedVitPass = 1u << 2,     ///< a ViT's forward pass: every layer's whole A, the tokens, their norms (VitSession)
  kNeedSimilarity = 1u << 3,  ///< the source's similarity job (CKA between layers, cka_view.hpp)
};

/// What each kind of source offers: the hand-made heads (their session and rows of A); a ViT,
/// loaded or being trained (its pass, rows of A and a similarity job).
inline constexpr unsigned kHandMadeOffers = kNeedRows | kNeedHandMadeHeads;
inline constexpr unsigned kVitOffers = kNeedRows | kNeedVitPass | kNeedSimilarity;

/// A source as a view sees it: the document, the source's map source (rows of A), what it
/// offers (ViewNeed bits) and, where it offers them, its session and choice.
struct ViewSource {
  AppState& state;
  MapSource& map;
  unsigned offers = kNeedRows;
  HandMadeSession* hand_made = nullptr;  ///< kNeedHandMadeHeads: the hand-made heads
  VitSession* vit = nullptr;             ///< kNeedVitPass: the loaded ViT's session, or a Train run's
  SourceChoice* choice = nullptr;        ///< kNeedVitPass: that source's choice (Document::vit, Document::train)
  std::function<void()> draw_similarity;  ///< kNeedSimilarity: the caller's CKA view (its job and request)
};

/// What a view says of itself: the menus, the tabs, the window title and the tour show it.
struct ViewText {
  const char* name;   ///< unique among the views a source offers: the saved settings' and `render --view`'s name
  const char* label;  ///< a tab's label, short (five tabs fit a projector's lower row)
  const char* title = nullptr;              ///< a window's title (the chapter's views), else null
  const char* chapter_reference = nullptr;  ///< where the idea is in the chapter, e.g. "figs. 26.8, 26.10"
  const char* tour_text = nullptr;          ///< one or two sentences for the guided tour
};

class View {
 public:
  View(const ViewText& text, unsigned needs) : text_(text), needs_(needs) {}
  /// Cancels the view's jobs ("NAME:…" on the scheduler it used): their continuations would
  /// reach a view that is gone.
  virtual ~View() {
    if (scheduler_) scheduler_->cancel_prefix(std::string(text_.name) + ":");
  }
  View(const View&) = delete;
  View& operator=(const View&) = delete;

  const char* name() const { return text_.name; }
  /// The label, title, chapter reference and tour text in the user's language (marked N_() where
  /// the view is made, translated here at each use: the language may change while the app runs).
  const char* label() const { return _(text_.label); }
  const char* title() const { return _(text_.title ? text_.title : text_.label); }
  const char* chapter_reference() const { return text_.chapter_reference ? _(text_.chapter_reference) : nullptr; }
  const char* tour_text() const { return text_.tour_text ? _(text_.tour_text) : nullptr; }
  unsigned needs() const { return needs_; }
  /// Whether a source offering `offers` (ViewNeed bits) offers everything this view needs.
  bool works_with(unsigned offers) const { return (needs_ & ~offers) == 0; }
  bool works_on(const ViewSource& source) const { return works_with(source.offers); }
  /// Draws the view into the current ImGui window. Call only when works_on(source).
  virtual void draw(ViewSource& source) = 0;

 protected:
  /// Where the view's jobs went (set when it submits the first, keyed "NAME:…"), or none.
  Scheduler* scheduler_ = nullptr;

 private:
  ViewText text_;
  unsigned needs_;
};

/// The pinned queries (source_pinned_view.cpp): rows of A only, so every source offers them.
std::unique_ptr<View> make_pinned_view();

/// The views of `all` that work on `source`, in their order: the list a source offers.
std::vector<View*> views_for(const std::vector<std::unique_ptr<View>>& all, const ViewSource& source);
/// The view named `name` among those, or null.
View* find_view(const std::vector<View*>& offered, std::string_view name);

}  // namespace attnlab::app
