#include "app/commands/document.hpp"

#include "app/commands/command_flags.hpp"
#include "app/commands/source_choice.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/io/fashion_mnist.hpp"
#include "core/base/parse.hpp"
#include "core/hand_made/reference.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <type_traits>

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
    if (!v.is_number_integer()) throw Error(text_format(_("setting '%s' must be a whole number"), key.c_str()));
    const bool fits = v.is_number_unsigned()
                          ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())
                          : v.get<std::int64_t>() >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
                                v.get<std::int64_t>() <= static_cast<std::int64_t>(std::numeric_limits<T>::max());
    if (!fits) throw Error(text_format(_("setting '%s' is out of range"), key.c_str()));
    out = v.is_number_unsigned() ? static_cast<T>(v.get<std::uint64_t>()) : static_cast<T>(v.get<std::int64_t>());
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) throw Error(text_format(_("setting '%s' must be a number"), key.c_str()));
    const double d = v.get<double>();
    if (!std::isfinite(d) || std::abs(d) > static_cast<double>(std::numeric_limits<T>::max()))
      throw Error(text_format(_("setting '%s' is out of range"), key.c_str()));
    out = static_cast<T>(d);
  } else if constexpr (is_std_array<T>::value) {
    if (!v.is_array() || v.size() != out.size())
      throw Error(text_format(_("setting '%s' must be a list of %zu numbers"), key.c_str(), out.size()));
    for (std::size_t n = 0; n < out.size(); ++n) read_value(v[n], out[n], key);
  } else if constexpr (is_std_vector<T>::value) {
    if (!v.is_array()) throw Error(text_format(_("setting '%s' must be a list"), key.c_str()));
    T items(v.size());
    for (std::size_t n = 0; n < v.size(); ++n) read_value(v[n], items[n], key);
    out = std::move(items);
  } else if constexpr (std::is_same_v<T, Cell>) {  // a patch: {"col": c, "row": r}, both >= 0
    if (!v.is_object() || !v.contains("col") || !v.contains("row"))
      // TRANSLATORS: 'col' and 'row' are the file's keys: keep them.
      throw Error(text_format(_("setting '%s' must be an object with 'col' and 'row'"), key.c_str()));
    read_value(v.at("col"), out.col, key + ".col");
    read_value(v.at("row"), out.row, key + ".row");
    if (out.col < 0 || out.row < 0) throw Error(text_format(_("setting '%s' is out of range"), key.c_str()));
  } else if constexpr (std::is_same_v<T, HeadChoice>) {  // a head from 0, or "mean", "max", "min" over the heads
    if (v.is_string()) {
      const auto fusion = parse_head_fusion(v.get<std::string>());
      // TRANSLATORS: mean, max and min are the file's words: keep them.
      if (!fusion) throw Error(text_format(_("setting '%s' must be a head (0, 1, …) or mean, max or min"), key.c_str()));
      out = HeadChoice{-1, *fusion};
    } else {
      int h = 0;
      read_value(v, h, key);
      if (h < 0) throw Error(text_format(_("setting '%s' is out of range"), key.c_str()));
      out = HeadChoice{h, HeadFusion::Mean};
    }
  } else if constexpr (std::is_same_v<T, std::map<std::string, bool>>) {
    if (!v.is_object()) throw Error(text_format(_("setting '%s' must be an object"), key.c_str()));
    T items;
    for (const auto& [name, value] : v.items()) read_value(value, items[name], key + "." + name);
    out = std::move(items);
  } else {
    static_assert(sizeof(T) == 0, "no checked reader for this setting's type");
  }
}

}  // namespace


// ---- The document's field table: every saved setting once, with its place in the JSON (a
// dotted path), for enums its names, and for the settings the command line sets, its flag,
// the commands that take it and how the flag's text is read. to_json writes, apply_json reads
// and parse_document_flags parses through this one list, so a setting cannot be saved under
// one name, read under another and set by a flag somewhere else.

namespace {

template <class T>
using Plain = std::remove_const_t<T>;

/// A setting saved by name (an enum, or the main head as its head's name). T is const when
/// the state is only read (to_json), and `parse` is then never called.
template <class T>
struct Named {
  T& value;
  std::string (*name)(const Plain<T>&);
  void (*parse)(const std::string&, Plain<T>&);  ///< throws Error for an unknown name
};

/// A field's command-line flag: its name, the commands that take it (FlagCommand bits), and
/// how its text becomes the field's value. No parse: a named field's own parse, or for a bool
/// a switch that takes no value and sets it.
template <class T>
struct Flag {
  const char* name;
  unsigned commands;
  void (*parse)(const std::string& text, const std::string& flag, T& out) = nullptr;
  /// A number's flag without a parse reads the field's FieldRange: its text is the value times
  /// `times` (--mass: a percent of the 0 … 1 share, 100), at least `lo` when that is above the
  /// range's (--resize: 0, the model's own size, is the JSON's and the widget's, no flag's).
  double times = 1;
  std::optional<double> lo = std::nullopt;
};

/// A flag that sets more than the field it is listed with: `--mask MASK` sets the whole mask
/// (kind, radius, ratio, seed) and the painted cells.
template <class Target>
struct FlagTo {
  const char* name;
  unsigned commands;
  Target& target;
  void (*parse)(const std::string& text, const std::string& flag, Plain<Target>& out);
};

constexpr auto kRefuse = FieldRange::OnRead::Refuse, kDefault = FieldRange::OnRead::Default, kKeep = FieldRange::OnRead::Keep;

constexpr unsigned kQuery = kFlagsRow | kFlagsRender;          // the hand-made heads' commands
constexpr unsigned kPicture = kFlagsRender | kFlagsRenderModel;  // the commands that draw

std::string source_field_name(const ShownSource& s) {
  return s == ShownSource::Vit ? "vit" : s == ShownSource::Train ? "train" : "hand_made";
}
void parse_source_field(const std::string& t, ShownSource& s) {
  if (t == "vit") s = ShownSource::Vit;
  else if (t == "train") s = ShownSource::Train;
  else if (t == "hand_made") s = ShownSource::HandMade;
  else throw Error(text_format(_("unknown source '%s' (hand_made, vit, train)"), t.c_str()));
}
std::string cka_examples_field_name(const CkaExamples& e) { return e == CkaExamples::Photo ? "photo" : "fashion"; }
void parse_cka_examples_field(const std::string& t, CkaExamples& e) {
  if (t == "fashion") e = CkaExamples::FashionTest;
  else if (t == "photo") e = CkaExamples::Photo;
  else throw Error(text_format(_("unknown CKA examples '%s' (fashion, photo)"), t.c_str()));
}
std::string cnn_show_field_name(const CnnShow& c) {
  return c == CnnShow::GradCam ? "grad-cam" : c == CnnShow::Cka ? "cka" : c == CnnShow::Features ? "features" : "field";
}
void parse_cnn_show_field(const std::string& t, CnnShow& c) {
  if (t == "field") c = CnnShow::Field;
  else if (t == "grad-cam") c = CnnShow::GradCam;
  else if (t == "cka") c = CnnShow::Cka;
  else if (t == "features") c = CnnShow::Features;
  else throw Error(text_format(_("unknown CNN view '%s' (field, grad-cam, cka, features)"), t.c_str()));
}
std::string relevance_method_field_name(const RelevanceMethod& m) { return relevance_method_name(m); }
void parse_relevance_method_field(const std::string& t, RelevanceMethod& m) {
  const auto parsed = parse_relevance_method(t);
  // TRANSLATORS: the name given, the methods there are.
  if (!parsed) throw Error(text_format(_("unknown relevance method '%s' (%s)"), t.c_str(), relevance_method_list().c_str()));
  m = *parsed;
}
std::string relevance_beside_field_name(const std::optional<RelevanceMethod>& m) { return m ? relevance_method_name(*m) : "none"; }
void parse_relevance_beside_field(const std::string& t, std::optional<RelevanceMethod>& m) {
  if (t == "none") {
    m.reset();
    return;
  }
  const auto parsed = parse_relevance_method(t);
  // TRANSLATORS: the name given, the methods there are; none is the flag's word: keep it.
  if (!parsed)
    throw Error(text_format(_("unknown relevance method '%s' (%s or none)"), t.c_str(), relevance_method_list().c_str()));
  m = *parsed;
}
void text_flag(const std::string& t, const std::string& f, std::string& v) {
  if (t.empty()) throw Error(text_format(_("%s needs a value"), f.c_str()));
  v = t;
}
std::string run_field_name(const int& run) { return run == 1 ? "b" : "a"; }
void parse_run_field(const std::string& t, int& run) {
  if (t == "a") run = 0;
  else if (t == "b") run = 1;
  else throw Error(text_format(_("unknown run '%s' (a, b)"), t.c_str()));
}
std::string match_field_name(const bool& by_index) { return by_index ? "index" : "depth"; }
void parse_match_field(const std::string& t, bool& by_index) {
  if (t == "index") by_index = true;
  else if (t == "depth") by_index = false;
  else throw Error(text_format(_("unknown layer match '%s' (depth, index)"), t.c_str()));
}
std::string edge_field_name(const EdgeMode& e) { return std::string(edge_mode_name(e)); }
void parse_edge_field(const std::string& t, EdgeMode& e) { e = parse_edge_mode(t); }
std::string mask_field_name(const MaskKind& k) { return std::string(mask_kind_name(k)); }
void parse_mask_field(const std::string& t, MaskKind& k) { k = t == "painted" ? MaskKind::Painted : parse_mask(t).spec.kind; }
std::string pos_field_name(const PosMode& m) { return std::string(pos_mode_name(m)); }
void parse_pos_field(const std::string& t, PosMode& m) { m = parse_pos_mode(t); }
std::string colormap_field_name(const Colormap& c) { return std::string(colormap_name(c)); }
void parse_colormap_field(const std::string& t, Colormap& c) { c = parse_colormap(t); }
std::string norm_field_name(const Normalization& n) { return std::string(normalization_name(n)); }
void parse_norm_field(const std::string& t, Normalization& n) { n = parse_normalization(t); }
std::string backend_field_name(const VitBackend& b) { return vit_backend_name(b); }
void parse_backend_field(const std::string& t, VitBackend& b) { b = parse_vit_backend(t, "backend"); }

// How the flags' text is read (each error names the flag).
void path_flag(const std::string& t, const std::string&, std::filesystem::path& v) { v = t; }
// A hand-made head by its name (colour, position, …) or its number, 0 … 5.
void hand_made_head_flag(const std::string& t, const std::string& f, HeadChoice& v) {
  if (!t.empty() && std::isdigit(static_cast<unsigned char>(t[0]))) {
    v = HeadChoice{parse_int(t, f, 0, kHeadCount - 1), HeadFusion::Mean};
    return;
  }
  try {
    v = HeadChoice{static_cast<int>(parse_head(t)), HeadFusion::Mean};
  } catch (const Error& e) {
    throw Error(f + ": " + e.what());
  }
}
void cell_flag(const std::string& t, const std::string& f, Cell& v) {
  const auto cell = parse_cell(t, f);
  v = {cell[0], cell[1]};
}
void mask_flag(const std::string& t, const std::string& f, Document& d) {
  ParsedMask m;
  try {
    m = parse_mask(t);
  } catch (const Error& e) {
    throw Error(f + ": " + e.what());
  }
  d.attention.mask = m.spec;
  d.painted_cells = std::move(m.painted_cells);
}

using W = FieldUi::Widget;

/// The hints of a switch (a checkbox): its label and help (English, marked N_(); setting_ref translates).
FieldUi switch_ui(const char* label, const char* help = "") { return FieldUi{.label = label, .help = help, .widget = W::Checkbox}; }

/// The colour maps' labels for the colormap chooser, the colour-blind safe ones marked. The names are
/// the --colormap values; the mark is translated here: the table is made anew on every call
/// (setting_ref, each frame the widget is drawn), so this is the point of use.
std::vector<std::string> colormap_choices() {
  std::vector<std::string> out;
  for (int c = 0; c < kColormapCount; ++c) {
    const auto map = static_cast<Colormap>(c);
    out.emplace_back(colormap_name(map));
    // TRANSLATORS: a colour map's name (heat, cb-blue-yellow) in the colormap chooser, marked as safe
    // for colour-blind eyes; keep the two spaces.
    if (colormap_is_colour_blind_safe(map)) out.back() = text_format(_("%s  (colour-blind safe)"), out.back().c_str());
  }
  return out;
}
std::vector<std::string> head_choices() {
  std::vector<std::string> out;
  for (int h = 0; h < kHeadCount; ++h) out.emplace_back(head_name(static_cast<HeadKind>(h)));
  return out;
}

/// A setting saved by name: `v` with its names (see Named).
template <class T>
Named<T> named(T& v, std::string (*name)(const Plain<T>&), void (*parse)(const std::string&, Plain<T>&)) {
  return Named<T>{v, name, parse};
}

/// The field table's first part (for_each_field): the photo, the attention math (core
/// Settings) and the hand-made heads' choice.
template <class State, class Field>
void attention_fields(State& s, Field& field) {
  auto& a = s.attention;
  field("image", s.image_path, Flag<std::filesystem::path>{"--image", kQuery | kFlagsRenderModel, path_flag});
  field("patch", a.patch, Flag<int>{"--patch", kQuery},
        FieldRange{1, 1 << 20, kKeep},
        // TRANSLATORS: K is the patch size in pixels (the chapter's symbol).
        FieldUi{.label = N_("patch size K"),
                // TRANSLATORS: K is the patch size, N the number of tokens, A the attention matrix (the chapter's symbols).
                .help = N_("Each K x K patch of the photo is one token (fig. 26.2). Smaller K: more tokens N, and N^2 weights in A."),
                // TRANSLATORS: the patch size slider's number of pixels.
                .format = N_("%d px"), .drag_lo = kMinPatchSize, .drag_hi = kMaxPatchSize});
  field("edge", named(a.edge, edge_field_name, parse_edge_field), Flag<EdgeMode>{"--edge", kQuery},
        FieldUi{.label = N_("pad the last row/column"), .widget = W::Checkbox, .choices = {"crop", "pad"}});
  field("temperature", a.temperature, Flag<float>{"--temperature", kQuery},
        FieldRange{0.01, 100, kKeep},
        // TRANSLATORS: the softmax temperature (tau, τ).
        FieldUi{.label = N_("temperature"),
                // TRANSLATORS: tau is τ; Q, K^T and m are the chapter's symbols; the equation and exercise are the book's.
                .help = N_("softmax(Q K^T / (tau sqrt(m))): tau = 1 is eq. 26.20. Small tau saturates the softmax "
                           "(exercise 12.4): a few keys take all the weight."),
                .format = "%.3g", .log = true});
  field("seed", a.seed, Flag<std::uint32_t>{"--seed", kQuery}, FieldRange{0, 2147483647, kKeep});
  // The hand-made heads' choice (one layer; heads 0 … 5, as HeadKind): --head and --query.
  field("hand_made.layer", s.hand_made.layer);
  field("hand_made.head", s.hand_made.head, Flag<HeadChoice>{"--head", kQuery, hand_made_head_flag},
        // TRANSLATORS: the attention head a map shows (one of the hand-made heads).
        FieldUi{.label = N_("head"), .widget = W::Combo, .choices = head_choices()});
  field("hand_made.token", s.hand_made.prefix_token);
  field("hand_made.cell", s.hand_made.cell, Flag<Cell>{"--query", kQuery, cell_flag});
  field("hand_made.query_pinned", s.hand_made.query_pinned);
  field("hand_made.pins", s.hand_made.pins);
  field("mask.kind", named(a.mask.kind, mask_field_name, parse_mask_field), FlagTo<State>{"--mask", kQuery, s, mask_flag},
        // TRANSLATORS: the attention mask: which keys a query may attend to.
        FieldUi{.label = N_("mask"),
                .help = N_("Section 26.10: masked weights are exactly 0 and each row's remaining weights sum to 1. Causal "
                           "masks follow the raster order of the tokens."),
                .widget = W::Combo,
                // TRANSLATORS: the kinds of mask (a key j is masked for the query i); j and i stay.
                .choices = {N_("none"), N_("causal (j <= i)"), N_("strict (j < i)"), N_("local window"), N_("random drop"),
                            N_("painted")}});
  field("mask.radius", a.mask.radius, FieldRange{0, 20, kKeep},
        FieldUi{.label = N_("radius (patches)")});
  field("mask.ratio", a.mask.ratio, FieldRange{0, 1, kKeep},
        // TRANSLATORS: the share of keys a random mask drops.
        FieldUi{.label = N_("drop ratio"), .format = "%.2f"});
  field("mask.seed", a.mask.seed, FieldRange{0, 2147483647, kKeep},
        FieldUi{.label = N_("mask seed"), .widget = W::Input});
  field("mask.painted", a.mask.painted);
  field("pos.mode", named(a.pos.mode, pos_field_name, parse_pos_field), Flag<PosMode>{"--pos", kQuery},
        // TRANSLATORS: the positional codes p; B, P, lambda, q, k, W_q, W_k, W_v are the chapter's symbols.
        FieldUi{.label = N_("codes"),
                // TRANSLATORS: p, x, y, B, P, lambda (λ), q, k, W_q, W_k, W_v are the chapter's symbols.
                .help = N_("Eqs. 26.38-26.40: p = [sin(x), sin(x/B), ..., sin(x/B^P)] for the column x and the row y. "
                           "Concat appends lambda p to every query and key (q' = [q; lambda p]); add maps p to the token "
                           "width and adds it before W_q, W_k, W_v (as a ViT does)."),
                .widget = W::Combo,
                // TRANSLATORS: the positional codes' modes, each starting with its --pos value (none, concat, add);
                // keep those words where the language has none better.
                .choices = {N_("none"), N_("concat"), N_("add (ViT)")}});
  field("pos.B", a.pos.B, Flag<float>{"--base", kQuery},
        FieldRange{1.1, 10, kKeep},
        FieldUi{.label = "B", .help = N_("Base of the wavelengths: dimension k divides the coordinate by B^k (eq. 26.38)."),
                .format = "%.2f"});
  field("pos.P", a.pos.P, Flag<int>{"--power", kQuery},
        FieldRange{0, 15, kKeep},
        FieldUi{.label = "P", .help = N_("Highest power: P+1 waves per axis, so p has 2(P+1) values (4(P+1) with sine-cosine pairs).")});
  field("pos.sincos", a.pos.sincos, Flag<bool>{"--sincos", kQuery},
        switch_ui(N_("sine-cosine pairs"),
                     N_("Adds cos next to every sin (as in 'Attention Is All You Need'). Then |p|^2 is the same "
                     "everywhere and p_i^T p_j depends only on the offset between the two patches.")));
  field("pos.lambda", a.pos.lambda, Flag<float>{"--lambda", kQuery},
        FieldRange{0, 4, kKeep},
        // TRANSLATORS: the symbol lambda (λ), the weight of the positional code: keep it or write λ.
        FieldUi{.label = N_("lambda"),
                // TRANSLATORS: lambda is λ; q, k, p_i^T p_j are the chapter's symbols.
                .help = N_("The weight of the code appended to q and k in concat mode: every score gains lambda^2 p_i^T p_j."),
                .format = "%.2f"});
  field("custom.W_q", a.custom.W_q);
  field("custom.W_k", a.custom.W_k);
}

/// The field table's second part (for_each_field): the display, the classroom, the views.
template <class State, class Field>
void display_fields(State& s, Field& field) {
  field("display.colormap", named(s.colormap, colormap_field_name, parse_colormap_field), Flag<Colormap>{"--colormap", kPicture},
        FieldUi{.label = N_("colormap"), .widget = W::Combo, .choices = colormap_choices()});
  field("display.normalization", named(s.normalization, norm_field_name, parse_norm_field),
        Flag<Normalization>{"--normalization", kPicture},
        // TRANSLATORS: the colour scale of the maps (how each map's weights are normalized); tau is τ.
        FieldUi{.label = N_("scale"),
                .help = N_("At tau = 1 a row is nearly flat (max/min about 1.2 for the colour head), so min-max stretches "
                           "each map between its own extremes. Absolute shows how flat it really is."),
                .widget = W::Combo,
                // TRANSLATORS: the colour scale's normalizations; "log" is logarithmic.
                .choices = {N_("min-max (each map)"), N_("absolute (0 to max)"), N_("log")}});
  field("display.opacity", s.opacity, Flag<float>{"--opacity", kPicture},
        FieldRange{0, 1, kRefuse},
        FieldUi{.label = N_("opacity"), .format = "%.2f"});
  field("display.grid", s.show_grid, switch_ui(N_("patch grid")));
  field("display.mask_overlay", s.show_mask, switch_ui(N_("darken masked keys")));
  field("display.zoom", s.zoom, FieldRange{0.25, 32, kDefault});  // the map view's wheel
  field("display.pan", s.pan);
  field("classroom.ui_scale", s.ui_scale, FieldRange{0.75, 3, kDefault},
        FieldUi{.label = N_("UI scale"), .format = "%.2f"});
  field("classroom.language", s.language);  // the Language menu's choice; "" = the environment's
  field("classroom.presentation", s.presentation, switch_ui(N_("presentation mode (F5)")));
  field("classroom.panels.controls", s.show_controls);
  // TRANSLATORS: the names of the window's panels, on checkboxes that show or hide them.
  field("classroom.panels.heads", s.show_heads, switch_ui(N_("heads")));
  field("classroom.panels.pinned", s.show_pinned, switch_ui(N_("pinned")));
  field("classroom.panels.images", s.show_images, switch_ui(N_("images")));
  field("classroom.panels.diagnostics", s.show_diagnostics);
  field("views", s.open_views);
  field("tour_step", s.tour_step);
}

/// Calls `field(path, value[, flag][, ui])` for every saved setting of `s` (Document or const
/// Document), `value` a reference to the member or a Named wrapper around it, `flag` a Flag or
/// FlagTo when the command line sets it, `ui` a FieldUi when a window offers it
/// (app/gui/state/setting_widgets.hpp). A number's flag without a parse of its own reads the
/// range of the field's FieldUi: the widget and the flag take the same numbers.
template <class State, class Field>
void for_each_field(State& s, Field&& field) {
  attention_fields(s, field);
  display_fields(s, field);
  // A source's choice with no flags of its own, under `prefix` ("vit", "train").
  auto choice_fields = [&](const std::string& prefix, auto& c) {
    field(prefix + ".layer", c.layer);
    field(prefix + ".head", c.head);
    field(prefix + ".token", c.prefix_token);
    field(prefix + ".cell", c.cell);
    field(prefix + ".query_pinned", c.query_pinned);
    field(prefix + ".pins", c.pins);
  };
  field("source", named(s.source, source_field_name, parse_source_field));
  field("vit.model", s.model_path);
  // The ViT's choice. render --model's --layer, --head and --query set it once the model is
  // loaded (their ranges are the model's): parse_source_choice (app/commands/source_choice.hpp).
  choice_fields("vit", s.vit);
  field("vit.view", s.vit_view);
  field("vit.rollout", s.vit_rollout,
        // TRANSLATORS: (R) is the key that toggles it; A + I and docs/MATH.md stay as they are.
        switch_ui(N_("rollout up to this layer (R)"),
                     N_("Attention rollout (Abnar and Zuidema 2020): each layer's heads fused, the residual added as "
                     "(A + I)/2, rows renormalized, and the layers multiplied from the first to this one. A mean head "
                     "fuses by the mean, max and min by those. See docs/MATH.md.")));
  field("vit.masks", s.vit_masks, switch_ui(N_("DINO masks")));
  field("vit.mass", s.vit_mass, Flag<float>{"--mass", kFlagsRenderModel, nullptr, 100}, FieldRange{0, 1, kRefuse});
  field("vit.norms", s.vit_norms,
        // TRANSLATORS: ||x|| is a token's length; (N) is the key that toggles it.
        switch_ui(N_("token norms ||x|| of this layer (N)"),
                     N_("The length of every output token of this layer, over the image. Trained ViTs without registers "
                     "grow a few tokens of very large norm in background patches and use them as scratch space "
                     "(Darcet et al. 2024).")));
  field("vit.norm_ratio", s.vit_norm_ratio, Flag<float>{"--norm-ratio", kFlagsRenderModel},
        FieldRange{1.1, 50, kKeep},
        // TRANSLATORS: the high-norm threshold; "%.1fx" is its slider's number of times ("4.0x").
        FieldUi{.label = N_("threshold"),
                .help = N_("The high-norm threshold: a patch token is high-norm when its ||x|| is over this many times the "
                           "median of the layer's "
                           "patch tokens. Darcet et al. (2023) find such tokens in large trained ViTs without registers, "
                           "about ten times the others; registers take their job and they go."),
                .format = N_("%.1fx"), .log = true});
  field("vit.mark_high_norm", s.vit_mark_high_norm, Flag<bool>{"--mark-high-norm", kFlagsRenderModel},
        switch_ui(N_("mark high-norm patches on the map")));
  // Checked against the model once it is loaded (vit_class_named): an index, a label or top.
  field("vit.relevance.class", s.relevance_class, Flag<std::string>{"--class", kFlagsRenderModel, text_flag});
  field("vit.relevance.method", named(s.relevance_method, relevance_method_field_name, parse_relevance_method_field),
        Flag<RelevanceMethod>{"--method", kFlagsRenderModel});
  // A second method drawn beside the first, with its own faithfulness curves (none: one map).
  field("vit.relevance.beside", named(s.relevance_beside, relevance_beside_field_name, parse_relevance_beside_field),
        Flag<std::optional<RelevanceMethod>>{"--beside", kFlagsRenderModel});
  field("vit.relevance.on_map", s.relevance_on_map, Flag<bool>{"--relevance-on-map", kFlagsRenderModel},
        switch_ui(N_("the class's relevance on the map (Why?)"),
                     N_("The main map shows why the model decided on the class the Why? view explains, by its method, "
                     "instead of a row of A: attention says where a token reads from, relevance what the decision "
                     "depended on. With Compare on, both models' relevance side by side.")));
  field("vit.bilinear", s.bilinear, Flag<bool>{"--bilinear", kPicture},
        switch_ui(N_("bilinear upsampling"),
                     N_("Off: every patch is one block of colour, which is what the model computed. On: smoothed between "
                     "patch centres, prettier but it invents detail finer than a patch.")));
  field("vit.resize", s.vit_resize, Flag<int>{"--resize", kFlagsRenderModel, nullptr, 1, 1}, FieldRange{0, 4096, kRefuse});
  field("vit.backend", named(s.vit_backend, backend_field_name, parse_backend_field), Flag<VitBackend>{"--backend", kFlagsRenderModel});
  field("vit.recent", s.recent_models);
  field("lesson.recent", s.recent_lessons);
  field("compare.model", s.compare_model);
  field("compare.match_layers", named(s.compare_by_index, match_field_name, parse_match_field));
  field("compare.one_scale", s.compare_one_scale, Flag<bool>{"--one-scale", kFlagsRenderModel},
        switch_ui(N_("one colour scale for both"),
                     N_("On: the two maps share one colour scale, from the smaller of their lowest values to the larger of "
                     "their highest, so equal colours are equal weights. Off: each map spans its own range, which shows "
                     "each model's pattern but not which attends more sharply.")));
  field("cka.examples", named(s.cka_examples, cka_examples_field_name, parse_cka_examples_field),
        Flag<CkaExamples>{"--cka-examples", kFlagsRenderModel});
  field("cka.count", s.cka_count, Flag<int>{"--cka-count", kFlagsRenderModel}, FieldRange{2, 10000, kRefuse});
  field("cnn.model", s.cnn_model, Flag<std::filesystem::path>{"--cnn", kFlagsRenderModel, path_flag});
  field("cnn.show", named(s.cnn_show, cnn_show_field_name, parse_cnn_show_field), Flag<CnnShow>{"--cnn-show", kFlagsRenderModel});
  field("cnn.channel", s.cnn_channel, Flag<int>{"--cnn-channel", kFlagsRenderModel}, FieldRange{0, 65535, kRefuse});
  // The model being trained in the window (the Train tab): its choice, as the ViT's.
  choice_fields("train", s.train);
  field("train.run", named(s.train_run, run_field_name, parse_run_field));
  field("train.probe", s.train_probe, FieldRange{0, kFashionMnistTestCount - 1, kRefuse});  // a test image
  field("train.probe_photo", s.train_probe_photo);
  field("export_dir", s.export_dir);
  field("export_map_only", s.export_map_only,
        switch_ui(N_("map only, for a slide"),
                     N_("F12 saves the map with its colour bar only (no panels), or the whole window. A JSON file of "
                     "every setting goes beside the picture, and no file is ever overwritten.")));
}

template <class T>
nlohmann::json to_value(const T& v) {
  return v;
}
nlohmann::json to_value(const Cell& c) { return {{"col", c.col}, {"row", c.row}}; }
nlohmann::json to_value(const HeadChoice& h) {
  if (h.head >= 0) return h.head;
  return head_fusion_name(h.fusion);
}
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

template <class T>
struct is_flag_to : std::false_type {};
template <class T>
struct is_flag_to<FlagTo<T>> : std::true_type {};
template <class T>
struct is_flag : is_flag_to<T> {};
template <class T>
struct is_flag<Flag<T>> : std::true_type {};

/// The extra of type E among a field's extras (its flag, its hints, its range), or null.
template <class E, class... A>
const E* extra_among(const A&... extras) {
  const E* found = nullptr;
  [[maybe_unused]] auto pick = [&](const auto& e) {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(e)>, E>) found = &e;
  };
  (pick(extras), ...);
  return found;
}

/// A number field's value as a double (false for a field that is no number).
template <class V>
constexpr bool is_number_field = std::is_same_v<V, int> || std::is_same_v<V, float> || std::is_same_v<V, std::uint32_t>;

/// What the command line does with one flag of the table.
struct FlagParser {
  std::string path;
  unsigned commands = 0;
  bool takes_value = true;
  std::function<void(const std::string& text)> set;  ///< throws Error naming the flag
};

/// The flags of the table over `d`, each bound to its field of `d`. A number's flag without a
/// parse of its own takes the range of the field's FieldRange (the widget's numbers).
std::vector<std::pair<std::string, FlagParser>> flag_parsers(Document& d) {
  std::vector<std::pair<std::string, FlagParser>> out;
  for_each_field(d, [&](const std::string& path, auto&& value, const auto&... extras) {
    const FieldRange* range = extra_among<FieldRange>(extras...);
    [[maybe_unused]] auto add = [&](const auto& f) {
      using F = std::remove_cvref_t<decltype(f)>;
      if constexpr (is_flag<F>::value) {
        const std::string name = f.name;
        using V = std::remove_cvref_t<decltype(value)>;
        FlagParser p{path, f.commands, true, {}};
        if constexpr (is_flag_to<F>::value) {
          p.set = [&target = f.target, parse = f.parse, name](const std::string& t) { parse(t, name, target); };
        } else if constexpr (requires { value.parse; }) {  // a named field: its names, or the flag's own parse
          p.set = [value, parse = f.parse, name](const std::string& t) {
            if (parse) return parse(t, name, value.value);
            try {
              value.parse(t, value.value);
            } catch (const Error& e) {
              throw Error(name + ": " + e.what());
            }
          };
        } else if (f.parse) {
          p.set = [&target = value, parse = f.parse, name](const std::string& t) { parse(t, name, target); };
        } else if constexpr (std::is_same_v<V, bool>) {
          p.takes_value = false;  // a switch
          p.set = [&target = value](const std::string&) { target = true; };
        } else if constexpr (is_number_field<V>) {
          if (!range)
            throw Error("internal: the flag " + name + " has no parse and its field no range");  // i18n: English (a bug)
          const double lo = std::max(range->lo, f.lo.value_or(range->lo)), hi = range->hi, times = f.times;
          if constexpr (std::is_same_v<V, float>)
            p.set = [&target = value, lo, hi, times, name](const std::string& t) {
              target = parse_float(t, name, static_cast<float>(lo * times), static_cast<float>(hi * times)) / static_cast<float>(times);
            };
          else
            p.set = [&target = value, lo, hi, name](const std::string& t) {
              target = static_cast<V>(parse_int(t, name, static_cast<int>(lo), static_cast<int>(hi)));
            };
        } else {
          throw Error("internal: the flag " + name + " has no parse");  // i18n: English (a bug)
        }
        out.emplace_back(name, std::move(p));
      }
    };
    (add(extras), ...);
  });
  return out;
}

}  // namespace

nlohmann::json head_choice_json(HeadChoice head) { return to_value(head); }

nlohmann::json to_json(const Document& s) {
  nlohmann::json j = nlohmann::json::object();
  for_each_field(s, [&](const std::string& path, const auto& value, const auto&...) {
    j[pointer(path)] = to_value(value);  // makes the parent objects
  });
  return j;
}

nlohmann::json migrate_json(const nlohmann::json& in) {
  if (!in.is_object()) return in;
  nlohmann::json j = in;
  // Moves the value at old path `from` to `to` (translated by `how`) unless `to` is there already.
  auto relocate = [&](const std::string& from, const std::string& to, auto how) {
    const auto f = pointer(from), t = pointer(to);
    if (!j.contains(f)) return;
    nlohmann::json v = how(j.at(f));
    j.at(f.parent_pointer()).erase(f.back());
    if (!j.contains(t)) j[t] = std::move(v);
  };
  auto same = [](const nlohmann::json& v) { return v; };
  // Before issue 28 the hand-made heads' head was its name ("colour") at `head`, the query at
  // `query`, the pinned queries at `pinned`; `query_pinned` was shared by both sources.
  if (j.contains("query_pinned") && !j.contains(pointer("vit.query_pinned")) && j.contains("vit") && j["vit"].is_object())
    j["vit"]["query_pinned"] = j["query_pinned"];
  relocate("query_pinned", "hand_made.query_pinned", same);
  relocate("query", "hand_made.cell", same);
  relocate("pinned", "hand_made.pins", same);
  relocate("head", "hand_made.head", [](const nlohmann::json& v) -> nlohmann::json {
    if (!v.is_string()) return v;
    try {
      return static_cast<int>(parse_head(v.get<std::string>()));
    } catch (const Error& e) {
      throw Error(text_format(_("setting '%s': %s"), "head", e.what()));  // i18n: English (a file's key)
    }
  });
  // `vit.source` (a bool) is `source`; `vit.head` was −1/−2/−3 for the heads' mean/max/min.
  relocate("vit.source", "source", [](const nlohmann::json& v) -> nlohmann::json {
    return v.is_boolean() ? nlohmann::json(v.get<bool>() ? "vit" : "hand_made") : v;
  });
  if (const auto h = pointer("vit.head"); j.contains(h) && j.at(h).is_number_integer() && j.at(h).get<std::int64_t>() < 0) {
    const std::int64_t old = j.at(h).get<std::int64_t>();
    if (old >= -3) j[h] = head_fusion_name(old == -1 ? HeadFusion::Mean : old == -2 ? HeadFusion::Max : HeadFusion::Min);
  }
  relocate("vit.pinned", "vit.pins", same);
  // Before issue 48 the ViT's lower view was its place in the list of the time, `vit.tab`.
  relocate("vit.tab", "vit.view", [](const nlohmann::json& v) -> nlohmann::json {
    static const char* const kOrder[] = {"distance", "pinned", "matrix", "step", "cka"};
    if (!v.is_number_integer()) return v;
    const std::int64_t t = v.get<std::int64_t>();
    if (t < 0 || t > 4)
      throw Error(text_format(_("setting '%s' is out of range (%d … %d)"), "vit.tab", 0, 4));  // i18n: English (a file's key)
    return kOrder[t];
  });
  // Before issue 47 the export folder defaulted to "." (the current folder) and was written so;
  // a folder the user chose is always absolute (choose_export_dir). "." is the default, now empty:
  // the Pictures folder's attnlab.
  if (const auto e = pointer("export_dir"); j.contains(e) && j.at(e) == ".") j[e] = "";
  return j;
}

void apply_json(const nlohmann::json& j_in, Document& out) {
  const nlohmann::json j = migrate_json(j_in);
  Document s = out;
  std::string key;
  try {
    for_each_field(s, [&](const std::string& path, auto&& field, const auto&...) {
      key = path;
      const auto at = pointer(path);
      if (!j.contains(at)) return;  // false also when a parent is not an object
      const nlohmann::json* v = &j.at(at);
      using F = std::remove_cvref_t<decltype(field)>;
      if constexpr (std::is_same_v<F, std::filesystem::path>) {
        field = v->get<std::string>();
      } else if constexpr (requires { field.parse; }) {
        try {
          field.parse(v->get<std::string>(), field.value);
        } catch (const Error& e) {
          // TRANSLATORS: a setting's name in the file, what is wrong with its value.
          throw Error(text_format(_("setting '%s': %s"), path.c_str(), e.what()));
        }
      } else {
        read_value(*v, field, path);
      }
    });
  } catch (const nlohmann::json::exception& e) {
    // TRANSLATORS: a setting's name in the file, the JSON library's own words.
    throw Error(text_format(_("setting '%s' has the wrong type (%s)"), key.c_str(), e.what()));
  }
  // Each number against its field's range (FieldRange::OnRead), the defaults from a new document.
  std::map<std::string, double> defaults;
  Document fresh;
  for_each_field(fresh, [&](const std::string& path, auto&& value, const auto&... extras) {
    if constexpr (is_number_field<std::remove_cvref_t<decltype(value)>>)
      if (extra_among<FieldRange>(extras...)) defaults[path] = static_cast<double>(value);
  });
  for_each_field(s, [&](const std::string& path, auto&& value, const auto&... extras) {
    using V = std::remove_cvref_t<decltype(value)>;
    if constexpr (is_number_field<V>) {
      const FieldRange* r = extra_among<FieldRange>(extras...);
      const double v = static_cast<double>(value);
      if (!r || r->on_read == kKeep || (v >= r->lo && v <= r->hi)) return;
      if (r->on_read == kDefault) {
        value = static_cast<V>(defaults.at(path));
        return;
      }
      // TRANSLATORS: a setting's name in the file, the lowest and the highest value it takes.
      throw Error(text_format(_("setting '%s' is out of range (%s … %s)"),
                              path.c_str(), format_float(static_cast<float>(r->lo)).c_str(),
                              format_float(static_cast<float>(r->hi)).c_str()));
    }
  });
  validate(s.attention);
  const SourceChoice& h = s.hand_made;
  // The errors name the setting by its key in the file (English).
  const auto out_of_range = [](const char* setting) { return Error(text_format(_("setting '%s' is out of range"), setting)); };
  if (h.layer != 0)
    throw Error(text_format(_("setting '%s' is out of range (the hand-made heads are one layer, 0)"),
                            "hand_made.layer"));  // i18n: English (a file's key)
  if (h.head.head < 0 || h.head.head >= kHeadCount)
    throw Error(text_format(_("setting '%s' is out of range (%d … %d)"),
                            "hand_made.head", 0, kHeadCount - 1));  // i18n: English (a file's key)
  if (h.prefix_token != -1)
    throw Error(text_format(_("setting '%s' is out of range (the hand-made heads have no prefix tokens: -1)"),
                            "hand_made.token"));  // i18n: English (a file's key)
  if (s.vit.layer < -1) throw out_of_range("vit.layer");
  if (s.vit.prefix_token < -1) throw out_of_range("vit.token");
  if (s.train.layer < -1) throw out_of_range("train.layer");
  if (s.train.prefix_token < -1) throw out_of_range("train.token");
  out = std::move(s);
}

SettingRef setting_ref(Document& d, std::string_view path) {
  std::optional<SettingRef> found;
  for_each_field(d, [&](const std::string& p, auto&& value, const auto&... extras) {
    if (found || p != path) return;
    const FieldUi* ui = extra_among<FieldUi>(extras...);
    if (!ui) throw Error("internal: the setting '" + p + "' has no UI hints in the field table");  // i18n: English (a bug)
    using V = std::remove_cvref_t<decltype(value)>;
    SettingRef r{p, *ui, {}};
    // The table's text is English, marked N_(): shown in the language in use, translated on every
    // call (the window asks each frame), never kept. "" stays "" (gettext's "" is the catalog's header).
    const auto shown = [](const char* english) { return *english ? _(english) : english; };
    r.ui.label = shown(ui->label);
    r.ui.help = shown(ui->help);
    r.ui.format = shown(ui->format);
    for (std::string& c : r.ui.choices)
      if (const char* t = shown(c.c_str()); t != c.c_str()) c = t;
    if (const FieldRange* range = extra_among<FieldRange>(extras...)) r.ui.lo = range->lo, r.ui.hi = range->hi;
    if constexpr (std::is_same_v<V, int> || std::is_same_v<V, float> || std::is_same_v<V, bool> ||
                  std::is_same_v<V, std::uint32_t>) {
      r.value = &value;
    } else if constexpr (std::is_same_v<V, HeadChoice>) {  // a hand-made head by its number
      r.value = ChoiceRef{[&value] { return value.head; }, [&value](int h) { value = HeadChoice{h, HeadFusion::Mean}; }};
    } else if constexpr (requires { value.parse; }) {  // an enum (or the run) by its number
      auto& v = value.value;
      using E = std::remove_cvref_t<decltype(v)>;
      if constexpr (std::is_enum_v<E> || std::is_integral_v<E>)
        r.value = ChoiceRef{[&v] { return static_cast<int>(v); }, [&v](int n) { v = static_cast<E>(n); }};
      else
        // vit.relevance.beside: the view's own combo
        throw Error("internal: the setting '" + p + "' has no widget for its type");  // i18n: English (a bug)
    } else {
      throw Error("internal: the setting '" + p + "' has no widget for its type");  // i18n: English (a bug)
    }
    found = std::move(r);
  });
  if (!found) throw Error("internal: no setting '" + std::string(path) + "' in the field table");  // i18n: English (a bug)
  return *found;
}

FieldRange field_range(std::string_view path) {
  Document d;
  std::optional<FieldRange> found;
  for_each_field(d, [&](const std::string& p, auto&&, const auto&... extras) {
    if (p == path)
      if (const FieldRange* r = extra_among<FieldRange>(extras...)) found = *r;
  });
  if (!found) throw Error("internal: the field table gives '" + std::string(path) + "' no range");  // i18n: English (a bug)
  return *found;
}

std::vector<std::string> setting_paths() {
  Document d;
  std::vector<std::string> out;
  for_each_field(d, [&](const std::string& p, auto&&, const auto&... extras) {
    if (extra_among<FieldUi>(extras...)) out.push_back(p);
  });
  return out;
}

std::vector<DocumentFlag> document_flags() {
  Document d;
  std::vector<DocumentFlag> out;
  for (const auto& [name, p] : flag_parsers(d)) out.push_back({name, p.path, p.commands, p.takes_value});
  return out;
}

std::string flag_of_field(std::string_view path) {
  for (const DocumentFlag& f : document_flags())
    if (f.path == path) return f.flag;
  return {};
}

std::vector<std::string> parse_document_flags(const std::vector<std::string>& args, FlagCommand command, Document& out,
                                              std::vector<CommandFlag> own, const FlagRules& rules) {
  Document d = out;
  std::vector<CommandFlag> flags = std::move(own);  // the caller's rows, then the command's flags bound to their fields of d
  for (auto& [name, p] : flag_parsers(d)) {
    if ((p.commands & command) == 0) continue;
    for (const CommandFlag& f : flags)
      if (f.name == name)
        throw Error("internal: " + name + " is a flag of the field table and of the command's own");  // i18n: English (a bug)
    flags.push_back({name, p.takes_value, [set = std::move(p.set)](const std::string& text, const std::string&) { set(text); }});
  }
  const auto given = parse_flags(args, flags, rules);
  out = std::move(d);
  return given;
}

}  // namespace attnlab::app
