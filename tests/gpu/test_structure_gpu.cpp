// The matrix and output views' numbers from the GPU engine against the CPU reference: the
// colours painted for T_out = A V (eq. 26.21) and its merge (eq. 26.28) within one 8-bit level,
// and the reduced image of A (figs. 26.18, 26.21) with the same masked blocks.
#include "core/hand_made/attention.hpp"
#include "core/gpu/context.hpp"
#include "core/gpu/hand_made_gpu_engine.hpp"
#include "core/hand_made/reference.hpp"
#include "core/hand_made/structure.hpp"
#include "gpu_fixture.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>

using namespace attnlab;
using attnlab::testing::asset;
using attnlab::testing::safari;

namespace {

class StructureGpu : public attnlab::testing::GpuTest {};


void expect_within_one_level(const std::vector<std::uint8_t>& got, const Matrix& expect, const std::string& what) {
  ASSERT_EQ(got.size(), static_cast<size_t>(expect.rows()) * 3) << what;
  for (Eigen::Index i = 0; i < expect.rows(); ++i)
    for (int ch = 0; ch < 3; ++ch) {
      const double want = 255.0 * std::clamp(static_cast<double>(expect(i, ch)), 0.0, 1.0);
      const double err = std::abs(got[static_cast<size_t>(i) * 3 + static_cast<size_t>(ch)] - want);
      EXPECT_LE(err, 1.0) << what << " token " << i << " channel " << ch;
    }
}

}  // namespace

TEST_F(StructureGpu, OutputColoursMatchTheReference) {
  for (MaskKind kind : {MaskKind::None, MaskKind::Causal, MaskKind::Strict}) {
    Settings s{.patch = 20, .mask = {.kind = kind}};
    HandMadeGpuEngine engine(safari(), s);
    const Reference ref(safari(), s);
    const std::string mask(mask_kind_name(kind));
    for (int h = 0; h < kHeadCount; ++h)
      expect_within_one_level(colours_rgb8(engine.output(h)), ref.output(h), mask + " head " + std::to_string(h));
    expect_within_one_level(colours_rgb8(engine.merged_output()), ref.merged_output(), mask + " merged");
    // The output view merges the heads' outputs it has read (eqs. 26.27-26.28) instead of a second GPU pass.
    std::vector<Matrix> outs;
    for (int h = 0; h < kHeadCount; ++h) outs.push_back(engine.output(h));
    expect_within_one_level(colours_rgb8(merge_heads(outs, engine.setup().W_MSA)), ref.merged_output(), mask + " merged (view)");
    expect_within_one_level(colours_rgb8(engine.tokens(), TokenLayout::kColour), ref.X().leftCols(3), mask + " input");
    if (kind == MaskKind::Strict) {  // row 0 has no key: black, never NaN
      const auto px = colours_rgb8(engine.output(0));
      EXPECT_EQ(px[0] + px[1] + px[2], 0);
    }
  }
}

TEST_F(StructureGpu, MatrixImageMatchesTheReference) {
  Settings s;
  s.patch = 16;  // 31 × 31 = 961 tokens: reduced to 481 × 481 (2 × 2 blocks)
  s.mask.kind = MaskKind::Causal;
  HandMadeGpuEngine engine(safari(), s);
  const Reference ref(safari(), s);
  const int N = ref.N();
  const Matrix A = engine.matrix(0), expect = ref.matrix(0);
  const BlockImage got = downsample_matrix(std::span<const float>(A.data(), static_cast<size_t>(N) * N), N, 512, &ref.setup().mask);
  const BlockImage want =
      downsample_matrix(std::span<const float>(expect.data(), static_cast<size_t>(N) * N), N, 512, &ref.setup().mask);
  ASSERT_EQ(got.block, 2);
  ASSERT_EQ(got.side, 481);
  EXPECT_EQ(got.all_zero, want.all_zero);
  for (size_t t = 0; t < got.values.size(); ++t)
    ASSERT_NEAR(got.values[t], want.values[t], 1e-4 * std::abs(want.values[t]) + 1e-7) << t;
}
