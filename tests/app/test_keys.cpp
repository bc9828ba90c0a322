// The key table (app/gui/shell/keys.cpp): the README lists every key of the table and no other (its
// list is the table's own lines, between the markers), no key is bound twice where it acts, and
// the actions do to the document what the table says, in the scopes it says.
#include "app/gui/sessions/hand_made_session.hpp"
#include "app/gui/shell/keys.hpp"
#include "test_support.hpp"

#include <GLFW/glfw3.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace attnlab;
using namespace attnlab::app;

namespace {

// The README's key list: the lines between "<!-- keys:" and "<!-- /keys -->".
std::vector<std::string> readme_key_list() {
  std::ifstream in(std::string(ATTNLAB_SOURCE_DIR) + "/README.md");
  EXPECT_TRUE(in) << "cannot read README.md";
  std::vector<std::string> out;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("<!-- /keys -->", 0) == 0) return out;
    if (inside) out.push_back(line);
    if (line.rfind("<!-- keys:", 0) == 0) inside = true;
  }
  ADD_FAILURE() << "README.md has no key list between <!-- keys: ... --> and <!-- /keys -->";
  return out;
}

// A 64 × 48 grey photo: 4 × 3 patches at K = 16.
Image grey_photo() {
  Image img;
  img.width = 64;
  img.height = 48;
  img.rgb.assign(static_cast<size_t>(img.width) * img.height * 3, 0.5f);
  return img;
}

}  // namespace

TEST(Keys, TheReadmeListsExactlyTheTablesKeys) {
  const std::vector<std::string> table = key_list_markdown();
  const std::vector<std::string> readme = readme_key_list();
  ASSERT_GT(table.size(), 2u);
  EXPECT_EQ(readme, table) << "README.md's key list differs from app/gui/shell/keys.cpp's table: write the table's lines "
                              "(key_list_markdown) between the markers";
  // And every binding's key text appears in it (the comparison above already implies it; this
  // names the missing key).
  for (const KeyBinding& b : key_table()) {
    bool found = false;
    for (const std::string& line : readme) found = found || line.rfind(std::string("| ") + b.keys + " |", 0) == 0;
    EXPECT_TRUE(found) << b.keys << " (" << b.what << ") is not in README.md's key list";
  }
}

TEST(Keys, NoKeyIsBoundTwiceWhereItActs) {
  const auto table = key_table();
  auto overlap = [](KeyScope a, KeyScope b) {
    if (a == b || a == KeyScope::Always || b == KeyScope::Always || a == KeyScope::NotTyping || b == KeyScope::NotTyping) return true;
    if (a == KeyScope::EitherMap || b == KeyScope::EitherMap) return true;
    return false;  // HandMade and Vit never act together
  };
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_NE(table[i].act, nullptr) << table[i].keys;
    EXPECT_NE(std::string(table[i].keys), "") << table[i].what;
    for (size_t j = i + 1; j < table.size(); ++j) {
      const KeyBinding &a = table[i], &b = table[j];
      const bool same_keys = a.key <= b.last_key && b.key <= a.last_key;
      // While a lesson plays its keys come first (SPEC §15: PgDn/PgUp step it, Esc leaves it):
      // a lesson's binding ahead of another of the same key is the one that acts then.
      if (a.scope == KeyScope::Lesson && b.scope != KeyScope::Lesson) continue;
      EXPECT_FALSE(same_keys && a.mods == b.mods && overlap(a.scope, b.scope)) << a.keys << " and " << b.keys << " both act";
    }
  }
}

TEST(Keys, WhileALessonPlaysPgDnAndPgUpStepItAndCtrlMovesTheLayer) {
  const auto table = key_table();
  const auto acts = [&](int key, int mods, bool lesson, bool vit) -> const KeyBinding* {
    for (const KeyBinding& b : table) {
      const bool is_key = (key >= b.key && key <= b.last_key) || (b.keypad_key != 0 && key == b.keypad_key);
      const bool scope = b.scope == KeyScope::Always || b.scope == KeyScope::NotTyping || (b.scope == KeyScope::Lesson && lesson) ||
                         (b.scope == KeyScope::Vit && vit) || (b.scope == KeyScope::EitherMap && vit) || (b.scope == KeyScope::HandMade && !vit);
      if (is_key && (mods & b.mods) == b.mods && scope) return &b;
    }
    return nullptr;
  };
  for (const int key : {GLFW_KEY_PAGE_DOWN, GLFW_KEY_PAGE_UP, GLFW_KEY_SPACE, GLFW_KEY_BACKSPACE, GLFW_KEY_ESCAPE}) {
    const KeyBinding* b = acts(key, 0, true, true);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->scope, KeyScope::Lesson) << b->keys << " does not step the lesson";
  }
  for (const int key : {GLFW_KEY_PAGE_DOWN, GLFW_KEY_PAGE_UP}) {
    const KeyBinding* lesson = acts(key, GLFW_MOD_CONTROL, true, true);
    const KeyBinding* plain = acts(key, 0, false, true);
    ASSERT_NE(lesson, nullptr);
    ASSERT_NE(plain, nullptr);
    EXPECT_EQ(lesson->scope, KeyScope::Vit) << "Ctrl " << plain->keys << " while a lesson plays";
    EXPECT_EQ(lesson->act, plain->act) << "Ctrl " << plain->keys << " is not the layer key";
    EXPECT_EQ(plain->scope, KeyScope::Vit) << plain->keys << " without a lesson is the layer key";
  }
  // The arrow keys keep moving the query.
  const KeyBinding* left = acts(GLFW_KEY_LEFT, 0, true, true);
  ASSERT_NE(left, nullptr);
  EXPECT_EQ(left->scope, KeyScope::EitherMap);
}

TEST(Keys, ActionsChangeTheDocumentAsTheTableSays) {
  AppState state;
  state.attention.patch = 16;
  Scheduler scheduler;
  HandMadeSession hand_made(scheduler);  // the CPU reference without a GL context
  hand_made.set_image(grey_photo(), state.attention);
  state.hand_made.cell = {1, 1};
  auto press = [&](int key, int mods = 0, bool typing = false) {
    KeyContext c{state, hand_made, nullptr, typing};
    const bool acted = press_key(c, key, mods);
    return std::make_pair(acted, c.quit);
  };
  // The query steps and stops at the grid's edge (4 × 3).
  press(GLFW_KEY_RIGHT);
  press(GLFW_KEY_RIGHT);
  press(GLFW_KEY_RIGHT);
  EXPECT_EQ(state.hand_made.cell, (Cell{3, 1}));
  EXPECT_TRUE(state.hand_made.query_pinned);
  press(GLFW_KEY_DOWN);
  press(GLFW_KEY_DOWN);
  EXPECT_EQ(state.hand_made.cell, (Cell{3, 2}));
  // P pins once; 0-5 choose the head (heads count from 0: key 3 is head 3), 7 is no hand-made
  // head: nothing changes.
  press(GLFW_KEY_P);
  press(GLFW_KEY_P);
  ASSERT_EQ(state.hand_made.pins.size(), 1u);
  EXPECT_TRUE(press(GLFW_KEY_3).first);
  EXPECT_EQ(state.hand_made.head.head, 3);
  press(GLFW_KEY_0);
  EXPECT_EQ(state.hand_made.head.head, 0);
  press(GLFW_KEY_7);
  EXPECT_EQ(state.hand_made.head.head, 0);
  // [ and ] halve and double K within 4…128; M steps the mask.
  press(GLFW_KEY_LEFT_BRACKET);
  EXPECT_EQ(state.attention.patch, 8);
  press(GLFW_KEY_RIGHT_BRACKET);
  press(GLFW_KEY_RIGHT_BRACKET);
  EXPECT_EQ(state.attention.patch, 32);
  const MaskKind mask = state.attention.mask.kind;
  press(GLFW_KEY_M);
  EXPECT_NE(state.attention.mask.kind, mask);
  // Ctrl + and the keypad's + enlarge the UI; − makes it smaller; without Ctrl nothing.
  const float scale = state.ui_scale;
  press(GLFW_KEY_EQUAL, GLFW_MOD_CONTROL);
  press(GLFW_KEY_KP_ADD, GLFW_MOD_CONTROL);
  EXPECT_FLOAT_EQ(state.ui_scale, scale + 0.5f);
  press(GLFW_KEY_MINUS, GLFW_MOD_CONTROL);
  EXPECT_FLOAT_EQ(state.ui_scale, scale + 0.25f);
  EXPECT_FALSE(press(GLFW_KEY_EQUAL).first);
  // F12 and F9 queue exports, while typing too; F5 and Esc: presentation mode on and off.
  press(GLFW_KEY_F12, 0, /*typing=*/true);
  EXPECT_TRUE(state.commands.pending(Commands::Kind::ExportPng));
  press(GLFW_KEY_F9);
  EXPECT_TRUE(state.commands.pending(Commands::Kind::ExportCsv));
  press(GLFW_KEY_F5);
  EXPECT_TRUE(state.presentation);
  press(GLFW_KEY_ESCAPE);
  EXPECT_FALSE(state.presentation);
  // While typing, letters and arrows are the text field's.
  const Cell q = state.hand_made.cell;
  EXPECT_FALSE(press(GLFW_KEY_LEFT, 0, true).first);
  EXPECT_FALSE(press(GLFW_KEY_V, 0, true).first);
  EXPECT_EQ(state.hand_made.cell, q);
  EXPECT_EQ(state.source, ShownSource::HandMade);
  // V asks for the ViT; with no ViT run the hand-made keys keep acting (as in the window).
  press(GLFW_KEY_V);
  EXPECT_EQ(state.source, ShownSource::Vit);
  EXPECT_FALSE(press(GLFW_KEY_PAGE_UP).first);
  press(GLFW_KEY_LEFT);
  EXPECT_EQ(state.hand_made.cell, (Cell{q.col - 1, q.row}));
  // Ctrl Q quits; Q alone does nothing.
  EXPECT_FALSE(press(GLFW_KEY_Q).first);
  EXPECT_TRUE(press(GLFW_KEY_Q, GLFW_MOD_CONTROL).second);
}
