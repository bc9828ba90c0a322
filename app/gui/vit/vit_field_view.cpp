// What a token sees (issue 49, SPEC §13): the effective receptive field of the map's query after
// the map's layer (Luo et al. 2016; Raghu et al. 2021), Σ_colour |∂(Σ_d z_l[q, d])/∂x| over the
// model's input pixels, drawn over the photo. Step the layer (PgUp/PgDn) to watch it grow: a
// ViT's field reaches across the image within a few layers, where a CNN's grows by its kernels.
// The gradient pass runs on the scheduler (cancellable, latest request wins).
#include "app/gui/vit/vit_views.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/translate.hpp"

#include <algorithm>

namespace attnlab::app {
namespace {

using Gradients = VitViewData::Gradients;

void request_field(VitSession& vit, int layer, int token, const std::string& key) {
  const std::shared_ptr<Gradients>& held = vit.view_data().gradients;
  if (held->field_key == key || held->field_pending == key) return;
  held->field_pending = key;
  const std::weak_ptr<Gradients> slot = held;
  const std::shared_ptr<const VitRun> run = vit.run_ptr();
  vit.scheduler().submit<Matrix>(
      vit.field_job(),
      [run, layer, token](const std::atomic<bool>& stop) {
        return vit_receptive_field(run->model(), run->input(), layer, token, vit_memory_budget(), &stop);
      },
      [slot, key](std::future<Matrix> result) {
        const auto g = slot.lock();
        if (!g) return;
        g->field_pending.clear();
        g->field_key = key;
        try {
          g->field = result.get();
          g->field_error.clear();
        } catch (const std::exception& e) {
          g->field = Matrix();
          g->field_error = e.what();
        }
      });
}

}  // namespace

void draw_vit_field_view(AppState& state, VitSession& vit, SourceChoice& choice) {
  const VitRun* run = vit.run();
  if (!run) {
    ImGui::TextUnformatted(_("No model loaded."));
    return;
  }
  const SourceGrid g = run->grid();
  const int layer = choice_layer(choice, run->layers()), token = choice_query(choice, g);
  const std::string key = std::to_string(vit.generation()) + "|" + std::to_string(layer) + "|" + std::to_string(token);
  // TRANSLATORS: the query token's label, the layer, then the last layer's number.
  text_wrapped(_("Receptive field of %s after layer %d (of 0-%d)"), token_label(g, token).c_str(), layer, run->layers() - 1);
  // TRANSLATORS: PgUp and PgDn are keys.
  help_marker(_("Which input pixels the query's features after this layer depend on: the size of the gradient of the sum "
                "of its features with respect to each input pixel (Luo et al. 2016). Step the layer with PgUp / PgDn: a "
                "ViT's field reaches across the image within a few layers, as Raghu et al. (2021) found, where a CNN's "
                "grows a kernel at a time. Click the map to move the query."));
  record_widget("erf_what");
  request_field(vit, layer, token, key);
  const Gradients& held = *vit.view_data().gradients;
  if (held.field_key != key) {
    ImGui::TextDisabled("%s", _("Computing the gradients ..."));
    return;
  }
  if (!held.field_error.empty()) {
    text_wrapped("%s", held.field_error.c_str());
    state.report.field_drawn = {{"error", held.field_error}};
    return;
  }
  const Matrix& f = held.field;
  const float w = static_cast<float>(g.covered_w), h = static_cast<float>(g.covered_h);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float scale = std::max(1e-3f, std::min(avail.x / w, avail.y / h));
  const ImVec2 p0 = ImGui::GetCursorScreenPos(), p1(p0.x + w * scale, p0.y + h * scale);
  ImGui::InvisibleButton("erf_map", ImVec2(std::max(1.0f, p1.x - p0.x), std::max(1.0f, p1.y - p0.y)));
  record_widget("erf_map");
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddImage(vit.photo(), p0, p1, ImVec2(0, 0), ImVec2(w / static_cast<float>(vit.photo_width()), h / static_cast<float>(vit.photo_height())));
  const std::vector<float> values(f.data(), f.data() + f.size());
  const ImTextureID map = vit.textures().get("erf", key + "|" + std::string(colormap_name(state.colormap)) + "|" + std::string(normalization_name(state.normalization)),
                                             static_cast<int>(f.cols()), static_cast<int>(f.rows()),
                                             [&] { return apply_colormap(values, {}, state.colormap, state.normalization); }, state.bilinear);
  dl->AddImage(map, p0, p1, ImVec2(0, 0), ImVec2(1, 1), IM_COL32(255, 255, 255, static_cast<int>(255 * state.opacity)));
  // A click on the field moves the query to that patch (as a click on the main map does).
  if (ImGui::IsItemClicked() && g.cols > 0 && g.rows > 0) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int col = std::clamp(static_cast<int>((m.x - p0.x) / (p1.x - p0.x) * static_cast<float>(g.cols)), 0, g.cols - 1);
    const int row = std::clamp(static_cast<int>((m.y - p0.y) / (p1.y - p0.y) * static_cast<float>(g.rows)), 0, g.rows - 1);
    choice.cell = Cell{col, row};
    choice.prefix_token = -1;
    choice.query_pinned = true;
  }
  state.report.field_drawn = {{"layer", layer}, {"token", token}, {"width", f.cols()}, {"height", f.rows()}, {"sum", f.sum()},
                              {"max", f.maxCoeff()}};
}

std::unique_ptr<View> make_vit_field_view() {
  // TRANSLATORS: a tab's short label (the receptive field), then the view's title.
  return std::make_unique<VitPassView>(ViewText{"erf", N_("Field"), N_("Effective receptive field")}, draw_vit_field_view);
}

}  // namespace attnlab::app
