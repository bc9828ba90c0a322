// The gradient jobs of a ViT session (issue 49): the class-relevance maps of every method and
// their faithfulness curves, on the scheduler, kept in the session's view data. Shared by the
// Why? view (app/gui/vit/vit_relevance_view.cpp) and the main map (vit.relevance.on_map).
#include "app/gui/sessions/vit_gradient_jobs.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/vit/faithfulness.hpp"
#include "core/vit/vit_gradients.hpp"

#include <algorithm>

namespace attnlab::app {

using Gradients = VitViewData::Gradients;

std::string vit_class_name(const VitArchitecture& arch, int c) {
  if (c >= 0 && c < static_cast<int>(arch.labels.size())) return arch.labels[static_cast<std::size_t>(c)];
  // TRANSLATORS: a class without a label in the model's config; %d is its index.
  return text_format(_("class %d"), c);
}

int vit_chosen_class(const AppState& state, const VitRun& run, std::string& error) {
  try {
    const int c = vit_class_named(run.model().arch, state.relevance_class);
    return c == VitGradientTarget::kTopClass ? run.top_classes(1).at(0).first : c;
  } catch (const Error& e) {
    error = e.what();
    return -1;
  }
}

void request_relevance(VitSession& vit, int klass) {
  const std::shared_ptr<Gradients>& held = vit.view_data().gradients;
  const std::string key = std::to_string(vit.generation()) + "|" + std::to_string(klass);
  const std::weak_ptr<Gradients> slot = held;
  const std::shared_ptr<const VitRun> run = vit.run_ptr();
  if (held->maps_key != key && held->maps_pending != key) {
    held->maps_pending = key;
    struct Maps {
      int klass = -1;
      std::vector<std::vector<float>> maps;
    };
    vit.scheduler().submit<Maps>(
        vit.relevance_job(),
        [run, klass](const std::atomic<bool>& stop) {
          const VitGradients g = vit_gradients(run->model(), run->input(), VitGradientTarget::class_logit(klass), vit_memory_budget(), &stop);
          Maps out{g.klass, {}};
          for (const RelevanceMethod m : kRelevanceMethods) out.maps.push_back(relevance_map(g, m));
          return out;
        },
        [slot, key](std::future<Maps> result) {
          const auto g = slot.lock();
          if (!g) return;
          g->maps_pending.clear();
          g->maps_key = key;
          try {
            Maps m = result.get();
            g->klass = m.klass;
            g->maps = std::move(m.maps);
            g->maps_error.clear();
          } catch (const std::exception& e) {
            g->maps.clear();
            g->maps_error = e.what();
          }
        });
    return;
  }
  if (held->maps_key != key || held->maps.empty() || held->curves_key == key || held->curves_pending == key) return;
  held->curves_pending = key;
  std::vector<std::vector<int>> orders;
  for (const auto& map : held->maps) orders.push_back(relevance_order(map));
  orders.push_back(random_patch_order(run->input().N(), 0));
  vit.scheduler().submit<std::vector<FaithfulnessCurves>>(
      vit.curves_job(),
      [run, klass, orders](const std::atomic<bool>& stop) {
        std::vector<FaithfulnessCurves> out;
        for (const auto& order : orders) out.push_back(faithfulness_curves(run->model(), run->input(), klass, order, vit_memory_budget(), 1, &stop));
        return out;
      },
      [slot, key](std::future<std::vector<FaithfulnessCurves>> result) {
        const auto g = slot.lock();
        if (!g) return;
        g->curves_pending.clear();
        g->curves_key = key;
        try {
          g->curves = result.get();
          g->curves_error.clear();
        } catch (const std::exception& e) {
          g->curves.clear();
          g->curves_error = e.what();
        }
      });
}

int relevance_method_index(RelevanceMethod m) {
  return static_cast<int>(std::find(kRelevanceMethods.begin(), kRelevanceMethods.end(), m) - kRelevanceMethods.begin());
}

const std::vector<float>* relevance_for_map(const AppState& state, VitSession& vit, std::string& what) {
  const VitRun* run = vit.run();
  if (!run) return nullptr;
  if (run->model().arch.classes == 0) {
    what = _("no classifier: no relevance to draw");
    return nullptr;
  }
  const int klass = vit_chosen_class(state, *run, what);
  if (klass < 0) return nullptr;
  request_relevance(vit, klass);
  const Gradients& held = *vit.view_data().gradients;
  const std::string key = std::to_string(vit.generation()) + "|" + std::to_string(klass);
  const std::string label = vit_class_name(run->model().arch, klass);
  if (held.maps_key != key) {
    // TRANSLATORS: %s is a class's label ("Bag").
    what = text_format(_("computing the relevance of '%s' ..."), label.c_str());
    return nullptr;
  }
  if (!held.maps_error.empty()) {
    what = held.maps_error;
    return nullptr;
  }
  // TRANSLATORS: %s is a class's label ("Bag"), then the method's name (chefer, rollout, ...).
  what = text_format(_("relevance of '%s' by %s"), label.c_str(), relevance_method_name(state.relevance_method));
  return &held.maps[static_cast<std::size_t>(relevance_method_index(state.relevance_method))];
}

}  // namespace attnlab::app
