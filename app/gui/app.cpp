// The app's main loop, top to bottom: poll → apply pending changes → new frame → panels →
// render → (export) → swap. One AppState holds every setting; each panel is its own file.
#include "app/commands/options.hpp"
#include "app/gui/app_state.hpp"
#include "app/gui/hand_made_session.hpp"
#include "app/gui/export.hpp"
#include "app/gui/gui.hpp"
#include "app/gui/headless.hpp"
#include "app/gui/hover_bench.hpp"
#include "app/gui/teaching_view.hpp"
#include "app/gui/views.hpp"
#include "app/gui/map_source.hpp"
#include "app/gui/vit_session.hpp"
#include "app/gui/vit_views.hpp"
#include "app/gui/widget_log.hpp"
#include "core/hand_made_source.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/gpu/debug.hpp"
#include "core/gpu/gl.hpp"

#include <epoxy/gl.h>
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_internal.h>  // BringWindowToDisplayFront: the tour box stays in front
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace attnlab::app {
namespace {

std::string glfw_error_text;
void glfw_error(int, const char* description) { glfw_error_text = description ? description : "?"; }

// Files dropped on the window go here (GLFW calls back without user data of our own).
AppState* drop_target = nullptr;
// A checkpoint (a .safetensors file, or a folder) opens as the ViT; anything else as an image.
bool is_model_path(const std::filesystem::path& p) {
  std::error_code ec;
  return p.extension() == ".safetensors" || std::filesystem::is_directory(p, ec);
}
void on_drop(GLFWwindow*, int count, const char** paths) {
  if (!drop_target || count <= 0) return;
  const std::filesystem::path p(paths[0]);
  if (is_model_path(p)) drop_target->commands.open_model(p);
  else drop_target->commands.open_image(p);
}

// Key presses, queued by a GLFW callback: ImGui 1.86 sees only whether a key is down at the
// start of a frame, so a press and release arriving between two frames (xdotool, a quick tap)
// would be lost.
struct KeyPress {
  int key, mods;
};
std::vector<KeyPress> key_queue;
void on_key(GLFWwindow*, int key, int, int action, int mods) {
  if (action == GLFW_PRESS || action == GLFW_REPEAT) key_queue.push_back({key, mods});
}

std::vector<std::filesystem::path> find_gallery() {
  std::vector<std::filesystem::path> out;
  const auto dir = assets_dir();
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const auto ext = e.path().extension().string();
    if (ext == ".jpg" || ext == ".png" || ext == ".jpeg" || ext == ".bmp" || ext == ".tga") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    const bool sa = a.filename() == "safari.jpg", sb = b.filename() == "safari.jpg";
    return sa != sb ? sa : a.filename() < b.filename();
  });
  return out;
}

// Remembered settings (everything but the image and the query).
void load_remembered(AppState& state) {
  const auto path = config_dir() / "settings.json";
  std::ifstream in(path);
  if (!in) return;
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    j.erase("image");
    j.erase("query");
    j.erase("pinned");
    if (j.contains("vit") && j["vit"].is_object()) {  // the model is reopened only by asking
      j["vit"].erase("model");
      j["vit"].erase("source");
    }
    apply_json(j, state);
  } catch (const std::exception& e) {
    state.show_error("ignored the remembered settings in " + path.string() + ": " + e.what());
  }
}

void save_remembered(const AppState& state) {
  std::error_code ec;
  std::filesystem::create_directories(config_dir(), ec);
  try {
    write_file_safely(config_dir() / "settings.json", to_json(state).dump(2) + "\n", /*overwrite=*/true);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlab: could not remember the settings: %s\n", e.what());
  }
}

class App {
 public:
  App(GLFWwindow* window, AppState state, std::string context_note, std::optional<HoverReplay> replay = std::nullopt)
      : window_(window),
        state_(std::move(state)),
        gallery_(find_gallery()),
        teaching_(make_teaching_views()),
        replay_(std::move(replay)) {
    drop_target = &state_;
    glfwSetDropCallback(window_, on_drop);
    state_.report.backend_name = backend_.name();
    backend_.scheduler().set_wake([] { glfwPostEmptyEvent(); });  // a finished job ends the event wait
    if (!backend_.fallback_reason().empty())
      state_.show_error("GPU path unavailable (" + (context_note.empty() ? backend_.fallback_reason() : context_note) +
                        "): using the CPU reference, slower but correct");
    base_style_ = ImGui::GetStyle();
  }
  ~App() { drop_target = nullptr; }

  int run() {
    bool redraw = true;
    while (!glfwWindowShouldClose(window_)) {
      if (redraw || replay_) glfwPollEvents();
      else glfwWaitEventsTimeout(0.5);
      const auto t0 = std::chrono::steady_clock::now();
      const gl::TransferCounts moved_before = gl::transfer_counts();
      const std::string before = snapshot();

      // The finished background jobs' results and the rows the GPU finished since the last
      // frame, on this thread, before anything is drawn.
      backend_.begin_frame();
      take_finished_work();
      apply_ui_scale();
      ImGui_ImplOpenGL3_NewFrame();
      ImGui_ImplGlfw_NewFrame();
      ImGui::NewFrame();
      handle_keys();
      // The settings the last frame's controls and this frame's keys changed, drawn (and exported
      // by an F12 among the keys) in this frame.
      apply_settings();
      widget_log().clear();
      state_.report.view_errors.clear();
      draw_windows();
      ImGui::Render();
      const auto t_drawn = std::chrono::steady_clock::now();

      int w = 0, h = 0;
      glfwGetFramebufferSize(window_, &w, &h);
      glViewport(0, 0, w, h);
      const auto clear = panel_clear_colour();
      glClearColor(clear[0], clear[1], clear[2], 1.0f);
      glClear(GL_COLOR_BUFFER_BIT);
      ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
      do_exports(w, h);
      const auto t_rendered = std::chrono::steady_clock::now();
      glfwSwapBuffers(window_);

      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      state_.report.last_frame_ms = static_cast<float>(ms);
      state_.report.row_pass_ms = static_cast<float>(backend_.row_pass_ms());
      const gl::TransferCounts moved = gl::transfer_counts() - moved_before;
      state_.report.frame_readbacks = moved.readbacks;
      state_.report.frame_readbacks_waited = moved.waited();
      state_.report.frame_readback_bytes = moved.readback_bytes;
      state_.report.frame_uploads = moved.uploads;
      state_.report.frame_upload_bytes = moved.upload_bytes;
      if (replay_) step_replay(moved, {t0, t_drawn, t_rendered, {}});
      const bool asked = state_.commands.take_redraw();  // taken every frame, whatever else wants one
      redraw = asked || snapshot() != before || ImGui::IsAnyMouseDown() || !state_.commands.empty() || !key_queue.empty() ||
               backend_.rows_pending() || backend_.pinned_pending();
      if (redraw || backend_.generation() != last_generation_) frame_ms_.push_back(ms);
      last_generation_ = backend_.generation();
    }
    if (replay_) return replay_code_;
    save_remembered(state_);
    report_frames();
    return 0;
  }

  // Loads the first image (argument or safari). Throws Error if it cannot be loaded. If the
  // remembered settings do not fit it (e.g. a patch size larger than the image), the defaults
  // are used and a banner says why.
  void open_initial(const std::filesystem::path& path) {
    const Image img = load_image(path);
    try {
      backend_.set_image(img, state_.attention);
    } catch (const Error& e) {
      state_.attention = Settings{};
      backend_.set_image(img, state_.attention);
      state_.show_error(std::string(e.what()) + "; using the default settings");
    }
    state_.image_path = path;
    clamp_query();
    sync_query();
  }

 private:
  // What the user can change, to know whether the next frame must come at once.
  std::string snapshot() const {
    return to_json(state_).dump() + state_.ui.banner;
  }

  void open_image(const std::filesystem::path& path) {
    try {
      const Image img = load_image(path);
      backend_.set_image(img, state_.attention);
      // Pins mark spots of a photo: on another photo they would mark whatever lies there.
      if (!state_.hand_made.pins.empty())
        state_.ui.pinned_note = "The " + std::to_string(state_.hand_made.pins.size()) + " pinned queries of " +
                             state_.image_path.filename().string() + " were cleared: pins belong to the photo they were made on.";
      state_.hand_made.pins.clear();
      pin_anchors_.clear();
      query_anchor_.clear();
      state_.image_path = path;
      clamp_query();
      sync_query();
      vit_.set_backend(state_.vit_backend);
      vit_.run_on(backend_.image(), state_.vit_resize);  // the ViT's maps follow, on the scheduler
      vit_resize_ = state_.vit_resize;
    } catch (const Error& e) {
      state_.show_error(e.what());  // the previous image and settings stay
    }
  }

  void clamp_query() {
    if (!backend_.has_image()) return;
    const auto& g = backend_.grid();
    Cell& q = state_.hand_made.cell;
    q.col = std::clamp(q.col, 0, g.cols - 1);
    q.row = std::clamp(q.row, 0, g.rows - 1);
  }

  void sync_query() {
    if (backend_.has_image()) backend_.set_query(backend_.grid().index(state_.hand_made.cell.col, state_.hand_made.cell.row));
  }

  void take_finished_work() {
    if (const auto open = state_.commands.take(Commands::Kind::OpenImage)) open_image(open->path);
    if (const auto open = state_.commands.take(Commands::Kind::OpenModel)) {
      const std::filesystem::path& path = open->path;
      if (backend_.has_image()) {
        vit_.set_backend(state_.vit_backend);
        vit_.open(path, backend_.image(), state_.vit_resize);
        vit_resize_ = state_.vit_resize;
        opening_model_ = path;
      }
    }
    if (vit_.run() && (state_.vit_resize != vit_resize_ || state_.vit_backend != vit_.backend()) && !vit_.busy()) {
      vit_.set_backend(state_.vit_backend);  // Diagnostics switched the runner: run again on it
      vit_.run_on(backend_.image(), state_.vit_resize);
      vit_resize_ = state_.vit_resize;
    }
    // A finished ViT job was taken by the scheduler's drain at the start of this frame.
    const unsigned before = std::exchange(seen_vit_generation_, vit_.generation());
    if (const auto error = vit_.poll()) {
      state_.show_error((opening_model_ ? "cannot open the model: " : "the ViT could not run on this image: ") + *error);
      if (!vit_.run()) state_.source = ShownSource::HandMade;
      opening_model_.reset();
    } else if (vit_.generation() != before) {
      if (opening_model_) {  // a new model: show it, CLS query, last layer, remember it
        state_.model_path = *opening_model_;
        state_.source = ShownSource::Vit;
        state_.vit.layer = -1;
        state_.vit.prefix_token = 0;
        const std::string p = std::filesystem::absolute(*opening_model_).lexically_normal().string();
        std::erase(state_.recent_models, p);
        state_.recent_models.insert(state_.recent_models.begin(), p);
        if (state_.recent_models.size() > 8) state_.recent_models.resize(8);
        opening_model_.reset();
      }
      if (const VitRun* src = vit_.run()) {
        state_.vit.cell.col = std::clamp(state_.vit.cell.col, 0, src->grid().cols - 1);
        state_.vit.cell.row = std::clamp(state_.vit.cell.row, 0, src->grid().rows - 1);
      }
    }
    if (vit_.busy()) state_.commands.redraw();
    if (!state_.ui.banner.empty() && std::chrono::steady_clock::now() - state_.ui.banner_since > std::chrono::seconds(12))
      state_.ui.banner.clear();
  }

  // Hands changed attention settings to the backend; settings it refuses (e.g. a K larger
  // than the image) leave a banner and the previous, working ones.
  void apply_settings() {
    if (backend_.has_image() && !(state_.attention == backend_.settings())) {
      Settings wanted = state_.attention;
      try {
        if (wanted.mask.kind == MaskKind::Painted) {  // painted cells may fall outside a new grid
          const PatchGrid g = make_grid(backend_.image().width, backend_.image().height, wanted.patch, wanted.edge);
          std::erase_if(wanted.mask.painted, [&](int j) { return j >= g.N(); });
        }
        const PatchGrid before = backend_.grid();
        backend_.set_settings(wanted);
        state_.attention = wanted;
        if (backend_.grid().K != before.K) keep_cells_in_place(before);
      } catch (const Error& e) {
        state_.show_error(e.what());
        state_.attention = backend_.settings();  // keep the previous, working settings
      }
    }
    clamp_query();
    sync_query();
  }

  // After a change of K: the query and the pinned patches become the patches that hold the
  // point of the photo they stand for, so they stay over the same spot (the giraffe's neck stays
  // the query as K goes from 16 to 8). That point (pixels) is the cell's centre when the cell
  // was chosen, kept while the cell still holds it, so K 16 → 32 → 64 → 32 → 16 comes back to
  // the same patch (a centre taken at every step would drift by half a patch each time).
  void keep_cells_in_place(const PatchGrid& before) {
    const PatchGrid& g = backend_.grid();
    std::vector<std::pair<int, int>> kept;
    auto move = [&](Cell c, const std::vector<std::pair<int, int>>& anchors) {
      std::pair<int, int> at{c.col * before.K + before.K / 2, c.row * before.K + before.K / 2};
      for (const auto& a : anchors)
        if (a.first / before.K == c.col && a.second / before.K == c.row) at = a;
      kept.push_back(at);
      return Cell{std::clamp(at.first / g.K, 0, g.cols - 1), std::clamp(at.second / g.K, 0, g.rows - 1)};
    };
    state_.hand_made.cell = move(state_.hand_made.cell, query_anchor_);
    query_anchor_.assign(kept.begin(), kept.end());
    kept.clear();
    std::vector<Cell> pinned;
    for (const Cell& c : state_.hand_made.pins)
      if (const Cell m = move(c, pin_anchors_); std::find(pinned.begin(), pinned.end(), m) == pinned.end()) pinned.push_back(m);
    state_.hand_made.pins = std::move(pinned);
    pin_anchors_ = std::move(kept);
  }

  void apply_ui_scale() {
    const float scale = state_.presentation ? std::max(state_.ui_scale, 1.75f) : state_.ui_scale;
    if (scale == applied_scale_ && state_.presentation == applied_presentation_) return;
    ImGuiStyle& style = ImGui::GetStyle();
    style = base_style_;
    if (state_.presentation) {  // high contrast for projectors
      ImGui::StyleColorsDark(&style);
      style.Colors[ImGuiCol_WindowBg] = ImVec4(0, 0, 0, 1);
      style.Colors[ImGuiCol_Text] = ImVec4(1, 1, 1, 1);
    }
    style.ScaleAllSizes(scale);
    // The font rasterized again at the new size (crisp at any scale); a scaled bitmap only
    // when the font file is missing.
    if (scale != applied_scale_) {
      font_rebuilt_ = load_ui_font(16.0f * scale);
      if (font_rebuilt_) {
        ImGui_ImplOpenGL3_DestroyFontsTexture();
        ImGui_ImplOpenGL3_CreateFontsTexture();
      }
    }
    ImGui::GetIO().FontGlobalScale = font_rebuilt_ ? 1.0f : scale * font_scale_;
    applied_scale_ = scale;
    applied_presentation_ = state_.presentation;
  }

 public:
  void set_font_scale(float s) { font_scale_ = s; }
  void open_model(const std::filesystem::path& path) { state_.commands.open_model(path); }
  void show_error(const std::string& message) { state_.show_error(message); }

 private:
  void handle_keys() {
    const ImGuiIO& io = ImGui::GetIO();
    std::vector<KeyPress> keys;
    keys.swap(key_queue);
    for (const KeyPress& k : keys) {
      const bool ctrl = (k.mods & GLFW_MOD_CONTROL) != 0;
      if (ctrl && k.key == GLFW_KEY_Q) glfwSetWindowShouldClose(window_, GLFW_TRUE);
      else if (k.key == GLFW_KEY_F12) state_.commands.export_png();
      else if (k.key == GLFW_KEY_F9) state_.commands.export_csv();
      else if (k.key == GLFW_KEY_F5) state_.presentation = !state_.presentation;
      else if (ctrl && (k.key == GLFW_KEY_EQUAL || k.key == GLFW_KEY_KP_ADD)) state_.ui_scale = std::min(state_.ui_scale + 0.25f, 3.0f);
      else if (ctrl && (k.key == GLFW_KEY_MINUS || k.key == GLFW_KEY_KP_SUBTRACT)) state_.ui_scale = std::max(state_.ui_scale - 0.25f, 0.75f);
      else if (!io.WantTextInput && k.key == GLFW_KEY_V)  // the source tabs
        state_.source = state_.source == ShownSource::Vit ? ShownSource::HandMade : ShownSource::Vit;
      else if (!io.WantTextInput && state_.source == ShownSource::Vit && vit_.run()) vit_keys(k);
      else if (!io.WantTextInput && backend_.has_image()) query_keys(k);
    }
  }

  // Keys that act on the query, the heads, the mask and K (not while a text field has the
  // keyboard): one key each, for a teacher in front of a class.
  void query_keys(const KeyPress& k) {
    // The query, the head and pins: the keys every source shares (source_choice.hpp).
    if (choice_key(k.key, state_.hand_made, ChoiceShape{hand_made_source_grid(backend_.grid()), 1, kHeadCount, false}) !=
        ChoiceKey::Ignored)
      return;
    switch (k.key) {
      case GLFW_KEY_ESCAPE:  // leaves presentation mode, never changes the map (Esc also closes menus)
        state_.presentation = false;
        break;
      case GLFW_KEY_M: {  // the next mask kind, in the order of the controls' list (section 26.10)
        const int next = (static_cast<int>(state_.attention.mask.kind) + 1) % kMaskKindCount;
        state_.attention.mask.kind = static_cast<MaskKind>(next);
        break;
      }
      case GLFW_KEY_LEFT_BRACKET:  // K halved: four times the tokens N (fig. 26.2)
        state_.attention.patch = std::max(state_.attention.patch / 2, kMinPatchSize);
        break;
      case GLFW_KEY_RIGHT_BRACKET:  // K doubled
        state_.attention.patch = std::min(state_.attention.patch * 2, kMaxPatchSize);
        break;
      default:
        break;
    }
  }

  // Keys while the ViT is the source: layers, heads, the query, rollout and norms.
  void vit_keys(const KeyPress& k) {
    const VitRun& src = *vit_.run();
    // The layer, the head, the query and pins: the keys every source shares (source_choice.hpp).
    const ChoiceKey did = choice_key(k.key, state_.vit, ChoiceShape{src.grid(), src.layers(), src.heads(), true});
    if (did == ChoiceKey::Pinned) state_.vit_tab = 1;  // the lower panel shows the pinned queries
    if (did != ChoiceKey::Ignored) return;
    switch (k.key) {
      case GLFW_KEY_R: state_.vit_rollout = !state_.vit_rollout; break;
      case GLFW_KEY_N: state_.vit_norms = !state_.vit_norms; break;
      case GLFW_KEY_D: state_.vit_masks = !state_.vit_masks; break;
      case GLFW_KEY_ESCAPE:  // leaves presentation mode, never changes the map (Esc also closes menus)
        state_.presentation = false;
        break;
      default:
        break;
    }
  }

  // The left column: the hand-made heads' controls or the model panel, as two tabs; the tab
  // chosen is the attention source the other views draw.
  void draw_source_tabs() {
    if (!ImGui::BeginTabBar("source")) return;
    const bool vit_source = state_.source == ShownSource::Vit;
    const bool force = vit_source != shown_vit_tab_;
    const ImGuiTabItemFlags heads_flags = force && !vit_source ? ImGuiTabItemFlags_SetSelected : 0;
    const ImGuiTabItemFlags vit_flags = force && vit_source ? ImGuiTabItemFlags_SetSelected : 0;
    bool vit_tab = vit_source;
    if (ImGui::BeginTabItem("Hand-made heads", nullptr, heads_flags)) {
      vit_tab = false;
      draw_controls_panel(state_, backend_);
      ImGui::EndTabItem();
    }
    record_widget("tab:heads");
    if (ImGui::BeginTabItem("ViT model", nullptr, vit_flags)) {
      vit_tab = true;
      draw_vit_panel(state_, vit_);
      ImGui::EndTabItem();
    }
    record_widget("tab:vit");
    ImGui::EndTabBar();
    if (!force) state_.source = vit_tab ? ShownSource::Vit : ShownSource::HandMade;
    shown_vit_tab_ = state_.source == ShownSource::Vit;
  }

  // The ViT's lower view: the distance plot, the pinned queries or the attention matrix.
  void draw_vit_lower_tabs() {
    if (!ImGui::BeginTabBar("vit_lower")) return;
    static const char* const names[] = {"Attention distance", "Pinned queries", "Attention matrix", "Step by step"};
    // A key or a view asked for another tab (P: the pinned queries); ImGui shows it from the
    // next frame, so the tab drawn now must not take the request back.
    const bool asked = shown_vit_lower_ != state_.vit_tab;
    for (int t = 0; t < 4; ++t) {
      const ImGuiTabItemFlags flags = asked && t == state_.vit_tab ? ImGuiTabItemFlags_SetSelected : 0;
      const bool open = ImGui::BeginTabItem(names[t], nullptr, flags);
      record_widget(std::string("vit_tab:") + names[t]);
      if (!open) continue;
      if (!asked) state_.vit_tab = t;  // chosen by a click
      shown_vit_lower_ = t;
      if (t == 0) draw_vit_distance_view(state_, vit_);
      else if (t == 1) draw_pinned_maps(state_, vit_map_);
      else if (t == 2) draw_vit_matrix_view(state_, vit_);
      else draw_vit_step_view(state_, vit_);
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }

  // The last export's confirmation, for 4 s at the bottom left over everything (presentation
  // mode too), so a teacher sees that F12 or F9 worked.
  void draw_toast(ImVec2 d) {
    if (!toast_showing(state_)) return;
    if (state_.commands.pending(Commands::Kind::ExportPng)) {  // never burnt into the picture being exported
      widget_log().overlays_left_out.push_back("toast");
      return;
    }
    const ImVec2 size = ImGui::CalcTextSize(state_.ui.status.c_str());
    const ImVec2 at(12, d.y - size.y - 12);
    ImDrawList* fg = ImGui::GetForegroundDrawList();
    fg->AddRectFilled(ImVec2(at.x - 6, at.y - 4), ImVec2(at.x + size.x + 6, at.y + size.y + 4), IM_COL32(20, 90, 40, 235), 4.0f);
    fg->AddText(at, IM_COL32(255, 255, 255, 255), state_.ui.status.c_str());
    widget_log().rects["toast"] = {at.x, at.y, size.x, size.y};
    state_.commands.redraw();  // until it has gone
  }

  void draw_windows() {
    const ImVec2 d = ImGui::GetIO().DisplaySize;
    const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoCollapse;
    last_panel_rects_ = std::move(panel_rects_);
    panel_rects_.clear();
    float menu_h = 0;
    if (state_.presentation) {
      ImGui::SetNextWindowPos(ImVec2(0, 0));
      ImGui::SetNextWindowSize(d);
      ImGui::Begin("##presentation", nullptr,
                   ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoScrollWithMouse |
                       ImGuiWindowFlags_NoBringToFrontOnFocus);
      draw_main_map();
      // How to leave, always on screen in this mode (not in a slide exported from it).
      if (state_.commands.pending(Commands::Kind::ExportPng)) {
        widget_log().overlays_left_out.push_back("leave hint");
      } else {
        const char* leave = "F5 or Esc: leave presentation mode";
        const ImVec2 size = ImGui::CalcTextSize(leave);
        ImDrawList* fg = ImGui::GetForegroundDrawList();
        const ImVec2 at(d.x - size.x - 12, d.y - size.y - 10);
        fg->AddRectFilled(ImVec2(at.x - 6, at.y - 4), ImVec2(d.x - 6, d.y - 6), IM_COL32(0, 0, 0, 200), 4.0f);
        fg->AddText(at, IM_COL32(200, 200, 200, 255), leave);
        widget_log().rects["presentation:leave"] = {at.x, at.y, size.x, size.y};
      }
      ImGui::End();
    } else {
      menu_h = draw_menu_bar();
      // A fixed layout, laid out again whenever the window's size, the UI scale or the source
      // changes (the panels can still be moved by hand in between): controls on the left, the
      // map as large as the rest allows, the heads right of it, pinned queries and images
      // below. At a large UI scale the heads go to the lower row, so that the map keeps its size.
      const float cw = std::min(360.0f * state_.ui_scale, d.x * 0.3f);
      const bool wide_map = state_.ui_scale >= 1.5f;
      const float right = wide_map ? 0.0f : std::min(560.0f * state_.ui_scale, d.x * 0.35f);
      const float mid = std::max(d.x - cw - right, 200.0f);
      const float top = menu_h + (d.y - menu_h) * (wide_map ? 0.74f : 0.68f);
      const float lower_w = (d.x - cw) / (wide_map ? 3.0f : 1.0f);
      char key[96];
      std::snprintf(key, sizeof key, "%.0fx%.0f|%.2f|%d", d.x, d.y, state_.ui_scale, state_.source == ShownSource::Vit && vit_.run() ? 1 : 0);
      const ImGuiCond cond = layout_key_ != key ? ImGuiCond_Always : ImGuiCond_FirstUseEver;
      layout_key_ = key;
      auto place = [&](float x, float y, float w, float h) {
        ImGui::SetNextWindowPos(ImVec2(x, y), cond);
        ImGui::SetNextWindowSize(ImVec2(w, h), cond);
      };
      // Where the lower row's panels go: pinned, (heads at a large scale), images.
      auto heads_at = [&] { wide_map ? place(cw + lower_w, top, lower_w, d.y - top) : place(cw + mid, menu_h, right, top - menu_h); };
      auto pinned_at = [&] { place(cw, top, wide_map ? lower_w : mid, d.y - top); };
      auto images_at = [&] { wide_map ? place(cw + 2 * lower_w, top, lower_w, d.y - top) : place(cw + mid, top, right, d.y - top); };
      place(cw, menu_h, mid, top - menu_h);
      // The grid in the title bar, so that the map keeps the height a line of text would take.
      std::string title = "Attention map";
      if (!(state_.source == ShownSource::Vit && vit_.run()) && backend_.has_image()) {
        const PatchGrid& g = backend_.grid();
        title += ": N = " + std::to_string(g.N()) + " tokens (" + std::to_string(g.cols) + " x " + std::to_string(g.rows) +
                 "), K = " + std::to_string(g.K);
      }
      begin_panel(title + "###Attention map", "Attention map", nullptr,
                  fixed | ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
      draw_main_map();
      ImGui::End();
      if (state_.show_controls) {
        place(0, menu_h, cw, d.y - menu_h);
        begin_panel("Controls", "Controls", &state_.show_controls, fixed);
        draw_source_tabs();
        ImGui::End();
      }
      const bool vit = state_.source == ShownSource::Vit && vit_.run();
      MapSource& source = map_source();
      if (state_.show_heads) {
        heads_at();
        begin_panel(source.info().layers > 1 ? "Layers x heads###Heads" : "Heads###Heads", "Heads", &state_.show_heads, fixed);
        draw_heads_grid(state_, source);
        ImGui::End();
      }
      if (state_.show_pinned) {
        pinned_at();
        if (vit) {  // the ViT's pinned queries share the lower row with its own views
          begin_panel("ViT: distance, pinned queries, matrix###vit_lower", "vit_lower", &state_.show_pinned, fixed);
          draw_vit_lower_tabs();
        } else {
          begin_panel("Pinned queries", "Pinned queries", &state_.show_pinned, fixed);
          draw_pinned_maps(state_, source);
        }
        ImGui::End();
      }
      if (state_.show_images) {
        images_at();
        begin_panel("Images", "Images", &state_.show_images, fixed);
        draw_images_panel(state_, gallery_);
        draw_model_gallery();
        ImGui::End();
      }
      if (state_.show_diagnostics) {  // over the lower row, where the images panel is
        images_at();
        ImGui::SetNextWindowBgAlpha(1.0f);  // opaque over the images panel
        begin_panel("Diagnostics", "Diagnostics", &state_.show_diagnostics, fixed, /*background=*/true);
        draw_diagnostics_panel(state_, backend_, vit_);
        ImGui::End();
      }
      draw_teaching_windows(menu_h);
    }
    if (!state_.ui.banner.empty()) {
      // Below the menu bar, which stays usable. A long message (a file's whole path) wraps, so
      // that the banner and its dismiss button stay inside the window.
      const ImGuiStyle& style = ImGui::GetStyle();
      const float dismiss_w = ImGui::CalcTextSize("dismiss").x + style.FramePadding.x * 2 + style.ItemSpacing.x;
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
      if (ImGui::SmallButton("dismiss")) state_.ui.banner.clear();
      record_widget("banner_dismiss");
      ImGui::End();
      ImGui::PopStyleColor();
    }
    draw_toast(d);
  }

  // The attention source the views draw: the loaded ViT's when its tab is chosen, else the
  // hand-made heads.
  MapSource& map_source() {
    if (state_.source == ShownSource::Vit && vit_.run()) return vit_map_;
    return hand_made_map_;
  }

  // The attention map of the source chosen: the ViT's, or the hand-made heads'.
  void draw_main_map() {
    state_.report.vit_drawn = nullptr;  // until the ViT's map is drawn
    vit_map_shown_ = Shown{Cell{-1, -1}, -2, -100};
    if (replay_ && state_.source == ShownSource::Vit && vit_.run()) {
      // What the ViT's map is made of in this frame (main_map() reads it first; a hover later in
      // the frame moves the query for the next one): the hover benchmark's "on screen".
      const VitRun& src = *vit_.run();
      const SourceGrid g = src.grid();
      const int token = choice_query(state_.vit, g);
      const HeadChoice head = choice_head(state_.vit, src.heads());
      vit_map_shown_ = Shown{token < g.prefix ? Cell{-1, -1} : Cell{(token - g.prefix) % g.cols, (token - g.prefix) / g.cols},
                             choice_layer(state_.vit, src.layers()), shown_head(head)};
    }
    draw_source_map(state_, map_source(), geometry_);
  }


  // Gallery entries that open an image with a bundled model (issue 18): the image, the
  // model, the CLS query and the last layer.
  void draw_model_gallery() {
    const auto dir = assets_dir() / "fashion_vit";
    std::error_code ec;
    if (!std::filesystem::exists(dir / "model.safetensors", ec)) return;
    ImGui::Separator();
    ImGui::TextUnformatted("With a model");
    if (ImGui::Selectable("Fashion-MNIST ViT (a shirt)", state_.model_path == dir && state_.source == ShownSource::Vit)) {
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

  // The main menu: panels, teaching views, the guided tour. Returns its height.
  float draw_menu_bar() {
    float h = 0;
    if (ImGui::BeginMainMenuBar()) {
      if (begin_menu("Panels")) {
        menu_item("Panels/Controls", "Controls", nullptr, &state_.show_controls);
        menu_item("Panels/Heads", "Heads", nullptr, &state_.show_heads);
        menu_item("Panels/Pinned queries", "Pinned queries", nullptr, &state_.show_pinned);
        menu_item("Panels/Images", "Images", nullptr, &state_.show_images);
        menu_item("Panels/Diagnostics", "Diagnostics (driver, timings, checks)", nullptr, &state_.show_diagnostics);
        menu_item("Panels/Presentation mode", "Presentation mode", "F5", &state_.presentation);
        ImGui::EndMenu();
      }
      if (begin_menu("Model")) {
        if (ImGui::MenuItem("Open a checkpoint... (path in the ViT model tab)")) {
          state_.source = ShownSource::Vit;
          state_.show_controls = true;
        }
        record_widget("menu:Model/open");
        bool vit_source = state_.source == ShownSource::Vit;
        menu_item("Model/use", "Show the ViT's attention", "V", &vit_source);
        state_.source = vit_source ? ShownSource::Vit : ShownSource::HandMade;
        if (!state_.recent_models.empty()) {
          ImGui::Separator();
          for (const std::string& p : state_.recent_models) {
            if (ImGui::MenuItem(p.c_str())) state_.commands.open_model(p);
            record_widget("menu:Model/recent:" + p);
          }
        }
        ImGui::EndMenu();
      }
      if (begin_menu("Chapter")) {
        for (const auto& v : teaching_) {
          bool& open = state_.open_views[v->name()];
          const bool was = open;
          menu_item("Chapter/" + std::string(v->name()), v->title(), v->chapter_reference(), &open);
          if (open && !was)  // one chapter view at a time: the class follows one thing
            for (auto& [name, other] : state_.open_views)
              if (name != v->name()) other = false;
        }
        ImGui::EndMenu();
      }
      if (begin_menu("Tour")) {
        if (ImGui::MenuItem("Start the guided tour")) set_tour_step(0);
        record_widget("menu:Tour/start");
        if (ImGui::MenuItem("End the tour", nullptr, false, state_.tour_step >= 0)) set_tour_step(-1);
        record_widget("menu:Tour/end");
        ImGui::EndMenu();
      }
      if (begin_menu("Export")) {
        if (ImGui::MenuItem(state_.export_map_only ? "Map as PNG + settings" : "Window as PNG + settings", "F12"))
          state_.commands.export_png();
        menu_item("Export/map only", "F12 saves the map only (for slides)", nullptr, &state_.export_map_only);
        if (ImGui::MenuItem("Row as CSV", "F9")) state_.commands.export_csv();
        record_widget("menu:Export/csv");
        ImGui::EndMenu();
      }
      h = ImGui::GetWindowSize().y;
      ImGui::EndMainMenuBar();
    }
    return h;
  }

  // A menu of the main menu bar. Its title is recorded from the cursor before BeginMenu: once
  // the menu is open, ImGui's last item is the menu's own window, not the title.
  bool begin_menu(const char* label) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    widget_log().rects[std::string("menu:") + label] = {
        p.x, p.y, ImGui::CalcTextSize(label).x + ImGui::GetStyle().ItemSpacing.x, ImGui::GetFrameHeight()};
    return ImGui::BeginMenu(label);
  }

  // A toggle in an open menu, recorded as "menu:<name>".
  void menu_item(const std::string& name, const char* label, const char* shortcut, bool* selected) {
    ImGui::MenuItem(label, shortcut, selected);
    record_widget("menu:" + name);
  }

  // The current window's rectangle as "window:<name>" (its title bar can be dragged).
  void record_window(const std::string& name) {
    const ImVec2 p = ImGui::GetWindowPos(), s = ImGui::GetWindowSize();
    widget_log().rects["window:" + name] = {p.x, p.y, s.x, s.y};
    panel_rects_[name] = {p.x, p.y, s.x, s.y};
  }

  // A tiled panel. It draws no background of its own while, in the last frame, it overlapped no
  // other window: the whole window is cleared to the colour a panel's background would give
  // (panel_clear_colour), and on llvmpipe every layer over the whole window costs about 10 ms
  // of CPU a frame (measured with the hover benchmark). A panel moved over another, or under a
  // teaching view, gets its background back.
  void begin_panel(const std::string& title, const std::string& name, bool* open, ImGuiWindowFlags flags,
                   bool background = false) {
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

  // The colour a panel's background gives over the window's own clear colour.
  static std::array<float, 3> panel_clear_colour() {
    const ImGuiStyle& style = ImGui::GetStyle();
    const ImVec4 bg = style.Colors[ImGuiCol_WindowBg];
    const float a = bg.w * style.Alpha;
    const float base[3] = {0.08f, 0.08f, 0.09f};
    return {bg.x * a + base[0] * (1 - a), bg.y * a + base[1] * (1 - a), bg.z * a + base[2] * (1 - a)};
  }

  // The tour opens one teaching view after another, in the chapter's order.
  void set_tour_step(int step) {
    if (state_.tour_step >= 0 && state_.tour_step < static_cast<int>(teaching_.size()))
      state_.open_views[teaching_[static_cast<size_t>(state_.tour_step)]->name()] = false;
    state_.tour_step = step < static_cast<int>(teaching_.size()) ? step : -1;
    if (state_.tour_step >= 0) state_.open_views[teaching_[static_cast<size_t>(state_.tour_step)]->name()] = true;
  }

  void draw_teaching_windows(float menu_h) {
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
          v->draw(state_, backend_);
        } catch (const std::exception& e) {  // a view that cannot draw says why; the app goes on
          ImGui::TextWrapped("%s", e.what());
          state_.report.view_errors[v->name()] = e.what();
        }
      }
      ImGui::End();
    }
    if (state_.tour_step >= 0 && state_.tour_step < static_cast<int>(teaching_.size())) {
      const auto& v = teaching_[static_cast<size_t>(state_.tour_step)];
      ImGui::SetNextWindowPos(ImVec2(d.x * 0.5f, d.y - 10), ImGuiCond_Always, ImVec2(0.5f, 1));
      ImGui::SetNextWindowSize(ImVec2(std::min(d.x * 0.6f, 900.0f * state_.ui_scale), 0));
      ImGui::SetNextWindowBgAlpha(1.0f);
      ImGui::Begin("Guided tour", nullptr, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings);
      // Always drawn over the views (without taking the keyboard from them), so that "next" is
      // never under a view and the title and step stay readable.
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
  }

  void do_exports(int w, int h) {
    if (state_.commands.take(Commands::Kind::ExportPng)) {
      try {
        const auto png = export_window(state_, backend_, geometry_, w, h);
        state_.ui.status = "saved " + png.string();
        state_.ui.status_since = std::chrono::steady_clock::now();
        std::printf("attnlab: saved %s\n", png.string().c_str());
        std::fflush(stdout);
      } catch (const Error& e) {
        state_.show_error(e.what());
      }
    }
    if (state_.commands.take(Commands::Kind::ExportCsv)) {
      try {
        const auto csv = state_.source == ShownSource::Vit && vit_.run() ? export_vit_csv(state_) : export_row_csv(state_, backend_);
        state_.ui.status = "saved " + csv.string();
        state_.ui.status_since = std::chrono::steady_clock::now();
        std::printf("attnlab: saved %s\n", csv.string().c_str());
        std::fflush(stdout);
      } catch (const Error& e) {
        state_.show_error(e.what());
      }
    }
  }

  // The hover benchmark, after each frame's swap: the frame's time, then the pointer moved to
  // the path's next patch once the last one's map is on screen (hover_bench.hpp).
  void step_replay(const gl::TransferCounts& moved, FrameMarks marks) {
    glFinish();  // the frame's pixels are done, not only queued
    marks.end = HoverReplay::Clock::now();
    const bool over_vit = replay_->config().vit;
    if (over_vit) {
      replay_->frame(marks, moved, vit_shown());
    } else {
      const PatchGrid& g = backend_.grid();
      const int q = backend_.query();
      replay_->frame(marks, moved, Shown{Cell{q % g.cols, q / g.cols}, 0, 0});
    }
    const auto stop = [&](int code, const std::string& line) {
      std::printf("attnlab: %s\n", line.c_str());
      std::fflush(stdout);
      replay_code_ = code;
      glfwSetWindowShouldClose(window_, GLFW_TRUE);
    };
    if (replay_->done()) {
      try {
        stop(0, replay_->finish(backend_.name()));
      } catch (const Error& e) {
        stop(1, e.what());
      }
      return;
    }
    // A hover that never reaches the screen (the pointer outside the map, a dialog over it)
    // ends the run with a line that says so rather than hanging.
    if (replay_->frames() > static_cast<std::size_t>(replay_->config().hovers) * 20) {
      stop(1, "hover benchmark: the hovers do not reach the map (is a window over it?)");
      return;
    }
    if (over_vit) {
      if (!vit_.run() && !vit_.busy() && !opening_model_ && !state_.commands.pending(Commands::Kind::OpenModel))
        stop(1, "hover benchmark: the model did not open" + (state_.ui.banner.empty() ? std::string() : " (" + state_.ui.banner + ")"));
      else step_vit_replay();
      return;
    }
    if (!geometry_.valid || state_.source == ShownSource::Vit) return;
    const int K = backend_.settings().patch;
    const PatchGrid& g = backend_.grid();
    if (replay_->frames() == 0)
      replay_->set_source(ReplaySource{"hand-made", "", g.cols, g.rows, K, 1, kHeadCount, backend_.name()});
    replay_->path(g.cols, g.rows);
    if (const auto m = replay_->next()) {
      const Cell c = m->cell;
      const double x = geometry_.x + (c.col + 0.5) * K * geometry_.scale, y = geometry_.y + (c.row + 0.5) * K * geometry_.scale;
      glfwSetCursorPos(window_, x, y);
      replay_->moved(HoverReplay::Clock::now());
    }
  }

  // What the ViT's main map drew this frame (draw_main_map): the query's patch, the layer and
  // the head; nothing while another view or source is shown.
  Shown vit_shown() const { return state_.report.vit_drawn.is_null() ? Shown{Cell{-1, -1}, -2, -100} : vit_map_shown_; }

  // The ViT replay: once the model's first forward pass is shown, the query follows the
  // pointer over the model's patch grid (the main map's cells, VitRun::grid()), and every
  // few hovers a layer or head step is a key press handled by vit_keys as a student's would be.
  void step_vit_replay() {
    const VitRun* src = vit_.run();
    if (!src || vit_.busy() || !(state_.source == ShownSource::Vit) || !geometry_.valid || state_.report.vit_drawn.is_null()) return;
    const SourceGrid g = src->grid();
    if (!vit_replay_started_) {  // the same start on every machine: last layer, heads' mean, the query following the pointer
      vit_replay_started_ = true;
      state_.vit.layer = src->layers() - 1;
      state_.vit.head = HeadChoice{-1, HeadFusion::Mean};
      state_.vit.prefix_token = -1;
      state_.vit_rollout = state_.vit_norms = false;
      state_.vit.query_pinned = false;
      replay_->set_source(ReplaySource{"vit", vit_.file().string(), g.cols, g.rows, src->patch(), src->layers(), src->heads(),
                                       src->path()});
      return;  // drawn once with these settings before the first move
    }
    replay_->path(g.cols, g.rows);
    const auto m = replay_->next();
    if (!m) return;
    if (m->kind == ReplayMove::Kind::Hover) {
      const double cell_w = g.covered_w * geometry_.scale / g.cols, cell_h = g.covered_h * geometry_.scale / g.rows;
      glfwSetCursorPos(window_, geometry_.x + (m->cell.col + 0.5) * cell_w, geometry_.y + (m->cell.row + 0.5) * cell_h);
      replay_->moved(HoverReplay::Clock::now());
      return;
    }
    // Even steps go one layer up (PageUp; End from the first layer back to the last), odd steps
    // to the next head (0…9, then A: the heads' mean, then 0 again).
    const int L = src->layers(), layer = choice_layer(state_.vit, L), heads = std::min(src->heads(), 10);
    int key = 0, want_layer = layer, want_head = shown_head(choice_head(state_.vit, src->heads()));
    if (m->step % 2 == 0) {
      key = layer > 0 ? GLFW_KEY_PAGE_UP : GLFW_KEY_END;
      want_layer = layer > 0 ? layer - 1 : L - 1;
    } else if (want_head < 0 || want_head + 1 < heads) {
      want_head = want_head < 0 ? 0 : want_head + 1;
      key = GLFW_KEY_0 + want_head;
    } else {
      key = GLFW_KEY_A;
      want_head = shown_head(HeadChoice{-1, HeadFusion::Mean});
    }
    key_queue.push_back({key, 0});
    replay_->stepped(HoverReplay::Clock::now(), want_layer, want_head);
  }

  void report_frames() {
    if (frame_ms_.empty()) return;
    std::sort(frame_ms_.begin(), frame_ms_.end());
    const auto pct = [&](double p) { return frame_ms_[static_cast<size_t>(p * static_cast<double>(frame_ms_.size() - 1))]; };
    std::printf("attnlab: %zu interactive frames, median %.1f ms, 95th percentile %.1f ms (%s)\n", frame_ms_.size(), pct(0.5),
                pct(0.95), backend_.name().c_str());
  }

  GLFWwindow* window_;
  AppState state_;
  HandMadeSession backend_;
  VitSession vit_{backend_.scheduler()};  // after the backend: gone before its scheduler
  // The attention sources the map views draw (map_source.hpp), over the backend and the session.
  HandMadeMapSource hand_made_map_{state_, backend_};
  VitMapSource vit_map_{state_, vit_};
  std::optional<std::filesystem::path> opening_model_;
  int vit_resize_ = 0;
  unsigned seen_vit_generation_ = 0;  // vit_.generation() when take_finished_work() last looked
  bool shown_vit_tab_ = false;
  int shown_vit_lower_ = -1;
  std::string layout_key_;
  // Where each panel and floating window was in this frame and the last (x, y, w, h).
  std::map<std::string, std::array<float, 4>> panel_rects_, last_panel_rects_;  // the window size, UI scale and source the panels were last laid out for
  float tour_h_ = 160;  // the guided tour box's height in the last frame (pixels)
  // The photo's points (pixels) that the query and the pinned patches stand for across changes
  // of K (keep_cells_in_place).
  std::vector<std::pair<int, int>> query_anchor_, pin_anchors_;
  std::vector<std::filesystem::path> gallery_;
  std::vector<std::unique_ptr<TeachingView>> teaching_;
  ViewGeometry geometry_;
  ImGuiStyle base_style_;
  float applied_scale_ = -1, font_scale_ = 1;
  bool font_rebuilt_ = false;  // the UI font rasterized at the applied scale (load_ui_font)
  bool applied_presentation_ = false;
  unsigned last_generation_ = 0;
  std::vector<double> frame_ms_;
  std::optional<HoverReplay> replay_;  // the hover benchmark, when asked for
  int replay_code_ = 0;
  bool vit_replay_started_ = false;  // the ViT replay's start settings applied
  Shown vit_map_shown_;              // what the ViT's main map was made of in this frame
};

// GLFW, the window with its context and ImGui's backends, released in this fixed order on every
// way out of run_gui (a thrown error too). The App, with its views' worker threads and GL
// objects, is gone before: it lives in an inner scope while the context is current.
struct WindowSession {
  GLFWwindow* window = nullptr;
  bool imgui = false, imgui_glfw = false, imgui_gl = false;
  std::string ini;  // ImGui's layout file, saved when its context is destroyed
  WindowSession() = default;
  WindowSession(const WindowSession&) = delete;
  WindowSession& operator=(const WindowSession&) = delete;
  ~WindowSession() {
    if (imgui_gl) ImGui_ImplOpenGL3_Shutdown();
    if (imgui_glfw) ImGui_ImplGlfw_Shutdown();
    if (imgui) ImGui::DestroyContext();
    if (window) glfwDestroyWindow(window);
    glfwTerminate();  // closes the display; Mesa destroys its screen and joins its threads
  }
};

}  // namespace

int run_gui(const GuiArgs& args) {
  const std::string& image = args.image;
  const std::string& model = args.model;
  // The hover benchmark's report is checked before a window opens (an existing file, no folder).
  std::optional<HoverReplay> replay;
  if (!args.hover_bench.empty()) {
    HoverBenchConfig config{args.hover_bench};
    config.vit = !model.empty();  // over the model's patch grid once it has run
    // Fewer hovers for the tests (the benchmark's numbers are at the default, 300).
    if (const char* n = std::getenv("ATTNLAB_HOVER_BENCH_HOVERS"); n && *n) {
      char* end = nullptr;
      const long v = std::strtol(n, &end, 10);
      if (*end != '\0' || v < 1 || v > 100000) throw Error(std::string("ATTNLAB_HOVER_BENCH_HOVERS must be a count of hovers, not '") + n + "'");
      config.hovers = static_cast<int>(v);
    }
    replay.emplace(std::move(config));
  }
  glfwSetErrorCallback(glfw_error);
  if (!glfwInit())
    throw Error("cannot open a window (" + glfw_error_text +
                "); is there a display? The command line works without one: attnlab --help");
  WindowSession session;
  std::string context_note;
  auto make_window = [](int major, int minor) {
    glfwDefaultWindowHints();
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, major);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, minor);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
    glfwWindowHint(GLFW_OPENGL_DEBUG_CONTEXT, kGlDebugBuild ? GLFW_TRUE : GLFW_FALSE);
    return glfwCreateWindow(1600, 1000, "Attention Lab", nullptr, nullptr);
  };
  int major = 4, minor = 3;
  if (const char* v = std::getenv("ATTNLAB_GL_VERSION"); v && std::sscanf(v, "%d.%d", &major, &minor) != 2) {
    major = 4;
    minor = 3;
  }
  GLFWwindow* window = make_window(major, minor);
  if (!window && (major > 3 || minor > 3)) {
    context_note = "no OpenGL " + std::to_string(major) + "." + std::to_string(minor) + " window: " + glfw_error_text;
    window = make_window(3, 3);
  }
  if (!window) throw Error("cannot open an OpenGL 3.3 window (" + glfw_error_text + ")");
  session.window = window;
  glfwMakeContextCurrent(window);
  glfwSwapInterval(replay ? 0 : 1);  // the benchmark times frames, not the display's refresh
  if (kGlDebugBuild) install_gl_debug_callback();

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  session.imgui = true;
  ImGuiIO& io = ImGui::GetIO();
  std::error_code ec;
  std::filesystem::create_directories(config_dir(), ec);
  session.ini = (config_dir() / "imgui.ini").string();
  // Written by ImGui::DestroyContext; the benchmark starts from the default layout and keeps none.
  io.IniFilename = replay ? nullptr : session.ini.c_str();
  const float font_scale = setup_app_style(1.0f);
  glfwSetKeyCallback(window, on_key);  // before ImGui's backend, which chains to it
  session.imgui_glfw = ImGui_ImplGlfw_InitForOpenGL(window, true);
  session.imgui_gl = ImGui_ImplOpenGL3_Init("#version 330 core");

  AppState state;
  float xs = 1, ys = 1;
  glfwGetWindowContentScale(window, &xs, &ys);
  state.ui_scale = std::clamp(std::max(xs, ys), 1.0f, 3.0f);  // high-DPI screens start larger
  if (replay) {  // the same settings on every machine: the defaults, K = 16, the query following the mouse
    state.attention.patch = replay->config().patch;
    state.hand_made.query_pinned = false;
  } else {
    load_remembered(state);
  }
  if (const char* dir = std::getenv("ATTNLAB_EXPORT_DIR"); dir && *dir) state.export_dir = dir;
  state.ui.export_dir_text = state.export_dir.string();

  int code = 0;
  {
    App app(window, std::move(state), context_note, std::move(replay));
    app.set_font_scale(font_scale);
    const auto safari = assets_dir() / "safari.jpg";
    try {
      app.open_initial(image.empty() ? safari : std::filesystem::path(image));
    } catch (const Error& e) {
      if (image.empty()) throw;
      app.show_error(std::string(e.what()) + "; showing the safari photo instead");
      app.open_initial(safari);
    }
    if (!model.empty()) app.open_model(model);
    code = app.run();
  }
  return code;
}

}  // namespace attnlab::app
