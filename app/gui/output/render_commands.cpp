#include "app/gui/output/render_commands.hpp"
#include "app/gui/maps/map_source.hpp"

#include "app/commands/models_command.hpp"
#include "app/commands/options.hpp"
#include "app/commands/source_choice.hpp"
#include "app/commands/video_command.hpp"
#include "app/gui/state/app_state.hpp"
#include "app/gui/train/cka_view.hpp"
#include "app/gui/sessions/hand_made_session.hpp"
#include "app/gui/window/headless.hpp"
#include "app/gui/chapter/teaching_view.hpp"
#include "app/gui/views/view_registry.hpp"
#include "app/gui/maps/map_pictures.hpp"
#include "app/gui/vit/vit_compare.hpp"
#include "app/gui/vit/vit_views.hpp"
#include "core/base/error.hpp"
#include "core/io/files.hpp"
#include "core/base/parse.hpp"
#include "core/base/translate.hpp"

#include <imgui.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>

namespace attnlab::app {
namespace {

// False while render_from_quietly() draws: the pictures are a step of its own work.
bool say_what_was_written = true;

// The line every render ends with: the PNG and its sidecar.
void say_written(const std::filesystem::path& out) {
  // TRANSLATORS: the picture (PNG) and its settings (JSON) written.
  if (say_what_was_written) std::printf(_("attnlab: wrote %s and %s\n"), out.string().c_str(), sidecar_of(out).string().c_str());
}


std::array<int, 2> parse_size(const std::string& text) {
  const auto x = text.find('x');
  // TRANSLATORS: --size is a flag and WIDTHxHEIGHT its value's form (both typed as they are).
  if (x == std::string::npos) throw Error(text_format(_("--size must be WIDTHxHEIGHT in pixels, got '%s'"), text.c_str()));
  // TRANSLATORS: the value named in an error ("--size width must be ..."); --size is a flag.
  return {parse_int(std::string_view(text).substr(0, x), _("--size width"), 16, 8192),
          // TRANSLATORS: the value named in an error ("--size height must be ..."); --size is a flag.
          parse_int(std::string_view(text).substr(x + 1), _("--size height"), 16, 8192)};
}

using Text = const std::string&;

// What every render reads first (read_first_flags): where it writes, and which table reads the
// rest (--model: render_model's; --from: only these; neither: the hand-made heads').
struct RenderArgs {
  std::filesystem::path out;
  bool force = false;
  std::string from, model;
};

/// The rows of render's flag table that every render has, bound to `r`.
std::vector<CommandFlag> render_own_flags(RenderArgs& r) {
  return {
      {"--out", true, [&r](Text t, Text) { r.out = t; }, "", true, true},
      {"--force", false, [&r](Text, Text) { r.force = true; }, "", true, true},
      {"--from", true, [&r](Text t, Text) { r.from = t; }, "", true, true},
      {"--model", true, [&r](Text t, Text) { r.model = t; }, "", true, true},
  };
}

// The view, size and sweep flags of render (hand-made heads and --model).
struct ViewFlags {
  std::string view = "map";
  std::array<int, 2> size = {1200, 900};
  SweepRequest sweep;
  bool view_given = false, size_given = false, fps_given = false;
};

/// The rows of render's table for its view, size and sweep, bound to `v`.
std::vector<CommandFlag> view_flags(ViewFlags& v) {
  return {
      {"--view", true, [&v](Text t, Text) { v.view = t, v.view_given = true; }},
      {"--size", true, [&v](Text t, Text) { v.size = parse_size(t), v.size_given = true; }},
      {"--sweep", true, [&v](Text t, Text) { v.sweep.kind = t; }},
      {"--sweep-values", true, [&v](Text t, Text) { v.sweep.values = t; }},
      {"--fps", true, [&v](Text t, Text f) { v.sweep.fps = parse_float(t, f, 0.1f, 120.0f), v.fps_given = true; }},
  };
}

/// The rows of render --model's table for a second model (--compare B, --match-layers).
std::vector<CommandFlag> compare_flags(std::string& compare, std::string& match) {
  return {
      {"--compare", true, [&compare](Text t, Text) { compare = t; }},
      {"--match-layers", true, [&match](Text t, Text) { match = t; }},
  };
}

// The output pair must be free (or --force), and the folder must exist: checked before any work.
void check_outputs(const std::filesystem::path& out, bool force) {
  if (out.empty()) throw Error(_("--out FILE.png is required"));
  if (out.extension() != ".png") throw Error(text_format(_("--out must name a .png file, got '%s'"), out.string().c_str()));
  std::error_code ec;
  const auto dir = out.parent_path().empty() ? std::filesystem::path(".") : out.parent_path();
  if (!std::filesystem::is_directory(dir, ec))
    throw Error(text_format(_("cannot write '%s': the folder '%s' does not exist"), out.string().c_str(), dir.string().c_str()));
  for (const auto& p : {out, sidecar_of(out)})
    if (!force && std::filesystem::exists(p, ec))
      throw Error(text_format(_("'%s' exists; nothing was written (use --force to replace it)"), p.string().c_str()));
}

// Writes the PNG and its sidecar together or not at all (write_files_together()): with --force
// a sidecar that cannot be written leaves the old PNG and JSON as they were.
void write_outputs(const std::filesystem::path& out, int w, int h, const std::vector<std::uint8_t>& rgb,
                   const nlohmann::json& sidecar, bool force) {
  const std::vector<std::uint8_t> png = encode_png(w, h, 3, rgb, "'" + out.string() + "'");
  const std::string json = sidecar.dump(2) + "\n";
  const FileToWrite pair[] = {{out, std::span<const char>(reinterpret_cast<const char*>(png.data()), png.size())},
                              {sidecar_of(out), std::span<const char>(json.data(), json.size())}};
  write_files_together(pair, force);
}

// The document the command line gives, as the app's state (query pinned, image absolute).
AppState state_from(const Document& d) {
  AppState s;
  static_cast<Document&>(s) = d;
  s.hand_made.query_pinned = true;
  s.image_path = std::filesystem::absolute(d.image_path);
  return s;
}

// Loads the image and sets up the hand-made session for the state; the painted cells need the grid.
void prepare(HandMadeSession& hand_made, AppState& s, const std::vector<std::array<int, 2>>& painted) {
  const Image img = load_image(s.image_path);
  const ModelSetup probe = make_setup(img.width, img.height, s.attention);
  if (!painted.empty()) s.attention.mask.painted = painted_indices(painted, probe.grid);
  const Cell q = s.hand_made.cell;
  token_at(probe.grid, q.col, q.row);  // throws for a query outside the grid
  hand_made.set_image(img, s.attention);
}

void begin_full_window(const char* id) {
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
  ImGui::Begin(id, nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoMove);
}

// The views under a ViT's map: the registry's views that work on a ViT (view_registry.hpp),
// in its order. They keep no state of their own (no texture, no job), so one list serves.
const std::vector<std::unique_ptr<View>>& vit_views() {
  static const std::vector<std::unique_ptr<View>> views = [] {
    auto all = make_views();
    std::erase_if(all, [](const std::unique_ptr<View>& v) { return !v->works_with(kVitOffers); });
    return all;
  }();
  return views;
}

// The ViT views `render --model` draws: the loaded ViT's main map ("map") and its variants, then
// the views under its map as vit-NAME.
std::vector<std::string> vit_view_names() {
  std::vector<std::string> names = {"map", "vit-grid", "vit-rollout", "vit-mask", "vit-norms"};
  for (const auto& v : vit_views()) names.push_back(std::string("vit-") + v->name());
  return names;
}

// The ViT view named `view` (vit_view_names()) of one source into the current window.
void draw_named_vit_view(const std::string& view, AppState& state, VitMapSource& map, ViewSource& source,
                         ViewGeometry& geometry) {
  View* lower = nullptr;
  for (const auto& v : vit_views())
    if (view == std::string("vit-") + v->name()) lower = v.get();
  if (view == "vit-grid") draw_heads_grid(state, map);
  else if (lower) lower->draw(source);
  else draw_source_map(state, map, geometry);
}

// Checks `view` against vit_view_names() and `model` against the SHA-256 a sidecar named.
void check_vit_view_and_model(const std::string& view, const std::filesystem::path& model, const std::string& expected_sha,
                              const std::string& from) {
  if (const auto names = vit_view_names(); std::find(names.begin(), names.end(), view) == names.end()) {
    std::string all;
    for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
    // TRANSLATORS: the view asked for, then the list of view names (identifiers, kept as they are).
    throw Error(text_format(_("unknown view '%s' with --model (expected %s)"), view.c_str(), all.c_str()));
  }
  std::error_code ec;
  if (!std::filesystem::exists(model, ec))
    throw Error(from.empty() ? text_format(_("the model '%s' does not exist"), model.string().c_str())
                             // TRANSLATORS: the model's path, then the settings file (JSON) that names it.
                             : text_format(_("the model '%s' named in '%s' does not exist"), model.string().c_str(), from.c_str()));
  if (!expected_sha.empty()) {
    const auto file = checkpoint_file(model);
    if (file_sha256(file) != expected_sha)
      // TRANSLATORS: the model file, then the settings file (JSON) written with it.
      throw Error(text_format(_("the model file '%s' has changed since '%s' was written (its SHA-256 differs)"), file.string().c_str(),
                              from.c_str()));
  }
}

// The ViT source shown, with the main map's variant a view name asks for (vit-rollout, vit-mask,
// vit-norms) switched on; the document's own switches stay.
void show_vit_view(AppState& state, const std::string& view) {
  state.source = ShownSource::Vit;
  state.vit_rollout = view == "vit-rollout" || state.vit_rollout;
  state.vit_masks = view == "vit-mask" || state.vit_masks;
  state.vit_norms = view == "vit-norms" || state.vit_norms;
}

// True while the main map should show the class's relevance (vit.relevance.on_map) and its
// gradient job is still running: the map drew the row of A with a note ("computing the
// relevance ...", in the user's language: the job on its way is asked instead of the words).
bool relevance_on_map_pending(const AppState& state, VitSession& vit) {
  const nlohmann::json& main = state.report.vit_drawn;
  return state.relevance_on_map && main.is_object() && main.value("shows", "") != "relevance" &&
         !main.value("note", "").empty() && !vit.view_data().gradients->maps_pending.empty();
}

// One frame of a ViT view in the render window: the view once the model has loaded (its layer,
// head and query from `choices` on the first frame, while `settle` is 2: their ranges are the
// model's), else "loading the model..."; an Error goes to `error`. Counts `settle` down; the
// similarity view keeps it up until its matrix (a job of its own) is drawn.
void vit_view_frame(const std::string& view, AppState& state, VitSession& vit, VitMapSource& map, ViewSource& lower,
                    ViewGeometry& geometry, const ChoiceFlags& choices, int& settle, std::string& error) {
  begin_full_window("##render");
  if (const VitRun* src = vit.run(); src && error.empty()) {
    try {
      if (settle == 2) state.vit = parse_source_choice(choices, vit_choice_shape(*src), state.vit);
      draw_named_vit_view(view, state, map, lower, geometry);
      if (view == "vit-cka" && !(state.report.cka_drawn.is_object() && state.report.cka_drawn.value("current", false))) settle = 3;
      // The gradient views: until their job's result (the relevance view's curves too) is drawn.
      const nlohmann::json& relevance = state.report.relevance_drawn;
      if (view == "vit-relevance" &&
          !(relevance.is_object() && (relevance.contains("deletion") || relevance.contains("curves_error") || relevance.contains("error"))))
        settle = 3;
      if (view == "vit-erf" && !state.report.field_drawn.is_object()) settle = 3;
      if (view == "vit-cnn" && !state.report.cnn_drawn.is_object()) settle = 3;  // the ResNet's load and its jobs
      if (relevance_on_map_pending(state, vit)) settle = 3;
    } catch (const Error& e) {
      error = e.what();
    }
    --settle;
  } else {
    ImGui::TextUnformatted(_("loading the model..."));
  }
  ImGui::End();
}

// Draws a ViT view headless: the model loads and runs on the scheduler while frames
// go on; the picture is the first frame drawn with its result. `expected_sha` (from --from)
// must match the model file's.
int render_vit(AppState state, const std::string& view, std::array<int, 2> size, const std::filesystem::path& out, bool force,
               const ChoiceFlags& choices, const std::string& expected_sha, const std::string& from) {
  check_vit_view_and_model(view, state.model_path, expected_sha, from);
  if (view == "vit-cnn" && state.cnn_model.empty())
    // TRANSLATORS: --view, vit-cnn, --cnn and random-resnet18 are typed as they are; PATH is a placeholder.
    throw Error(_("--view vit-cnn needs --cnn PATH|random-resnet18 (the ResNet beside the ViT)"));
  check_outputs(out, force);
  const Image image = load_image(state.image_path);
  show_vit_view(state, view);
  HeadlessUi ui(size[0], size[1], state.ui_scale);
  Scheduler scheduler(1);  // the renderer's one scheduler, handed to the sessions (as the App's)
  VitSession vit(scheduler);
  CkaJob cka(scheduler, "cka:vit");  // after the session: gone before it
  VitMapSource vit_map(state, vit);
  vit.set_backend(state.vit_backend);
  vit.open(state.model_path, image, state.vit_resize);
  std::string error;
  int settle = 2;  // frames drawn with the result before the picture, so the layout is final
  ViewGeometry geometry;
  ViewSource lower_context{state, vit_map, kVitOffers, nullptr, &vit, &state.vit,
                           [&] { draw_cka_view(state, cka, cka_request(vit, state.vit_resize), /*auto_start=*/true); }};
  const auto rgb = ui.render(
      [&] {
        scheduler.drain();
        if (const auto e = vit.poll()) error = text_format(_("cannot open the model: %s"), e->c_str());
        // Taken here, before the view would show it as a banner: one line, from the command.
        // TRANSLATORS: CKA: centered kernel alignment, a similarity of two layers' representations.
        if (const auto e = cka.poll_error()) error = text_format(_("cannot compute the layers' similarity (CKA): %s"), e->c_str());
        state.report.cka_drawn = nullptr;
        state.report.high_norm_drawn = nullptr;
        state.report.relevance_drawn = nullptr;
        state.report.field_drawn = nullptr;
        state.report.cnn_drawn = nullptr;
        vit_view_frame(view, state, vit, vit_map, lower_context, geometry, choices, settle, error);
      },
      3,
      [&] {
        if (scheduler.busy()) scheduler.wait(std::chrono::milliseconds(200));  // sleeps on the queue, no polling
        return error.empty() && (vit.busy() || !vit.run() || settle > 0);
      },
      std::chrono::minutes(10));
  for (const nlohmann::json* drawn : {&state.report.relevance_drawn, &state.report.field_drawn, &state.report.cnn_drawn})
    if (drawn->is_object() && drawn->contains("error")) error = drawn->at("error").get<std::string>();
  if (!error.empty()) throw Error(error);
  if (!vit.run()) throw Error(_("the model did not finish loading in 10 minutes"));
  nlohmann::json sidecar = to_json(state);
  sidecar["program"] = {{"name", "attnlab"}, {"version", ATTNLAB_VERSION}};
  sidecar["backend"] = "CPU reference (Eigen), the ViT's forward pass";
  sidecar["render"] = {{"view", view}, {"width", size[0]}, {"height", size[1]}, {"finished", true}};
  sidecar["vit_model_file"] = vit.file().string();
  sidecar["vit_model_sha256"] = vit.sha256();
  if (!state.report.vit_drawn.is_null()) sidecar["vit_drawn"] = state.report.vit_drawn;
  if (!state.report.cka_drawn.is_null()) sidecar["cka_drawn"] = state.report.cka_drawn;
  if (!state.report.high_norm_drawn.is_null()) sidecar["high_norm_drawn"] = state.report.high_norm_drawn;
  if (!state.report.relevance_drawn.is_null()) sidecar["relevance_drawn"] = state.report.relevance_drawn;
  if (!state.report.field_drawn.is_null()) sidecar["field_drawn"] = state.report.field_drawn;
  if (!state.report.cnn_drawn.is_null()) sidecar["cnn_drawn"] = state.report.cnn_drawn;
  write_outputs(out, size[0], size[1], rgb, sidecar, force);
  say_written(out);
  return 0;
}

// One side of `render --model A --compare B`: its own document (so that each half is that
// source's own picture), session, similarity job and map source.
struct CompareHalf {
  AppState state;
  VitSession vit;
  CkaJob cka;
  VitMapSource map;
  ViewGeometry geometry;
  ViewSource lower;
  CompareHalf(const AppState& s, Scheduler& scheduler, const std::string& key)
      : state(s), vit(scheduler, key + ":run"), cka(scheduler, key + ":cka"), map(state, vit),
        lower{state, map, kVitOffers, nullptr, &vit, &state.vit, [this] { draw_cka_view(state, cka, cka_request(vit, state.vit_resize), /*auto_start=*/true); }} {}
};

// render --model A --compare B (issue 48, SPEC §12): the same view of two models side by side,
// each half exactly that model's own picture at half the width (one colour scale each); B's
// layer, head and query follow A's (matched_choice). The sidecar is A's, with B's under "compare".
// The two halves side by side, A's left, and the pair's sidecar: A's document and drawing at the
// top level, B's under "compare" (`b_entry`).
void write_compare_pair(const std::filesystem::path& out, std::array<int, 2> size, const std::vector<std::uint8_t>& rgb_a,
                        const std::vector<std::uint8_t>& rgb_b, nlohmann::json sidecar, nlohmann::json b_entry, const std::string& view,
                        bool force) {
  const int half = size[0] / 2;
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(2 * half) * static_cast<std::size_t>(size[1]) * 3);
  const std::size_t row = static_cast<std::size_t>(half) * 3;
  for (std::size_t y = 0; y < static_cast<std::size_t>(size[1]); ++y) {
    std::copy_n(rgb_a.begin() + static_cast<std::ptrdiff_t>(y * row), row, rgb.begin() + static_cast<std::ptrdiff_t>(2 * y * row));
    std::copy_n(rgb_b.begin() + static_cast<std::ptrdiff_t>(y * row), row, rgb.begin() + static_cast<std::ptrdiff_t>((2 * y + 1) * row));
  }
  sidecar["program"] = {{"name", "attnlab"}, {"version", ATTNLAB_VERSION}};
  sidecar["render"] = {{"view", view}, {"width", size[0]}, {"height", size[1]}, {"finished", true}, {"compare", true}};
  sidecar["compare"] = std::move(b_entry);
  write_outputs(out, size[0], size[1], rgb, sidecar, force);
  say_written(out);
}

// Frames of a hand-made heads' view drawn headless until its work has settled: each frame takes
// the scheduler's results and the rows asked for in the last one, then `draw` in the full window;
// more frames while a view asks again or rows or pinned maps are on their way. The last frame's
// RGB (HeadlessUi::render).
std::vector<std::uint8_t> render_hand_made_frames(HeadlessUi& ui, Scheduler& scheduler, HandMadeSession& hand_made, AppState& state,
                                                  const std::function<void()>& draw) {
  return ui.render(
      [&] {
        state.commands.take_redraw();  // a view with work under way asks again
        scheduler.drain();
        hand_made.begin_frame();
        begin_full_window("##render");
        draw();
        ImGui::End();
      },
      3, [&] {
        // Work on the scheduler: sleep on its queue until a result is ready, then draw again.
        if (scheduler.busy()) scheduler.wait(std::chrono::milliseconds(200));
        return state.commands.redraw_pending() || scheduler.busy() || hand_made.rows_pending() || hand_made.pinned_pending();
      });
}

// render --model A --compare hand-made: A's map beside the chapter's hand-made heads on the same
// photo, at A's document's K and settings; B's query the hand-made patch under A's query patch
// (matched_choice; B's own head), or `*b_choice` as a sidecar recorded it (nullptr: none). Each half is that
// source's own picture at half the width, one colour scale each (the hand-made heads colour on
// the GPU). The map view only.
int render_hand_made_compare(const AppState& a_state, LayerMatch match, const std::string& view, std::array<int, 2> size,
                             const std::filesystem::path& out, bool force, const ChoiceFlags& choices, const std::string& expected_sha,
                             const std::string& from, const SourceChoice* b_choice) {
  if (view != "map")
    // TRANSLATORS: "--compare hand-made" is typed as it is; %s is a view's name (an identifier).
    throw Error(text_format(_("--compare hand-made draws the map view only (the hand-made heads have no '%s')"), view.c_str()));
  if (a_state.compare_one_scale) throw Error(_("--one-scale joins two models' scales; the hand-made heads keep their own"));
  check_vit_view_and_model(view, a_state.model_path, expected_sha, from);
  check_outputs(out, force);
  if (size[0] % 2) throw Error(text_format(_("--size: with --compare the width must be even (two halves), got %d"), size[0]));
  AppState first = a_state;
  show_vit_view(first, view);
  first.compare_model = kCompareHandMade;
  first.compare_by_index = match == LayerMatch::Index;
  const int half = size[0] / 2;
  HeadlessUi ui(half, size[1], first.ui_scale);
  Scheduler scheduler(1);
  CompareHalf a(first, scheduler, "vit:a");
  AppState b_state = first;
  b_state.source = ShownSource::HandMade;
  HandMadeSession hand_made(scheduler);
  prepare(hand_made, b_state, {});  // the photo and the document's K: throws for a K that does not fit
  a.vit.set_backend(a.state.vit_backend);
  a.vit.open(a.state.model_path, hand_made.image(), a.state.vit_resize);
  std::string error;
  int settle = 2;
  const auto rgb_a = ui.render(
      [&] {
        scheduler.drain();
        if (const auto e = a.vit.poll()) error = text_format(_("cannot open model A: %s"), e->c_str());
        vit_view_frame(view, a.state, a.vit, a.map, a.lower, a.geometry, choices, settle, error);
      },
      3,
      [&] {
        if (a.vit.busy()) scheduler.wait(std::chrono::milliseconds(200));
        return error.empty() && (a.vit.busy() || !a.vit.run() || settle > 0);
      },
      std::chrono::minutes(10));
  if (!error.empty()) throw Error(error);
  if (!a.vit.run()) throw Error(_("the model did not finish loading in 10 minutes"));
  b_state.hand_made = b_choice ? *b_choice
                               : matched_choice(a.state.vit, compare_side(*a.vit.run(), a.state.vit_resize, hand_made.image()),
                                                compare_side(hand_made.grid()), match, b_state.hand_made);
  b_state.hand_made.query_pinned = true;
  token_at(hand_made.grid(), b_state.hand_made.cell.col, b_state.hand_made.cell.row);  // throws for a patch outside the grid
  HandMadeMapSource b_map(b_state, hand_made);
  ViewGeometry b_geometry;
  const auto rgb_b = render_hand_made_frames(ui, scheduler, hand_made, b_state, [&] { draw_source_map(b_state, b_map, b_geometry); });
  nlohmann::json sidecar = to_json(a.state);
  sidecar["backend"] = "CPU reference (Eigen), the ViT's forward pass; " + hand_made.name() + ", the hand-made heads";
  sidecar.update(drawn_entries(a.state, a.vit));
  nlohmann::json b_entry = {{"model", kCompareHandMade},
                            {"hand_made", to_json(b_state).at("hand_made")},
                            {"match_layers", match == LayerMatch::Index ? "index" : "depth"},
                            {"one_scale", false},
                            {"width", half}};
  if (b_geometry.valid) b_entry["hand_made_drawn"] = hand_made_drawn(b_geometry, hand_made, b_state.hand_made);
  write_compare_pair(out, size, rgb_a, rgb_b, std::move(sidecar), std::move(b_entry), view, force);
  return 0;
}

int render_vit_compare(const AppState& a_state, const std::filesystem::path& b_model, LayerMatch match, const std::string& view,
                       std::array<int, 2> size, const std::filesystem::path& out, bool force, const ChoiceFlags& choices,
                       const std::array<std::string, 2>& expected_sha, const std::string& from,
                       const SourceChoice* b_choice = nullptr) {
  if (b_model == kCompareHandMade)
    return render_hand_made_compare(a_state, match, view, size, out, force, choices, expected_sha[0], from, b_choice);
  check_vit_view_and_model(view, a_state.model_path, expected_sha[0], from);
  check_vit_view_and_model(view, b_model, expected_sha[1], from);
  check_outputs(out, force);
  if (size[0] % 2) throw Error(text_format(_("--size: with --compare the width must be even (two halves), got %d"), size[0]));
  const Image image = load_image(a_state.image_path);
  AppState first = a_state;
  show_vit_view(first, view);
  first.compare_model = b_model;  // the document's Compare, as the window's (the sidecar's "compare")
  first.compare_by_index = match == LayerMatch::Index;
  const int half = size[0] / 2;
  HeadlessUi ui(half, size[1], first.ui_scale);  // before the sessions: their textures go while it is current
  Scheduler scheduler(1);
  CompareHalf a(first, scheduler, "vit:a");
  first.model_path = b_model;
  CompareHalf b(first, scheduler, "vit:b");
  for (CompareHalf* side : {&a, &b}) {
    side->vit.set_backend(side->state.vit_backend);
    side->vit.open(side->state.model_path, image, side->state.vit_resize);
  }
  // Each half is drawn on its own, A's then B's, in a framebuffer of half the width: the same
  // frames as that model's own picture, so the halves are those pictures, pixel for pixel.
  std::string error;
  int settle = 2;
  auto draw_half = [&](CompareHalf& side) {
    begin_full_window("##render");
    try {
      draw_named_vit_view(view, side.state, side.map, side.lower, side.geometry);
    } catch (const Error& e) {
      error = e.what();
    }
    ImGui::End();
  };
  auto cka_settling = [&](CompareHalf& side) {
    return (view == "vit-cka" && !(side.state.report.cka_drawn.is_object() && side.state.report.cka_drawn.value("current", false))) ||
           relevance_on_map_pending(side.state, side.vit);
  };
  auto begin_frame = [&] {
    scheduler.drain();
    for (CompareHalf* side : {&a, &b}) {
      const char* which = side == &a ? "A" : "B";
      // TRANSLATORS: the model, A or B, then the reason.
      if (const auto e = side->vit.poll()) error = text_format(_("cannot open model %s: %s"), which, e->c_str());
      if (const auto e = side->cka.poll_error())
        // TRANSLATORS: the model, A or B, then the reason. CKA: centered kernel alignment, a similarity of two layers.
        error = text_format(_("cannot compute model %s's layers' similarity (CKA): %s"), which, e->c_str());
      side->state.report.cka_drawn = nullptr;
      side->state.report.high_norm_drawn = nullptr;
    }
  };
  auto busy = [&](CompareHalf& side) {
    const bool working = a.vit.busy() || b.vit.busy() || side.cka.busy();
    if (working) scheduler.wait(std::chrono::milliseconds(200));
    return error.empty() && (working || !a.vit.run() || !b.vit.run() || settle > 0);
  };
  auto frame_a = [&] {
        begin_frame();
        if (const VitRun* ra = a.vit.run(); ra && b.vit.run() && error.empty()) {
          try {
            if (settle == 2) a.state.vit = parse_source_choice(choices, vit_choice_shape(*ra), a.state.vit);
          } catch (const Error& e) {
            error = e.what();
          }
          draw_half(a);
          settle = cka_settling(a) ? 1 : settle - 1;
        } else {
          begin_full_window("##render");
          ImGui::TextUnformatted(_("loading the model..."));
          ImGui::End();
        }
      };
  auto rgb_a = ui.render(frame_a, 3, [&] { return busy(a); }, std::chrono::minutes(10));
  if (!error.empty()) throw Error(error);
  if (!a.vit.run() || !b.vit.run()) throw Error(_("the models did not finish loading in 10 minutes"));
  // B's choice as the sidecar recorded it (the window's B keeps a patch clicked on it), else matched to A's.
  b.state.vit = b_choice ? *b_choice
                         : matched_choice(a.state.vit, compare_side(*a.vit.run(), a.state.vit_resize, image),
                                          compare_side(*b.vit.run(), b.state.vit_resize, image), match, b.state.vit);
  b.state.vit.query_pinned = true;
  if (a.state.compare_one_scale && view == "map") {  // one colour scale: A drawn again on the union of both ranges
    (void)b.map.main_map(b.state.vit);  // B's own range (its rows, its texture; the context is current)
    const ValueRange joined = joined_range(a.map.own_range(), b.map.own_range());
    a.map.set_range(joined);
    b.map.set_range(joined);
    settle = 2;
    rgb_a = ui.render(frame_a, 3, [&] { return busy(a); }, std::chrono::minutes(10));
    if (!error.empty()) throw Error(error);
  }
  settle = 2;
  const auto rgb_b = ui.render(
      [&] {
        begin_frame();
        draw_half(b);
        settle = cka_settling(b) ? 1 : settle - 1;
      },
      3, [&] { return busy(b); }, std::chrono::minutes(10));
  if (!error.empty()) throw Error(error);
  nlohmann::json sidecar = to_json(a.state);
  sidecar["backend"] = "CPU reference (Eigen), the ViT's forward pass";
  sidecar.update(drawn_entries(a.state, a.vit));  // A's, at the top level
  write_compare_pair(out, size, rgb_a, rgb_b, std::move(sidecar), compare_entry(b.state, b.vit, half), view, force);
  return 0;
}

// render --model PATH: a real ViT's view in the window's layout, or (--view overlay, --sweep)
// its map over the model's input picture (app/commands/video_command.cpp). The document's flags
// (image, display, --resize, --mass, --bilinear) go through its field table; the ViT's layer,
// head and query are checked once the model is loaded (their ranges are its).
int render_model(const std::vector<std::string>& args, RenderArgs r) {
  AppState state;
  ViewFlags v;
  ChoiceFlags choices;
  std::string compare, match_text;
  std::vector<CommandFlag> own = render_own_flags(r);
  for (CommandFlag& f : choice_command_flags(choices)) own.push_back(std::move(f));
  for (CommandFlag& f : view_flags(v)) own.push_back(std::move(f));
  for (CommandFlag& f : compare_flags(compare, match_text)) own.push_back(std::move(f));
  // TRANSLATORS: the end of "unknown option 'X' for render --model (see attnlab --help)".
  parse_document_flags(args, kFlagsRenderModel, state, std::move(own), {N_(" for render --model")});
  std::string view = v.view;
  const std::array<int, 2> size = v.size;
  SweepRequest sweep = v.sweep;
  const bool view_given = v.view_given, fps_given = v.fps_given, size_given = v.size_given;
  const std::filesystem::path& out = r.out;
  const bool force = r.force;
  if (state.image_path.empty()) throw Error(_("--image IMG is required"));
  state.image_path = std::filesystem::absolute(state.image_path);
  state.model_path = std::filesystem::absolute(model_argument_path(r.model));  // hf:ORG/NAME[@REV] too
  if (!match_text.empty() && match_text != "depth" && match_text != "index")
    // TRANSLATORS: depth and index are the flag's values (typed as they are).
    throw Error(text_format(_("--match-layers must be depth or index, got '%s'"), match_text.c_str()));
  if (!match_text.empty() && compare.empty()) throw Error(_("--match-layers goes with --compare"));
  if (state.compare_one_scale && compare.empty()) throw Error(_("--one-scale goes with --compare"));
  if (!compare.empty()) {
    if (!sweep.kind.empty() || view == "overlay") throw Error(_("--compare goes with the window's views, not --sweep or --view overlay"));
    state.vit.prefix_token = 0;
    state.vit.query_pinned = true;
    return render_vit_compare(state, compare == kCompareHandMade ? std::filesystem::path(kCompareHandMade) : std::filesystem::absolute(model_argument_path(compare)),
                              match_text == "index" ? LayerMatch::Index : LayerMatch::Depth, view, size, out, force, choices, {}, "");
  }
  // The overlaid still and the sweeps: drawn without a window (app/commands/video_command.cpp).
  if (!sweep.kind.empty() || view == "overlay") {
    if (size_given) throw Error(_("--size goes with the window's views: an overlay is the model's input picture at its own size"));
    OverlayChoices overlay{choices, view == "overlay" || !view_given ? "map" : view};
    state.source = ShownSource::Vit;
    if (sweep.kind.empty()) {
      if (fps_given || !sweep.values.empty()) throw Error(_("--fps and --sweep-values go with --sweep"));
      return run_overlay_still(state, overlay, out, force);
    }
    return run_overlay_sweep(state, overlay, sweep, out, force);
  }
  if (fps_given || !sweep.values.empty()) throw Error(_("--fps and --sweep-values go with --sweep"));
  state.vit.prefix_token = 0;
  state.vit.query_pinned = true;
  return render_vit(state, view, size, out, force, choices, "", "");
}

// render --from FILE.json: the document, view and size a sidecar written by an earlier render
// (or an export: the main map at the window's size) holds; `sha` the model file's SHA-256 it
// names (empty for none). Throws Error for a file that is not such a sidecar.
void read_render_sidecar(const std::string& from, AppState& state, std::string& view, std::array<int, 2>& size, std::string& sha) {
  std::ifstream f(from);
  if (!f) throw Error(text_format(_("cannot read '%s'"), from.c_str()));
  const nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error(text_format(_("'%s' is not a JSON settings file"), from.c_str()));
  apply_json(j, state);
  // The render entry and the model's hash as render writes them; any other type is refused
  // in one line (value() would throw nlohmann's type_error; fuzz_render_from found it). An
  // export's sidecar (F12: its "export" and "window" entries) is its main map at the window's size.
  nlohmann::json render;
  if (j.contains("render")) {
    render = j["render"];
    // TRANSLATORS: "render" is the settings file's key (kept as it is).
    if (!render.is_object()) throw Error(text_format(_("'%s': its \"render\" entry is not an object"), from.c_str()));
  } else if (j.contains("export") && j.contains("window") && j["window"].is_object()) {
    render = j["window"];
    render["view"] = "map";
  } else {
    // TRANSLATORS: "render" is the settings file's key (kept as it is).
    throw Error(text_format(_("'%s' was not written by attnlab render or an export (no \"render\" entry)"), from.c_str()));
  }
  if (const auto v = render.find("view"); v != render.end()) {
    if (!v->is_string()) throw Error(text_format(_("'%s': its render view is not a name"), from.c_str()));
    view = v->get<std::string>();
  }
  for (const int side : {0, 1})
    if (const auto v = render.find(side == 0 ? "width" : "height"); v != render.end()) {
      if (!v->is_number_integer() || v->get<std::int64_t>() < 0 || v->get<std::int64_t>() > 1000000)
        throw Error(side == 0 ? text_format(_("'%s': its render width is not a number of pixels"), from.c_str())
                              : text_format(_("'%s': its render height is not a number of pixels"), from.c_str()));
      size[static_cast<std::size_t>(side)] = static_cast<int>(v->get<std::int64_t>());
    }
  if (const auto s = j.find("vit_model_sha256"); s != j.end() && !s->is_string())
    // TRANSLATORS: vit_model_sha256 is the settings file's key (kept as it is).
    throw Error(text_format(_("'%s': its vit_model_sha256 is not a SHA-256"), from.c_str()));
  sha = j.value("vit_model_sha256", std::string());
  state.hand_made.query_pinned = true;
  state.vit.query_pinned = true;
}

// The second model of a comparison a sidecar names (its "compare" entry), or nullopt for none.
struct ComparedModel {
  std::filesystem::path model;
  std::string sha;
  LayerMatch match = LayerMatch::Depth;
  // B's choice as drawn (its "vit" or "hand_made" entry), when has_choice. Not a std::optional:
  // GCC 12 at -O3 (the Windows build) warns that one may be used uninitialized (a false alarm).
  bool has_choice = false;
  SourceChoice choice;
};
std::optional<ComparedModel> read_compare_entry(const std::string& from) {
  std::ifstream f(from);
  const nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("compare")) return std::nullopt;
  const nlohmann::json& c = j["compare"];
  if (!c.is_object() || !c.contains("model") || !c["model"].is_string())
    // TRANSLATORS: "compare" is the settings file's key (kept as it is).
    throw Error(text_format(_("'%s': its \"compare\" entry names no model"), from.c_str()));
  if (c["model"].get<std::string>().empty()) return std::nullopt;  // the document's Compare, off
  ComparedModel m{c["model"].get<std::string>(), {}, LayerMatch::Depth, false, SourceChoice{}};
  if (c.contains("vit_model_sha256")) {
    if (!c["vit_model_sha256"].is_string()) throw Error(text_format(_("'%s': its compared model's SHA-256 is not text"), from.c_str()));
    m.sha = c["vit_model_sha256"].get<std::string>();
  }
  const auto match = c.find("match_layers");
  if (match != c.end() && (!match->is_string() || (*match != "depth" && *match != "index")))
    // TRANSLATORS: depth and index are the values the settings file may hold (kept as they are).
    throw Error(text_format(_("'%s': its compared layers' match must be depth or index"), from.c_str()));
  if (match != c.end() && *match == "index") m.match = LayerMatch::Index;
  // B's choice, read as the document reads its own (apply_json: one line for a bad value).
  const char* key = m.model == kCompareHandMade ? "hand_made" : "vit";
  if (const auto choice = c.find(key); choice != c.end()) {
    Document d;
    try {
      apply_json(nlohmann::json{{key, *choice}}, d);
    } catch (const Error& e) {
      throw Error(text_format(_("'%s': its compared source's choice: %s"), from.c_str(), e.what()));
    }
    m.choice = m.model == kCompareHandMade ? d.hand_made : d.vit;
    m.has_choice = true;
  }
  return m;
}

// A view of the hand-made heads (render_view_names()) drawn headless, with its sidecar.
int render_hand_made(AppState& state, const std::string& view, std::array<int, 2> size, const std::filesystem::path& out, bool force,
                     const std::vector<std::array<int, 2>>& painted) {
  const auto names = render_view_names();
  if (std::find(names.begin(), names.end(), view) == names.end()) {
    std::string all;
    for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
    // TRANSLATORS: the view asked for, then the list of view names (identifiers, kept as they are).
    throw Error(text_format(_("unknown view '%s' (expected %s)"), view.c_str(), all.c_str()));
  }
  check_outputs(out, force);

  HeadlessUi ui(size[0], size[1], state.ui_scale);
  Scheduler scheduler;  // the renderer's one scheduler, handed to the sessions (as the App's)
  HandMadeSession hand_made(scheduler);
  prepare(hand_made, state, painted);
  HandMadeMapSource hand_made_map(state, hand_made);
  auto views = make_views();
  const std::vector<View*> teaching = chapter_views(views);
  ViewSource source{state, hand_made_map, kHandMadeOffers, &hand_made, nullptr, nullptr, {}};
  ViewGeometry geometry;
  const auto rgb = render_hand_made_frames(ui, scheduler, hand_made, state, [&] {
    if (view == "map") draw_source_map(state, hand_made_map, geometry);
    else if (view == "heads") draw_heads_grid(state, hand_made_map);
    else
      for (View* v : teaching)
        if (view == v->name()) {
          ImGui::Text("%s (%s)", v->title(), v->chapter_reference());
          v->draw(source);
        }
  });
  nlohmann::json sidecar = to_json(state);
  sidecar["program"] = {{"name", "attnlab"}, {"version", ATTNLAB_VERSION}};
  sidecar["backend"] = hand_made.name();
  // False only when a view's work outlasted the renderer's patience (the picture says "computing").
  sidecar["render"] = {{"view", view}, {"width", size[0]}, {"height", size[1]}, {"finished", !state.commands.redraw_pending()}};
  if (geometry.valid) sidecar["image_view"] = {{"x", geometry.x}, {"y", geometry.y}, {"scale", geometry.scale}};
  sidecar["grid"] = {{"cols", hand_made.grid().cols}, {"rows", hand_made.grid().rows}, {"N", hand_made.grid().N()}, {"K", hand_made.grid().K}};
  write_outputs(out, size[0], size[1], rgb, sidecar, force);
  say_written(out);
  return 0;
}

}  // namespace

std::vector<std::string> render_vit_view_names() { return vit_view_names(); }

std::vector<std::string> render_view_names() {
  std::vector<std::string> names = {"map", "heads"};
  const auto views = make_views();
  for (const View* v : chapter_views(views)) names.emplace_back(v->name());
  return names;
}

namespace {

// render --from FROM: the document, view and size of the sidecar FROM drawn into `out`.
int render_from(const std::string& from, const std::filesystem::path& out, bool force) {
  std::string view = "map", sha;
  std::array<int, 2> size = {1200, 900};
  AppState state;
  read_render_sidecar(from, state, view, size, sha);
  if (state.source == ShownSource::Vit) {
    if (state.model_path.empty()) throw Error(text_format(_("'%s' names no model"), from.c_str()));
    if (const auto compared = read_compare_entry(from))
      return render_vit_compare(state, compared->model, compared->match, view, size, out, force, ChoiceFlags{},
                                {sha, compared->sha}, from, compared->has_choice ? &compared->choice : nullptr);
    return render_vit(state, view, size, out, force, ChoiceFlags{}, sha, from);
  }
  return render_hand_made(state, view, size, out, force, {});
}

}  // namespace

int run_render(const std::vector<std::string>& args) {
  RenderArgs r;
  read_first_flags(args, render_own_flags(r));  // --out, --force, --from, --model: which table reads the rest
  const std::filesystem::path& out = r.out;
  const bool force = r.force;
  if (!r.model.empty()) {  // a real ViT's views
    if (!r.from.empty()) throw Error(_("--from FILE.json takes only --out and --force"));
    return render_model(args, r);
  }
  std::string view = "map";
  std::array<int, 2> size = {1200, 900};
  AppState state;
  std::vector<std::array<int, 2>> painted;
  if (!r.from.empty()) {  // everything from a sidecar written by an earlier render
    FlagRules only;
    only.refused = [](const std::string& a) { return text_format(_("--from FILE.json takes only --out and --force, got '%s'"), a.c_str()); };
    parse_flags(args, render_own_flags(r), only);
    return render_from(r.from, out, force);
  } else {
    ViewFlags v;
    std::vector<CommandFlag> own = render_own_flags(r);
    for (CommandFlag& f : view_flags(v)) own.push_back(std::move(f));
    const Document d = parse_query_options(args, kFlagsRender, std::move(own), QueryDefaults::kLikeTheApp);
    state = state_from(d);
    painted = d.painted_cells;
    view = v.view;
    size = v.size;
    const SweepRequest& sweep = v.sweep;
    // The hand-made heads' row over the whole photo, drawn without a window (video_command.hpp).
    if (view == "overlay" || !sweep.kind.empty()) {
      // TRANSLATORS: "--view overlay" is typed as it is; %s is a view's name (an identifier).
      if (view != "overlay" && view != "map") throw Error(text_format(_("--sweep draws --view overlay, not '%s'"), view.c_str()));
      if (v.size_given) throw Error(_("--size goes with the window's views: an overlay is the photo at its own size"));
      if (sweep.kind.empty() && (v.fps_given || !sweep.values.empty())) throw Error(_("--fps and --sweep-values go with --sweep"));
      return run_hand_made_overlay(state, sweep, out, force);  // the image's path absolute
    }
    if (v.fps_given || !sweep.values.empty()) throw Error(_("--fps and --sweep-values go with --sweep"));
  }
  return render_hand_made(state, view, size, out, force, painted);
}

void render_from_quietly(const std::filesystem::path& from, const std::filesystem::path& out) {
  struct Quiet {
    Quiet() { say_what_was_written = false; }
    ~Quiet() { say_what_was_written = true; }
  } quiet;
  render_from(from.string(), out, /*force=*/true);
}

int run_figure(const std::vector<std::string>& in) {
  std::vector<std::string> args = in;
  RenderArgs r;
  std::string queries_text, queries_flag, panel_text, panel_flag;
  std::vector<CommandFlag> own = {
      {"--out", true, [&r](Text t, Text) { r.out = t; }, "", true, true},
      {"--force", false, [&r](Text, Text) { r.force = true; }, "", true, true},
      {"--queries", true, [&](Text t, Text f) { queries_text = t, queries_flag = f; }, "", true, true},
      {"--panel", true, [&](Text t, Text f) { panel_text = t, panel_flag = f; }},
  };
  read_first_flags(args, own);  // --out's and --queries' errors first
  const std::filesystem::path& out = r.out;
  const bool force = r.force;
  // TRANSLATORS: C1,R1 are a patch's column and row (placeholders).
  if (queries_text.empty()) throw Error(_("--queries \"C1,R1;C2,R2;...\" is required"));
  const auto queries = parse_cells(queries_text, queries_flag);
  if (queries.empty() || queries.size() > 8) throw Error(_("--queries takes 1 to 8 patches"));
  // The document's query is the first of them (given after the others: it wins over a --query).
  args.insert(args.end(), {flag_of_field("hand_made.cell"), std::to_string(queries[0][0]) + "," + std::to_string(queries[0][1])});
  const Document d = parse_query_options(args, kFlagsRender, std::move(own));
  AppState state = state_from(d);
  const int panel = panel_text.empty() ? 320 : parse_int(panel_text, panel_flag, 64, 2048);
  check_outputs(out, force);

  const int n = static_cast<int>(queries.size()) + 2, gap = 12, label = 28;
  const int width = n * panel + (n + 1) * gap, height = panel + label + 2 * gap;
  HeadlessUi ui(width, height, 1.0f);
  Scheduler scheduler;  // no job of its own: the session needs one to hand on
  HandMadeSession hand_made(scheduler);
  prepare(hand_made, state, d.painted_cells);
  const auto& g = hand_made.grid();
  for (const auto& q : queries) token_at(g, q[0], q[1]);

  // The query/key features image: each patch painted with the first three components of its
  // query vector — for the colour head that is the unit mean colour of fig. 26.12.
  const HeadQKV& qkv = hand_made.qkv(state.hand_made.head.head);
  std::vector<std::uint8_t> feat(static_cast<size_t>(g.N()) * 4, 255);
  const int shown = std::min(3, qkv.m());
  for (int c = 0; c < shown; ++c) {
    const float lo = state.hand_made.head.head == 0 ? 0.0f : qkv.Q.col(c).minCoeff(), hi = state.hand_made.head.head == 0 ? 1.0f : qkv.Q.col(c).maxCoeff();
    for (int i = 0; i < g.N(); ++i)
      feat[static_cast<size_t>(i) * 4 + c] =
          static_cast<std::uint8_t>(std::lround(255.0f * std::clamp((qkv.Q(i, c) - lo) / std::max(hi - lo, 1e-12f), 0.0f, 1.0f)));
  }
  for (int c = shown; c < 3; ++c)
    for (int i = 0; i < g.N(); ++i) feat[static_cast<size_t>(i) * 4 + c] = 0;
  GuiTexture features;
  features.set(g.cols, g.rows, 4, feat, false);
  const HeatmapStyle style{state.colormap, state.normalization};
  std::vector<ImTextureID> maps;
  for (const auto& q : queries) maps.push_back(hand_made.pinned_map(g.index(q[0], q[1]), state.hand_made.head.head, style));

  const auto rgb = ui.render([&] {
    begin_full_window("##figure");
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float gw = static_cast<float>(g.cols * g.K), gh = static_cast<float>(g.rows * g.K);
    const float scale = static_cast<float>(panel) / std::max(gw, gh);
    auto panel_at = [&](int k) { return ImVec2(static_cast<float>(gap + k * (panel + gap)), static_cast<float>(gap)); };
    auto caption = [&](int k, const std::string& text) {
      const ImVec2 p = panel_at(k);
      const float tw = ImGui::CalcTextSize(text.c_str()).x;
      dl->AddText(ImVec2(p.x + (static_cast<float>(panel) - tw) * 0.5f, p.y + static_cast<float>(panel) + 6), IM_COL32(255, 255, 255, 255), text.c_str());
    };
    auto photo = [&](int k) {
      const ImVec2 p = panel_at(k);
      dl->AddImage(hand_made.photo(), p,
                   ImVec2(p.x + static_cast<float>(hand_made.image().width) * scale, p.y + static_cast<float>(hand_made.image().height) * scale));
    };
    photo(0);
    caption(0, "input");  // i18n: English (drawn into the figure's PNG, an output file)
    {
      const ImVec2 p = panel_at(1);
      dl->AddImage(features.im(), p, ImVec2(p.x + gw * scale, p.y + gh * scale));
      caption(1, state.hand_made.head.head == 0 ? "query/key features (unit mean colour)"  // i18n: English (the figure's PNG)
                                                : "query features (first 3 of q)");         // i18n: English (the figure's PNG)
    }
    for (size_t k = 0; k < queries.size(); ++k) {
      const int slot = static_cast<int>(k) + 2;
      const ImVec2 p = panel_at(slot);
      draw_photo(dl, hand_made, p, scale);
      dl->AddImage(maps[k], p, ImVec2(p.x + gw * scale, p.y + gh * scale), ImVec2(0, 0), ImVec2(1, 1),
                   IM_COL32(255, 255, 255, static_cast<int>(state.opacity * 255)));
      const float x0 = p.x + static_cast<float>(queries[k][0] * g.K) * scale, y0 = p.y + static_cast<float>(queries[k][1] * g.K) * scale;
      const float side = static_cast<float>(g.K) * scale;
      dl->AddRect(ImVec2(x0 - 1, y0 - 1), ImVec2(x0 + side + 1, y0 + side + 1), IM_COL32(0, 0, 0, 255), 0, 0, 4.0f);
      dl->AddRect(ImVec2(x0, y0), ImVec2(x0 + side, y0 + side), IM_COL32(0, 255, 255, 255), 0, 0, 2.0f);
      caption(slot, "query (" + std::to_string(queries[k][0]) + "," + std::to_string(queries[k][1]) + ")");  // i18n: English (the figure's PNG)
    }
    ImGui::End();
  });
  nlohmann::json sidecar = to_json(state);
  sidecar["program"] = {{"name", "attnlab"}, {"version", ATTNLAB_VERSION}};
  sidecar["backend"] = hand_made.name();
  sidecar["figure"] = {{"queries", queries}, {"panel", panel}, {"gap", gap}, {"width", width}, {"height", height}};
  sidecar["grid"] = {{"cols", g.cols}, {"rows", g.rows}, {"N", g.N()}, {"K", g.K}};
  write_outputs(out, width, height, rgb, sidecar, force);
  say_written(out);
  return 0;
}

}  // namespace attnlab::app
