// Mean attention distance per layer and head on the current image, as in the ViT paper's
// fig. 7: layers on x, input pixels on y, one dot per head; the current layer is marked and
// hovering a dot selects its layer and head.
#include "app/gui/vit/vit_views.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace attnlab::app {

void draw_vit_distance_view(AppState& state, VitSession& vit, SourceChoice& choice) {
  const VitRun* src = vit.run();
  if (!src) {
    ImGui::TextUnformatted(_("No model loaded."));
    return;
  }
  const Matrix& d = src->distance();
  const int L = src->layers(), H = src->heads(), layer = choice_layer(choice, src->layers());
  // What it is in one line, the definition on hover: the plot keeps the panel's height (a
  // projector's lower row is short).
  ImGui::TextUnformatted(_("Mean attention distance (px) per head and layer"));
  help_marker(_("For every patch query, the distance to each patch key weighted by its attention, averaged over queries "
                "(input pixels). Low: the head looks nearby; high: across the image."));
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImVec2 size = ImGui::GetContentRegionAvail();
  size.x = std::max(size.x, 120.0f);
  size.y = std::max(size.y, 80.0f);
  ImGui::InvisibleButton("vit_distance", size);
  record_widget("vit_distance");
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float font = ImGui::GetFontSize();
  const float left = p0.x + ImGui::CalcTextSize("0000").x + 8, right = p0.x + size.x - 10;
  const float top = p0.y + 6, bottom = p0.y + size.y - font * 2.2f;
  // The y range: 0 to the largest distance the grid allows (half its diagonal, roughly where
  // a uniform head sits) or the data's largest, whichever is larger, in round steps.
  const SourceGrid g = src->grid();
  const double diagonal = std::hypot(src->input_width(), src->input_height());
  const double ymax = std::max(static_cast<double>(d.maxCoeff()), diagonal * 0.5);
  // about five grid lines: a step of 1, 2 or 5 times a power of ten
  const double raw = ymax / 5, decade = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw <= decade ? decade : raw <= 2 * decade ? 2 * decade : raw <= 5 * decade ? 5 * decade : 10 * decade;
  const double ytop = std::ceil(ymax / step) * step;
  auto X = [&](int l) { return left + (right - left) * (static_cast<float>(l) + 0.5f) / static_cast<float>(L); };
  auto Y = [&](double v) { return bottom - (bottom - top) * static_cast<float>(v / ytop); };
  dl->AddRectFilled(ImVec2(left, top), ImVec2(right, bottom), IM_COL32(20, 20, 24, 255));
  dl->AddRectFilled(ImVec2(X(layer) - (right - left) / static_cast<float>(L) * 0.5f, top),
                    ImVec2(X(layer) + (right - left) / static_cast<float>(L) * 0.5f, bottom), IM_COL32(0, 255, 255, 40));
  for (double v = 0; v <= ytop + 1e-9; v += step) {
    dl->AddLine(ImVec2(left, Y(v)), ImVec2(right, Y(v)), IM_COL32(255, 255, 255, 30));
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    dl->AddText(ImVec2(p0.x, Y(v) - font * 0.5f), IM_COL32(200, 200, 200, 255), text);
  }
  for (int l = 0; l < L; ++l) {
    const std::string t = std::to_string(l);
    dl->AddText(ImVec2(X(l) - ImGui::CalcTextSize(t.c_str()).x * 0.5f, bottom + 2), IM_COL32(200, 200, 200, 255), t.c_str());
  }
  // TRANSLATORS: the plot's x axis: the ViT's layers.
  const char* const x_title = _("layer");
  dl->AddText(ImVec2((left + right) * 0.5f - ImGui::CalcTextSize(x_title).x * 0.5f, bottom + font + 2), IM_COL32(200, 200, 200, 255),
              x_title);
  // A uniform head's distance on this grid, for reference: what "looks everywhere" means here.
  // Computed once per grid and patch size (N² terms), kept with the session (VitViewData).
  const double uniform = vit.view_data().uniform_distance.get({g.cols, g.rows, src->patch()}, [&] {
    double sum = 0;
    for (int i = 0; i < g.N(); ++i)
      for (int j = 0; j < g.N(); ++j) sum += std::hypot(i % g.cols - j % g.cols, i / g.cols - j / g.cols);
    return sum * src->patch() / (static_cast<double>(g.N()) * g.N());
  });
  dl->AddLine(ImVec2(left, Y(uniform)), ImVec2(right, Y(uniform)), IM_COL32(255, 255, 255, 120), 1.0f);
  // TRANSLATORS: the line a head attending to every patch alike would sit on.
  dl->AddText(ImVec2(left + 4, Y(uniform) - font - 1), IM_COL32(200, 200, 200, 255), _("uniform attention"));

  const ImGuiIO& io = ImGui::GetIO();
  const float r = std::max(4.0f, font * 0.3f);
  int hover_l = -1, hover_h = -1;
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h) {
      // heads spread a little around the layer's x so that equal distances stay visible
      const float x = X(l) + (static_cast<float>(h) - static_cast<float>(H - 1) * 0.5f) * r * 0.9f;
      const float y = Y(d(l, h));
      const bool current = l == layer && h == choice.head.head;
      dl->AddCircleFilled(ImVec2(x, y), current ? r * 1.6f : r, vit_head_colour(h));
      dl->AddCircle(ImVec2(x, y), current ? r * 1.6f : r, IM_COL32(0, 0, 0, 255));
      if (ImGui::IsItemHovered() && std::hypot(io.MousePos.x - x, io.MousePos.y - y) <= r + 2) {
        hover_l = l;
        hover_h = h;
      }
    }
  if (hover_l >= 0) {
    choice.layer = hover_l;
    choice.head = HeadChoice{hover_h, HeadFusion::Mean};
    state.vit_rollout = false;
    state.vit_norms = false;
    ImGui::BeginTooltip();
    // TRANSLATORS: a dot: its layer, its head, and the head's mean attention distance in pixels.
    ImGui::Text(_("layer %d, head %d: %.1f px"), hover_l, hover_h, d(hover_l, hover_h));
    ImGui::EndTooltip();
  }
}

std::unique_ptr<View> make_vit_distance_view() {
  // TRANSLATORS: a tab's short label, then the view's title: the heads' mean attention distance.
  return std::make_unique<VitPassView>(ViewText{"distance", N_("Distance"), N_("Mean attention distance")}, draw_vit_distance_view);
}

}  // namespace attnlab::app
