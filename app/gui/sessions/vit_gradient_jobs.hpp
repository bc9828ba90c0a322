#pragma once
// The gradient jobs of a ViT session (issue 49, SPEC §13): one gradient pass of a class's logit
// gives every method's relevance map, then the faithfulness curves of each; both run on the
// session's scheduler (cancellable, latest request wins) and are kept in its view data
// (VitViewData::Gradients), held weakly by the jobs' continuations. The Why? view and the main
// map (vit.relevance.on_map) ask for them here.
#include "app/gui/sessions/vit_session.hpp"
#include "app/gui/state/app_state.hpp"
#include "core/vit/relevance.hpp"

#include <string>
#include <vector>

namespace attnlab::app {

/// Class c's label from the model's config (id2label or label_names), else "class c".
std::string vit_class_name(const VitArchitecture& arch, int c);

/// The class the document names for this model (vit.relevance.class: an index, a label or top,
/// resolved from the pass's logits), or −1 with the reason in `error`.
int vit_chosen_class(const AppState& state, const VitRun& run, std::string& error);

/// Starts the gradient pass and every method's map for `klass` unless they are held or on
/// their way; then, once the maps are there, the faithfulness curves of every method (and a
/// random order). Keys: "generation|class".
void request_relevance(VitSession& vit, int klass);

/// The index of `m` in kRelevanceMethods (and in the held maps and curves).
int relevance_method_index(RelevanceMethod m);

/// The relevance the document asks for (vit.relevance.class by vit.relevance.method) over the
/// patch grid of `vit`'s run, for the main map (vit.relevance.on_map): N values, or nullptr
/// while the gradient job runs (started here when it is neither held nor on its way) or when
/// there is none to draw. `what` says which: "relevance of 'Bag' by chefer", "computing the
/// relevance of 'Bag' ...", or the reason (no classifier, no such class, the job's error).
const std::vector<float>* relevance_for_map(const AppState& state, VitSession& vit, std::string& what);

}  // namespace attnlab::app
