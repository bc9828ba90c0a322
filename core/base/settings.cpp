#include "core/base/settings.hpp"

#include "core/base/error.hpp"
#include "core/base/parse.hpp"

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
    case HeadKind::Colour: return "q = k = unit mean colour of the patch (fig. 26.12)";
    case HeadKind::Position: return "q = k = positional code p (eq. 26.40); it reads p even when 'codes' is off";
    case HeadKind::ColourPosition: return "q = k = [colour; p/2]: similar colour and near";
    case HeadKind::Texture: return "q = k = gradient energy and orientation of the patch";
    case HeadKind::Random: return "random W_q, W_k on a random projection of the patch: an untrained ViT, noise";
    case HeadKind::Custom: return "q = W_q c, k = W_k c with your W_q, W_k (eq. 26.24), edited in the Heads panel";
  }
  return "?";
}

HeadKind parse_head(std::string_view name) {
  for (int h = 0; h < kHeadCount; ++h)
    if (head_name(static_cast<HeadKind>(h)) == name) return static_cast<HeadKind>(h);
  if (name == "color") return HeadKind::Colour;
  throw Error("unknown head '" + std::string(name) +
              "' (expected colour, position, colour+position, texture, random or custom)");
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
  const std::string usage =
      " (expected none, causal, strict, window:R, random:RATIO[:SEED] or painted:C,R;C,R;...)";
  ParsedMask out;
  const auto colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  const std::string_view arg = colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
  auto no_arg = [&] {
    if (colon != std::string_view::npos) throw Error("mask '" + std::string(text) + "' takes no argument" + usage);
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
    if (!arg.empty()) out.spec.radius = parse_int(arg, "window radius", 0, 100000);
  } else if (kind == "random") {
    out.spec.kind = MaskKind::Random;
    if (!arg.empty()) {
      const auto c2 = arg.find(':');
      out.spec.ratio = parse_float(arg.substr(0, c2), "random mask ratio", 0.0f, 1.0f);
      if (c2 != std::string_view::npos)
        out.spec.seed = static_cast<std::uint32_t>(parse_int(arg.substr(c2 + 1), "random mask seed", 0, 2147483647));
    }
  } else if (kind == "painted") {
    out.spec.kind = MaskKind::Painted;
    out.painted_cells = parse_cells(arg, "painted cells");
  } else {
    throw Error("unknown mask '" + std::string(text) + "'" + usage);
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
  throw Error("unknown positional mode '" + std::string(name) + "' (expected none, concat or add)");
}

std::string_view edge_mode_name(EdgeMode mode) { return mode == EdgeMode::Crop ? "crop" : "pad"; }

EdgeMode parse_edge_mode(std::string_view name) {
  if (name == "crop") return EdgeMode::Crop;
  if (name == "pad") return EdgeMode::Pad;
  throw Error("unknown edge mode '" + std::string(name) + "' (expected crop or pad)");
}

} // namespace attnlab
