#pragma once
// The views of a real ViT's attention (the loaded checkpoint as the attention source): the
// model panel, the main map, the layer × head grid and the mean-attention-distance plot. Each
// is its own file; they read AppState (the document) and ask the VitSession's source for rows.
#include "app/gui/maps/vit_map_pictures.hpp"
#include "app/gui/state/app_state.hpp"
#include "app/gui/state/source_choice.hpp"
#include "app/gui/maps/map_pictures.hpp"
#include "app/gui/maps/map_source.hpp"
#include "app/gui/maps/view.hpp"
#include "app/gui/sessions/vit_session.hpp"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab::app {

/// Open a checkpoint (path, recent list, progress, cancel), what it is (vit_info, input, grid,
/// SHA-256), its prediction (top 5), and the choices: layer, head, query token, rollout,
/// token norms, DINO-style masks, upsampling, input size.
void draw_vit_panel(AppState& state, VitSession& vit);
// Each view draws `vit` (the loaded ViT's session, or a Train run's) for `choice`, that source's
// choice in the document (Document::vit, Document::train).
/// Mean attention distance (input pixels) per layer and head, the ViT paper's fig. 7; hovering
/// a dot selects its layer and head.
void draw_vit_distance_view(AppState& state, VitSession& vit, SourceChoice& choice);

/// The whole A of the current layer and head as an image, prefix tokens first and set apart,
/// the query's row marked; large T is shown pooled by the maximum over blocks.
void draw_vit_matrix_view(AppState& state, VitSession& vit, SourceChoice& choice);
/// The current query's row of one head worked step by step: q_i, the scores, max and Z of the
/// softmax, and the ten keys with the most weight (VitRun::head_step).
void draw_vit_step_view(VitSession& vit, const SourceChoice& choice);

/// High-norm tokens (Darcet et al. 2023): the histogram of the patch tokens' norms after the
/// chosen layer with the threshold (Document::vit_norm_ratio × the median) as a line, how many
/// are over it, and the prefix tokens' norms, each a button making it the query.
void draw_vit_norms_view(AppState& state, VitSession& vit, SourceChoice& choice);

// The views under a ViT's map as views of the one interface (app/gui/maps/view.hpp): each
// needs a ViT's pass and draws the source's own choice; the registry
// (app/gui/views/view_registry.cpp) lists them. The ViT tab, the Train tab and `render --model
// --view vit-NAME` draw them.
/// A view that needs a ViT's pass and draws it with one function of the document, the source's
/// session and its choice: each view under a ViT's map is one of these, made by its file's factory.
class VitPassView final : public View {
 public:
  using Draw = void (*)(AppState& state, VitSession& vit, SourceChoice& choice);
  VitPassView(const ViewText& text, Draw draw_fn) : View(text, kNeedRows | kNeedVitPass), draw_(draw_fn) {}
  void draw(ViewSource& s) override { draw_(s.state, *s.vit, *s.choice); }

 private:
  Draw draw_;
};

std::unique_ptr<View> make_vit_distance_view();  // "distance"
std::unique_ptr<View> make_vit_matrix_view();    // "matrix"
std::unique_ptr<View> make_vit_step_view();      // "step"
std::unique_ptr<View> make_vit_norms_view();     // "high-norm"
std::unique_ptr<View> make_vit_relevance_view(); // "relevance"
std::unique_ptr<View> make_vit_field_view();     // "erf"

/// Why the model decided (SPEC §13): the chosen class's relevance by the chosen method over the
/// photo, the top 5 as buttons and a search over every label, the faithfulness curves on this
/// image (vit_relevance_view.cpp).
void draw_vit_relevance_view(AppState& state, VitSession& vit, SourceChoice& choice);
/// The query's effective receptive field after the layer over the photo (vit_field_view.cpp).
void draw_vit_field_view(AppState& state, VitSession& vit, SourceChoice& choice);

}  // namespace attnlab::app
