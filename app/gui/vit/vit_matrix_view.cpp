// The whole attention matrix A of the ViT's current layer and head (fig. 26.18's picture for a
// learned model): rows are queries, columns keys, the prefix tokens (CLS, registers) first and
// set apart by lines, the current query's row marked. Rows sum to 1 over all T keys.
#include "app/gui/vit/vit_views.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <cmath>

namespace attnlab::app {

namespace {
// The largest side drawn: larger matrices are pooled by the maximum over square blocks, so that
// a single strong weight stays visible.
constexpr int kMaxSide = 1024;
}  // namespace

void draw_vit_matrix_view(AppState& state, VitSession& vit, SourceChoice& choice) {
  const VitRun* src = vit.run();
  if (!src) return;
  const SourceGrid g = src->grid();
  const int layer = choice_layer(choice, src->layers());
  const HeadChoice head = choice_head(choice, src->heads());
  const int T = g.T(), block = (T + kMaxSide - 1) / kMaxSide, side = (T + block - 1) / block;
  const std::string key = std::to_string(src->model().id) + "|" + std::to_string(vit.generation()) + "|" + std::to_string(layer) + "|" + std::to_string(head.head) + ":" +
                          std::to_string(static_cast<int>(head.fusion)) + "|" +
                          std::string(colormap_name(state.colormap)) + "|" + std::string(normalization_name(state.normalization));
  const VitViewData::PooledMatrix& pooled = vit.view_data().matrix.get(key, [&](VitViewData::PooledMatrix& m) {
    const Matrix A = src->matrix(layer, head);
    m.values.assign(static_cast<std::size_t>(side) * side, 0.0f);
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j) {
        float& v = m.values[static_cast<std::size_t>(i / block) * side + j / block];
        v = std::max(v, A(i, j));
      }
    std::vector<std::uint8_t> keep(m.values.size(), 1);
    m.range = normalization_range(m.values, keep, state.normalization);
  });
  const ValueRange range = pooled.range;
  const ImTextureID tex = vit.textures().get("matrix", key, side, side, [&] {
    return colormap_pixels(pooled.values, {}, state.colormap, state.normalization, range);
  }, false);
  const int token = choice_query(choice, src->grid());
  // TRANSLATORS: A is the attention matrix; the layer, the head's label; T is the number of tokens, of which the first %d are
  // the prefix tokens (CLS, registers); the last %s is ", pooled by max" or nothing.
  text_wrapped(_("A of layer %d, %s: T = %d tokens (%d prefix, then the patches in raster order)%s"), layer,
               head_choice_label(head).c_str(), T, g.prefix, block > 1 ? _(", pooled by max") : "");
  const float bar = ImGui::CalcTextSize("0.0000000e-00").x + 30;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float size = std::max(std::min(avail.x - bar, avail.y), 40.0f);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("vit_matrix", ImVec2(size, size));
  record_widget("vit_matrix");
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddImage(tex, p, ImVec2(p.x + size, p.y + size));
  const float px = size / static_cast<float>(T);
  const float pre = static_cast<float>(g.prefix) * px;
  dl->AddLine(ImVec2(p.x + pre, p.y), ImVec2(p.x + pre, p.y + size), IM_COL32(255, 255, 255, 160));
  dl->AddLine(ImVec2(p.x, p.y + pre), ImVec2(p.x + size, p.y + pre), IM_COL32(255, 255, 255, 160));
  const float qy = p.y + static_cast<float>(token) * px;
  dl->AddRect(ImVec2(p.x - 2, qy - 1), ImVec2(p.x + size + 2, qy + std::max(px, 1.0f) + 1), IM_COL32(0, 255, 255, 255), 0, 0, 2);
  if (ImGui::IsItemHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int i = std::clamp(static_cast<int>((m.y - p.y) / px), 0, T - 1), j = std::clamp(static_cast<int>((m.x - p.x) / px), 0, T - 1);
    ImGui::BeginTooltip();
    // TRANSLATORS: a cell of the attention matrix: its query token and its key token.
    ImGui::Text(_("query %s, key %s"), token_label(src->grid(), i).c_str(), token_label(src->grid(), j).c_str());
    if (block == 1) ImGui::Text("a_ij = %s", format_weight(src->matrix(layer, head)(i, j)).c_str());  // i18n: English (a symbol)
    ImGui::EndTooltip();
    if (ImGui::IsItemClicked()) {  // a row is a query
      if (i < g.prefix) choice.prefix_token = i;
      else {
        choice.prefix_token = -1;
        choice.cell = {(i - g.prefix) % g.cols, (i - g.prefix) / g.cols};
        choice.query_pinned = true;
      }
    }
  }
  ImGui::SameLine();
  ImGui::BeginGroup();
  ImGui::TextUnformatted("a_ij");  // i18n: English (a symbol)
  colour_bar(state.colormap, state.normalization, range, std::max(size - ImGui::GetTextLineHeightWithSpacing() * 2, 40.0f));
  ImGui::EndGroup();
}

std::unique_ptr<View> make_vit_matrix_view() {
  // TRANSLATORS: a tab's short label (the attention matrix), then the view's title.
  return std::make_unique<VitPassView>(ViewText{"matrix", N_("Matrix"), N_("Attention matrix")}, draw_vit_matrix_view);
}

}  // namespace attnlab::app
