#include "app/gui/app_state.hpp"

#include "core/error.hpp"
#include "core/reference.hpp"

#include <algorithm>
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


// ---- The document's field table: every saved setting once, with its place in the JSON (a
// dotted path) and, for enums, its names. to_json writes and apply_json reads through this one
// list, so a setting cannot be saved under one name and read under another.

namespace {

/// A setting saved by name (an enum, or the main head as its head's name). T is const when
/// the state is only read (to_json), and `parse` is then never called.
template <class T>
struct Named {
  T& value;
  std::string (*name)(const std::remove_const_t<T>&);
  void (*parse)(const std::string&, std::remove_const_t<T>&);  ///< throws Error for an unknown name
};

std::string head_field_name(const int& h) { return std::string(head_name(static_cast<HeadKind>(h))); }
void parse_head_field(const std::string& t, int& h) { h = static_cast<int>(parse_head(t)); }
std::string edge_field_name(const EdgeMode& e) { return std::string(edge_mode_name(e)); }
void parse_edge_field(const std::string& t, EdgeMode& e) {
  if (t != "crop" && t != "pad") throw Error("setting 'edge' must be crop or pad, got '" + t + "'");
  e = t == "pad" ? EdgeMode::Pad : EdgeMode::Crop;
}
std::string mask_field_name(const MaskKind& k) { return std::string(mask_kind_name(k)); }
void parse_mask_field(const std::string& t, MaskKind& k) { k = t == "painted" ? MaskKind::Painted : parse_mask(t).spec.kind; }
std::string pos_field_name(const PosMode& m) { return std::string(pos_mode_name(m)); }
void parse_pos_field(const std::string& t, PosMode& m) { m = parse_pos_mode(t); }
std::string colormap_field_name(const Colormap& c) { return std::string(colormap_name(c)); }
void parse_colormap_field(const std::string& t, Colormap& c) { c = parse_colormap(t); }
std::string norm_field_name(const Normalization& n) { return std::string(normalization_name(n)); }
void parse_norm_field(const std::string& t, Normalization& n) { n = parse_normalization(t); }

/// Calls `field(path, value)` for every saved setting of `s` (AppState or const AppState),
/// `value` a reference to the member or a Named wrapper around it.
template <class State, class Field>
void for_each_field(State& s, Field&& field) {
  auto& a = s.attention;
  auto named = [](auto& v, auto name, auto parse) { return Named<std::remove_reference_t<decltype(v)>>{v, name, parse}; };
  field("image", s.image_path);
  field("patch", a.patch);
  field("edge", named(a.edge, edge_field_name, parse_edge_field));
  field("temperature", a.temperature);
  field("seed", a.seed);
  field("head", named(s.main_head, head_field_name, parse_head_field));
  field("query", s.query);
  field("query_pinned", s.query_pinned);
  field("pinned", s.pinned);
  field("mask.kind", named(a.mask.kind, mask_field_name, parse_mask_field));
  field("mask.radius", a.mask.radius);
  field("mask.ratio", a.mask.ratio);
  field("mask.seed", a.mask.seed);
  field("mask.painted", a.mask.painted);
  field("pos.mode", named(a.pos.mode, pos_field_name, parse_pos_field));
  field("pos.B", a.pos.B);
  field("pos.P", a.pos.P);
  field("pos.sincos", a.pos.sincos);
  field("pos.lambda", a.pos.lambda);
  field("custom.W_q", a.custom.W_q);
  field("custom.W_k", a.custom.W_k);
  field("display.colormap", named(s.colormap, colormap_field_name, parse_colormap_field));
  field("display.normalization", named(s.normalization, norm_field_name, parse_norm_field));
  field("display.opacity", s.opacity);
  field("display.grid", s.show_grid);
  field("display.mask_overlay", s.show_mask);
  field("display.zoom", s.zoom);
  field("display.pan", s.pan);
  field("classroom.ui_scale", s.ui_scale);
  field("classroom.presentation", s.presentation);
  field("classroom.panels.controls", s.show_controls);
  field("classroom.panels.heads", s.show_heads);
  field("classroom.panels.pinned", s.show_pinned);
  field("classroom.panels.images", s.show_images);
  field("classroom.panels.diagnostics", s.show_diagnostics);
  field("views", s.open_views);
  field("tour_step", s.tour_step);
  field("vit.source", s.vit_source);
  field("vit.model", s.model_path);
  field("vit.layer", s.vit_layer);
  field("vit.head", s.vit_head);
  field("vit.token", s.vit_token);
  field("vit.cell", s.vit_cell);
  field("vit.pinned", s.vit_pinned);
  field("vit.tab", s.vit_tab);
  field("vit.rollout", s.vit_rollout);
  field("vit.masks", s.vit_masks);
  field("vit.mass", s.vit_mass);
  field("vit.norms", s.vit_norms);
  field("vit.bilinear", s.bilinear);
  field("vit.resize", s.vit_resize);
  field("vit.recent", s.recent_models);
  field("export_dir", s.export_dir);
  field("export_map_only", s.export_map_only);
}

template <class T>
nlohmann::json to_value(const T& v) {
  return v;
}
nlohmann::json to_value(const Cell& c) { return {{"col", c.col}, {"row", c.row}}; }
nlohmann::json to_value(const std::filesystem::path& p) { return p.string(); }
template <class T>
nlohmann::json to_value(const Named<T>& n) {
  return n.name(n.value);
}
template <class T>
nlohmann::json to_value(const std::vector<T>& v) {
  nlohmann::json out = nlohmann::json::array();
  for (const T& x : v) out.push_back(to_value(x));
  return out;
}

/// The JSON pointer of a field's dotted path: "vit.cell" → /vit/cell.
nlohmann::json::json_pointer pointer(std::string path) {
  std::replace(path.begin(), path.end(), '.', '/');
  return nlohmann::json::json_pointer("/" + path);
}

}  // namespace

nlohmann::json to_json(const AppState& s) {
  nlohmann::json j = nlohmann::json::object();
  for_each_field(s, [&](const std::string& path, const auto& value) {
    j[pointer(path)] = to_value(value);  // makes the parent objects
  });
  return j;
}

void apply_json(const nlohmann::json& j, AppState& out) {
  AppState s = out;
  std::string key;
  try {
    for_each_field(s, [&](const std::string& path, auto&& field) {
      key = path;
      const auto at = pointer(path);
      if (!j.contains(at)) return;  // false also when a parent is not an object
      const nlohmann::json* v = &j.at(at);
      using F = std::remove_cvref_t<decltype(field)>;
      if constexpr (std::is_same_v<F, std::filesystem::path>) {
        field = v->get<std::string>();
      } else if constexpr (requires { field.parse; }) {
        field.parse(v->get<std::string>(), field.value);
      } else {
        read_value(*v, field, path);
      }
    });
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
