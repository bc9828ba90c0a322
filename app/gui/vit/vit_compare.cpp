// Compare in the window (issue 48): model B's session and map beside the ViT's (vit_compare.hpp).
#include "app/gui/vit/vit_compare.hpp"

#include "core/vit/vit_run.hpp"

#include "app/gui/state/setting_widgets.hpp"
#include "app/gui/state/widget_log.hpp"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>

namespace attnlab::app {

CompareSide compare_side(const VitRun& run, int resize, const Image& photo) {
  const int target = resize > 0 ? resize : vit_trained_size(run.model().arch);
  return {vit_choice_shape(run), run.patch(), static_cast<double>(target) / std::min(photo.width, photo.height)};
}

std::string compared_model_name(const std::filesystem::path& path) {
  const std::filesystem::path p = path.lexically_normal();
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) return (p.has_filename() ? p : p.parent_path()).filename().string();
  if (p.filename() == "model.safetensors" && p.has_parent_path()) return p.parent_path().filename().string();
  return p.filename().string();
}

nlohmann::json drawn_entries(const AppState& state, const VitSession& vit) {
  nlohmann::json j = {{"vit_model_file", vit.file().string()}, {"vit_model_sha256", vit.sha256()}};
  for (const auto& [key, value] : {std::pair{"vit_drawn", &state.report.vit_drawn}, {"cka_drawn", &state.report.cka_drawn},
                                   {"high_norm_drawn", &state.report.high_norm_drawn}})
    if (!value->is_null()) j[key] = *value;
  return j;
}

nlohmann::json compare_entry(const AppState& b_state, const VitSession& b, int width) {
  nlohmann::json j = drawn_entries(b_state, b);
  j["model"] = b_state.model_path.string();
  j["vit"] = to_json(b_state).at("vit");  // B's choice, as matched
  j["match_layers"] = b_state.compare_by_index ? "index" : "depth";
  j["one_scale"] = b_state.compare_one_scale;
  j["width"] = width;
  return j;
}

void VitCompare::follow(const AppState& a, const Image& image, unsigned serial) {
  if (a.compare_model.empty()) {
    if (!opened_.empty()) vit_.clear();
    opened_.clear();
    report_ = nullptr;
    return;
  }
  if (image.width <= 0) return;
  vit_.set_backend(a.vit_backend);
  if (a.compare_model != opened_) {
    opened_ = a.compare_model;
    serial_ = serial;
    vit_.open(opened_, image, a.vit_resize);
  } else if (serial != serial_ && vit_.run() && !vit_.busy()) {
    serial_ = serial;
    vit_.run_on(image, a.vit_resize);
  }
}

std::optional<std::string> VitCompare::poll() {
  if (const auto error = vit_.poll()) return "cannot open model B (Compare): " + *error;
  return std::nullopt;
}

void VitCompare::draw(AppState& a, const VitRun& a_run, const Image& photo, ColourBarPlace bar) {
  report_ = nullptr;
  geometry_.valid = false;
  const float width = ImGui::GetContentRegionAvail().x;
  const VitRun* b_run = run();
  if (!b_run) {
    ImGui::TextWrapped("%s", vit_.busy() ? "Loading model B..." : "Model B did not open: see the banner, or choose another (View > Compare).");
    return;
  }
  // B's document is A's (display, normalization, colour map, rollout, norms...), with B's model
  // and B's own choice, matched to A's.
  const SourceChoice b_before = state_.vit;
  static_cast<Document&>(state_) = static_cast<const Document&>(a);
  state_.ui = a.ui;
  state_.model_path = opened_;
  const LayerMatch match = a.compare_by_index ? LayerMatch::Index : LayerMatch::Depth;
  const CompareSide side_a = compare_side(a_run, a.vit_resize, photo), side_b = compare_side(*b_run, a.vit_resize, photo);
  const SourceChoice matched = matched_choice(a.vit, side_a, side_b, match, b_before);
  state_.vit = matched;
  state_.report.vit_drawn = nullptr;
  state_.report.high_norm_drawn = nullptr;
  draw_source_map(state_, map_, geometry_, bar);
  if (state_.vit != matched) a.vit = matched_choice(state_.vit, side_b, side_a, match, a.vit);  // moved on B's half: both follow
  if (state_.commands.take_redraw()) a.commands.redraw();
  report_ = compare_entry(state_, vit_, static_cast<int>(width));
}

ValueRange joined_range(ValueRange a, ValueRange b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

void swap_compared_models(AppState& state) {
  if (state.model_path.empty() || state.compare_model.empty()) return;
  state.ui.swap_compared = true;  // the App swaps them with B's choice in hand (App::take_compare_swap)
}

void draw_compare_panel(AppState& state, const VitSession& a, const VitCompare& compare) {
  const float wrap = ImGui::GetFontSize() * 30;
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wrap);
  if (!a.run()) {
    ImGui::TextUnformatted("Open a model first (Model menu, or the ViT model tab). Compare puts a second model beside "
                           "it, on the same image, with the same layer, head and query.");
    ImGui::PopTextWrapPos();
    return;
  }
  ImGui::Text("A: %s", compared_model_name(state.model_path).c_str());
  if (!state.compare_model.empty())
    ImGui::Text("B: %s%s", compared_model_name(state.compare_model).c_str(), compare.busy() ? " (loading...)" : "");
  else
    ImGui::TextUnformatted("B: none yet. Type its path, or pick a recent model:");
  ImGui::PopTextWrapPos();
  auto choose = [&](const std::filesystem::path& p) {
    state.compare_model = std::filesystem::absolute(p).lexically_normal();
    state.source = ShownSource::Vit;
  };
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 22);
  const bool enter = ImGui::InputText("##compare_path", &state.ui.compare_path_text, ImGuiInputTextFlags_EnterReturnsTrue);
  record_widget("compare_path");
  ImGui::SameLine();
  if ((ImGui::Button("Compare") || enter) && !state.ui.compare_path_text.empty()) choose(state.ui.compare_path_text);
  record_widget("compare_open");
  for (const std::string& p : state.recent_models) {
    const std::filesystem::path recent(p);
    if (recent == std::filesystem::absolute(state.model_path).lexically_normal() || recent == state.compare_model) continue;  // A or B already
    if (ImGui::SmallButton(("B = " + p).c_str())) choose(p);
    record_widget("compare_recent:" + p);
  }
  ImGui::TextUnformatted("layers matched by");
  ImGui::SameLine();
  if (ImGui::RadioButton("relative depth", !state.compare_by_index)) state.compare_by_index = false;
  record_widget("compare_depth");
  ImGui::SameLine();
  if (ImGui::RadioButton("index", state.compare_by_index)) state.compare_by_index = true;
  record_widget("compare_index");
  setting_widget(state, "compare.one_scale");
  ImGui::BeginDisabled(state.compare_model.empty());
  if (ImGui::Button("Swap A and B (S)")) swap_compared_models(state);
  record_widget("compare_swap");
  ImGui::SameLine();
  if (ImGui::Button("Stop comparing")) state.compare_model.clear();
  record_widget("compare_stop");
  ImGui::EndDisabled();
}

}  // namespace attnlab::app
