// Issue 39: the views' one cache helper (app/gui/state/memo.hpp) makes a value again exactly when
// its key changes, fills in place when asked, and makes it again after a failed make.
#include "app/gui/state/memo.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

using namespace attnlab::app;

TEST(Memo, MakesAgainOnlyWhenTheKeyChanges) {
  Memo<std::tuple<unsigned, int>, std::string> memo;
  int made = 0;
  auto make = [&] { return "made " + std::to_string(++made); };
  EXPECT_EQ(memo.last(), nullptr);
  EXPECT_EQ(memo.get({1, 0}, make), "made 1");
  EXPECT_EQ(memo.get({1, 0}, make), "made 1");
  EXPECT_TRUE(memo.fresh({1, 0}));
  EXPECT_FALSE(memo.fresh({2, 0}));
  EXPECT_EQ(memo.get({2, 0}, make), "made 2");  // a new generation
  EXPECT_EQ(memo.get({2, 5}, make), "made 3");  // a new query
  EXPECT_EQ(memo.get({1, 0}, make), "made 4");  // back to an old key: only the last one is kept
  EXPECT_EQ(made, 4);
}

TEST(Memo, FillsTheKeptValueInPlace) {
  Memo<int, std::vector<int>> memo;
  const std::vector<int>* first = nullptr;
  memo.get(1, [&](std::vector<int>& v) {
    v.assign(3, 1);
    first = &v;
  });
  std::vector<int>& again = memo.get(2, [&](std::vector<int>& v) {
    EXPECT_EQ(v.size(), 3u);  // the last value, to reuse
    v.push_back(2);
  });
  EXPECT_EQ(&again, first);
  EXPECT_EQ(again, (std::vector<int>{1, 1, 1, 2}));
}

TEST(Memo, MovableOnlyValues) {
  Memo<int, std::unique_ptr<int>> memo;
  EXPECT_EQ(*memo.get(3, [] { return std::make_unique<int>(3); }), 3);
  EXPECT_EQ(*memo.get(3, [] { return std::make_unique<int>(4); }), 3);
}

TEST(Memo, AFailedMakeIsTriedAgainAndInvalidateMakesAgain) {
  Memo<int, int> memo;
  int calls = 0;
  EXPECT_THROW(memo.get(1, [&]() -> int { ++calls; throw std::runtime_error("no"); }), std::runtime_error);
  EXPECT_FALSE(memo.fresh(1));
  EXPECT_EQ(memo.get(1, [&] { return ++calls; }), 2);
  memo.invalidate();
  EXPECT_FALSE(memo.fresh(1));
  ASSERT_NE(memo.last(), nullptr);  // kept until made again
  EXPECT_EQ(memo.get(1, [&] { return ++calls; }), 3);
  memo.clear();
  EXPECT_EQ(memo.last(), nullptr);
}

TEST(Memo, AKeyMemoRunsTheUpdateOnlyForANewKey) {
  KeyMemo<std::tuple<unsigned, int>> memo;
  int made = 0;
  EXPECT_TRUE(memo.update({1, 2}, [&] { ++made; }));
  EXPECT_FALSE(memo.update({1, 2}, [&] { ++made; }));
  EXPECT_TRUE(memo.update({1, 3}, [&] { ++made; }));
  EXPECT_EQ(made, 2);
}
