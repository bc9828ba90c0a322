// The keys over a source's choice (app/gui/state/source_choice.hpp), the same for the hand-made heads
// (one layer, six heads, no prefix token) and a ViT (layers × heads, a CLS token): what each
// key does to a SourceChoice, and what it leaves to the caller.
#include "app/gui/state/source_choice.hpp"

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
