// The window's layout: the panels tiled around the map (laid out again when the window's size,
// the UI scale or the source changes), presentation mode, the source tabs, the banner and the
// export toast. The menus are menus.cpp's, the teaching views and the tour tour.cpp's.
#include "app/gui/shell/app.hpp"
#include "app/gui/shell/keys.hpp"
#include "app/gui/window/panel_layout.hpp"
#include "app/gui/panels/panels.hpp"

#include "app/commands/options.hpp"

#include "app/gui/state/source_choice.hpp"
#include "app/gui/train/train_views.hpp"
#include "app/gui/vit/vit_views.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/base/translate.hpp"
#include "app/gui/state/ui_text.hpp"
#include "core/io/files.hpp"

#include <imgui.h>
#include <imgui_internal.h>  // BringWindowToDisplayFront: the toast stays in front

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnlab::app {

// The left column: the hand-made heads' controls, the model panel or the Train panel, as three
// tabs; the tab chosen is the attention source the other views draw. A column too narrow for the
// three tabs' labels (a 1024 px projector at a large UI scale) lists the sources one a line
// instead, so that no label is cut.
void App::draw_source_tabs() {
  // TRANSLATORS: the attention sources' tabs: the hand-made heads, a loaded ViT model, and a model being trained.
  static constexpr const char* kLabels[3] = {N_("Hand-made"), N_("ViT model"), N_("Train")};
  static constexpr const char* kNames[3] = {"tab:heads", "tab:vit", "tab:train"};
  static constexpr ShownSource kSources[3] = {ShownSource::HandMade, ShownSource::Vit, ShownSource::Train};
  const ImGuiStyle& style = ImGui::GetStyle();
  const float avail = ImGui::GetContentRegionAvail().x;
  // Tabs or a list, decided on the column's width less a scroll bar whether one is shown or not:
  // the same choice every frame (a scroll bar that comes and goes must not swap them under a click).
  const float room = ImGui::GetWindowWidth() - style.WindowPadding.x * 2 - style.ScrollbarSize;
  float tabs_w = 0;
  for (const char* l : kLabels) tabs_w += ImGui::CalcTextSize(_(l)).x + style.FramePadding.x * 2 + style.ItemInnerSpacing.x * 2;
  // The controls leave room for their labels on their right however narrow the column (a
  // 1024 px projector's), instead of ImGui's 65 % of the window that cut them off.
  const float label = ImGui::CalcTextSize(text_format("%s (?)", _("patch size K")).c_str()).x + style.ItemInnerSpacing.x + style.ItemSpacing.x;
  auto draw_panel = [&](ShownSource s) {
    ImGui::PushItemWidth(std::max(avail - label, avail * 0.5f));
    if (s == ShownSource::HandMade) draw_controls_panel(state_, hand_made_, key_help(/*vit=*/false));
    else if (s == ShownSource::Vit) draw_vit_panel(state_, vit_);
    else draw_train_panel(state_, train_);
    ImGui::PopItemWidth();
  };
  if (tabs_w > room) {
    for (int t = 0; t < 3; ++t) {
      if (ImGui::Selectable(_(kLabels[t]), state_.source == kSources[t])) state_.source = kSources[t];
      record_widget(kNames[t]);
    }
    ImGui::Separator();
    draw_panel(state_.source);
    shown_tab_ = state_.source;
    return;
  }
  if (!ImGui::BeginTabBar("source")) return;
  const ShownSource wanted = state_.source;
  const bool force = wanted != shown_tab_;  // a key or a menu chose another source: show its tab
  ShownSource tab = wanted;
  // Each tab's rectangle is recorded as soon as it is drawn, before its contents.
  for (int t = 0; t < 3; ++t) {
    const std::string label_id = ui_id(_(kLabels[t]), kLabels[t]);
    const bool open = ImGui::BeginTabItem(label_id.c_str(), nullptr, force && wanted == kSources[t] ? ImGuiTabItemFlags_SetSelected : 0);
    record_tab(kNames[t], label_id.c_str());
    if (!open) continue;
    tab = kSources[t];
    draw_panel(tab);
    ImGui::EndTabItem();
  }
  ImGui::EndTabBar();
  if (!force) state_.source = tab;
  shown_tab_ = state_.source;
}

ViewSource App::hand_made_view_source() {
  return ViewSource{state_, hand_made_map_, kHandMadeOffers, &hand_made_, nullptr, nullptr, {}};
}

ViewSource App::vit_view_source() {
  return ViewSource{state_, vit_map_, kVitOffers, nullptr, &vit_, &state_.vit,
                    [&] { draw_cka_view(state_, vit_cka_, cka_request(vit_, state_.vit_resize), /*auto_start=*/true); }};
}

// The loaded ViT's views under its map (the views that work on it, view_registry.hpp): the
// distance plot, the pinned queries, the attention matrix, one row step by step, the layers'
// similarity (CKA), the token norms.
void App::draw_vit_lower_tabs() {
  ViewSource source = vit_view_source();
  const std::vector<View*> views = views_for(views_, source);
  // The view the document names (the first when this version has none of that name).
  const View* named = find_view(views, state_.vit_view);
  const int want = named ? static_cast<int>(std::find(views.begin(), views.end(), named) - views.begin()) : 0;
  std::vector<std::string> labels;
  for (const View* v : views) labels.emplace_back(v->label());
  if (!tabs_fit(labels)) {  // a narrow column: the views' names flowed over a few lines, none cut, the view below
    std::vector<std::string> names;
    for (const View* v : views) names.push_back(std::string("vit_tab:") + v->name());
    if (const int t = flowed_choices(labels, names, want); t >= 0) state_.vit_view = views[static_cast<std::size_t>(t)]->name();
    ImGui::Separator();
    shown_vit_lower_ = want;
    views[static_cast<std::size_t>(want)]->draw(source);
    return;
  }
  if (!ImGui::BeginTabBar("vit_lower")) return;
  // A key or a view asked for another tab (P: the pinned queries); ImGui shows it from the
  // next frame, so the tab drawn now must not take the request back.
  const bool asked = shown_vit_lower_ != want;
  for (int t = 0; t < static_cast<int>(views.size()); ++t) {
    View& view = *views[static_cast<std::size_t>(t)];
    const ImGuiTabItemFlags flags = asked && t == want ? ImGuiTabItemFlags_SetSelected : 0;
    const std::string label_id = ui_id(view.label(), view.name());  // the tab keeps its id whatever the language
    const bool open = ImGui::BeginTabItem(label_id.c_str(), nullptr, flags);
    record_tab(std::string("vit_tab:") + view.name(), label_id.c_str());
    if (!open) continue;
    if (!asked) state_.vit_view = view.name();  // chosen by a click
    shown_vit_lower_ = t;
    view.draw(source);
    ImGui::EndTabItem();
  }
  ImGui::EndTabBar();
}

// The last save's confirmation, for 4 s at the top right over everything (presentation mode
// too), so a teacher sees that F12, F9 or F8 worked and where: a small window naming the file,
// with "Open folder" (the desktop's file manager on that folder); the pointer over it keeps it.
void App::draw_toast(ImVec2 d) {
  if (!toast_showing(state_)) return;
  if (state_.commands.pending(Commands::Kind::ExportPng)) {  // never burnt into the picture being exported
    widget_log().overlays_left_out.push_back("toast");
    return;
  }
  const std::filesystem::path folder = toast_folder(state_);
  // Clicks pass through the toast to what is under it (as when it was painted over the frame), but
  // on its button: the window takes input only while the pointer was on the button last frame.
  auto& drawn = widget_log().overlays_drawn["toast"];
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  auto pointed = [&](const char* name) {
    const auto r = drawn.find(name);
    return r != drawn.end() && mouse.x >= r->second[0] && mouse.x < r->second[0] + r->second[2] && mouse.y >= r->second[1] &&
           mouse.y < r->second[1] + r->second[3];
  };
  const bool on_button = !folder.empty() && pointed("toast:open_folder");
  if (pointed("toast")) state_.ui.status_since = std::chrono::steady_clock::now();  // kept while pointed at
  // At the top right under the menu bar, over the map's title and the right end of its header,
  // where nothing is clicked (at the bottom left it lay over the controls' last items and the
  // tour's buttons); wrapped to under half the window (a long export path on a 1024 px screen).
  const float wrap = std::max(d.x * 0.45f - ImGui::GetStyle().WindowPadding.x * 2, 100.0f);
  ImGui::SetNextWindowPos(ImVec2(d.x - 12, ImGui::GetFrameHeight() + 8), ImGuiCond_Always, ImVec2(1, 0));
  ImGui::PushStyleColor(ImGuiCol_WindowBg, ImVec4(20 / 255.0f, 90 / 255.0f, 40 / 255.0f, 1.0f));
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 1, 1, 1));
  ImGui::Begin("##toast", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav |
                   (on_button ? ImGuiWindowFlags_None : ImGuiWindowFlags_NoInputs));
  // Over the panels, even one clicked since; under an open menu or list, which may reach down here.
  if (!ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId | ImGuiPopupFlags_AnyPopupLevel))
    ImGui::BringWindowToDisplayFront(ImGui::GetCurrentWindow());
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wrap);
  ImGui::TextUnformatted(state_.ui.status.c_str());
  ImGui::PopTextWrapPos();
  drawn.clear();
  if (!folder.empty()) {
    if (ImGui::Button(_("Open folder"))) {
      try {
        platform::open_in_file_manager(folder);
      } catch (const Error& e) {
        state_.show_error(e.what());
      }
    }
    record_widget("toast:open_folder");
    drawn["toast:open_folder"] = widget_log().rects["toast:open_folder"];
  }
  record_rect("toast", ImGui::GetWindowPos(), ImGui::GetWindowSize());
  drawn["toast"] = widget_log().rects["toast"];
  ImGui::End();
  ImGui::PopStyleColor(2);
  state_.commands.redraw();  // until it has gone
}

// The window's views, each frame: presentation mode's map alone, or the menu bar, the tiled
// panels and the teaching views; then the banner and the export toast over them.
void App::draw_windows() {
  const ImVec2 full = ImGui::GetIO().DisplaySize;
  measure_lesson_strip(full);  // a lesson's caption strip takes the bottom; the views the room above
  const ImVec2 d = room();
  state_.report.cka_drawn = nullptr;  // until the similarity view draws
  state_.report.high_norm_drawn = nullptr;  // until the high-norm tokens view draws
  state_.report.relevance_drawn = nullptr;  // until the relevance view draws
  state_.report.field_drawn = nullptr;      // until the receptive-field view draws
  state_.report.cnn_drawn = nullptr;        // until the CNN view draws
  last_panel_rects_ = std::move(panel_rects_);
  panel_rects_.clear();
  float menu_h = 0;
  if (state_.presentation) {
    draw_presentation(d);
  } else {
    menu_h = draw_menu_bar();
    draw_panels(d, menu_h);
    draw_teaching_windows(menu_h);
    draw_hub_window(menu_h);
    draw_compare_window(menu_h);
    draw_lesson_editor(menu_h);
  }
  draw_lesson_strip(full);
  if (!state_.ui.banner.empty()) draw_banner(d, menu_h);
  draw_toast(d);
}

// Model → Gallery: a window over the panels, centred, inside the screen at any size and scale.
void App::draw_hub_window(float menu_h) {
  if (!state_.ui.show_hub_gallery) return;
  const ImVec2 d = ImGui::GetIO().DisplaySize;
  // Below the banner's line (a failed download's error shows there), so its title bar stays clear.
  const float top = menu_h + 3 * ImGui::GetFontSize();
  const ImVec2 size(std::min(d.x - 20, 58 * ImGui::GetFontSize()), std::min(d.y - top - 10, 36 * ImGui::GetFontSize()));
  ImGui::SetNextWindowPos(ImVec2((d.x - size.x) * 0.5f, top), ImGuiCond_Appearing);
  ImGui::SetNextWindowSize(size, ImGuiCond_Appearing);
  ImGui::SetNextWindowBgAlpha(1.0f);
  const std::string title = ui_id(_("Model gallery (Hugging Face Hub)"), "hub_gallery");
  if (ImGui::Begin(title.c_str(), &state_.ui.show_hub_gallery, ImGuiWindowFlags_NoCollapse)) {
    record_window("hub_gallery");
    if (ImGui::IsWindowAppearing()) hub_.refresh();  // models another program put in the cache meanwhile
    draw_hub_gallery(state_, hub_);
  }
  ImGui::End();
}

// View → Compare: model B's choice, in a small window over the panels' top right.
void App::draw_compare_window(float menu_h) {
  if (!state_.ui.show_compare) return;
  const ImVec2 d = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowPos(ImVec2(d.x - 10, menu_h + 3 * ImGui::GetFontSize()), ImGuiCond_Appearing, ImVec2(1, 0));
  ImGui::SetNextWindowBgAlpha(1.0f);
  const std::string title = ui_id(_("Compare two models"), "compare");
  if (ImGui::Begin(title.c_str(), &state_.ui.show_compare,
                   ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_AlwaysAutoResize)) {
    record_window("compare");
    draw_compare_panel(state_, vit_, compare_);
  }
  ImGui::End();
}

// Presentation mode: the map over the whole window, and how to leave.
void App::draw_presentation(ImVec2 d) {
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(d);
  ImGui::Begin("##presentation", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoScrollWithMouse |
                   ImGuiWindowFlags_NoBringToFrontOnFocus);
  // A chapter view open (a lesson's step shows one) takes the map's place, as in the window.
  View* chapter = nullptr;
  for (View* v : teaching_)
    if (const auto it = state_.open_views.find(v->name()); it != state_.open_views.end() && it->second) chapter = v;
  // A lesson's step shows its view as `render --from` draws it: the heads' grid, or a view of
  // the ViT's lower row in the map's place.
  const std::string& lesson_view = state_.ui.lesson_playing ? state_.ui.lesson_view : std::string();
  View* vit_lower = nullptr;
  if (lesson_view.starts_with("vit-") && state_.source == ShownSource::Vit && vit_.run())
    for (const auto& v : views_)
      if (lesson_view == std::string("vit-") + v->name() && v->works_with(kVitOffers)) vit_lower = v.get();
  if (!chapter && (lesson_view == "heads" || lesson_view == "vit-grid")) {
    geometry_.valid = false;
    draw_heads_grid(state_, map_source());
  } else if (!chapter && vit_lower) {
    geometry_.valid = false;
    ViewSource source = vit_view_source();
    vit_lower->draw(source);
  } else if (chapter) {
    geometry_.valid = false;  // no main map in this frame: an export's sidecar takes the document's query
    ImGui::Text("%s (%s)", chapter->title(), chapter->chapter_reference());
    try {
      ViewSource source = hand_made_view_source();
      chapter->draw(source);
    } catch (const std::exception& e) {
      text_wrapped("%s", e.what());
    }
  } else {
    draw_main_map();
  }
  // How to leave, always on screen in this mode (not in a slide exported from it).
  if (state_.commands.pending(Commands::Kind::ExportPng)) {
    widget_log().overlays_left_out.push_back("leave hint");
  } else if (!state_.ui.lesson_playing) {  // a lesson's strip says its own keys
    const char* leave = _("F5 or Esc: leave presentation mode");
    const ImVec2 size = ImGui::CalcTextSize(leave);
    ImDrawList* fg = ImGui::GetForegroundDrawList();
    const ImVec2 at(d.x - size.x - 12, d.y - size.y - 10);
    fg->AddRectFilled(ImVec2(at.x - 6, at.y - 4), ImVec2(d.x - 6, d.y - 6), IM_COL32(0, 0, 0, 200), 4.0f);
    fg->AddText(at, IM_COL32(200, 200, 200, 255), leave);
    widget_log().rects["presentation:leave"] = {at.x, at.y, size.x, size.y};
  }
  ImGui::End();
}

// The panels, tiled as panel_layout says; laid out again whenever the window's size, the UI scale,
// the source or the picture's shape changes (the panels can still be moved by hand in between).
// Every panel stays inside the window at any size; what does not fit in one scrolls. While a
// chapter view is open it takes the map's place (draw_teaching_windows), one view at a time.
void App::draw_panels(ImVec2 d, float menu_h) {
  const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoCollapse;
  const bool vit = state_.source == ShownSource::Vit && vit_.run();
  MapSource& source = map_source();
  const SourceInfo info = source.info();
  const float one_aspect = info.ready && info.grid.covered_h > 0 ? static_cast<float>(info.grid.covered_w) / static_cast<float>(info.grid.covered_h) : 1.0f;
  const float aspect = comparing() ? 2 * one_aspect : one_aspect;  // Compare: two maps side by side
  const ImGuiStyle& style = ImGui::GetStyle();
  // Around the picture: the window's padding and title, the header's lines, the colour bar.
  const float chrome_w = style.WindowPadding.x * 2 + colour_bar_space();
  const float chrome_h = style.WindowPadding.y * 2 + ImGui::GetFrameHeight() + ImGui::GetTextLineHeightWithSpacing() * (state_.presentation ? 3 : 2);
  const bool chapter = teaching_view_open();
  const LowerRow row{state_.show_controls, !chapter && state_.show_heads, !chapter && state_.show_pinned,
                     !chapter && state_.show_images, state_.source == ShownSource::Train};
  const PanelLayout l = panel_layout(d.x, d.y, menu_h, state_.ui_scale, aspect, chrome_w, chrome_h, row);
  controls_w_ = l.controls_w;
  char key[128];
  std::snprintf(key, sizeof key, "%.0fx%.0f|%.2f|%d|%.2f|%d", d.x, d.y, state_.ui_scale,
                state_.source == ShownSource::Train ? 2 : vit ? 1 : 0, aspect, chapter);
  const ImGuiCond cond = layout_key_ != key ? ImGuiCond_Always : ImGuiCond_FirstUseEver;
  layout_key_ = key;
  auto place = [&](const std::array<float, 4>& r) {
    ImGui::SetNextWindowPos(ImVec2(r[0], r[1]), cond);
    ImGui::SetNextWindowSize(ImVec2(r[2], r[3]), cond);
  };
  // The lower row's contents, as panels or (a cramped projector) as sections of the controls column.
  auto heads_contents = [&] {
    if (state_.source == ShownSource::Train && shown_train().is_cnn()) wrap_text(_("A CNN has no attention heads: the map's place shows its input gradient."));
    else if (state_.source == ShownSource::Train && !shown_train_run()) wrap_text(_("The untrained model's heads appear here in a moment."));
    else draw_heads_grid(state_, source);
  };
  const std::string own_title = state_.source == ShownSource::Train ? ui_id(_("Training"), "train_lower")
                                : vit                                ? ui_id(_("ViT views"), "vit_lower")
                                                                     : ui_id(_("Pinned queries"), "Pinned queries");
  const char* own_name = state_.source == ShownSource::Train ? "train_lower" : vit ? "vit_lower" : "Pinned queries";
  auto own_contents = [&] {  // the source's own views: the Train tab's curves, the ViT's views, the pinned queries
    if (state_.source == ShownSource::Train) draw_train_lower(state_, train_, train_map_a_, train_map_b_, train_cka_, views_);
    else if (vit) draw_vit_lower_tabs();
    else if (ViewSource hand_made = hand_made_view_source(); View* pinned = find_view(views_for(views_, hand_made), "pinned"))
      pinned->draw(hand_made);
  };
  auto images_contents = [&] {
    draw_images_panel(state_, gallery_);
    draw_model_gallery();
  };
  if (state_.show_controls) {
    place(l.controls);
    begin_panel(ui_id(_("Controls"), "Controls"), "Controls", &state_.show_controls, fixed);
    draw_source_tabs();
    if (l.lower_in_controls) {  // the lower row's panels, folded here so that the map keeps the window's height
      ImGui::Spacing();
      auto section = [&](bool shown, const char* label, const char* name, const auto& contents) {
        if (!shown) return;
        ImGui::PushID(name);
        const bool open = ImGui::CollapsingHeader(ui_id(label, name).c_str(), ImGuiTreeNodeFlags_DefaultOpen);
        record_widget(std::string("panel:") + name);
        if (open) contents();
        ImGui::PopID();
      };
      section(state_.show_heads, info.layers > 1 ? _("Layers x heads") : _("Heads"), "Heads", heads_contents);
      section(state_.show_pinned, state_.source == ShownSource::Train ? _("Training") : vit ? _("ViT views") : _("Pinned queries"), own_name,
              own_contents);
      section(state_.show_images, _("Images"), "Images", images_contents);
    }
    ImGui::End();
  }
  if (chapter) {  // the chapter view is the main area's; the map and its panels wait behind it
    geometry_.valid = false;
    return;
  }
  place(l.map);
  // The grid in the title bar, so that the map keeps the height a line of text would take.
  const bool cnn_run = state_.source == ShownSource::Train && shown_train().is_cnn();  // no attention: its input gradient
  std::string title = cnn_run ? _("Input gradient (a CNN)") : _("Attention map");
  if (!cnn_run && &source == &hand_made_map_ && hand_made_.has_image()) {
    const PatchGrid& g = hand_made_.grid();
    // TRANSLATORS: N = the number of tokens (patches), as columns x rows; K = the patch size in pixels.
    title = text_format(_("Attention map: N = %d (%d x %d), K = %d"), g.N(), g.cols, g.rows, g.K);
  }
  begin_panel(ui_id(title, "Attention map"), "Attention map", nullptr,
              fixed | ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  draw_main_map();
  ImGui::End();
  if (!l.lower_in_controls) {
    if (state_.show_heads) {
      place(l.heads);
      begin_panel(ui_id(info.layers > 1 ? _("Layers x heads") : _("Heads"), "Heads"), "Heads", &state_.show_heads, fixed);
      heads_contents();
      ImGui::End();
    }
    if (state_.show_pinned) {
      place(l.pinned);
      begin_panel(own_title, own_name, &state_.show_pinned, fixed);
      own_contents();
      ImGui::End();
    }
    if (state_.show_images) {
      place(l.images);
      begin_panel(ui_id(_("Images"), "Images"), "Images", &state_.show_images, fixed);
      images_contents();
      ImGui::End();
    }
  }
  if (state_.show_diagnostics) {  // over the lower row, where the images panel is (over the map's lower half when folded)
    place(l.lower_in_controls ? std::array<float, 4>{l.map[0], l.map[1] + l.map[3] * 0.5f, l.map[2], l.map[3] * 0.5f}
                              : state_.show_images ? l.images : l.pinned);
    ImGui::SetNextWindowBgAlpha(1.0f);  // opaque over the images panel
    begin_panel(ui_id(_("Diagnostics"), "Diagnostics"), "Diagnostics", &state_.show_diagnostics, fixed, /*background=*/true);
    draw_diagnostics_panel(state_, hand_made_, vit_, row_check_);
    ImGui::End();
  }
}

// The red banner of the last error, below the menu bar, which stays usable. A long message (a
// file's whole path) wraps, so that the banner and its dismiss button stay inside the window.
void App::draw_banner(ImVec2 d, float menu_h) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float dismiss_w = ImGui::CalcTextSize(_("dismiss")).x + style.FramePadding.x * 2 + style.ItemSpacing.x;
  const float text_w = std::max(d.x - 32.0f - style.WindowPadding.x * 2 - dismiss_w, 80.0f);
  ImGui::SetNextWindowPos(ImVec2(d.x * 0.5f, menu_h + 8), ImGuiCond_Always, ImVec2(0.5f, 0));
  ImGui::SetNextWindowBgAlpha(0.95f);
  ImGui::PushStyleColor(ImGuiCol_WindowBg, ImVec4(0.55f, 0.05f, 0.05f, 1));
  ImGui::Begin("##banner", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoFocusOnAppearing);
  record_window("banner");
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + text_w);
  ImGui::TextUnformatted(state_.ui.banner.c_str());
  ImGui::PopTextWrapPos();
  ImGui::SameLine();
  if (ImGui::SmallButton(_("dismiss"))) state_.ui.banner.clear();
  record_widget("banner_dismiss");
  ImGui::End();
  ImGui::PopStyleColor();
}

// The attention source the views draw: the loaded ViT's when its tab is chosen, else the
// hand-made heads.
MapSource& App::map_source() {
  if (state_.source == ShownSource::Vit && vit_.run()) return vit_map_;
  if (state_.source == ShownSource::Train && shown_train_run()) return shown_train_map();
  return hand_made_map_;
}

// The attention map of the source chosen: the ViT's, or the hand-made heads'.
void App::draw_main_map() {
  state_.report.vit_drawn = nullptr;  // until the ViT's map is drawn
  state_.report.train_drawn = nullptr;
  // The hover benchmark's "on screen": what the ViT's map is made of in this frame.
  if (replay_)
    replay_->note_vit_map(state_.source == ShownSource::Vit ? vit_.run() : state_.source == ShownSource::Train ? shown_train_run() : nullptr);
  // Before Start: the untrained model's maps, said so in the model line's place (the map keeps
  // the room); nothing of the hand-made heads' while the untrained model is being made.
  if (state_.source == ShownSource::Train && shown_train().is_cnn()) {  // a CNN has no map: its probe and input gradient
    draw_cnn_run_map(state_, shown_train());
    geometry_.valid = false;
    return;
  }
  const bool untrained = state_.source == ShownSource::Train && !shown_train().started();
  shown_train_map().set_note(untrained ? _("Untrained (random weights): press Start (Train panel) to watch these maps focus.") : "");
  if (untrained && !shown_train_run()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.85f, 0.35f, 1.0f));
    wrap_text(_("The untrained model is being made..."));
    ImGui::PopStyleColor();
    geometry_.valid = false;
    return;
  }
  state_.report.compare = nullptr;
  if (comparing()) draw_compared_maps();
  else draw_source_map(state_, map_source(), geometry_);
  if (!state_.report.train_drawn.is_null()) {  // which run and step the maps are of, on what, and how the run stands
    const TrainSession& run = shown_train();
    nlohmann::json& d = state_.report.train_drawn;
    d["run"] = run.name();
    d["switches"] = run.switches();
    d["probe"] = run.shown_probe();
    d["step"] = run.step();
    d["running"] = run.running();
    d["previewing"] = run.previewing();  // before Start: the untrained model's maps (TrainSession::preview)
    d["in_flight"] = run.in_flight();  // a chunk under way (after Pause, until it ends) or waiting for its turn
    d["steps_per_second"] = run.steps_per_second();
    d["test_accuracy"] = run.test_accuracy();
    d["task"] = task_name(run.shape().task);
    d["fixed_loss"] = run.fixed_loss();  // masked patches: the loss on the fixed crops (−1 before one, and when classifying)
    d["points"] = run.points().size();
  }
}

// True while View → Compare shows model B beside the ViT's map: the ViT's tab, its model run.
bool App::comparing() const {
  return state_.source == ShownSource::Vit && vit_.run() && !state_.compare_model.empty() && hand_made_.has_image();
}

// Compare: the ViT's map (A) and model B's, each in half the map's room, each with its header and
// colour bar; the export's picture (map only) is both.
void App::draw_compared_maps() {
  ImVec2 avail = ImGui::GetContentRegionAvail();
  // Presentation mode's hint on how to leave lies over the window's bottom right corner: the
  // colour bars under the maps stay above it.
  if (state_.presentation) avail.y -= ImGui::GetTextLineHeight() + 10.0f;
  const ImVec2 spacing = ImGui::GetStyle().ItemSpacing;
  // Side by side, or one above the other where that gives the maps more room (a narrow map panel
  // at UI scale 2): the header is the half's label and about two lines of what the map shows.
  // Side by side the colour bars take no width from the maps: one under each map, or for one
  // scale one under both; one above the other, a bar right of each.
  const bool one = state_.compare_one_scale && !compare_.hand_made();  // one scale: two models (the hand-made heads colour on the GPU)
  const float bar = colour_bar_space(), below = colour_bar_below_space(), header = ImGui::GetTextLineHeightWithSpacing() * 3.5f;
  const float beside = std::min((avail.x - spacing.x) * 0.5f, avail.y - header - below);
  const float above = std::min(avail.x - bar, (avail.y - spacing.y) * 0.5f - header);
  const bool stacked = above > beside * 1.15f;
  const bool shared_bar = one && !stacked;
  const ImVec2 half_a = stacked ? ImVec2(avail.x, std::floor((avail.y - spacing.y) * 0.5f))
                                : ImVec2(std::floor((avail.x - spacing.x) * 0.5f), avail.y - (shared_bar ? below : 0.0f));
  const ImVec2 half_b = stacked ? half_a : ImVec2(avail.x - spacing.x - half_a.x, half_a.y);
  const ColourBarPlace bar_each = stacked ? ColourBarPlace::Right : one ? ColourBarPlace::None : ColourBarPlace::Below;
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse;
  const ImVec4 label_colour(0.55f, 0.85f, 1.0f, 1.0f);
  ImGui::BeginChild("compare_a", half_a, false, flags);
  ImGui::TextColored(label_colour, "A  %s", compared_model_name(state_.model_path).c_str());
  // One colour scale: the union of both maps' own ranges in the last frame; a frame whose maps
  // change it asks for the next, so the settled picture is on the right scale.
  const std::optional<ValueRange> shared = one ? compare_range_ : std::nullopt;
  vit_map_.set_range(shared);
  compare_.map().set_range(shared);
  vit_map_.set_compact(true);
  draw_source_map(state_, vit_map_, geometry_, bar_each);
  vit_map_.set_compact(false);
  vit_map_.set_range(std::nullopt);
  ImGui::EndChild();
  if (!stacked) ImGui::SameLine();
  ImGui::BeginChild("compare_b", half_b, false, flags);
  // TRANSLATORS: B is the second model compared (A is the first); K = the patch size in pixels.
  if (compare_.hand_made()) ImGui::TextColored(label_colour, _("B  the hand-made heads, K = %d"), hand_made_.grid().K);
  else ImGui::TextColored(label_colour, "B  %s", compared_model_name(state_.compare_model).c_str());
  compare_.draw(state_, *vit_.run(), hand_made_, bar_each);
  ImGui::EndChild();
  const ViewGeometry& b = compare_.geometry();
  float bar_bottom = 0;
  if (shared_bar && compare_range_ && geometry_.valid && b.valid) {  // under both maps, from A's left edge to B's right
    const float left = geometry_.picture[0], right = b.picture[0] + b.picture[2];
    ImGui::SetCursorScreenPos(ImVec2(left, ImGui::GetCursorScreenPos().y + spacing.y));
    colour_bar_below(state_.colormap, state_.normalization, *compare_range_, right - left, vit_map_.value_name());
    bar_bottom = ImGui::GetItemRectMax().y;
  }
  state_.report.compare = compare_.report();
  if (one && compare_.run()) {
    const ValueRange joined = joined_range(vit_map_.own_range(), compare_.map().own_range());
    if (!compare_range_ || joined.lo != compare_range_->lo || joined.hi != compare_range_->hi) state_.commands.redraw();
    compare_range_ = joined;
  } else {
    compare_range_.reset();
  }
  if (geometry_.valid && b.valid) {  // the picture a "map only" export keeps: from A's left edge to B's right
    const float right = std::max(geometry_.picture[0] + geometry_.picture[2], b.picture[0] + b.picture[2]);
    const float bottom = std::max({geometry_.picture[1] + geometry_.picture[3], b.picture[1] + b.picture[3], bar_bottom});
    geometry_.picture[0] = std::min(geometry_.picture[0], b.picture[0]);
    geometry_.picture[1] = std::min(geometry_.picture[1], b.picture[1]);
    geometry_.picture[2] = right - geometry_.picture[0];
    geometry_.picture[3] = bottom - geometry_.picture[1];
  }
}

// Gallery entries that open an image with a bundled model (issue 18): the image, the
// model, the CLS query and the last layer.
void App::draw_model_gallery() {
  const auto dir = assets_dir() / "fashion_vit";
  std::error_code ec;
  if (!std::filesystem::exists(dir / "model.safetensors", ec)) return;
  ImGui::Separator();
  ImGui::TextUnformatted(_("With a model"));
  // Its whole label where it fits, shorter in a projector's narrow column (a selectable is not cut, it overflows).
  // TRANSLATORS: Fashion-MNIST is a data set's name; the model is shown on a picture of a shirt.
  const char* full = _("Fashion-MNIST ViT (a shirt)");
  const char* shorter = _("Fashion ViT");
  const char* label = ImGui::CalcTextSize(full).x <= ImGui::GetContentRegionAvail().x      ? full
                      : ImGui::CalcTextSize(shorter).x <= ImGui::GetContentRegionAvail().x ? shorter
                                                                                          : _("ViT");
  if (ImGui::Selectable(label, state_.model_path == dir && state_.source == ShownSource::Vit)) {
    std::filesystem::path image = dir / "images";
    for (const auto& e : std::filesystem::directory_iterator(image, ec))
      if (e.path().filename().string().find("shirt") != std::string::npos &&
          e.path().filename().string().find("t-shirt") == std::string::npos) {
        image = e.path();
        break;
      }
    state_.commands.open_image(image);
    state_.commands.open_model(dir);
    state_.vit.layer = -1;
    state_.vit.prefix_token = 0;
  }
  record_widget("gallery:fashion_vit");
}

// The current window's rectangle as "window:<name>" (its title bar can be dragged), the window
// its controls are recorded in, and whether its title is cut (widget_log.hpp).
void App::record_window(const std::string& name) {
  const ImVec2 p = ImGui::GetWindowPos(), s = ImGui::GetWindowSize();
  note_window(name);
  panel_rects_[name] = {p.x, p.y, s.x, s.y};
}

// A tiled panel. It draws no background of its own while, in the last frame, it overlapped no
// other window: the whole window is cleared to the colour a panel's background would give
// (panel_clear_colour), and on llvmpipe every layer over the whole window costs about 10 ms
// of CPU a frame (measured with the hover benchmark). A panel moved over another, or under a
// teaching view, gets its background back.
void App::begin_panel(const std::string& title, const std::string& name, bool* open, ImGuiWindowFlags flags, bool background) {
  bool overlaps = background;
  if (const auto me = last_panel_rects_.find(name); me != last_panel_rects_.end() && !overlaps) {
    const auto& a = me->second;
    for (const auto& [other, b] : last_panel_rects_)
      if (other != name && a[0] < b[0] + b[2] - 1 && b[0] < a[0] + a[2] - 1 && a[1] < b[1] + b[3] - 1 && b[1] < a[1] + a[3] - 1)
        overlaps = true;
  } else {
    overlaps = true;  // not seen yet: where it will be is not known
  }
  ImGui::Begin(title.c_str(), open, flags | (overlaps ? 0 : ImGuiWindowFlags_NoBackground));
  record_window(name);
}

std::array<float, 3> App::panel_clear_colour() {
  const ImGuiStyle& style = ImGui::GetStyle();
  const ImVec4 bg = style.Colors[ImGuiCol_WindowBg];
  const float a = bg.w * style.Alpha;
  const float base[3] = {0.08f, 0.08f, 0.09f};
  return {bg.x * a + base[0] * (1 - a), bg.y * a + base[1] * (1 - a), bg.z * a + base[2] * (1 - a)};
}

}  // namespace attnlab::app
