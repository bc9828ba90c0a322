// The chapter's teaching views, one window each in a fixed place right of the controls, and the
// guided tour that opens them one after another, in the chapter's order, its box in front.
#include "app/gui/shell/app.hpp"

#include "app/gui/state/widget_log.hpp"

#include <imgui.h>
#include <imgui_internal.h>  // BringWindowToDisplayFront: the tour box stays in front

#include <algorithm>

namespace attnlab::app {

// The tour opens one teaching view after another, in the chapter's order.
void App::set_tour_step(int step) {
  if (state_.tour_step >= 0 && state_.tour_step < static_cast<int>(teaching_.size()))
    state_.open_views[teaching_[static_cast<size_t>(state_.tour_step)]->name()] = false;
  state_.tour_step = step < static_cast<int>(teaching_.size()) ? step : -1;
  if (state_.tour_step >= 0) state_.open_views[teaching_[static_cast<size_t>(state_.tour_step)]->name()] = true;
}

void App::draw_teaching_windows(float menu_h) {
  const ImVec2 d = ImGui::GetIO().DisplaySize;
  const bool touring = state_.tour_step >= 0 && state_.tour_step < static_cast<int>(teaching_.size());
  float cascade = 0;
  for (const auto& v : teaching_) {
    bool& open = state_.open_views[v->name()];
    if (!open) continue;
    const bool toured = touring && teaching_[static_cast<size_t>(state_.tour_step)] == v;
    if (toured) {  // the tour's view: above the tour box, never under it
      ImGui::SetNextWindowPos(ImVec2(d.x * 0.2f, menu_h + 10), ImGuiCond_Appearing);
      ImGui::SetNextWindowSize(ImVec2(d.x * 0.6f, std::max(d.y - menu_h - tour_h_ - 40, 200.0f)), ImGuiCond_Appearing);
    } else {  // a fixed, opaque place right of the controls; a view taller than it scrolls inside
      const float left = std::min(360.0f * state_.ui_scale, d.x * 0.3f);
      ImGui::SetNextWindowPos(ImVec2(left + cascade, menu_h + cascade), ImGuiCond_Always);
      ImGui::SetNextWindowSize(ImVec2(d.x - left - cascade, d.y - menu_h - cascade), ImGuiCond_Always);
    }
    cascade += 24;  // views opened together (from saved settings) stay apart
    const std::string title = std::string(v->title()) + " (" + v->chapter_reference() + ")###" + v->name();
    ImGui::SetNextWindowBgAlpha(1.0f);  // opaque: the panels behind must not show through its text
    const ImGuiWindowFlags flags =
        ImGuiWindowFlags_NoCollapse | (toured ? 0 : ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize);
    const bool visible = ImGui::Begin(title.c_str(), &open, flags);
    record_window(v->name());
    if (visible) {
      try {
        v->draw(state_, hand_made_);
      } catch (const std::exception& e) {  // a view that cannot draw says why; the app goes on
        ImGui::TextWrapped("%s", e.what());
        state_.report.view_errors[v->name()] = e.what();
      }
    }
    ImGui::End();
  }
  draw_tour_box();
}

// The guided tour's box: the step, the view's tour text, previous / next / end. Always drawn over
// the views (without taking the keyboard from them), so that "next" is never under a view and
// the title and step stay readable.
void App::draw_tour_box() {
  if (state_.tour_step < 0 || state_.tour_step >= static_cast<int>(teaching_.size())) return;
  const ImVec2 d = ImGui::GetIO().DisplaySize;
  const auto& v = teaching_[static_cast<size_t>(state_.tour_step)];
  ImGui::SetNextWindowPos(ImVec2(d.x * 0.5f, d.y - 10), ImGuiCond_Always, ImVec2(0.5f, 1));
  ImGui::SetNextWindowSize(ImVec2(std::min(d.x * 0.6f, 900.0f * state_.ui_scale), 0));
  ImGui::SetNextWindowBgAlpha(1.0f);
  ImGui::Begin("Guided tour", nullptr, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings);
  ImGui::BringWindowToDisplayFront(ImGui::GetCurrentWindow());
  tour_h_ = ImGui::GetWindowHeight();
  record_window("tour");
  ImGui::Text("Step %d of %zu: %s (%s)", state_.tour_step + 1, teaching_.size(), v->title(), v->chapter_reference());
  ImGui::TextWrapped("%s", v->tour_text());
  if (ImGui::Button("< previous") && state_.tour_step > 0) set_tour_step(state_.tour_step - 1);
  record_widget("tour_previous");
  ImGui::SameLine();
  if (ImGui::Button(state_.tour_step + 1 < static_cast<int>(teaching_.size()) ? "next >" : "finish"))
    set_tour_step(state_.tour_step + 1);
  record_widget("tour_next");
  ImGui::SameLine();
  if (ImGui::Button("end tour")) set_tour_step(-1);
  record_widget("tour_end");
  ImGui::End();
}

}  // namespace attnlab::app
