#include "core/base/settings.hpp"

#include "core/base/error.hpp"
#include "core/base/parse.hpp"
#include "core/base/translate.hpp"

namespace attnlab {

std::string_view head_name(HeadKind kind) {
  switch (kind) {
    case HeadKind::Colour: return "colour";
    case HeadKind::Position: return "position";
    case HeadKind::ColourPosition: return "colour+position";
    case HeadKind::Texture: return "texture";
    case HeadKind::Random: return "random";
    case HeadKind::Custom: return "custom";
  }
  return "?";
}

std::string_view head_summary(HeadKind kind) {
  switch (kind) {
    // TRANSLATORS: a hand-made attention head. q = query, k = key (vectors of the patch); fig./eq. numbers are the
    // book chapter's.
    case HeadKind::Colour: return _("q = k = unit mean colour of the patch (fig. 26.12)");
    // TRANSLATORS: q = query, k = key, p = the patch's positional code; 'codes' is the name of a checkbox
    // (positional codes) in the app.
    case HeadKind::Position: return _("q = k = positional code p (eq. 26.40); it reads p even when 'codes' is off");
    // TRANSLATORS: q = query, k = key; [colour; p/2] is a vector: the colour stacked on half the positional code p.
    case HeadKind::ColourPosition: return _("q = k = [colour; p/2]: similar colour and near");
    // TRANSLATORS: q = query, k = key.
    case HeadKind::Texture: return _("q = k = gradient energy and orientation of the patch");
    // TRANSLATORS: W_q, W_k are the query and key matrices; ViT = vision transformer.
    case HeadKind::Random: return _("random W_q, W_k on a random projection of the patch: an untrained ViT, noise");
    // TRANSLATORS: q = query, k = key, c = the patch's content vector; W_q, W_k the query and key matrices;
    // "Heads" is the name of a panel of the app.
    case HeadKind::Custom: return _("q = W_q c, k = W_k c with your W_q, W_k (eq. 26.24), edited in the Heads panel");
  }
  return "?";
}

HeadKind parse_head(std::string_view name) {
  for (int h = 0; h < kHeadCount; ++h)
    if (head_name(static_cast<HeadKind>(h)) == name) return static_cast<HeadKind>(h);
  if (name == "color") return HeadKind::Colour;
  // TRANSLATORS: the words in parentheses are values of a command-line flag: keep them in English.
  throw Error(text_format(_("unknown head '%s' (expected colour, position, colour+position, texture, random or custom)"),
                          std::string(name).c_str()));
}

std::string_view mask_kind_name(MaskKind kind) {
  switch (kind) {
    case MaskKind::None: return "none";
    case MaskKind::Causal: return "causal";
    case MaskKind::Strict: return "strict";
    case MaskKind::Window: return "window";
    case MaskKind::Random: return "random";
    case MaskKind::Painted: return "painted";
  }
  return "?";
}

ParsedMask parse_mask(std::string_view text) {
  // TRANSLATORS: the values of a command-line flag (keep them in English); R = radius, RATIO and SEED numbers,
  // C,R a patch's column and row.
  const std::string usage = _("(expected none, causal, strict, window:R, random:RATIO[:SEED] or painted:C,R;C,R;...)");
  ParsedMask out;
  const auto colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  const std::string_view arg = colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
  auto no_arg = [&] {
    if (colon != std::string_view::npos)
      throw Error(text_format(_("mask '%s' takes no argument"), std::string(text).c_str()) + " " + usage);
  };
  if (kind == "none") {
    no_arg();
  } else if (kind == "causal") {
    no_arg();
    out.spec.kind = MaskKind::Causal;
  } else if (kind == "strict") {
    no_arg();
    out.spec.kind = MaskKind::Strict;
  } else if (kind == "window") {
    out.spec.kind = MaskKind::Window;
    if (!arg.empty()) out.spec.radius = parse_int(arg, _("window radius"), 0, 100000);
  } else if (kind == "random") {
    out.spec.kind = MaskKind::Random;
    if (!arg.empty()) {
      const auto c2 = arg.find(':');
      out.spec.ratio = parse_float(arg.substr(0, c2), _("random mask ratio"), 0.0f, 1.0f);
      if (c2 != std::string_view::npos)
        out.spec.seed = static_cast<std::uint32_t>(parse_int(arg.substr(c2 + 1), _("random mask seed"), 0, 2147483647));
    }
  } else if (kind == "painted") {
    out.spec.kind = MaskKind::Painted;
    out.painted_cells = parse_cells(arg, _("painted cells"));
  } else {
    throw Error(text_format(_("unknown mask '%s'"), std::string(text).c_str()) + " " + usage);
  }
  return out;
}

std::string mask_to_string(const MaskSpec& mask, int grid_cols) {
  std::string s(mask_kind_name(mask.kind));
  switch (mask.kind) {
    case MaskKind::Window: return s + ":" + std::to_string(mask.radius);
    case MaskKind::Random: return s + ":" + format_float(mask.ratio) + ":" + std::to_string(mask.seed);
    case MaskKind::Painted: {
      s += ":";
      for (size_t n = 0; n < mask.painted.size(); ++n) {
        if (n) s += ";";
        const int i = mask.painted[n];
        s += std::to_string(i % grid_cols) + "," + std::to_string(i / grid_cols);
      }
      return s;
    }
    default: return s;
  }
}

std::string_view pos_mode_name(PosMode mode) {
  switch (mode) {
    case PosMode::None: return "none";
    case PosMode::Concat: return "concat";
    case PosMode::Add: return "add";
  }
  return "?";
}

PosMode parse_pos_mode(std::string_view name) {
  if (name == "none") return PosMode::None;
  if (name == "concat") return PosMode::Concat;
  if (name == "add") return PosMode::Add;
  // TRANSLATORS: none, concat and add are values of a command-line flag: keep them in English.
  throw Error(text_format(_("unknown positional mode '%s' (expected none, concat or add)"), std::string(name).c_str()));
}

std::string_view edge_mode_name(EdgeMode mode) { return mode == EdgeMode::Crop ? "crop" : "pad"; }

EdgeMode parse_edge_mode(std::string_view name) {
  if (name == "crop") return EdgeMode::Crop;
  if (name == "pad") return EdgeMode::Pad;
  // TRANSLATORS: crop and pad are values of a command-line flag: keep them in English.
  throw Error(text_format(_("unknown edge mode '%s' (expected crop or pad)"), std::string(name).c_str()));
}

} // namespace attnlab
