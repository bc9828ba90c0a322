// Why did the model decide? (issue 49, SPEC §13): the class-relevance map of the class the
// teacher picks (the top 5 as buttons, any class found by name) by the chosen method over the
// photo, and how faithful each method is on this image: the deletion and insertion curves of
// RISE against a random order; a second method beside the first (vit.relevance.beside), and a
// check box that puts the map on the main map (vit.relevance.on_map). The gradient pass and the
// curves run on the scheduler (app/gui/sessions/vit_gradient_jobs.hpp: cancellable, latest
// request wins); the results are kept in the session's view data.
#include "app/gui/vit/vit_views.hpp"
#include "app/gui/sessions/vit_gradient_jobs.hpp"
#include "app/gui/state/widget_log.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace attnlab::app {
namespace {

using Gradients = VitViewData::Gradients;

constexpr ImU32 kDeletionColour = IM_COL32(255, 110, 80, 255), kInsertionColour = IM_COL32(90, 200, 255, 255);
constexpr ImU32 kRandomColour = IM_COL32(170, 170, 170, 255);

/// The top 5 as buttons and a search over every label; a click explains that class.
void class_list(AppState& state, const VitRun& run, int klass) {
  const VitArchitecture& arch = run.model().arch;
  for (const auto& [c, p] : run.top_classes(5)) {
    char label[160];
    std::snprintf(label, sizeof label, "%5.1f %%  %s##relevance_class%d", 100.0 * p, vit_class_name(arch, c).c_str(), c);
    if (ImGui::Selectable(label, c == klass)) state.relevance_class = std::to_string(c);
    record_widget("relevance_class:" + std::to_string(c));
    // TRANSLATORS: a class's name and its probability in percent; a click explains the class.
    if (ImGui::IsItemHovered()) ImGui::SetTooltip(_("Why %s? (%.1f %%)"), vit_class_name(arch, c).c_str(), 100.0 * p);
  }
  static char find[64] = "";
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x);
  ImGui::InputTextWithHint("##relevance_find", _("find a class by name"), find, sizeof find);
  record_widget("relevance_find");
  if (!find[0]) return;
  std::string want = find;
  std::transform(want.begin(), want.end(), want.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  int shown = 0;
  for (int c = 0; c < arch.classes && shown < 6; ++c) {
    std::string name = vit_class_name(arch, c), lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (lower.find(want) == std::string::npos) continue;
    ++shown;
    if (ImGui::Selectable((name + "##relevance_found" + std::to_string(c)).c_str(), c == klass)) state.relevance_class = std::to_string(c);
    record_widget("relevance_found:" + std::to_string(c));
  }
  if (!shown) ImGui::TextDisabled("%s", _("no class matches"));
}

/// The map (N values over the patch grid) over the photo, `side` pixels on its long side;
/// `widget` names it for the widget log.
void map_over_photo(AppState& state, VitSession& vit, const std::vector<float>& values, const std::string& key, float side,
                    const std::string& widget) {
  const SourceGrid g = vit.run()->grid();
  const float w = static_cast<float>(g.covered_w), h = static_cast<float>(g.covered_h), scale = side / std::max(w, h);
  const ImVec2 p0 = ImGui::GetCursorScreenPos(), p1(p0.x + w * scale, p0.y + h * scale);
  ImGui::InvisibleButton(widget.c_str(), ImVec2(std::max(1.0f, w * scale), std::max(1.0f, h * scale)));
  record_widget(widget);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddImage(vit.photo(), p0, p1, ImVec2(0, 0), ImVec2(w / static_cast<float>(vit.photo_width()), h / static_cast<float>(vit.photo_height())));
  const ImTextureID map = vit_map_texture(vit, state, widget, key, values);
  dl->AddImage(map, p0, p1, ImVec2(0, 0), ImVec2(1, 1), IM_COL32(255, 255, 255, static_cast<int>(255 * state.opacity)));
}

/// A method's curves as drawn: its deletion and insertion colours and the line's thickness.
struct CurveStyle {
  ImU32 deletion = kDeletionColour, insertion = kInsertionColour;
  float thickness = 2.5f;
};

/// The colour `c` at 55 % of its strength: the second method's curves.
ImU32 faded(ImU32 c) {
  const ImVec4 v = ImGui::ColorConvertU32ToFloat4(c);
  return ImGui::ColorConvertFloat4ToU32(ImVec4(v.x * 0.55f, v.y * 0.55f, v.z * 0.55f, 1.0f));
}

/// Deletion and insertion of the chosen methods (solid; the second one fainter) against
/// random (thin), 0 … 100 %.
void curves_plot(const std::vector<std::pair<const FaithfulnessCurves*, CurveStyle>>& methods, const FaithfulnessCurves& random,
                 ImVec2 size) {
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("relevance_curves", size);
  record_widget("relevance_curves");
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float font = ImGui::GetFontSize();
  const float left = p0.x + font * 1.6f, right = p0.x + size.x - 4, top = p0.y + 2, bottom = p0.y + size.y - font * 1.3f;
  dl->AddRectFilled(ImVec2(left, top), ImVec2(right, bottom), IM_COL32(20, 20, 24, 255));
  auto point = [&](int s, double p) {
    return ImVec2(left + (right - left) * static_cast<float>(s) / (kFaithfulnessSteps - 1),
                  bottom - (bottom - top) * static_cast<float>(std::clamp(p, 0.0, 1.0)));
  };
  auto line = [&](const std::array<double, kFaithfulnessSteps>& c, ImU32 colour, float thickness) {
    for (int s = 1; s < kFaithfulnessSteps; ++s)
      dl->AddLine(point(s - 1, c[static_cast<std::size_t>(s - 1)]), point(s, c[static_cast<std::size_t>(s)]), colour, thickness);
  };
  line(random.deletion, kRandomColour, 1.0f);
  line(random.insertion, kRandomColour, 1.0f);
  for (auto m = methods.rbegin(); m != methods.rend(); ++m) {  // the first method on top
    line(m->first->deletion, m->second.deletion, m->second.thickness);
    line(m->first->insertion, m->second.insertion, m->second.thickness);
  }
  const ImU32 text = IM_COL32(200, 200, 200, 255);
  dl->AddText(ImVec2(p0.x, top), text, "1");
  dl->AddText(ImVec2(p0.x, bottom - font), text, "0");
  dl->AddText(ImVec2(left, bottom + 2), text, "0");
  // xgettext:no-c-format
  // TRANSLATORS: the x axis's right end: the share of the patches removed or restored (not a format).
  const char* const all_patches = _("100 % of the patches");
  const char* end = right - left > ImGui::CalcTextSize((std::string("0  ") + all_patches).c_str()).x ? all_patches : "100 %";
  dl->AddText(ImVec2(right - ImGui::CalcTextSize(end).x, bottom + 2), text, end);
}

/// One method's areas under its curves, in its curves' colours (`name` first when two are drawn).
void auc_line(const char* name, const FaithfulnessCurves& m, const CurveStyle& style) {
  if (name) {
    ImGui::TextUnformatted(name);
    ImGui::SameLine();
  }
  // TRANSLATORS: the area under the deletion curve (faithfulness: lower is better).
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(style.deletion), _("deletion %.3f"), m.deletion_auc);
  char insertion[48];
  // TRANSLATORS: the area under the insertion curve (faithfulness: higher is better).
  std::snprintf(insertion, sizeof insertion, _("insertion %.3f"), m.insertion_auc);
  same_line_if_room(ImGui::CalcTextSize(insertion).x + ImGui::GetStyle().ItemSpacing.x);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(style.insertion), "%s", insertion);
}

/// The faithfulness of `methods` (indices into kRelevanceMethods; one or two) on this image:
/// each one's areas, random's, and the curves.
void faithfulness_section(const Gradients& held, const std::string& key, const std::vector<int>& methods, ImVec2 size) {
  if (!held.curves_error.empty() && held.curves_key == key) {
    // TRANSLATORS: the error measuring the faithfulness curves.
    text_wrapped(_("Faithfulness: %s"), held.curves_error.c_str());
    return;
  }
  if (held.curves_key != key || held.curves.size() != kRelevanceMethods.size() + 1) {
    ImGui::TextDisabled("%s", _("Measuring faithfulness (deletion and insertion, 2 x 11 forward passes per method) ..."));
    return;
  }
  std::vector<std::pair<const FaithfulnessCurves*, CurveStyle>> drawn;
  for (std::size_t i = 0; i < methods.size(); ++i) {
    const CurveStyle style = i == 0 ? CurveStyle{} : CurveStyle{faded(kDeletionColour), faded(kInsertionColour), 1.8f};
    drawn.emplace_back(&held.curves[static_cast<std::size_t>(methods[i])], style);
    auc_line(methods.size() > 1 ? relevance_method_name(kRelevanceMethods[static_cast<std::size_t>(methods[i])]) : nullptr,
             *drawn.back().first, style);
  }
  const FaithfulnessCurves& r = held.curves.back();
  char random[64];
  // TRANSLATORS: a random order's areas under the deletion and insertion curves.
  std::snprintf(random, sizeof random, _("random %.3f / %.3f"), r.deletion_auc, r.insertion_auc);
  same_line_if_room(ImGui::CalcTextSize(random).x + ImGui::GetStyle().ItemSpacing.x + ImGui::GetFontSize() * 1.5f);
  ImGui::TextDisabled("%s", random);
  // TRANSLATORS: "attnlab explain" is a command (typed as it is).
  help_marker(_("The class's probability as the patches this map ranks first are replaced by the image's mean colour "
                "(deletion: a faithful map makes it fall fast, a small area) or restored into a mean-colour image "
                "(insertion: a large area), against a random order (grey). Petsiuk et al. 2018; Chefer et al. 2021. "
                "attnlab explain measures it over a data set."));
  record_widget("relevance_auc");
  curves_plot(drawn, r, ImVec2(std::max(size.x, 120.0f), std::max(ImGui::GetContentRegionAvail().y, ImGui::GetFontSize() * 4)));
}

/// What one method drew, for the sidecar: its name, its map and, once measured, its curves.
nlohmann::json drawn_method(const Gradients& held, const std::string& key, int method) {
  nlohmann::json j = {{"method", relevance_method_name(kRelevanceMethods[static_cast<std::size_t>(method)])},
                      {"map", held.maps[static_cast<std::size_t>(method)]}};
  if (held.curves_key == key && held.curves.size() == kRelevanceMethods.size() + 1) {
    const FaithfulnessCurves& m = held.curves[static_cast<std::size_t>(method)];
    j["deletion"] = m.deletion;
    j["insertion"] = m.insertion;
  }
  return j;
}

/// The maps of `methods` (one, or two side by side, each under its name) and their
/// faithfulness; fills the sidecar's relevance_drawn.
void maps_and_curves(AppState& state, VitSession& vit, const Gradients& held, const std::string& key, int klass,
                     const std::vector<int>& methods) {
  const std::string label = vit_class_name(vit.run()->model().arch, klass);
  const float font = ImGui::GetFontSize(), gap = ImGui::GetStyle().ItemSpacing.x;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const bool two = methods.size() > 1;
  // TRANSLATORS: %s is a class's name; two methods' relevance maps of it follow.
  if (two) text_wrapped(_("Why %s? Two methods"), label.c_str());
  else text_wrapped("%s: %s", relevance_method_name(state.relevance_method), label.c_str());
  record_widget("relevance_what");
  // The main map shows the first method's map (vit.relevance.on_map): beside the title, where
  // the short lower panel of a 1024 × 768 screen still shows it.
  // TRANSLATORS: a check box: the relevance map drawn on the main map too.
  const char* const on_map = _("on the main map");
  same_line_if_room(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(on_map).x +
                    ImGui::GetStyle().ItemSpacing.x);
  ImGui::Checkbox(on_map, &state.relevance_on_map);
  record_widget("vit.relevance.on_map");
  if (ImGui::IsItemHovered())
    // TRANSLATORS: A is the attention matrix; "Compare" names the feature (two models side by side).
    ImGui::SetTooltip("%s", _("The main map shows this class's relevance by the first method instead of a row of A (Compare: both models')"));
  // One map: the map beside the curves. Two: the maps side by side, the curves under them.
  const float side = two ? std::max(font * 4, std::min(avail.y * 0.62f - font * 2, (avail.x - gap) * 0.5f))
                         : std::max(font * 4, std::min(avail.y - font * 1.5f, avail.x * 0.5f));
  for (std::size_t i = 0; i < methods.size(); ++i) {
    const int m = methods[i];
    const char* name = relevance_method_name(kRelevanceMethods[static_cast<std::size_t>(m)]);
    if (i > 0) ImGui::SameLine();
    ImGui::BeginGroup();
    if (two) ImGui::TextUnformatted(name);
    map_over_photo(state, vit, held.maps[static_cast<std::size_t>(m)], key + "|" + name, side,
                   i == 0 ? "relevance_map" : "relevance_map_beside");
    ImGui::EndGroup();
  }
  if (!two) ImGui::SameLine();
  ImGui::BeginGroup();
  faithfulness_section(held, key, methods, ImVec2(ImGui::GetContentRegionAvail().x, 0));
  ImGui::EndGroup();
  nlohmann::json drawn = drawn_method(held, key, methods[0]);
  drawn["class"] = klass;
  drawn["label"] = label;
  if (held.curves_key == key && held.curves.size() == kRelevanceMethods.size() + 1)
    drawn["random"] = {{"deletion", held.curves.back().deletion}, {"insertion", held.curves.back().insertion}};
  else if (held.curves_key == key && !held.curves_error.empty())
    drawn["curves_error"] = held.curves_error;  // the map stands; render stops waiting
  if (two) drawn["beside"] = drawn_method(held, key, methods[1]);
  state.report.relevance_drawn = drawn;
}

}  // namespace

void draw_vit_relevance_view(AppState& state, VitSession& vit, SourceChoice&) {
  const VitRun* run = vit.run();
  if (!run) {
    ImGui::TextUnformatted(_("No model loaded."));
    return;
  }
  if (run->model().arch.classes == 0) {
    text_wrapped("%s", _("This checkpoint has no classifier: there is no decision to explain. Open a classifier (a timm or "
                         "Hugging Face ViT with a head, or the bundled Fashion-MNIST model)."));
    // `render --view vit-relevance` stops with this error.
    state.report.relevance_drawn = {{"error", _("this checkpoint has no classifier: no class to explain")}};
    return;
  }
  std::string error;
  const int klass = vit_chosen_class(state, *run, error);
  const ImVec2 room = ImGui::GetContentRegionAvail();
  const float font = ImGui::GetFontSize();
  const bool settings_left = room.x >= font * 30;
  if (settings_left) ImGui::BeginChild("relevance_settings", ImVec2(std::min(room.x * 0.34f, font * 17), room.y));
  text_wrapped("%s", _("Why did it decide?"));
  // TRANSLATORS: chefer, grad-rollout, input-gradient, attention and rollout are the methods' names (kept as they are);
  // A is the attention matrix.
  help_marker(_("Attention says where a token reads from, not what the decision depended on (Jain & Wallace 2019). "
                "Relevance follows the class's logit back through the model: chefer (Chefer, Gur, Wolf 2021) weights "
                "each layer's A by its gradient, keeps the positive part and propagates it through the residual stream; "
                "grad-rollout multiplies the same layers as rollout does; input-gradient is the pixels' sensitivity. "
                "attention and rollout are the same for every class. See docs/EXPLAIN.md."));
  if (klass >= 0) class_list(state, *run, klass);
  else text_wrapped("%s", error.c_str());
  // TRANSLATORS: the relevance method (a combo's label).
  const char* const method_label = _("method");
  const float label = ImGui::CalcTextSize(method_label).x + ImGui::GetStyle().ItemInnerSpacing.x;
  const float combo = std::max(font * 3, std::min(font * 9, ImGui::GetContentRegionAvail().x - label));
  ImGui::SetNextItemWidth(combo);
  if (ImGui::BeginCombo(method_label, relevance_method_name(state.relevance_method))) {
    for (const RelevanceMethod m : kRelevanceMethods)
      if (ImGui::Selectable(relevance_method_name(m), m == state.relevance_method)) state.relevance_method = m;
    ImGui::EndCombo();
  }
  record_widget("relevance_method");
  // A second method beside the first: the two maps and their curves side by side.
  ImGui::SetNextItemWidth(combo);
  // TRANSLATORS: a second relevance method drawn beside the first (a combo's label).
  if (ImGui::BeginCombo(_("beside"), state.relevance_beside ? relevance_method_name(*state.relevance_beside) : tr_c("second method", "none"))) {
    // TRANSLATORS: no second method.
    if (ImGui::Selectable(tr_c("second method", "none"), !state.relevance_beside)) state.relevance_beside.reset();
    record_widget("relevance_beside:none");
    for (const RelevanceMethod m : kRelevanceMethods) {
      if (ImGui::Selectable(relevance_method_name(m), state.relevance_beside == m)) state.relevance_beside = m;
      record_widget(std::string("relevance_beside:") + relevance_method_name(m));
    }
    ImGui::EndCombo();
  }
  record_widget("relevance_beside");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", _("Draw a second method beside the first, with its faithfulness curves"));
  if (settings_left) {
    ImGui::EndChild();
    ImGui::SameLine();
  }
  if (klass < 0) {
    state.report.relevance_drawn = {{"error", error}};
    return;
  }
  request_relevance(vit, klass);
  const Gradients& held = *vit.view_data().gradients;
  const std::string key = std::to_string(vit.generation()) + "|" + std::to_string(klass);
  ImGui::BeginGroup();
  if (held.maps_key != key) {
    // TRANSLATORS: %s is the class's name.
    ImGui::TextDisabled(_("Computing the gradients of '%s' ..."), vit_class_name(run->model().arch, klass).c_str());
  } else if (!held.maps_error.empty()) {
    text_wrapped("%s", held.maps_error.c_str());
    state.report.relevance_drawn = {{"error", held.maps_error}};
  } else {
    std::vector<int> methods{relevance_method_index(state.relevance_method)};
    if (state.relevance_beside && *state.relevance_beside != state.relevance_method) methods.push_back(relevance_method_index(*state.relevance_beside));
    maps_and_curves(state, vit, held, key, klass, methods);
  }
  ImGui::EndGroup();
}

std::unique_ptr<View> make_vit_relevance_view() {
  // TRANSLATORS: a tab's short label, then the view's title: what the model's decision depended on.
  return std::make_unique<VitPassView>(ViewText{"relevance", N_("Why?"), N_("Why did it decide?")}, draw_vit_relevance_view);
}

}  // namespace attnlab::app
