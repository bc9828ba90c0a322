#include "app/gui/state/setting_widgets.hpp"

#include "app/gui/state/ui_common.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/translate.hpp"

#include <imgui.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>

namespace attnlab::app {

namespace {

bool number_widget(const std::string& id, const FieldUi& ui, int& v) {
  const int lo = static_cast<int>(ui.lo), hi = static_cast<int>(ui.hi);
  int x = v;
  bool changed = false;
  if (ui.widget == FieldUi::Widget::Input) {
    changed = ImGui::InputInt(id.c_str(), &x);
  } else {
    const bool narrower = ui.drag_lo != 0 || ui.drag_hi != 0;
    const int a = narrower ? static_cast<int>(ui.drag_lo) : lo, b = narrower ? static_cast<int>(ui.drag_hi) : hi;
    changed = ImGui::SliderInt(id.c_str(), &x, a, b, *ui.format ? ui.format : "%d");
  }
  if (changed) v = std::clamp(x, lo, hi);
  return changed;
}

bool number_widget(const std::string& id, const FieldUi& ui, float& v) {
  const float lo = static_cast<float>(ui.lo), hi = static_cast<float>(ui.hi);
  float x = v;
  if (!ImGui::SliderFloat(id.c_str(), &x, lo, hi, *ui.format ? ui.format : "%.3f",
                          ui.log ? ImGuiSliderFlags_Logarithmic : ImGuiSliderFlags_None))
    return false;
  v = std::clamp(x, lo, hi);
  return true;
}

bool number_widget(const std::string& id, const FieldUi& ui, std::uint32_t& v) {
  int x = static_cast<int>(std::min<std::uint32_t>(v, static_cast<std::uint32_t>(ui.hi)));
  if (!number_widget(id, ui, x)) return false;
  v = static_cast<std::uint32_t>(x);
  return true;
}

bool choice_widget(const std::string& id, const FieldUi& ui, const ChoiceRef& c, const WidgetPlace& place) {
  const int n = static_cast<int>(ui.choices.size());
  const int current = std::clamp(c.get(), 0, n - 1);
  int chosen = current;
  if (ui.widget == FieldUi::Widget::Checkbox) {  // a choice of two: checked is the second
    bool on = current == 1;
    if (ImGui::Checkbox(id.c_str(), &on)) chosen = on ? 1 : 0;
  } else if (place.radio) {
    ImGui::BeginGroup();
    ImGui::PushID(id.c_str());
    for (int k = 0; k < n; ++k) {  // on one line while they fit, the next ones below (a narrow column)
      const std::string& label = ui.choices[static_cast<size_t>(k)];
      if (k) same_line_if_room(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label.c_str()).x);
      if (ImGui::RadioButton(label.c_str(), current == k)) chosen = k;
    }
    ImGui::PopID();
    ImGui::EndGroup();
  } else if (ImGui::BeginCombo(id.c_str(), ui.choices[static_cast<size_t>(current)].c_str())) {
    for (int k = 0; k < n; ++k)
      if (ImGui::Selectable(ui.choices[static_cast<size_t>(k)].c_str(), k == current)) chosen = k;
    ImGui::EndCombo();
  }
  if (chosen == current) return false;
  c.set(chosen);
  return true;
}

// The widget's width (its frame, label and help marker) and, for a slider, a combo or an input,
// the frame's width, in pixels.
struct Widths {
  float frame = 0, whole = 0;
  bool label_above = false;  ///< the label on a line of its own above the frame
};
Widths widths(const SettingRef& s, const WidgetPlace& place) {
  const ImGuiStyle& st = ImGui::GetStyle();
  const float box = ImGui::GetFrameHeight() + st.ItemInnerSpacing.x;  // a checkbox's or a radio button's
  const float label = place.label ? ImGui::CalcTextSize(s.ui.label).x + st.ItemInnerSpacing.x : 0.0f;
  const float help = place.help && *s.ui.help ? st.ItemSpacing.x + ImGui::CalcTextSize("(?)").x : 0.0f;
  const bool choice = std::holds_alternative<ChoiceRef>(s.value);
  if (std::holds_alternative<bool*>(s.value) || (choice && s.ui.widget == FieldUi::Widget::Checkbox))
    // A label longer than the column wraps beside its box (label_above: drawn by setting_widget).
    return {0, box + label + help, label > 0 && box + label + help > ImGui::GetContentRegionAvail().x};
  if (choice && place.radio) {
    float w = 0;
    for (const std::string& c : s.ui.choices) w += box + ImGui::CalcTextSize(c.c_str()).x + st.ItemSpacing.x;
    return {0, w + help};
  }
  const float avail = ImGui::GetContentRegionAvail().x;
  if (place.width_em > 0) return {ImGui::GetFontSize() * place.width_em, ImGui::GetFontSize() * place.width_em + label + help};
  // A narrow column (a projector at a large UI scale): the label goes above a frame as wide as
  // the column, rather than either being cut at the column's edge.
  if (label > 0 && avail - label - help < avail * 0.45f) return {avail - help, avail, true};
  const float frame = avail - label - help;
  return {frame, frame + label + help};
}

}  // namespace

float setting_widget_width(AppState& state, std::string_view path, const WidgetPlace& place) {
  return widths(setting_ref(state, path), place).whole;
}

std::string setting_widget_name(std::string_view path, const WidgetPlace& place) {
  return place.scope ? std::string(place.scope) + "/" + std::string(path) : std::string(path);
}

bool setting_widget(AppState& state, std::string_view path, const WidgetPlace& at) {
  const SettingRef s = setting_ref(state, path);
  // A lesson's step (app/gui/shell/lesson.cpp) may hide a setting or lock it for the class.
  const auto listed = [&](const std::vector<std::string>& names) {
    return state.ui.lesson_playing && std::find(names.begin(), names.end(), s.path) != names.end();
  };
  if (listed(state.ui.lesson_hidden)) return false;
  WidgetPlace place = at;
  if (!place.disabled_why && listed(state.ui.lesson_locked)) place.disabled_why = _("locked by the lesson for this step");
  if (place.same_line) same_line_if_room(widths(s, place).whole);
  const Widths w = widths(s, place);
  const bool box = w.frame == 0;  // a checkbox: a long label wraps beside it, after it is drawn
  if (w.label_above && !box) {
    ImGui::BeginDisabled(place.disabled_why != nullptr);
    ImGui::TextUnformatted(s.ui.label);
    ImGui::EndDisabled();
  }
  const std::string id = (place.label && !w.label_above ? std::string(s.ui.label) : std::string()) + "###" + s.path;  // the id is the path alone: the label follows the language
  if (w.frame > 0) ImGui::SetNextItemWidth(w.frame);
  ImGui::BeginDisabled(place.disabled_why != nullptr);
  bool changed = false;
  std::visit(
      [&](auto& v) {
        using V = std::remove_cvref_t<decltype(v)>;
        if constexpr (std::is_same_v<V, bool*>) changed = ImGui::Checkbox(id.c_str(), v);
        else if constexpr (std::is_same_v<V, ChoiceRef>) changed = choice_widget(id, s.ui, v, place);
        else changed = number_widget(id, s.ui, *v);
      },
      s.value);
  record_widget(setting_widget_name(s.path, place));
  if (place.disabled_why && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", place.disabled_why);
  if (w.label_above && box) {
    ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
    ImGui::BeginGroup();
    wrap_text(s.ui.label);
    ImGui::EndGroup();
  }
  ImGui::EndDisabled();
  if (place.help && *s.ui.help) help_marker(s.ui.help);
  return changed;
}

}  // namespace attnlab::app
