#include "app/gui/app_state.hpp"

#include "core/error.hpp"
#include "core/reference.hpp"

#include <imgui.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <type_traits>
#include <vector>

namespace attnlab::app {

namespace {

template <class T>
struct is_std_array : std::false_type {};
template <class T, std::size_t N>
struct is_std_array<std::array<T, N>> : std::true_type {};
template <class T>
struct is_std_vector : std::false_type {};
template <class T>
struct is_std_vector<std::vector<T>> : std::true_type {};

// Reads a setting's value into `out`, numbers checked against the field's type first:
// nlohmann converts a number that does not fit with a plain cast, undefined for a float too
// large for an int (found by fuzz_cli_args with a seed of 10^46). Throws Error naming `key`.
template <class T>
void read_value(const nlohmann::json& v, T& out, const std::string& key) {
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string>) {
    out = v.get<T>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!v.is_number_integer()) throw Error("setting '" + key + "' must be a whole number");
    const bool fits = v.is_number_unsigned()
                          ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())
                          : v.get<std::int64_t>() >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
                                v.get<std::int64_t>() <= static_cast<std::int64_t>(std::numeric_limits<T>::max());
    if (!fits) throw Error("setting '" + key + "' is out of range");
    out = v.is_number_unsigned() ? static_cast<T>(v.get<std::uint64_t>()) : static_cast<T>(v.get<std::int64_t>());
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) throw Error("setting '" + key + "' must be a number");
    const double d = v.get<double>();
    if (!std::isfinite(d) || std::abs(d) > static_cast<double>(std::numeric_limits<T>::max()))
      throw Error("setting '" + key + "' is out of range");
    out = static_cast<T>(d);
  } else if constexpr (is_std_array<T>::value) {
    if (!v.is_array() || v.size() != out.size())
      throw Error("setting '" + key + "' must be a list of " + std::to_string(out.size()) + " numbers");
    for (std::size_t n = 0; n < out.size(); ++n) read_value(v[n], out[n], key);
  } else if constexpr (is_std_vector<T>::value) {
    if (!v.is_array()) throw Error("setting '" + key + "' must be a list");
    T items(v.size());
    for (std::size_t n = 0; n < v.size(); ++n) read_value(v[n], items[n], key);
    out = std::move(items);
  } else if constexpr (std::is_same_v<T, Cell>) {  // a patch: {"col": c, "row": r}, both >= 0
    if (!v.is_object() || !v.contains("col") || !v.contains("row"))
      throw Error("setting '" + key + "' must be an object with 'col' and 'row'");
    read_value(v.at("col"), out.col, key + ".col");
    read_value(v.at("row"), out.row, key + ".row");
    if (out.col < 0 || out.row < 0) throw Error("setting '" + key + "' is out of range");
  } else if constexpr (std::is_same_v<T, std::map<std::string, bool>>) {
    if (!v.is_object()) throw Error("setting '" + key + "' must be an object");
    T items;
    for (const auto& [name, value] : v.items()) read_value(value, items[name], key + "." + name);
    out = std::move(items);
  } else {
    static_assert(sizeof(T) == 0, "no checked reader for this setting's type");
  }
}

}  // namespace

void AppState::show_error(const std::string& message) {
  banner = message;
  banner_since = std::chrono::steady_clock::now();
  std::fprintf(stderr, "attnlab: %s\n", message.c_str());  // also in the terminal's (or a log's) history
}

void AppState::record_widget(const std::string& name) {
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  widget_rects[name] = {a.x, a.y, b.x - a.x, b.y - a.y};
}

nlohmann::json to_json(const AppState& s) {
  const Settings& a = s.attention;
  nlohmann::json j;
  j["image"] = s.image_path.string();
  j["patch"] = a.patch;
  j["edge"] = std::string(edge_mode_name(a.edge));
  j["temperature"] = a.temperature;
  j["seed"] = a.seed;
  j["head"] = std::string(head_name(static_cast<HeadKind>(s.main_head)));
  j["query"] = {{"col", s.query.col}, {"row", s.query.row}};
  j["query_pinned"] = s.query_pinned;
  j["pinned"] = nlohmann::json::array();
  for (const Cell& c : s.pinned) j["pinned"].push_back({{"col", c.col}, {"row", c.row}});
  j["mask"] = {{"kind", std::string(mask_kind_name(a.mask.kind))},
               {"radius", a.mask.radius},
               {"ratio", a.mask.ratio},
               {"seed", a.mask.seed},
               {"painted", a.mask.painted}};
  j["pos"] = {{"mode", std::string(pos_mode_name(a.pos.mode))},
              {"B", a.pos.B},
              {"P", a.pos.P},
              {"sincos", a.pos.sincos},
              {"lambda", a.pos.lambda}};
  j["custom"] = {{"W_q", a.custom.W_q}, {"W_k", a.custom.W_k}};
  j["display"] = {{"colormap", std::string(colormap_name(s.colormap))},
                  {"normalization", std::string(normalization_name(s.normalization))},
                  {"opacity", s.opacity},
                  {"grid", s.show_grid},
                  {"mask_overlay", s.show_mask},
                  {"zoom", s.zoom},
                  {"pan", s.pan}};
  j["classroom"] = {{"ui_scale", s.ui_scale},
                    {"presentation", s.presentation},
                    {"panels",
                     {{"controls", s.show_controls},
                      {"heads", s.show_heads},
                      {"pinned", s.show_pinned},
                      {"images", s.show_images},
                      {"diagnostics", s.show_diagnostics}}}};
  j["views"] = s.open_views;
  j["tour_step"] = s.tour_step;
  j["vit"] = {{"source", s.vit_source},
              {"model", s.model_path.string()},
              {"layer", s.vit_layer},
              {"head", s.vit_head},
              {"token", s.vit_token},
              {"cell", {{"col", s.vit_cell.col}, {"row", s.vit_cell.row}}},
              {"pinned", [&] {
                 nlohmann::json pins = nlohmann::json::array();
                 for (const Cell& c : s.vit_pinned) pins.push_back({{"col", c.col}, {"row", c.row}});
                 return pins;
               }()},
              {"tab", s.vit_tab},
              {"rollout", s.vit_rollout},
              {"masks", s.vit_masks},
              {"mass", s.vit_mass},
              {"norms", s.vit_norms},
              {"bilinear", s.bilinear},
              {"resize", s.vit_resize},
              {"recent", s.recent_models}};
  j["export_dir"] = s.export_dir.string();
  j["export_map_only"] = s.export_map_only;
  return j;
}

void apply_json(const nlohmann::json& j, AppState& out) {
  AppState s = out;
  std::string key;
  try {
    auto get = [&](const nlohmann::json& obj, const char* name, auto& field) {
      key = name;
      if (obj.contains(name)) read_value(obj.at(name), field, name);
    };
    Settings& a = s.attention;
    std::string text;
    if (j.contains("image")) s.image_path = j.at("image").get<std::string>();
    get(j, "patch", a.patch);
    if (j.contains("edge")) a.edge = j.at("edge").get<std::string>() == "pad" ? EdgeMode::Pad : EdgeMode::Crop;
    get(j, "temperature", a.temperature);
    get(j, "seed", a.seed);
    key = "head";
    if (j.contains("head")) s.main_head = static_cast<int>(parse_head(j.at("head").get<std::string>()));
    if (j.contains("query")) {
      get(j["query"], "col", s.query.col);
      get(j["query"], "row", s.query.row);
    }
    get(j, "query_pinned", s.query_pinned);
    get(j, "pinned", s.pinned);
    if (j.contains("mask")) {
      const auto& m = j["mask"];
      key = "mask.kind";
      if (m.contains("kind")) {
        const std::string kind = m.at("kind").get<std::string>();
        a.mask.kind = kind == "painted" ? MaskKind::Painted : parse_mask(kind).spec.kind;
      }
      get(m, "radius", a.mask.radius);
      get(m, "ratio", a.mask.ratio);
      get(m, "seed", a.mask.seed);
      get(m, "painted", a.mask.painted);
    }
    if (j.contains("pos")) {
      const auto& p = j["pos"];
      key = "pos.mode";
      if (p.contains("mode")) a.pos.mode = parse_pos_mode(p.at("mode").get<std::string>());
      get(p, "B", a.pos.B);
      get(p, "P", a.pos.P);
      get(p, "sincos", a.pos.sincos);
      get(p, "lambda", a.pos.lambda);
    }
    if (j.contains("custom")) {
      get(j["custom"], "W_q", a.custom.W_q);
      get(j["custom"], "W_k", a.custom.W_k);
    }
    if (j.contains("display")) {
      const auto& d = j["display"];
      key = "display.colormap";
      if (d.contains("colormap")) s.colormap = parse_colormap(d.at("colormap").get<std::string>());
      key = "display.normalization";
      if (d.contains("normalization")) s.normalization = parse_normalization(d.at("normalization").get<std::string>());
      get(d, "opacity", s.opacity);
      get(d, "grid", s.show_grid);
      get(d, "mask_overlay", s.show_mask);
      get(d, "zoom", s.zoom);
      get(d, "pan", s.pan);
    }
    if (j.contains("classroom")) {
      const auto& c = j["classroom"];
      get(c, "ui_scale", s.ui_scale);
      get(c, "presentation", s.presentation);
      if (c.contains("panels")) {
        const auto& p = c["panels"];
        get(p, "controls", s.show_controls);
        get(p, "heads", s.show_heads);
        get(p, "pinned", s.show_pinned);
        get(p, "images", s.show_images);
        get(p, "diagnostics", s.show_diagnostics);
      }
    }
    get(j, "views", s.open_views);
    get(j, "tour_step", s.tour_step);
    if (j.contains("vit")) {
      const auto& v = j["vit"];
      get(v, "source", s.vit_source);
      key = "vit.model";
      if (v.contains("model")) s.model_path = v.at("model").get<std::string>();
      get(v, "layer", s.vit_layer);
      get(v, "head", s.vit_head);
      get(v, "token", s.vit_token);
      if (v.contains("cell")) {
        get(v["cell"], "col", s.vit_cell.col);
        get(v["cell"], "row", s.vit_cell.row);
      }
      get(v, "pinned", s.vit_pinned);
      get(v, "tab", s.vit_tab);
      get(v, "rollout", s.vit_rollout);
      get(v, "masks", s.vit_masks);
      get(v, "mass", s.vit_mass);
      get(v, "norms", s.vit_norms);
      get(v, "bilinear", s.bilinear);
      get(v, "resize", s.vit_resize);
      get(v, "recent", s.recent_models);
    }
    key = "export_dir";
    if (j.contains("export_dir")) s.export_dir = j.at("export_dir").get<std::string>();
    get(j, "export_map_only", s.export_map_only);
  } catch (const nlohmann::json::exception& e) {
    throw Error("setting '" + key + "' has the wrong type (" + e.what() + ")");
  }
  validate(s.attention);
  if (s.main_head < 0 || s.main_head >= kHeadCount) throw Error("setting 'head' is out of range");
  if (!(s.opacity >= 0 && s.opacity <= 1)) throw Error("setting 'display.opacity' must be between 0 and 1");
  if (s.vit_layer < -1) throw Error("setting 'vit.layer' is out of range");
  if (s.vit_head < kVitHeadMin) throw Error("setting 'vit.head' is out of range");
  if (s.vit_tab < 0 || s.vit_tab > 3) throw Error("setting 'vit.tab' is out of range");
  if (s.vit_token < -1) throw Error("setting 'vit.token' is out of range");
  if (s.vit_cell.col < 0 || s.vit_cell.row < 0) throw Error("setting 'vit.cell' is out of range");
  if (!(s.vit_mass >= 0 && s.vit_mass <= 1)) throw Error("setting 'vit.mass' must be between 0 and 1");
  if (s.vit_resize < 0 || s.vit_resize > 4096) throw Error("setting 'vit.resize' must be 0…4096 pixels");
  if (!(s.ui_scale >= 0.5f && s.ui_scale <= 4.0f)) s.ui_scale = 1.0f;
  if (!(s.zoom >= 0.1f && s.zoom <= 64.0f)) s.zoom = 1.0f;
  out = std::move(s);
}

std::filesystem::path config_dir() {
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return std::filesystem::path(x) / "attnlab";
  if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".config" / "attnlab";
  return std::filesystem::temp_directory_path() / "attnlab-config";
}

}  // namespace attnlab::app
