// The main menu bar: panels, the model, the chapter's views, the tour, export and the keys (made
// from the key table, keys.cpp). Each item is recorded for the real-window tests (widget_log.hpp).
#include "app/gui/shell/app.hpp"

#include "app/gui/shell/keys.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/translate.hpp"

#include <imgui.h>

#include <algorithm>
#include <string>

namespace attnlab::app {

// The main menu: panels, the model, teaching views, the guided tour, export, keys. Returns its
// height.
float App::draw_menu_bar() {
  float h = 0;
  if (ImGui::BeginMainMenuBar()) {
    if (begin_menu(N_("View"))) {
      menu_item("View/Controls", _("Controls"), nullptr, &state_.show_controls);
      // TRANSLATORS: the panel of attention heads (a menu item that shows or hides it).
      menu_item("View/Heads", _("Heads"), nullptr, &state_.show_heads);
      menu_item("View/Pinned queries", _("Pinned queries"), nullptr, &state_.show_pinned);
      menu_item("View/Images", _("Images"), nullptr, &state_.show_images);
      menu_item("View/Diagnostics", _("Diagnostics (driver, timings, checks)"), nullptr, &state_.show_diagnostics);
      menu_item("View/Presentation mode", _("Presentation mode"), "F5", &state_.presentation);
      ImGui::Separator();
      menu_item("View/Compare", _("Compare two models side by side..."), nullptr, &state_.ui.show_compare);
      ImGui::EndMenu();
    }
    // TRANSLATORS: a menu: the neural network model (checkpoint) to load.
    if (begin_menu(N_("Model"))) {
      if (ImGui::MenuItem(_("Open a checkpoint file..."))) state_.commands.ask_for_file(FileDialogKind::ModelFile);
      record_widget("menu:Model/open");
      if (ImGui::MenuItem(_("Open a checkpoint folder..."))) state_.commands.ask_for_file(FileDialogKind::ModelFolder);
      record_widget("menu:Model/open_folder");
      if (ImGui::MenuItem(_("Type a checkpoint's path (ViT model tab)"))) {
        state_.source = ShownSource::Vit;
        state_.show_controls = true;
      }
      record_widget("menu:Model/type_path");
      if (ImGui::MenuItem(_("Open an image..."), "Ctrl O")) state_.commands.ask_for_file(FileDialogKind::Image);  // i18n: English (a key's name)
      record_widget("menu:Model/open_image");
      if (ImGui::MenuItem(_("Gallery (Hugging Face Hub)..."))) state_.ui.show_hub_gallery = true;
      record_widget("menu:Model/gallery");
      bool vit_source = state_.source == ShownSource::Vit;
      const bool was = vit_source;
      menu_item("Model/use", _("Show the ViT's attention"), "V", &vit_source);
      if (vit_source != was) state_.source = vit_source ? ShownSource::Vit : ShownSource::HandMade;
      if (!state_.recent_models.empty()) {
        ImGui::Separator();
        for (const std::string& p : state_.recent_models) {
          if (ImGui::MenuItem(p.c_str())) state_.commands.open_model(p);
          record_widget("menu:Model/recent:" + p);
        }
      }
      ImGui::EndMenu();
    }
    if (begin_menu(N_("Chapter"))) {
      // The book, once; each view's figures and sections (on the right) are its. Wrapped, so the
      // menu fits a 1024 px screen at UI scale 2.
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
      ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + 24 * ImGui::GetFontSize());
      // TRANSLATORS: %s is the book's citation (authors, title, chapter).
      ImGui::TextUnformatted(text_format(_("From %s; the figures, sections and equations cited here are its."), kChapterCitation).c_str());
      ImGui::PopTextWrapPos();
      ImGui::PopStyleColor();
      record_widget("menu:Chapter/book");
      ImGui::Separator();
      for (const auto& v : teaching_) {
        bool& open = state_.open_views[v->name()];
        const bool was = open;
        menu_item("Chapter/" + std::string(v->name()), v->title(), v->chapter_reference(), &open);
        if (open && !was) {  // one chapter view at a time: the class follows one thing
          for (auto& [name, other] : state_.open_views)
            if (name != v->name()) other = false;
          const int step = state_.tour_step;  // a view other than the tour's ends the tour
          if (step >= 0 && (step >= static_cast<int>(teaching_.size()) || teaching_[static_cast<size_t>(step)]->name() != v->name()))
            state_.tour_step = -1;
        }
      }
      ImGui::EndMenu();
    }
    if (begin_menu(N_("Tour"))) {
      if (ImGui::MenuItem(_("Start the guided tour"))) set_tour_step(0);
      record_widget("menu:Tour/start");
      if (ImGui::MenuItem(_("End the tour"), nullptr, false, state_.tour_step >= 0)) set_tour_step(-1);
      record_widget("menu:Tour/end");
      ImGui::EndMenu();
    }
    draw_lesson_menu();
    if (begin_menu(N_("Export"))) {
      if (ImGui::MenuItem(state_.export_map_only ? _("Map as PNG + settings") : _("Window as PNG + settings"), "F12"))
        state_.commands.export_png();
      menu_item("Export/map only", _("F12 saves the map only (for slides)"), nullptr, &state_.export_map_only);
      if (ImGui::MenuItem(_("Row as CSV"), "F9")) state_.commands.export_csv();
      record_widget("menu:Export/csv");
      recording_.draw_menu();
      ImGui::EndMenu();
    }
    // TRANSLATORS: a menu listing the keyboard keys (shortcuts).
    if (begin_menu(N_("Keys"))) {  // the key table (keys.cpp), as the README lists it
      draw_key_list();
      ImGui::EndMenu();
    }
    draw_language_menu();
    if (!state_.ui.record_status.empty()) {  // a recording runs or is being written
      ImGui::TextColored(ImVec4(1.0f, 0.35f, 0.3f, 1.0f), "%s", state_.ui.record_status.c_str());
      record_widget("record_status");
    }
    h = ImGui::GetWindowSize().y;
    ImGui::EndMainMenuBar();
  }
  return h;
}


// The Language menu (issue 52): the environment's language, English and every catalog's, each in
// its own script. A choice is the document's classroom.language (saved in settings.json),
// applied before the next frame (apply_ui_scale: the catalog and a font atlas with its glyphs).
void App::draw_language_menu() {
  // TRANSLATORS: the menu that chooses the language of the whole program.
  if (!begin_menu(N_("Language"))) return;
  const auto item = [this](const std::string& code, const char* shown) {
    if (ImGui::MenuItem(shown, nullptr, state_.language == code)) state_.language = code;
    record_widget("menu:Language/" + (code.empty() ? std::string("system") : code));
  };
  // TRANSLATORS: the Language menu's first entry; %s is the language it gives now, in its own name.
  const std::string system = text_format(_("The system's language (%s)"), language_name(current_language()) ? language_name(current_language()) : current_language().c_str());
  if (state_.language.empty()) {
    item("", system.c_str());
  } else {  // the system's language is not the one shown: name it without it
    item("", _("The system's language"));
  }
  ImGui::Separator();
  item("en", language_name("en"));
  for (const std::string& code : available_languages()) {
    const char* name = language_name(code);
    item(code, name ? name : code.c_str());
  }
  ImGui::EndMenu();
}


// A menu of the main menu bar. Its title is recorded from the cursor before BeginMenu: once
// the menu is open, ImGui's last item is the menu's own window, not the title.
bool App::begin_menu(const char* label) {
  const char* shown = _(label);  // `label` is the English name (N_), recorded as is
  const ImVec2 p = ImGui::GetCursorScreenPos();
  widget_log().rects[std::string("menu:") + label] = {
      p.x, p.y, ImGui::CalcTextSize(shown).x + ImGui::GetStyle().ItemSpacing.x, ImGui::GetFrameHeight()};
  return ImGui::BeginMenu(shown);
}


// A toggle in an open menu, recorded as "menu:<name>".
void App::menu_item(const std::string& name, const char* label, const char* shortcut, bool* selected) {
  ImGui::MenuItem(label, shortcut, selected);
  record_widget("menu:" + name);
}


// The keys, from the table: what each does and when, a line each.
void App::draw_key_list() {
  if (!ImGui::BeginTable("keys", 3, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) return;
  for (const KeyBinding& b : key_table()) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(b.keys);
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", _(scope_name(b.scope)));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(_(b.what));
  }
  ImGui::EndTable();
}

}  // namespace attnlab::app
