// Compare in the window (issue 48): model B's session and map beside the ViT's (vit_compare.hpp).
#include "app/gui/vit/vit_compare.hpp"

#include "core/hand_made/hand_made_source.hpp"
#include "core/vit/vit_run.hpp"

#include "app/gui/state/setting_widgets.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/translate.hpp"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>

namespace attnlab::app {

CompareSide compare_side(const VitRun& run, int resize, const Image& photo) {
  const int target = resize > 0 ? resize : vit_trained_size(run.model().arch);
  return {vit_choice_shape(run), run.patch(), static_cast<double>(target) / std::min(photo.width, photo.height)};
}

CompareSide compare_side(const PatchGrid& hand_made) {
  return {ChoiceShape{hand_made_source_grid(hand_made), 1, kHeadCount, false}, hand_made.K, 1.0};
}

nlohmann::json hand_made_drawn(const ViewGeometry& geometry, HandMadeSession& hand_made, const SourceChoice& choice) {
  const PatchGrid& g = hand_made.grid();
  const int query = geometry.query;
  const int head = std::clamp(choice.head.head, 0, kHeadCount - 1);
  const RowSet& rows = hand_made.latest_rows(query);
  const auto row = rows.head(head);
  const float cell = static_cast<float>(g.K) * geometry.scale;
  return {{"token", query},
          {"head", head},
          {"grid", {{"cols", g.cols}, {"rows", g.rows}, {"prefix", 0}}},
          {"origin", {geometry.x, geometry.y}},
          {"cell", {cell, cell}},
          {"values", std::vector<float>(row.begin(), row.end())},
          {"values_of", rows.query}};  // the query whose rows these are: another while the new ones are computed
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
  if (a.compare_model.empty() || a.compare_model == kCompareHandMade) {
    if (!opened_.empty() && !hand_made()) vit_.clear();  // the hand-made heads need no session of their own
    opened_ = a.compare_model;
    if (opened_.empty()) report_ = nullptr;
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
  // TRANSLATORS: "Compare" names the feature (View > Compare); then the reason.
  if (const auto error = vit_.poll()) return text_format(_("cannot open model B (Compare): %s"), error->c_str());
  return std::nullopt;
}

void VitCompare::draw(AppState& a, const VitRun& a_run, HandMadeSession& hand_made, ColourBarPlace bar) {
  report_ = nullptr;
  geometry_.valid = false;
  const float width = ImGui::GetContentRegionAvail().x;
  const Image& photo = hand_made.image();
  if (this->hand_made()) {
    draw_hand_made(a, a_run, hand_made, bar, width);
    return;
  }
  const VitRun* b_run = run();
  if (!b_run) {
    ImGui::TextWrapped("%s", vit_.busy() ? _("Loading model B...")
                                         // TRANSLATORS: "View > Compare" is the menu item, as the menu shows it.
                                         : _("Model B did not open: see the banner, or choose another (View > Compare)."));
    return;
  }
  // B's document is A's (display, normalization, colour map, rollout, norms...), with B's model
  // and B's own choice, matched to A's.
  const SourceChoice b_before = state_.vit;
  static_cast<Document&>(state_) = static_cast<const Document&>(a);
  state_.ui = a.ui;
  state_.model_path = opened_;
  state_.report.vit_drawn = nullptr;
  state_.report.high_norm_drawn = nullptr;
  match_and_draw(a, state_.vit, b_before, compare_side(a_run, a.vit_resize, photo), compare_side(*b_run, a.vit_resize, photo), map_, bar);
  if (state_.commands.take_redraw()) a.commands.redraw();
  report_ = compare_entry(state_, vit_, static_cast<int>(width));
}

void VitCompare::match_and_draw(AppState& a, SourceChoice& b, const SourceChoice& b_before, const CompareSide& side_a,
                                const CompareSide& side_b, MapSource& map, ColourBarPlace bar) {
  const LayerMatch match = a.compare_by_index ? LayerMatch::Index : LayerMatch::Depth;
  // A's choice as B's pointer made it in an earlier frame: B keeps the patch it was clicked on
  // (matched back from A's coarser grid it could land on a neighbour).
  const bool a_follows_b = a_from_b_ && *a_from_b_ == a.vit;
  const SourceChoice matched = a_follows_b ? b_before : matched_choice(a.vit, side_a, side_b, match, b_before);
  b = matched;
  draw_source_map(state_, map, geometry_, bar);
  if (b != matched) {  // the pointer on B's half: A's query and pins follow; A's layer and head stay
    SourceChoice moved = matched_choice(b, side_b, side_a, match, a.vit);
    moved.layer = a.vit.layer;
    moved.head = a.vit.head;
    a.vit = moved;
    a_from_b_ = moved;
  } else if (!a_follows_b) {
    a_from_b_.reset();
  }
}

void VitCompare::draw_hand_made(AppState& a, const VitRun& a_run, HandMadeSession& hand_made, ColourBarPlace bar, float width) {
  // As for a model B: A's document, B's own choice (state_.hand_made, kept between frames)
  // matched to A's ViT choice; the Hand-made tab's choice in A's document is not touched.
  const SourceChoice b_before = state_.hand_made;
  static_cast<Document&>(state_) = static_cast<const Document&>(a);
  state_.ui = a.ui;
  state_.image_path = a.image_path;
  HandMadeMapSource map(state_, hand_made);
  match_and_draw(a, state_.hand_made, b_before, compare_side(a_run, a.vit_resize, hand_made.image()), compare_side(hand_made.grid()),
                 map, bar);
  if (state_.commands.take_redraw()) a.commands.redraw();
  if (!geometry_.valid) return;
  report_ = {{"model", kCompareHandMade},
             {"hand_made", to_json(state_).at("hand_made")},
             {"hand_made_drawn", hand_made_drawn(geometry_, hand_made, state_.hand_made)},
             {"match_layers", a.compare_by_index ? "index" : "depth"},
             {"one_scale", false},
             {"width", static_cast<int>(width)}};
}

ValueRange joined_range(ValueRange a, ValueRange b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

void swap_compared_models(AppState& state) {
  if (state.model_path.empty() || state.compare_model.empty() || state.compare_model == kCompareHandMade) return;
  state.ui.swap_compared = true;  // the App swaps them with B's choice in hand (App::take_compare_swap)
}

void draw_compare_panel(AppState& state, const VitSession& a, const VitCompare& compare) {
  const float wrap = ImGui::GetFontSize() * 30;
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wrap);
  if (!a.run()) {
    // TRANSLATORS: "Model" menu, "ViT model" tab and "Compare" as the window shows them.
    ImGui::TextUnformatted(_("Open a model first (Model menu, or the ViT model tab). Compare puts a second model beside "
                             "it, on the same image, with the same layer, head and query."));
    ImGui::PopTextWrapPos();
    return;
  }
  ImGui::Text("A: %s", compared_model_name(state.model_path).c_str());
  const bool hand_made = state.compare_model == kCompareHandMade;
  if (hand_made)
    // TRANSLATORS: B is the second model compared; K is the patch size in pixels; "Hand-made" is the tab's name.
    ImGui::TextUnformatted(_("B: the hand-made heads (the chapter's six, on the same photo; their K and settings are the "
                             "Hand-made tab's). A CLS query has no counterpart there: B shows A's last patch."));
  else if (!state.compare_model.empty())
    ImGui::Text("B: %s%s", compared_model_name(state.compare_model).c_str(), compare.busy() ? _(" (loading...)") : "");
  else
    // TRANSLATORS: B is the second model compared.
    ImGui::TextUnformatted(_("B: none yet. Type its path, or pick a recent model:"));
  ImGui::PopTextWrapPos();
  auto choose = [&](const std::filesystem::path& p) {
    state.compare_model = std::filesystem::absolute(p).lexically_normal();
    state.source = ShownSource::Vit;
  };
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 22);
  const bool enter = ImGui::InputText("##compare_path", &state.ui.compare_path_text, ImGuiInputTextFlags_EnterReturnsTrue);
  record_widget("compare_path");
  ImGui::SameLine();
  // TRANSLATORS: a button: opens the model typed beside it as B, the second model compared.
  if ((ImGui::Button(_("Compare")) || enter) && !state.ui.compare_path_text.empty()) choose(state.ui.compare_path_text);
  record_widget("compare_open");
  // TRANSLATORS: B is the second model compared.
  if (!hand_made && ImGui::SmallButton(_("B = the hand-made heads"))) {
    state.compare_model = kCompareHandMade;
    state.source = ShownSource::Vit;
  }
  record_widget("compare_hand_made");
  for (const std::string& p : state.recent_models) {
    const std::filesystem::path recent(p);
    if (recent == std::filesystem::absolute(state.model_path).lexically_normal() || recent == state.compare_model) continue;  // A or B already
    if (ImGui::SmallButton(("B = " + p).c_str())) choose(p);
    record_widget("compare_recent:" + p);
  }
  // TRANSLATORS: followed by "relative depth" or "index": how A's layers are matched to B's.
  ImGui::TextUnformatted(_("layers matched by"));
  ImGui::SameLine();
  if (ImGui::RadioButton(_("relative depth"), !state.compare_by_index)) state.compare_by_index = false;
  record_widget("compare_depth");
  ImGui::SameLine();
  // TRANSLATORS: layers matched by their index (number).
  if (ImGui::RadioButton(_("index"), state.compare_by_index)) state.compare_by_index = true;
  record_widget("compare_index");
  ImGui::BeginDisabled(hand_made);  // the hand-made heads colour their maps on the GPU, each on its own scale
  setting_widget(state, "compare.one_scale");
  ImGui::EndDisabled();
  ImGui::BeginDisabled(state.compare_model.empty() || hand_made);  // A is always a model
  // TRANSLATORS: S is the key.
  if (ImGui::Button(_("Swap A and B (S)"))) swap_compared_models(state);
  record_widget("compare_swap");
  ImGui::EndDisabled();
  ImGui::BeginDisabled(state.compare_model.empty());
  ImGui::SameLine();
  if (ImGui::Button(_("Stop comparing"))) state.compare_model.clear();
  record_widget("compare_stop");
  ImGui::EndDisabled();
}

}  // namespace attnlab::app
