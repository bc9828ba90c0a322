#include "app/gui/state/setting_widgets.hpp"

#include <imgui.h>

#include <algorithm>
#include <string>

namespace attnlab::app {

namespace {
inline constexpr float kMinTemperature = 0.01f, kMaxTemperature = 100.0f;

void set_width(float width_em) {
  if (width_em > 0) ImGui::SetNextItemWidth(ImGui::GetFontSize() * width_em);
}
}  // namespace

bool temperature_slider(AppState& state, const char* label, float width_em) {
  float tau = state.attention.temperature;
  set_width(width_em);
  if (!ImGui::SliderFloat(label, &tau, kMinTemperature, kMaxTemperature, "%.3g", ImGuiSliderFlags_Logarithmic)) return false;
  state.attention.temperature = std::clamp(tau, kMinTemperature, kMaxTemperature);
  return true;
}

bool head_combo(AppState& state, const char* label, float width_em) {
  const int current = std::clamp(state.hand_made.head.head, 0, kHeadCount - 1);
  set_width(width_em);
  bool changed = false;
  if (ImGui::BeginCombo(label, std::string(head_name(static_cast<HeadKind>(current))).c_str())) {
    for (int h = 0; h < kHeadCount; ++h)
      if (ImGui::Selectable(std::string(head_name(static_cast<HeadKind>(h))).c_str(), h == current) && h != current) {
        state.hand_made.head.head = h;
        changed = true;
      }
    ImGui::EndCombo();
  }
  return changed;
}

}  // namespace attnlab::app
