// The chapter's teaching views, one at a time, docked in the main area right of the controls, and
// the guided tour that opens them one after another, in the chapter's order, its box below the view.
#include "app/gui/shell/app.hpp"

#include "app/gui/state/ui_text.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/translate.hpp"

#include <imgui.h>
#include <imgui_internal.h>  // BringWindowToDisplayFront: the tour box stays in front

#include <algorithm>
#include <cstdio>

namespace attnlab::app {

// The tour opens one teaching view after another, in the chapter's order; one view at a time,
// so a step closes whatever view was open before.
void App::set_tour_step(int step) {
  for (auto& [name, open] : state_.open_views) open = false;
  state_.tour_step = step < static_cast<int>(teaching_.size()) ? step : -1;
  if (state_.tour_step >= 0) state_.open_views[teaching_[static_cast<size_t>(state_.tour_step)]->name()] = true;
}

bool App::teaching_view_open() const {
  for (const auto& v : teaching_)
    if (const auto it = state_.open_views.find(v->name()); it != state_.open_views.end() && it->second) return true;
  return false;
}

// The chapter's view, one at a time, docked in the main area right of the controls (where the
// map and its panels are while no view is open), above the tour box when touring; a view taller
// than its place scrolls inside.
void App::draw_teaching_windows(float menu_h) {
  const ImVec2 d = room();  // above a lesson's caption strip
  const bool touring = state_.tour_step >= 0 && state_.tour_step < static_cast<int>(teaching_.size());
  const float left = state_.show_controls ? controls_w_ : 0.0f;
  if (touring) {  // the tour box's height in this frame, before the view above it is placed
    const ImGuiStyle& st = ImGui::GetStyle();
    const auto& t = teaching_[static_cast<size_t>(state_.tour_step)];
    // TRANSLATORS: the tour's step: its number, the count, the view's title, where it is in the chapter, its text.
    const std::string text = text_format(_("Step %d of %zu: %s (%s). %s"), state_.tour_step + 1, teaching_.size(), t->title(),
                                         t->chapter_reference(), t->tour_text());
    const float wrap = d.x - left - st.WindowPadding.x * 2 - st.ScrollbarSize;
    const float text_h = ImGui::CalcTextSize(text.c_str(), nullptr, false, wrap).y + ImGui::GetTextLineHeightWithSpacing();  // a line for wrapping at spaces only
    tour_h_ = std::min(d.y * 0.3f, st.WindowPadding.y * 2 + ImGui::GetFrameHeightWithSpacing() + text_h + st.ItemSpacing.y);
  }
  bool drawn = false;
  for (const auto& v : teaching_) {
    bool& open = state_.open_views[v->name()];
    if (!open) continue;
    if (drawn) {  // one view at a time (settings saved with two open): the first in the chapter's order
      open = false;
      continue;
    }
    drawn = true;
    geometry_.valid = false;  // the view has the map's place: an export's sidecar takes the document's query
    ImGui::SetNextWindowPos(ImVec2(left, menu_h), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(d.x - left, std::max(d.y - menu_h - (touring ? tour_h_ : 0.0f), 100.0f)), ImGuiCond_Always);
    const std::string title = std::string(v->title()) + " (" + v->chapter_reference() + ")###" + v->name();
    ImGui::SetNextWindowBgAlpha(1.0f);  // opaque: nothing behind it shows through its text
    const ImGuiWindowFlags flags = ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize;
    const bool visible = ImGui::Begin(title.c_str(), &open, flags);
    record_window(v->name());
    if (visible) {
      try {
        ViewSource source = hand_made_view_source();
        v->draw(source);
      } catch (const std::exception& e) {  // a view that cannot draw says why; the app goes on
        text_wrapped("%s", e.what());
        state_.report.view_errors[v->name()] = e.what();
      }
    }
    ImGui::End();
    if (!open && touring) set_tour_step(-1);  // the view's close button ends the tour it belongs to
  }
  draw_tour_box();
}

// The guided tour's box: previous / next / end and the step on its first line, the view's tour
// text under them, in the main area under the view (never over it nor over the controls). At most
// 30 % of the window's height: a longer text (a large UI scale) scrolls inside, the buttons stay.
void App::draw_tour_box() {
  if (state_.tour_step < 0 || state_.tour_step >= static_cast<int>(teaching_.size())) return;
  const ImVec2 d = room();  // above a lesson's caption strip
  const auto& v = teaching_[static_cast<size_t>(state_.tour_step)];
  const float left = state_.show_controls ? controls_w_ : 0.0f;
  ImGui::SetNextWindowPos(ImVec2(left, d.y), ImGuiCond_Always, ImVec2(0, 1));
  ImGui::SetNextWindowSize(ImVec2(d.x - left, tour_h_), ImGuiCond_Always);  // worked out by draw_teaching_windows, for the view above
  ImGui::SetNextWindowBgAlpha(1.0f);
  const std::string title = ui_id(_("Guided tour"), "Guided tour");
  ImGui::Begin(title.c_str(), nullptr, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoMove);
  ImGui::BringWindowToDisplayFront(ImGui::GetCurrentWindow());
  record_window("tour");
  if (ImGui::Button(_("< previous")) && state_.tour_step > 0) set_tour_step(state_.tour_step - 1);
  record_widget("tour_previous");
  ImGui::SameLine();
  if (ImGui::Button(state_.tour_step + 1 < static_cast<int>(teaching_.size()) ? _("next >") : _("finish")))
    set_tour_step(state_.tour_step + 1);
  record_widget("tour_next");
  ImGui::SameLine();
  if (ImGui::Button(_("end tour"))) set_tour_step(-1);
  record_widget("tour_end");
  text_wrapped("%s", text_format(_("Step %d of %zu: %s (%s). %s"), state_.tour_step + 1, teaching_.size(), v->title(),
                                 v->chapter_reference(), v->tour_text()).c_str());
  ImGui::End();
}

}  // namespace attnlab::app
