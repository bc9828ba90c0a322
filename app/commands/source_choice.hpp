#pragma once
// A source's choice (Document's SourceChoice: layer, head, query) resolved against the source it
// is for, and read from the command line: `--layer L`, `--head H|mean|max|min` and `--query
// cls|regN|COL,ROW` mean the same with the same errors in `attnlab vit`, `attnlab video` and
// `render --model` (one parser, parse_source_choice). Layers, heads and registers count from 0,
// as the checkpoint's tensor names, the window and the sidecars count them. No window: this is
// attnlab_commands; the window's keys over a choice are app/gui/state/source_choice.hpp.
#include "app/commands/document.hpp"
#include "core/vit/attention_source.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab::app {

/// What a choice is resolved against: the source's grid (with its prefix tokens), layers and heads.
struct ChoiceShape {
  SourceGrid grid;
  int layers = 1, heads = 1;
  bool fusions = false;  ///< whether the source fuses heads (mean, max, min over them): a ViT
};

/// The shape of a ViT's pass (a VitRun): its grid, layers and heads; its heads fuse.
ChoiceShape vit_choice_shape(const AttentionSource& vit);

/// The layer the choice shows: its layer, or the last one for -1 (and for one past the source's).
int choice_layer(const SourceChoice& c, int layers);
/// The head the choice shows: a head past the source's is its last one.
HeadChoice choice_head(const SourceChoice& c, int heads);
/// The query token: the prefix token (clamped to the source's), or the patch `cell` (clamped to
/// the grid) as prefix + row · cols + col.
int choice_query(const SourceChoice& c, const SourceGrid& grid);

/// "mean", "max", "min": a fusion of heads as the command line and the JSON name it.
const char* head_fusion_name(HeadFusion fusion);
/// The fusion `text` names; nullopt when it names none.
std::optional<HeadFusion> parse_head_fusion(std::string_view text);
/// A head's number ("3") or its fusion's name ("mean").
std::string head_choice_text(HeadChoice head);

/// The choice's flags as the command line gives them ("" where not given).
struct ChoiceFlags {
  std::string layer, head, query;
};

/// The flags of a choice: --layer, --head, --query.
const std::vector<std::string>& choice_flag_names();

/// The rows of a command's flag table for a choice (--layer, --head, --query), each keeping its
/// value in `flags` after read_choice_flag's check of its form; `flags` must outlive the rows.
std::vector<CommandFlag> choice_command_flags(ChoiceFlags& flags);

/// Keeps `value` in `flags` when `flag` is one of choice_flag_names() and returns true, after
/// checking its form (a whole number, mean/max/min, cls/regN/COL,ROW: the errors of
/// parse_source_choice); false for any other flag.
bool read_choice_flag(ChoiceFlags& flags, const std::string& flag, const std::string& value);

/// `base` with the given flags applied, checked against `shape`: --layer L sets the layer (0 …
/// layers − 1), --head H a head (0 … heads − 1) or mean|max|min their fusion, --query cls the
/// CLS token (prefix token 0), regN register N (prefix token 1 + N), COL,ROW a patch of the grid
/// (prefix token −1). Throws Error, one line naming the flag: "--layer 7 is outside the model's
/// layers 0…5", "--head must be a head from 0 or mean, max or min, got 'median'", "--query reg2:
/// the model has 0 register token(s)", "--query 9,0 is outside the model's 4x4 patch grid", or
/// parse_int's and parse_cell's errors (core/base/parse.hpp) for a malformed number or patch.
SourceChoice parse_source_choice(const ChoiceFlags& given, const ChoiceShape& shape, SourceChoice base);

/// How Compare matches source A's layer in source B (SPEC §12): by index (clamped to B's last)
/// or by relative depth, round(l · (L_B − 1)/(L_A − 1)) (B's last layer when A has one).
enum class LayerMatch { Index, Depth };

/// One side of a comparison: its choice's shape and how its input sits on the photo: `scale`
/// input pixels per photo pixel (the resize), `patch` P in input pixels.
struct CompareSide {
  ChoiceShape shape;
  int patch = 1;
  double scale = 1;
};

/// B's choice for A's `a` in Compare (SPEC §12): A's layer matched by `match`; A's head, or the
/// heads' mean where B has no head of that number; the fusion as A's (B's own head where B's
/// heads do not fuse: the hand-made heads); CLS for CLS and a register for the same register
/// (CLS where B has none of that number; B's patch where B has no prefix token); a patch query
/// moved to the patch of B's grid under the centre of A's patch on the photo (clamped to B's
/// grid). B's pins are A's pins moved the same way; nothing else of `b` changes.
SourceChoice matched_choice(const SourceChoice& a, const CompareSide& A, const CompareSide& B, LayerMatch match, SourceChoice b);

}  // namespace attnlab::app
