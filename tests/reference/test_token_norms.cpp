// High-norm tokens (core/vit/token_norms.hpp), against numbers worked by hand.
#include "core/vit/token_norms.hpp"

#include "core/base/error.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace attnlab {
namespace {

// Odd count: the median is the middle value. {1, 2, 3, 4, 100}: median 3, ratio 4 → threshold 12,
// only the 100 is over it.
TEST(HighNormTokens, AnOddCountsMedianIsItsMiddleAndOnlyTheOutlierIsMarked) {
  const std::vector<float> n = {4, 100, 1, 3, 2};
  const HighNormTokens h = high_norm_tokens(n, 4.0f);
  EXPECT_FLOAT_EQ(h.median, 3.0f);
  EXPECT_FLOAT_EQ(h.threshold, 12.0f);
  EXPECT_EQ(h.marked, (std::vector<std::uint8_t>{0, 1, 0, 0, 0}));
  EXPECT_EQ(h.count, 1);
  EXPECT_EQ(h.indices(), (std::vector<int>{1}));
}

// Even count: the mean of the middle two. {2, 4, 6, 8}: median 5; ratio 1.6 → threshold 8,
// strictly above it: none (8 is not over 8); ratio 1.5 → 7.5: the 8.
TEST(HighNormTokens, AnEvenCountsMedianIsTheMeanOfTheMiddleTwoAndTheThresholdIsStrict) {
  const std::vector<float> n = {8, 2, 6, 4};
  const HighNormTokens a = high_norm_tokens(n, 1.6f);
  EXPECT_FLOAT_EQ(a.median, 5.0f);
  EXPECT_FLOAT_EQ(a.threshold, 8.0f);
  EXPECT_EQ(a.count, 0);
  const HighNormTokens b = high_norm_tokens(n, 1.5f);
  EXPECT_EQ(b.marked, (std::vector<std::uint8_t>{1, 0, 0, 0}));
  EXPECT_EQ(b.count, 1);
}

TEST(HighNormTokens, NoNormsOrABadRatioIsAnError) {
  const std::vector<float> n = {1, 2};
  EXPECT_THROW(high_norm_tokens({}, 2.0f), Error);
  EXPECT_THROW(high_norm_tokens(n, 0.0f), Error);
  EXPECT_THROW(high_norm_tokens(n, -1.0f), Error);
}

// {0, 1, 2, 3, 10} in 5 bins over [0, 10] of width 2: [0,2) holds 0 and 1, [2,4) holds 2 and 3,
// the last bin holds the maximum; outside the range, the end bins; an empty range, bin 0.
TEST(NormHistogram, EqualBinsOverTheRangeTheEndsTakeWhatIsOutside) {
  const std::vector<float> v = {3, 0, 10, 1, 2};
  const NormHistogram h = norm_histogram(v, 0, 10, 5);
  EXPECT_FLOAT_EQ(h.lo, 0.0f);
  EXPECT_FLOAT_EQ(h.hi, 10.0f);
  EXPECT_EQ(h.counts, (std::vector<int>{2, 2, 0, 0, 1}));
  EXPECT_EQ(norm_histogram(v, 1, 3, 2).counts, (std::vector<int>{2, 3}));  // 0, 1 | 2, 3, 10
  const std::vector<float> same = {7, 7, 7};
  EXPECT_EQ(norm_histogram(same, 7, 7, 3).counts, (std::vector<int>{3, 0, 0}));
  EXPECT_TRUE(norm_histogram({}, 0, 1, 2).counts == (std::vector<int>{0, 0}));
  EXPECT_THROW(norm_histogram(v, 0, 10, 0), Error);
}

}  // namespace
}  // namespace attnlab
