#include "app/commands/source_choice.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/base/parse.hpp"

#include <algorithm>
#include <cmath>
#include <cctype>

namespace attnlab::app {

ChoiceShape vit_choice_shape(const AttentionSource& vit) { return ChoiceShape{vit.grid(), vit.layers(), vit.heads(), true}; }

int choice_layer(const SourceChoice& c, int layers) { return c.layer < 0 || c.layer >= layers ? layers - 1 : c.layer; }

HeadChoice choice_head(const SourceChoice& c, int heads) {
  if (c.head.head < 0) return HeadChoice{-1, c.head.fusion};
  return HeadChoice{std::min(c.head.head, heads - 1), HeadFusion::Mean};
}

int choice_query(const SourceChoice& c, const SourceGrid& g) {
  if (c.prefix_token >= 0 && g.prefix > 0) return std::min(c.prefix_token, g.prefix - 1);
  const int col = std::clamp(c.cell.col, 0, g.cols - 1), row = std::clamp(c.cell.row, 0, g.rows - 1);
  return g.prefix + row * g.cols + col;
}

const char* head_fusion_name(HeadFusion fusion) {
  return fusion == HeadFusion::Max ? "max" : fusion == HeadFusion::Min ? "min" : "mean";
}

std::optional<HeadFusion> parse_head_fusion(std::string_view text) {
  for (const HeadFusion f : {HeadFusion::Mean, HeadFusion::Max, HeadFusion::Min})
    if (text == head_fusion_name(f)) return f;
  return std::nullopt;
}

std::string head_choice_text(HeadChoice head) { return head.head >= 0 ? std::to_string(head.head) : head_fusion_name(head.fusion); }

const std::vector<std::string>& choice_flag_names() {
  static const std::vector<std::string> names = {"--layer", "--head", "--query"};
  return names;
}

namespace {

constexpr int kMany = 1 << 20;  // the most layers, heads, registers a flag may name before the model is known

/// A shape that admits every well-formed choice: read_choice_flag's check of the form alone.
ChoiceShape any_shape() {
  ChoiceShape s;
  s.grid.cols = s.grid.rows = 1 << 30;
  s.grid.prefix = 1 + kMany;
  s.layers = s.heads = kMany;
  s.fusions = true;
  return s;
}

std::string upto(int count) { return "0…" + std::to_string(count - 1); }

}  // namespace

SourceChoice parse_source_choice(const ChoiceFlags& given, const ChoiceShape& shape, SourceChoice c) {
  const auto& names = choice_flag_names();
  const std::string &layer_flag = names[0], &head_flag = names[1], &query_flag = names[2];
  if (const std::string& t = given.layer; !t.empty()) {
    c.layer = parse_int(t, layer_flag, 0, kMany);
    // TRANSLATORS: the flag (--layer), the layer given, the layers there are ("0…11").
    if (c.layer >= shape.layers)
      throw Error(text_format(_("%s %s is outside the model's layers %s"),
                              layer_flag.c_str(), t.c_str(), upto(shape.layers).c_str()));
  }
  if (const std::string& t = given.head; !t.empty()) {
    if (const auto fusion = parse_head_fusion(t)) {
      if (!shape.fusions) throw Error(text_format(_("%s %s: this source does not fuse its heads"), head_flag.c_str(), t.c_str()));
      c.head = HeadChoice{-1, *fusion};
    } else if (std::isdigit(static_cast<unsigned char>(t[0]))) {
      c.head = HeadChoice{parse_int(t, head_flag, 0, kMany), HeadFusion::Mean};
      // TRANSLATORS: the flag (--head), the head given, the heads there are ("0…11").
      if (c.head.head >= shape.heads)
        throw Error(text_format(_("%s %s is outside the model's heads %s"),
                                head_flag.c_str(), t.c_str(), upto(shape.heads).c_str()));
    } else {
      throw Error(text_format(_("%s must be a head from 0 or mean, max or min, got '%s'"), head_flag.c_str(), t.c_str()));
    }
  }
  if (const std::string& t = given.query; t == "cls") {
    if (shape.grid.prefix < 1) throw Error(text_format(_("%s cls: the model has no CLS token"), query_flag.c_str()));
    c.prefix_token = 0;
  } else if (t.starts_with("reg")) {  // regN: register N, token 1 + N
    const int r = parse_int(t.substr(3), query_flag + " regN", 0, kMany);
    if (1 + r >= shape.grid.prefix)
      throw Error(text_format(_("%s %s: the model has %d register token(s)"),
                              query_flag.c_str(), t.c_str(), std::max(shape.grid.prefix - 1, 0)));
    c.prefix_token = 1 + r;
  } else if (!t.empty()) {
    const auto cell = parse_cell(t, query_flag);
    if (cell[0] >= shape.grid.cols || cell[1] >= shape.grid.rows)
      // TRANSLATORS: the flag (--query), the patch given (COL,ROW), the grid's columns and rows.
      throw Error(text_format(_("%s %s is outside the model's %dx%d patch grid"), query_flag.c_str(), t.c_str(), shape.grid.cols,
                              shape.grid.rows));
    c.cell = {cell[0], cell[1]};
    c.prefix_token = -1;
  }
  return c;
}

std::vector<CommandFlag> choice_command_flags(ChoiceFlags& flags) {
  std::vector<CommandFlag> out;
  for (const std::string& name : choice_flag_names())
    out.push_back({name, true, [&flags](const std::string& text, const std::string& flag) { read_choice_flag(flags, flag, text); }});
  return out;
}

bool read_choice_flag(ChoiceFlags& flags, const std::string& flag, const std::string& value) {
  ChoiceFlags one;
  std::string* const slots[] = {&flags.layer, &flags.head, &flags.query};
  std::string* const ones[] = {&one.layer, &one.head, &one.query};
  const auto& names = choice_flag_names();
  const auto at = std::find(names.begin(), names.end(), flag);
  if (at == names.end()) return false;
  const auto n = static_cast<std::size_t>(at - names.begin());
  if (value.empty()) throw Error(text_format(_("%s needs a value"), flag.c_str()));
  *ones[n] = value;
  parse_source_choice(one, any_shape(), SourceChoice{});  // the form; the model's ranges once it is loaded
  *slots[n] = value;
  return true;
}

}  // namespace attnlab::app

namespace attnlab::app {

SourceChoice matched_choice(const SourceChoice& a, const CompareSide& A, const CompareSide& B, LayerMatch match, SourceChoice b) {
  const int LA = A.shape.layers, LB = B.shape.layers;
  const int la = choice_layer(a, LA);
  if (match == LayerMatch::Index) b.layer = std::min(la, LB - 1);
  else b.layer = LA <= 1 ? LB - 1 : static_cast<int>(std::lround(static_cast<double>(la) * (LB - 1) / (LA - 1)));
  const bool b_has_head = a.head.head >= 0 && a.head.head < B.shape.heads;
  if (b_has_head) b.head = a.head;
  else if (B.shape.fusions) b.head = HeadChoice{-1, a.head.head < 0 ? a.head.fusion : HeadFusion::Mean};
  // else: B's heads do not fuse (the hand-made heads): B keeps its own head
  // A prefix token where B has prefix tokens; else (B the hand-made heads) B's query is the
  // patch A's query patch moves to.
  b.prefix_token = a.prefix_token >= 0 && B.shape.grid.prefix > 0 ? (a.prefix_token < B.shape.grid.prefix ? a.prefix_token : 0) : -1;
  // A patch's centre on the photo, (col + ½)·P_A / s_A, and B's patch there.
  auto moved = [&](Cell c) {
    auto axis = [&](int i, int n_a, int n_b) {
      const double photo = (std::clamp(i, 0, n_a - 1) + 0.5) * A.patch / A.scale;
      // A centre on a border of B's patches (B's patch half A's: always) is the patch after it,
      // whatever the rounding of the divisions.
      return std::clamp(static_cast<int>(std::floor(photo * B.scale / B.patch + 1e-9)), 0, n_b - 1);
    };
    return Cell{axis(c.col, A.shape.grid.cols, B.shape.grid.cols), axis(c.row, A.shape.grid.rows, B.shape.grid.rows)};
  };
  b.cell = moved(a.cell);
  b.pins.clear();
  for (const Cell& p : a.pins) b.pins.push_back(moved(p));
  b.query_pinned = a.query_pinned;
  return b;
}

}  // namespace attnlab::app
