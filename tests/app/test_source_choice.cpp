// The keys over a source's choice (app/gui/state/source_choice.hpp), the same for the hand-made heads
// (one layer, six heads, no prefix token) and a ViT (layers × heads, a CLS token): what each
// key does to a SourceChoice, and what it leaves to the caller.
#include "app/gui/state/source_choice.hpp"
#include "core/base/error.hpp"

#include <GLFW/glfw3.h>
#include <gtest/gtest.h>

using namespace attnlab;
using namespace attnlab::app;

namespace {

const ChoiceShape kHandMade{SourceGrid{.cols = 10, .rows = 8, .prefix = 0, .covered_w = 160, .covered_h = 128}, 1, 6, false};
const ChoiceShape kVit{SourceGrid{.cols = 7, .rows = 7, .prefix = 2, .covered_w = 28, .covered_h = 28}, 6, 4, true};

}  // namespace

TEST(SourceChoiceKeys, DigitsPickHeadsFromZeroAndOnlyTheSourcesOwn) {
  SourceChoice c;
  EXPECT_EQ(choice_key(GLFW_KEY_0, c, kHandMade), ChoiceKey::Changed);
  EXPECT_EQ(c.head, (HeadChoice{0, HeadFusion::Mean}));
  EXPECT_EQ(choice_key(GLFW_KEY_5, c, kHandMade), ChoiceKey::Changed);
  EXPECT_EQ(c.head.head, 5) << "key 5 is head 5, as the heads panel numbers it";
  choice_key(GLFW_KEY_6, c, kHandMade);
  EXPECT_EQ(c.head.head, 5) << "the hand-made heads have no head 6";
  EXPECT_EQ(choice_key(GLFW_KEY_A, c, kHandMade), ChoiceKey::Ignored) << "no mean of hand-made heads";
  SourceChoice v{-1, HeadChoice{-1, HeadFusion::Mean}, 0, {}, false, {}};
  choice_key(GLFW_KEY_3, v, kVit);
  EXPECT_EQ(v.head, (HeadChoice{3, HeadFusion::Mean}));
  choice_key(GLFW_KEY_A, v, kVit);
  EXPECT_EQ(v.head, (HeadChoice{-1, HeadFusion::Mean}));
}

TEST(SourceChoiceKeys, LayersStepFromTheResolvedLayerAndStopAtTheEnds) {
  SourceChoice v{-1, HeadChoice{}, 0, {}, false, {}};  // -1: the last layer, 5
  EXPECT_EQ(choice_layer(v, kVit.layers), 5);
  choice_key(GLFW_KEY_PAGE_UP, v, kVit);
  EXPECT_EQ(v.layer, 4);
  choice_key(GLFW_KEY_HOME, v, kVit);
  choice_key(GLFW_KEY_PAGE_UP, v, kVit);
  EXPECT_EQ(v.layer, 0);
  choice_key(GLFW_KEY_END, v, kVit);
  choice_key(GLFW_KEY_PAGE_DOWN, v, kVit);
  EXPECT_EQ(v.layer, 5);
  SourceChoice h;
  EXPECT_EQ(choice_key(GLFW_KEY_PAGE_DOWN, h, kHandMade), ChoiceKey::Ignored);
  EXPECT_EQ(h.layer, 0);
}

TEST(SourceChoiceKeys, ArrowsMoveThePatchQueryAndPinItCAndPActOnTheQuery) {
  SourceChoice v{5, HeadChoice{1, HeadFusion::Mean}, 0, Cell{6, 0}, false, {}};
  EXPECT_EQ(choice_query(v, kVit.grid), 0) << "the CLS token";
  EXPECT_EQ(choice_key(GLFW_KEY_P, v, kVit), ChoiceKey::Changed) << "a prefix token is no patch to pin";
  EXPECT_TRUE(v.pins.empty());
  choice_key(GLFW_KEY_RIGHT, v, kVit);  // from the CLS token: the patch query, one over (stops at the edge)
  EXPECT_EQ(v.prefix_token, -1);
  EXPECT_EQ(v.cell, (Cell{6, 0}));
  EXPECT_TRUE(v.query_pinned);
  choice_key(GLFW_KEY_DOWN, v, kVit);
  EXPECT_EQ(choice_query(v, kVit.grid), 2 + 1 * 7 + 6);
  EXPECT_EQ(choice_key(GLFW_KEY_P, v, kVit), ChoiceKey::Pinned);
  EXPECT_EQ(choice_key(GLFW_KEY_P, v, kVit), ChoiceKey::Changed) << "pinned once";
  EXPECT_EQ(v.pins, (std::vector<Cell>{{6, 1}}));
  choice_key(GLFW_KEY_C, v, kVit);
  EXPECT_EQ(choice_query(v, kVit.grid), 0);
  SourceChoice h;
  EXPECT_EQ(choice_key(GLFW_KEY_C, h, kHandMade), ChoiceKey::Ignored) << "no CLS token";
  EXPECT_EQ(choice_key(GLFW_KEY_M, h, kHandMade), ChoiceKey::Ignored) << "the mask key is the caller's";
  EXPECT_EQ(head_choice_label(HeadChoice{2, HeadFusion::Mean}), "head 2");
  EXPECT_EQ(head_choice_label(HeadChoice{-1, HeadFusion::Max}), "max over heads");
}

// The command line's --layer, --head and --query (app/commands/source_choice.hpp): one parser
// for attnlab vit, attnlab video and render --model, its ranges the source's, its errors one line
// naming the flag.
TEST(SourceChoiceFlags, TheFlagsSetTheChoiceCountedFromZeroAndLeaveTheRest) {
  const SourceChoice base{-1, HeadChoice{-1, HeadFusion::Mean}, 0, Cell{1, 1}, true, {Cell{2, 2}}};
  SourceChoice c = parse_source_choice(ChoiceFlags{"5", "3", "6,0"}, kVit, base);
  EXPECT_EQ(c.layer, 5);
  EXPECT_EQ(c.head, (HeadChoice{3, HeadFusion::Mean}));
  EXPECT_EQ(c.prefix_token, -1);
  EXPECT_EQ(c.cell, (Cell{6, 0}));
  EXPECT_EQ(choice_query(c, kVit.grid), 2 + 6);
  EXPECT_TRUE(c.query_pinned);
  EXPECT_EQ(c.pins, base.pins);
  c = parse_source_choice(ChoiceFlags{"", "max", "reg0"}, kVit, base);
  EXPECT_EQ(c.layer, -1) << "not given: the base's";
  EXPECT_EQ(c.head, (HeadChoice{-1, HeadFusion::Max}));
  EXPECT_EQ(c.prefix_token, 1) << "register 0 is token 1";
  EXPECT_EQ(c.cell, (Cell{1, 1}));
  EXPECT_EQ(parse_source_choice(ChoiceFlags{"0", "min", "cls"}, kVit, c).prefix_token, 0);
  for (const HeadFusion f : {HeadFusion::Mean, HeadFusion::Max, HeadFusion::Min}) {
    EXPECT_EQ(parse_head_fusion(head_fusion_name(f)), f);
    EXPECT_EQ(head_choice_text(HeadChoice{-1, f}), head_fusion_name(f));
  }
  EXPECT_FALSE(parse_head_fusion("median"));
  EXPECT_EQ(head_choice_text(HeadChoice{2, HeadFusion::Mean}), "2");
}

TEST(SourceChoiceFlags, OutOfRangeOrMalformedIsOneLineNamingTheFlag) {
  const SourceChoice base;
  auto error = [&](const ChoiceFlags& given) -> std::string {
    try {
      parse_source_choice(given, kVit, base);
    } catch (const Error& e) {
      return e.what();
    }
    return "(accepted)";
  };
  EXPECT_EQ(error({"6", "", ""}), "--layer 6 is outside the model's layers 0…5");
  EXPECT_EQ(error({"", "4", ""}), "--head 4 is outside the model's heads 0…3");
  EXPECT_EQ(error({"", "median", ""}), "--head must be a head from 0 or mean, max or min, got 'median'");
  EXPECT_EQ(error({"", "", "reg1"}), "--query reg1: the model has 1 register token(s)");
  EXPECT_EQ(error({"", "", "7,0"}), "--query 7,0 is outside the model's 7x7 patch grid");
  EXPECT_NE(error({"x", "", ""}).find("--layer"), std::string::npos);
  EXPECT_NE(error({"", "", "x"}).find("--query"), std::string::npos);
  EXPECT_NE(error({"", "", "regx"}).find("--query regN"), std::string::npos);
  EXPECT_EQ(error({"", "mean", ""}), "(accepted)");
  EXPECT_THROW(parse_source_choice({"", "mean", ""}, kHandMade, base), Error) << "the hand-made heads fuse no heads";
  // Read from the command line: the form at once, the ranges once the model is known.
  ChoiceFlags flags;
  EXPECT_TRUE(read_choice_flag(flags, "--layer", "40"));
  EXPECT_EQ(flags.layer, "40");
  EXPECT_TRUE(read_choice_flag(flags, "--query", "reg3"));
  EXPECT_FALSE(read_choice_flag(flags, "--view", "map"));
  EXPECT_THROW(read_choice_flag(flags, "--layer", "x"), Error);
  EXPECT_THROW(read_choice_flag(flags, "--head", "median"), Error);
  EXPECT_THROW(read_choice_flag(flags, "--query", "1;2"), Error);
  EXPECT_EQ(flags.layer, "40") << "a bad value leaves the flags as they were";
  EXPECT_EQ(choice_flag_names(), (std::vector<std::string>{"--layer", "--head", "--query"}));
}

// Issue 48, Compare (SPEC §12): B's choice for A's, worked by hand. A: ViT-S/16-like, 12 layers,
// 6 heads, CLS only, 14 × 14 patches of 16 px at 224/500 of the photo; B: 4 layers, 4 heads, CLS
// and 4 registers, 37 × 37 patches of 14 px at 518/500.
TEST(CompareChoice, LayersByDepthOrIndexHeadsByNumberQueriesByTheirPlaceOnThePhoto) {
  const CompareSide A{ChoiceShape{SourceGrid{.cols = 14, .rows = 14, .prefix = 1}, 12, 6, true}, 16, 224.0 / 500};
  const CompareSide B{ChoiceShape{SourceGrid{.cols = 37, .rows = 37, .prefix = 5}, 4, 4, true}, 14, 518.0 / 500};
  SourceChoice a;
  a.layer = 7;  // by depth: round(7 · 3/11) = round(1.909) = 2; by index: 7 clamped to B's last, 3
  a.head = HeadChoice{2, HeadFusion::Mean};
  a.cell = Cell{5, 9};  // centre on the photo: (5.5 · 16 / 0.448, 9.5 · 16 / 0.448) = (196.43, 339.29)
  a.pins = {Cell{0, 0}, Cell{13, 13}};
  SourceChoice b = matched_choice(a, A, B, LayerMatch::Depth, SourceChoice{});
  EXPECT_EQ(b.layer, 2);
  EXPECT_EQ(b.head, (HeadChoice{2, HeadFusion::Mean}));
  EXPECT_EQ(b.prefix_token, -1);
  // B's patch there: floor(196.43 · 1.036 / 14) = floor(14.54) = 14, floor(339.29 · 1.036 / 14) = floor(25.11) = 25.
  EXPECT_EQ(b.cell, (Cell{14, 25}));
  // (0,0): centre 17.86 px → floor(1.32) = 1; (13,13): centre 482.14 px → floor(35.68) = 35.
  EXPECT_EQ(b.pins, (std::vector<Cell>{{1, 1}, {35, 35}}));
  EXPECT_EQ(matched_choice(a, A, B, LayerMatch::Index, SourceChoice{}).layer, 3);
  a.layer = -1;  // A's last layer is B's last, both ways
  EXPECT_EQ(matched_choice(a, A, B, LayerMatch::Depth, SourceChoice{}).layer, 3);
  EXPECT_EQ(matched_choice(a, A, B, LayerMatch::Index, SourceChoice{}).layer, 3);
  a.head = HeadChoice{5, HeadFusion::Mean};  // B has heads 0 … 3: the heads' mean
  EXPECT_EQ(matched_choice(a, A, B, LayerMatch::Depth, SourceChoice{}).head, (HeadChoice{-1, HeadFusion::Mean}));
  a.head = HeadChoice{-1, HeadFusion::Max};
  EXPECT_EQ(matched_choice(a, A, B, LayerMatch::Depth, SourceChoice{}).head, (HeadChoice{-1, HeadFusion::Max}));
  // CLS is CLS; B's register 3 (token 4) has no twin in A (CLS only): back the other way, CLS.
  a.prefix_token = 0;
  EXPECT_EQ(matched_choice(a, A, B, LayerMatch::Depth, SourceChoice{}).prefix_token, 0);
  SourceChoice r;
  r.prefix_token = 4;
  EXPECT_EQ(matched_choice(r, B, A, LayerMatch::Depth, SourceChoice{}).prefix_token, 0);
  EXPECT_EQ(matched_choice(r, B, B, LayerMatch::Depth, SourceChoice{}).prefix_token, 4);
  // A source compared with itself keeps its choice.
  a = SourceChoice{};
  a.layer = 2;
  a.cell = Cell{3, 11};
  const SourceChoice same = matched_choice(a, A, A, LayerMatch::Depth, SourceChoice{});
  EXPECT_EQ(same.layer, 2);
  EXPECT_EQ(same.cell, (Cell{3, 11}));
}

// B the hand-made heads (SPEC §12, issue 48): one layer, six heads that do not fuse, no prefix,
// 31 × 31 patches of K = 16 photo pixels (scale 1). A as above.
TEST(CompareChoice, TheHandMadeHeadsKeepTheirHeadAndTakeAPatchForCls) {
  const CompareSide A{ChoiceShape{SourceGrid{.cols = 14, .rows = 14, .prefix = 1}, 12, 6, true}, 16, 224.0 / 500};
  const CompareSide H{ChoiceShape{SourceGrid{.cols = 31, .rows = 31, .prefix = 0}, 1, 6, false}, 16, 1.0};
  SourceChoice a;
  a.layer = 7;
  a.head = HeadChoice{-1, HeadFusion::Mean};  // the heads' mean: no such head among the hand-made ones
  a.cell = Cell{8, 2};  // centre (8.5 · 16 / 0.448, 2.5 · 16 / 0.448) = (303.57, 89.29): patch (18, 5)
  SourceChoice own;
  own.head = HeadChoice{3, HeadFusion::Mean};
  SourceChoice b = matched_choice(a, A, H, LayerMatch::Depth, own);
  EXPECT_EQ(b.layer, 0);
  EXPECT_EQ(b.head, (HeadChoice{3, HeadFusion::Mean})) << "B keeps its own head";
  EXPECT_EQ(b.cell, (Cell{18, 5}));
  EXPECT_EQ(b.prefix_token, -1);
  a.head = HeadChoice{9, HeadFusion::Mean};  // past the six: B's own again
  EXPECT_EQ(matched_choice(a, A, H, LayerMatch::Depth, own).head, (HeadChoice{3, HeadFusion::Mean}));
  a.head = HeadChoice{4, HeadFusion::Mean};  // a head both have
  EXPECT_EQ(matched_choice(a, A, H, LayerMatch::Index, own).head, (HeadChoice{4, HeadFusion::Mean}));
  a.prefix_token = 0;  // CLS: the hand-made heads have none, B shows the patch of A's cell
  b = matched_choice(a, A, H, LayerMatch::Depth, own);
  EXPECT_EQ(b.prefix_token, -1);
  EXPECT_EQ(b.cell, (Cell{18, 5}));
  // Back from B's patch (20, 18), centre (328, 296) px: A's patch floor(328 · 0.448 / 16) = 9, floor(296 · 0.448 / 16) = 8.
  SourceChoice h;
  h.cell = Cell{20, 18};
  EXPECT_EQ(matched_choice(h, H, A, LayerMatch::Depth, SourceChoice{}).cell, (Cell{9, 8}));
}
