// The lesson (SPEC §15, issue 51): a teacher makes one in the window (F6 adds the view as a step,
// Lesson → Edit steps sets titles, captions and locks), saves it as one .attnlab file
// (core/io/lesson.hpp), and plays it in any classroom: PgDn/PgUp (what presentation clickers
// send) and Space/Backspace step it, each step's whole document applied as `render --from`
// applies it (app/commands/lesson_steps.hpp), its caption in a strip below the map; Esc leaves
// and the user's own settings come back. A lesson's state is never written to settings.json.
#include "app/gui/shell/app.hpp"

#include "app/gui/output/lesson_commands.hpp"
#include "app/gui/output/caption_strip.hpp"
#include "app/gui/state/ui_common.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/base/translate.hpp"
#include "app/gui/state/ui_text.hpp"
#include "core/io/hub.hpp"
#include "core/io/user_config.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_internal.h>  // BringWindowToDisplayFront: the editor stays in front of the docked views
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>

namespace attnlab::app {
namespace {

// The chapter view open in the document ("" when the map is shown), the step's render view.
std::string open_view_name(const Document& d, const std::vector<View*>& teaching) {
  for (const View* v : teaching)
    if (const auto it = d.open_views.find(v->name()); it != d.open_views.end() && it->second) return v->name();
  return "";
}

// `path` first in `list` (at most 8, absolute).
void remember(std::vector<std::string>& list, const std::filesystem::path& path) {
  const std::string p = platform::utf8(std::filesystem::absolute(path).lexically_normal());
  std::erase(list, p);
  list.insert(list.begin(), p);
  if (list.size() > 8) list.resize(8);
}

// The step's view (its "render" entry, as `render --from` draws it) shown in the window: a
// chapter view open in the map's place (one at a time), the heads' grid, a ViT's variant of its
// map or the view under it.
void show_render_view(Document& d, const nlohmann::json& state, const std::vector<View*>& teaching) {
  const auto r = state.find("render");
  const std::string view = r != state.end() && r->is_object() ? r->value("view", "map") : "map";
  for (auto& [name, open] : d.open_views) open = false;
  for (const View* v : teaching)
    if (view == v->name()) d.open_views[v->name()] = true;
  if (view == "heads" || view == "vit-grid") d.show_heads = true;
  d.vit_rollout = d.vit_rollout || view == "vit-rollout";
  d.vit_masks = d.vit_masks || view == "vit-mask";
  d.vit_norms = d.vit_norms || view == "vit-norms";
  if (view.starts_with("vit-") && view != "vit-grid" && view != "vit-rollout" && view != "vit-mask" && view != "vit-norms")
    d.vit_view = view.substr(4);
}

}  // namespace

ImVec2 App::room() const {
  const ImVec2 d = ImGui::GetIO().DisplaySize;
  return ImVec2(d.x, std::max(d.y - lesson_h_, 100.0f));
}

Document App::users_document() const {
  Document d = state_;
  if (state_.ui.wanted_patch) d.attention.patch = *state_.ui.wanted_patch;
  return d;
}

const Document& App::remembered_document() {
  if (lesson_ && lesson_->user_document) {
    Document& u = *lesson_->user_document;  // what the user changed meanwhile that is theirs, not the lesson's
    u.ui_scale = state_.ui_scale;
    u.language = state_.language;
    u.export_dir = state_.export_dir;
    u.export_map_only = state_.export_map_only;
    u.recent_models = state_.recent_models;
    u.recent_lessons = state_.recent_lessons;
    return u;
  }
  return state_;
}

// What the keys, the menu and the file dialogs asked of the lesson, before the frame.
void App::take_lesson_work() {
  if (const auto open = state_.commands.take(Commands::Kind::OpenLesson)) open_lesson(open->path);
  if (const auto save = state_.commands.take(Commands::Kind::SaveLesson)) save_lesson(save->path);
  if (std::exchange(state_.ui.lesson_new, false)) new_lesson();
  if (std::exchange(state_.ui.lesson_add_step, false)) add_lesson_step();
  if (std::exchange(state_.ui.lesson_leave, false)) leave_lesson();
  if (const auto step = std::exchange(state_.ui.lesson_play, std::nullopt); step && lesson_) play_step(*step);
  if (const int move = std::exchange(state_.ui.lesson_move, 0); move != 0 && lesson_ && lesson_->user_document)
    play_step(std::clamp(lesson_->step + move, 0, static_cast<int>(lesson_->lesson.steps.size()) - 1));
  if (!lesson_) return;
  OpenLesson& l = *lesson_;
  // The step's model has opened (or failed to): its layer, head and query applied again, once.
  if (l.reapply && !opening_model_ && !vit_.busy() && state_.commands.empty()) {
    l.reapply = false;
    play_step(l.step, /*open_models=*/false);
  }
  if (l.pulling_step >= 0 && !hub_.busy()) play_step(std::exchange(l.pulling_step, -1));
}

bool App::may_replace_lesson() {
  if (!lesson_ || !lesson_->dirty || lesson_->lesson.steps.empty() || lesson_->discard_armed) return true;
  lesson_->discard_armed = true;
  // TRANSLATORS: %s is the lesson's title; Lesson → Save is the menu item (as the Lesson menu and its Save item are translated).
  state_.show_error(text_format(_("the lesson \"%s\" has unsaved changes: Lesson → Save keeps them; do it again to discard them"),
                                lesson_->lesson.title.c_str()));
  return false;
}

void App::keep_unsaved_lesson() {
  if (!lesson_ || !lesson_->dirty || lesson_->lesson.steps.empty()) return;
  const std::filesystem::path kept = user_config_dir() / "unsaved-lesson.attnlab";
  try {
    std::filesystem::create_directories(kept.parent_path());
    write_lesson(lesson_->lesson, kept, /*overwrite=*/true);
    remember(state_.recent_lessons, kept);  // Lesson → its recent lessons opens it next time
    std::printf(_("attnlab: the lesson's unsaved changes were kept in %s\n"), platform::utf8(kept).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, _("attnlab: the lesson's unsaved changes could not be kept: %s\n"), e.what());
  }
}

void App::open_lesson(const std::filesystem::path& path) {
  if (!may_replace_lesson()) return;
  try {
    Lesson lesson = read_lesson(path);
    if (lesson.steps.empty()) throw Error(text_format(_("%s: a lesson without steps"), platform::utf8(path).c_str()));
    const auto views = lesson_view_names();
    for (std::size_t i = 0; i < lesson.steps.size(); ++i) {
      try {
        check_lesson_step(lesson, i, views);
      } catch (const Error& e) {
        throw Error(platform::utf8(path) + ": " + e.what());
      }
    }
    auto folder = std::make_unique<LessonFolder>(lesson);
    // The user's document is kept from before the first lesson played, across lessons opened meanwhile.
    std::optional<Document> user = lesson_ && lesson_->user_document ? lesson_->user_document : std::optional<Document>(users_document());
    lesson_.emplace();
    lesson_->lesson = std::move(lesson);
    lesson_->file = path;
    lesson_->folder = std::move(folder);
    lesson_->user_document = std::move(user);
    remember(state_.recent_lessons, path);
    state_.presentation = true;  // opened to be played: presentation mode at step 1
    state_.ui.lesson_playing = true;
    play_step(0);
  } catch (const Error& e) {
    state_.show_error(e.what());  // what was open stays
  }
}

void App::new_lesson() {
  if (!may_replace_lesson()) return;
  try {
    Lesson empty;
    empty.title = _("Untitled lesson");  // the new lesson's title, the teacher's to change
    empty.language = current_language();  // its captions are written in the language in use
    auto folder = std::make_unique<LessonFolder>(empty);
    if (lesson_ && lesson_->user_document) leave_lesson();
    lesson_.emplace();
    lesson_->lesson = std::move(empty);
    lesson_->folder = std::move(folder);
    state_.ui.show_lesson_editor = true;
  } catch (const Error& e) {
    state_.show_error(e.what());
  }
}

// Step `index`'s document applied as `render --from` applies it (step_sidecar: its photo from
// the lesson, its models found here), this machine's own settings kept. A model missing here
// leaves the document as it is and says which, offering a Hub model's download.
void App::play_step(int index, bool open_models) {
  if (!lesson_ || lesson_->lesson.steps.empty()) return;
  OpenLesson& l = *lesson_;
  index = std::clamp(index, 0, static_cast<int>(l.lesson.steps.size()) - 1);
  if (!l.user_document) l.user_document = users_document();
  state_.ui.lesson_playing = true;
  l.step = index;
  l.missing.clear();
  l.pull.clear();
  const LessonStep& step = l.lesson.steps[static_cast<std::size_t>(index)];
  state_.ui.lesson_locked = step.locked;
  state_.ui.lesson_hidden = step.hidden;
  const auto render = step.state.find("render");
  state_.ui.lesson_view = render != step.state.end() && render->is_object() ? render->value("view", "map") : "map";
  state_.commands.redraw();
  try {
    l.folder->write_missing(l.lesson);
    const nlohmann::json j = step_sidecar(l.lesson, static_cast<std::size_t>(index), *l.folder);
    Document d;
    apply_json(j, d);
    show_render_view(d, j, teaching_);
    // This machine's own, never the lesson's: the UI scale, the language, where saves go, the
    // recent files, and whether the window presents.
    d.ui_scale = state_.ui_scale;
    d.language = state_.language;
    d.export_dir = state_.export_dir;
    d.recent_models = state_.recent_models;
    d.recent_lessons = state_.recent_lessons;
    d.presentation = state_.presentation;
    apply_document(d, open_models);
  } catch (const Error& e) {
    l.missing = e.what();
    for (const FoundModel& f : find_lesson_models(step))
      if (!f.path && !f.model.hub.empty()) l.pull = f.model.hub;
  }
}

// The document `d` in the window: its photo loaded when it is another, its model opened when it
// is another (the step applied again once it has: opening a model resets its choice). Its K is
// the one wanted, fitted to its photo where it must be (give_hand_made_image). A photo that
// cannot be shown (unreadable, too large) is said in the banner and the photo on screen stays,
// with its path and its pins: the document never names a photo other than the one drawn (a
// sidecar's "image" and "image_size" agree, and so does settings.json).
void App::apply_document(const Document& d, bool open_models) {
  const std::filesystem::path loaded_model = vit_.run() ? state_.model_path : std::filesystem::path();
  const bool new_image = d.image_path != state_.image_path || !hand_made_.has_image();
  const std::filesystem::path shown_image = state_.image_path;
  const std::vector<Cell> shown_pins = state_.hand_made.pins;
  std::vector<Cell> pins = d.hand_made.pins;  // the step's pins, on its photo
  static_cast<Document&>(state_) = d;
  state_.ui.wanted_patch.reset();  // the document's K is the one wanted now (fitted to its photo if it must be)
  if (new_image) {
    try {
      give_hand_made_image(load_image(d.image_path));
      video_.close();
      query_anchor_.clear();
      pin_anchors_.clear();
      if (vit_.run()) run_vit_on_image();
    } catch (const Error& e) {
      state_.show_error(e.what());
      state_.image_path = shown_image;
      pins = shown_pins;
    }
  }
  // The step's K and mask handed over as they are: not a change of K by the user, whose query
  // and pins would be carried over to the new grid (keep_cells_in_place).
  if (hand_made_.has_image() && !(state_.attention == hand_made_.settings())) {
    try {
      hand_made_.set_settings(state_.attention);
    } catch (const Error& e) {
      state_.show_error(e.what());
      state_.attention = hand_made_.settings();
    }
  }
  query_anchor_.clear();
  pin_anchors_.clear();
  if (hand_made_.has_image()) {  // the photo kept at the step's K: pins off its grid go
    const PatchGrid& g = hand_made_.grid();
    std::erase_if(pins, [&](const Cell& c) { return c.col < 0 || c.row < 0 || c.col >= g.cols || c.row >= g.rows; });
  }
  state_.hand_made.pins = std::move(pins);
  if (open_models && !d.model_path.empty() && d.model_path != loaded_model) {
    state_.commands.open_model(d.model_path);
    if (lesson_) lesson_->reapply = true;
  }
  clamp_query();
  state_.commands.redraw();
}

void App::leave_lesson() {
  if (!lesson_ || !lesson_->user_document) return;
  const Document user = remembered_document();
  lesson_->user_document.reset();
  lesson_->reapply = false;
  state_.ui.lesson_playing = false;
  state_.ui.lesson_view.clear();
  state_.ui.lesson_locked.clear();
  state_.ui.lesson_hidden.clear();
  Document d = user;
  d.presentation = false;
  apply_document(d, /*open_models=*/true);
  if (lesson_) lesson_->reapply = false;  // the user's own choice is whatever the model opens on
}

// F6: the view as it is now becomes the lesson's next step (a new lesson when none is open):
// the document as an F12 export's sidecar holds it, the chapter view open as its view.
void App::add_lesson_step() {
  try {
    if (!lesson_) new_lesson();
    if (!lesson_) return;
    OpenLesson& l = *lesson_;
    nlohmann::json j = to_json(state_);
    int w = 0, h = 0;
    glfwGetFramebufferSize(window_, &w, &h);
    const std::string view = open_view_name(state_, teaching_);
    j["render"] = {{"view", view.empty() ? "map" : view}, {"width", std::clamp(w, 16, 8192)}, {"height", std::clamp(h, 16, 8192)}};
    const std::size_t at = l.step >= 0 ? static_cast<std::size_t>(l.step) + 1 : l.lesson.steps.size();
    // TRANSLATORS: a new step's title (the teacher may change it); %zu is its number.
    LessonStep step = step_from_state(l.lesson, std::move(j), text_format(_("Step %zu"), l.lesson.steps.size() + 1), "");
    l.lesson.steps.insert(l.lesson.steps.begin() + static_cast<std::ptrdiff_t>(std::min(at, l.lesson.steps.size())), std::move(step));
    l.step = static_cast<int>(std::min(at, l.lesson.steps.size() - 1));
    l.dirty = true;
    l.folder->write_missing(l.lesson);
    // TRANSLATORS: "added step 3 of 5 to the lesson"; Lesson → Edit steps is the menu item.
    state_.ui.status = text_format(_("added step %d of %zu to the lesson (Lesson → Edit steps for its caption)"), l.step + 1,
                                   l.lesson.steps.size());
    state_.ui.status_since = std::chrono::steady_clock::now();
    std::printf("attnlab: lesson step %d of %zu added\n", l.step + 1, l.lesson.steps.size());  // English: tests read it
    std::fflush(stdout);
  } catch (const Error& e) {
    state_.show_error(text_format(_("cannot add this view as a step: %s"), e.what()));
  }
}

// Saves the lesson to `path`, or where it came from; a new one asks where (the Save dialog,
// which asks before replacing a file).
void App::save_lesson(const std::filesystem::path& path) {
  if (!lesson_) return;
  OpenLesson& l = *lesson_;
  std::filesystem::path to = path.empty() ? l.file : path;
  if (to.empty()) {
    state_.commands.ask_for_file(FileDialogKind::SaveLesson);
    return;
  }
  if (to.extension() != ".attnlab") to += ".attnlab";
  try {
    // Its own file, or the name the Save dialog confirmed: replaced whole, never half-written.
    write_lesson(l.lesson, to, /*overwrite=*/true);
    l.file = to;
    l.dirty = false;
    remember(state_.recent_lessons, to);
    saved(to);
  } catch (const Error& e) {
    state_.show_error(e.what());
  }
}

// The caption strip's height for this frame (0 while no lesson plays): the step line, the
// caption wrapped to the window's width, a missing model's line; at most 40 % of the window.
void App::measure_lesson_strip(ImVec2 d) {
  lesson_h_ = 0;
  if (!lesson_ || !state_.ui.lesson_playing || lesson_->step < 0 || lesson_->step >= static_cast<int>(lesson_->lesson.steps.size())) return;
  const ImGuiStyle& st = ImGui::GetStyle();
  const LessonStep& step = lesson_->lesson.steps[static_cast<std::size_t>(lesson_->step)];
  const float width = d.x - st.WindowPadding.x * 2;
  float h = st.WindowPadding.y * 2 + ImGui::GetFrameHeightWithSpacing();
  h += draw_caption(parse_caption(caption_in(step, current_language())), width, ImGui::GetFontSize() * 1.25f, false);
  if (!lesson_->missing.empty()) h += ImGui::GetFrameHeightWithSpacing() * 2;
  lesson_h_ = std::round(std::min(h, d.y * 0.4f));
}

// The lower third: "Step 2 of 5: title", the keys, the caption; never over the map (the views
// are laid out in room()).
void App::draw_lesson_strip(ImVec2 d) {
  if (lesson_h_ <= 0 || !lesson_) return;
  OpenLesson& l = *lesson_;
  // The editor, drawn before, may have deleted the step measured at the frame's start.
  if (l.step < 0 || l.step >= static_cast<int>(l.lesson.steps.size())) return;
  const LessonStep& step = l.lesson.steps[static_cast<std::size_t>(l.step)];
  ImGui::SetNextWindowPos(ImVec2(0, d.y - lesson_h_));
  ImGui::SetNextWindowSize(ImVec2(d.x, lesson_h_));
  ImGui::SetNextWindowBgAlpha(1.0f);
  ImGui::Begin("##lesson", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoFocusOnAppearing);
  record_window("lesson");
  ImGui::AlignTextToFramePadding();
  ImGui::TextColored(ImVec4(1.0f, 0.85f, 0.35f, 1.0f), _("Step %d of %zu"), l.step + 1, l.lesson.steps.size());
  record_widget("lesson:counter");
  ImGui::SameLine();
  ImGui::TextUnformatted(step.title.c_str());
  if (!state_.commands.pending(Commands::Kind::ExportPng)) {  // how to step, never in an exported slide
    // At the right end of the step's line, the longest that fits there (none on a narrow screen).
    ImGui::SameLine();
    const float left = ImGui::GetCursorPosX() + ImGui::GetFontSize(), right = d.x - ImGui::GetStyle().WindowPadding.x;
    bool drawn = false;
    // TRANSLATORS: the keys that step a lesson, long and short; the key names (PgDn, Space, PgUp, Backspace, F5, Esc) stay.
    for (const char* keys : {_("PgDn / Space next   PgUp / Backspace back   F5 panels   Esc leave"), _("PgDn next  PgUp back  Esc leave")}) {
      const float w = ImGui::CalcTextSize(keys).x;
      if (drawn || right - w < left) continue;
      ImGui::SameLine(right - w);
      ImGui::TextDisabled("%s", keys);
      drawn = true;
    }
    if (!drawn) ImGui::NewLine();  // ends the step's line
  }
  // The caption in the language in use, else in the lesson's own (issue 52).
  draw_caption(parse_caption(caption_in(step, current_language())), d.x - ImGui::GetStyle().WindowPadding.x * 2,
               ImGui::GetFontSize() * 1.25f);
  record_widget("lesson:caption");
  if (!l.missing.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.6f, 0.3f, 1.0f));
    wrap_text(l.missing);
    ImGui::PopStyleColor();
    if (!l.pull.empty()) {
      // TRANSLATORS: %s is a model's name on the Hugging Face Hub.
      const std::string label = hub_.busy() ? text_format(_("Downloading %s..."), l.pull.c_str())
                                            : text_format(_("Download %s from the Hub"), l.pull.c_str());
      if (ImGui::Button(label.c_str()) && !hub_.busy()) {
        try {
          hub_.pull(hub::parse_repo_ref(l.pull));
          l.pulling_step = l.step;
        } catch (const Error& e) {
          state_.show_error(e.what());
        }
      }
      record_widget("lesson:pull");
    }
  }
  ImGui::End();
}

// The Lesson menu: make, open, play, save.
void App::draw_lesson_menu() {
  if (!begin_menu(N_("Lesson"))) return;
  const bool open = lesson_.has_value();
  const bool playing = open && state_.ui.lesson_playing;
  if (ImGui::MenuItem(_("New lesson"))) state_.ui.lesson_new = true;
  record_widget("menu:Lesson/new");
  if (ImGui::MenuItem(_("Open a lesson..."))) state_.commands.ask_for_file(FileDialogKind::Lesson);
  record_widget("menu:Lesson/open");
  if (ImGui::MenuItem(_("Add this view as a step"), "F6")) state_.ui.lesson_add_step = true;
  record_widget("menu:Lesson/add_step");
  if (ImGui::MenuItem(_("Edit steps..."), nullptr, &state_.ui.show_lesson_editor, open)) {}
  record_widget("menu:Lesson/edit");
  if (ImGui::MenuItem(_("Play from step 1"), nullptr, false, open && !lesson_->lesson.steps.empty())) {
    state_.presentation = true;
    state_.ui.lesson_play = 0;
  }
  record_widget("menu:Lesson/play");
  if (ImGui::MenuItem(_("Leave the lesson"), "Esc", false, playing)) state_.ui.lesson_leave = true;  // i18n: English (a key's name)
  record_widget("menu:Lesson/leave");
  ImGui::Separator();
  if (ImGui::MenuItem(_("Save"), nullptr, false, open && !lesson_->lesson.steps.empty())) state_.commands.save_lesson();
  record_widget("menu:Lesson/save");
  if (ImGui::MenuItem(_("Save as..."), nullptr, false, open && !lesson_->lesson.steps.empty()))
    state_.commands.ask_for_file(FileDialogKind::SaveLesson);
  record_widget("menu:Lesson/save_as");
  if (!state_.recent_lessons.empty()) {
    ImGui::Separator();
    for (const std::string& p : state_.recent_lessons) {
      if (ImGui::MenuItem(p.c_str())) state_.commands.open_lesson(platform::path_from_utf8(p));
      record_widget("menu:Lesson/recent:" + p);
    }
  }
  ImGui::EndMenu();
}

// Lesson → Edit steps: the steps in order (a click plays one), and the chosen step's title,
// caption, place, and the settings it locks or hides while it plays.
void App::draw_lesson_editor(float menu_h) {
  if (!state_.ui.show_lesson_editor || !lesson_) return;
  OpenLesson& l = *lesson_;
  const ImVec2 d = room();
  const ImVec2 size(std::min(d.x - 20, 34 * ImGui::GetFontSize()), std::min(d.y - menu_h - 20, 30 * ImGui::GetFontSize()));
  ImGui::SetNextWindowPos(ImVec2(d.x - size.x - 10, menu_h + 10), ImGuiCond_Appearing);
  ImGui::SetNextWindowSize(size, ImGuiCond_Appearing);
  ImGui::SetNextWindowBgAlpha(1.0f);
  const std::string window_title = ui_id(_("Lesson"), "lesson_editor");
  if (ImGui::Begin(window_title.c_str(), &state_.ui.show_lesson_editor, ImGuiWindowFlags_NoCollapse)) {
    // In front of the docked views (a chapter view clicked, the map) while it is open; under an
    // open menu or list.
    if (!ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId | ImGuiPopupFlags_AnyPopupLevel))
      ImGui::BringWindowToDisplayFront(ImGui::GetCurrentWindow());
    record_window("lesson_editor");
    ImGui::SetNextItemWidth(-1);
    if (ImGui::InputText("##lesson_title", &l.lesson.title)) l.dirty = true;
    record_widget("lesson:title");
    {
      const std::size_t n = l.lesson.steps.size();
      const std::string count = text_format(tr_n("%zu step", "%zu steps", n), n);
      const std::string file = l.file.empty() ? std::string(_("not saved yet")) : platform::utf8(l.file.filename());
      // TRANSLATORS: the first %s is the steps' count ("3 steps"), the second the lesson's file name or "not saved yet".
      text_wrapped("%s", text_format(l.dirty ? _("%s, %s (changed). F6 adds the view as it is now after the chosen step.")
                                             : _("%s, %s. F6 adds the view as it is now after the chosen step."),
                                     count.c_str(), file.c_str()).c_str());
    }
    auto& steps = l.lesson.steps;
    ImGui::BeginChild("##steps", ImVec2(0, std::min(8.0f, static_cast<float>(steps.size()) + 0.5f) * ImGui::GetTextLineHeightWithSpacing()), true);
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const std::string label = std::to_string(i + 1) + ". " + steps[i].title + "##step" + std::to_string(i);
      if (ImGui::Selectable(label.c_str(), static_cast<int>(i) == l.step)) state_.ui.lesson_play = static_cast<int>(i);
      record_widget("lesson:step" + std::to_string(i + 1));
    }
    ImGui::EndChild();
    if (l.step >= 0 && l.step < static_cast<int>(steps.size())) {
      const auto i = static_cast<std::size_t>(l.step);
      LessonStep& s = steps[i];
      // TRANSLATORS: the lesson step's title (a text field follows).
      ImGui::TextUnformatted(_("Title"));
      ImGui::SameLine();
      ImGui::SetNextItemWidth(-1);
      if (ImGui::InputText("##step_title", &s.title)) l.dirty = true;
      record_widget("lesson:step_title");
      // TRANSLATORS: the caption's markup: *…*, **…**, `…` and "- " stay as they are; only the words change.
      ImGui::TextUnformatted(_("Caption (*emphasis*, **strong**, `math`, lines starting \"- \")"));
      // The caption edited is the one in the language in use: the step's own when that is the
      // lesson's language, else its entry in captions (made by typing, gone when emptied).
      if (l.lesson.language.empty()) l.lesson.language = current_language();
      const std::string& lang = current_language();
      const bool own = lang == l.lesson.language;
      if (!own) {
        const char* name = language_name(lang);
        const char* first = language_name(l.lesson.language);
        ImGui::SameLine();
        // TRANSLATORS: after the caption's label: the language being edited, then the lesson's first language.
        ImGui::TextDisabled(_("in %s (where empty: %s)"), name ? name : lang.c_str(), first ? first : l.lesson.language.c_str());
      }
      std::string other = own ? std::string() : caption_in(s, lang);
      if (!own && !s.captions.count(lang)) other.clear();
      std::string& edited = own ? s.caption : other;
      if (ImGui::InputTextMultiline("##step_caption", &edited, ImVec2(-1, ImGui::GetTextLineHeight() * 4))) {
        l.dirty = true;
        if (!own) {
          if (other.empty()) s.captions.erase(lang);
          else s.captions[lang] = other;
        }
      }
      record_widget("lesson:step_caption");
      const auto move = [&](std::size_t to) {
        std::swap(steps[i], steps[to]);
        l.step = static_cast<int>(to);
        l.dirty = true;
      };
      // TRANSLATORS: moves the chosen step up (earlier) in the lesson; "Down" moves it later.
      if (ImGui::Button(_("Up")) && i > 0) move(i - 1);
      record_widget("lesson:up");
      ImGui::SameLine();
      if (ImGui::Button(_("Down")) && i + 1 < steps.size()) move(i + 1);
      record_widget("lesson:down");
      ImGui::SameLine();
      if (ImGui::Button(_("Duplicate"))) {
        steps.insert(steps.begin() + static_cast<std::ptrdiff_t>(i) + 1, steps[i]);
        l.step = static_cast<int>(i) + 1;
        l.dirty = true;
      }
      record_widget("lesson:duplicate");
      ImGui::SameLine();
      if (ImGui::Button(_("Replace with this view"))) {
        const std::string title = s.title, caption = s.caption;
        const auto captions = s.captions;
        const auto locked = s.locked, hidden = s.hidden;
        l.step = static_cast<int>(i) - 1;  // add_lesson_step inserts after the chosen step
        add_lesson_step();
        if (l.step == static_cast<int>(i)) {
          steps.erase(steps.begin() + static_cast<std::ptrdiff_t>(i) + 1);
          steps[i].title = title, steps[i].caption = caption, steps[i].locked = locked, steps[i].hidden = hidden;
          steps[i].captions = captions;
        } else {
          l.step = static_cast<int>(i);
        }
      }
      record_widget("lesson:replace");
      ImGui::SameLine();
      if (ImGui::Button(_("Delete"))) {
        steps.erase(steps.begin() + static_cast<std::ptrdiff_t>(i));
        l.step = std::min(l.step, static_cast<int>(steps.size()) - 1);
        l.dirty = true;
      }
      record_widget("lesson:delete");
      const std::string settings_node = ui_id(_("Settings the class cannot change in this step"), "lesson_settings");
      if (l.step >= 0 && l.step < static_cast<int>(steps.size()) && ImGui::TreeNode(settings_node.c_str())) {
        LessonStep& c = steps[static_cast<std::size_t>(l.step)];
        for (const std::string& path : setting_paths()) {
          bool locked = std::find(c.locked.begin(), c.locked.end(), path) != c.locked.end();
          bool hidden = std::find(c.hidden.begin(), c.hidden.end(), path) != c.hidden.end();
          const std::string label = setting_ref(state_, path).ui.label;  // translated by setting_ref
          // TRANSLATORS: a step's setting the class cannot change ("locked") or does not see ("hidden").
          if (ImGui::Checkbox((std::string(_("locked")) + "##l" + path).c_str(), &locked)) {
            std::erase(c.locked, path);
            if (locked) c.locked.push_back(path);
            l.dirty = true;
          }
          ImGui::SameLine();
          if (ImGui::Checkbox((std::string(_("hidden")) + "##h" + path).c_str(), &hidden)) {
            std::erase(c.hidden, path);
            if (hidden) c.hidden.push_back(path);
            l.dirty = true;
          }
          ImGui::SameLine();
          ImGui::Text("%s (%s)", label.c_str(), path.c_str());
        }
        if (state_.ui.lesson_playing) state_.ui.lesson_locked = c.locked, state_.ui.lesson_hidden = c.hidden;
        ImGui::TreePop();
      }
    }
    ImGui::Separator();
    if (ImGui::Button(_("Save")) && !steps.empty()) state_.commands.save_lesson();
    record_widget("lesson:save");
    ImGui::SameLine();
    if (ImGui::Button(_("Save as...")) && !steps.empty()) state_.commands.ask_for_file(FileDialogKind::SaveLesson);
    record_widget("lesson:save_as");
    // A path typed instead of the dialog (none on this desktop, or a teacher who knows where):
    // a new file only; the lesson's own file is saved over with Save.
    ImGui::SetNextItemWidth(std::max(ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize(_("Save to this path")).x -
                                         ImGui::GetStyle().FramePadding.x * 2 - ImGui::GetStyle().ItemSpacing.x,
                                     4 * ImGui::GetFontSize()));
    // TRANSLATORS: the path is an example (a lesson file, .attnlab).
    const bool enter = ImGui::InputTextWithHint("##lesson_path", _("or type a path: /home/me/giraffe.attnlab"), &state_.ui.lesson_path_text,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
    record_widget("lesson:path");
    ImGui::SameLine();
    if ((ImGui::Button(_("Save to this path")) || enter) && !steps.empty() && !state_.ui.lesson_path_text.empty()) {
      std::filesystem::path to = platform::path_from_utf8(state_.ui.lesson_path_text);
      if (to.extension() != ".attnlab") to += ".attnlab";
      std::error_code ec;
      if (std::filesystem::exists(to, ec) && to != l.file)
        state_.show_error(
            text_format(_("'%s' exists; nothing was written (choose another name, or Save as... to replace it)"), platform::utf8(to).c_str()));
      else
        state_.commands.save_lesson(to);
    }
    record_widget("lesson:save_to");
  }
  ImGui::End();
}

}  // namespace attnlab::app
