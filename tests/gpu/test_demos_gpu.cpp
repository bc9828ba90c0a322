// The teaching demos (core/hand_made/demos) fed with the GPU engine's numbers, as the app does: the
// question token through row_for_token, the λ sweep from the engine's tokens, and the
// permutation demo on two engines.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

#include "core/hand_made/demos.hpp"
#include "core/gpu/context.hpp"
#include "core/gpu/hand_made_gpu_engine.hpp"
#include "gpu_fixture.hpp"
#include "test_support.hpp"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

class DemoGpu : public attnlab::testing::GpuTest {};


}  // namespace

TEST_F(DemoGpu, QuestionTokenOnTheEngineMatchesTheCpu) {
  for (PosMode mode : {PosMode::None, PosMode::Concat, PosMode::Add}) {
    Settings s{.patch = 20, .pos = {.mode = mode}};
    HandMadeGpuEngine engine(safari(), s);
    const Reference ref(safari(), s);
    const RowVector x = question_token({0.55f, 0.45f, 0.3f}, static_cast<int>(ref.X().cols()));
    for (int h : {0, 2, 5}) {
      const auto [w, logits] = engine.row_for_token(h, x);
      const RowResult want = question_row(ref, h, x);
      ASSERT_EQ(w.size(), static_cast<size_t>(ref.N()));
      for (int j = 0; j < ref.N(); ++j)
        ASSERT_NEAR(w[static_cast<size_t>(j)], want.weights[j], kRel * want.weights[j] + kAbs)
            << pos_mode_name(mode) << " head " << h << " key " << j;
      const auto ans = output_with_count(w, engine.qkv(h).V);
      EXPECT_NEAR(ans.count, 1.0f, 1e-5f);
    }
  }
}

TEST_F(DemoGpu, LambdaSweepFromTheEnginesTokensMatchesTheReference) {
  for (PosMode mode : {PosMode::None, PosMode::Add}) {
    Settings s{.patch = 20, .pos = {.mode = mode}};
    HandMadeGpuEngine engine(safari(), s);
    const Matrix X = engine.tokens();
    for (float lambda : {0.0f, 0.5f, 2.0f, 4.0f}) {
      Settings c = s;
      c.pos.mode = PosMode::Concat;
      c.pos.lambda = lambda;
      const Reference expect(safari(), c);
      for (int h : {0, 3}) {
        const LambdaSweep sweep(engine.setup().heads[static_cast<size_t>(h)], X, engine.setup(), s);
        const int i = engine.grid().index(12, 8);
        const RowResult got = sweep.row(i, lambda), want = expect.row(h, i);
        for (int j = 0; j < expect.N(); ++j)
          ASSERT_NEAR(got.weights[j], want.weights[j], kRel * want.weights[j] + kAbs)
              << pos_mode_name(mode) << " lambda " << lambda << " head " << h << " key " << j;
      }
    }
  }
}

TEST_F(DemoGpu, ShuffledImageOnASecondEngineMovesTheRow) {
  const PatchGrid g = make_grid(500, 500, 20, EdgeMode::Crop);
  const auto perm = seeded_permutation(g.N(), 12);
  const auto inv = inverse_permutation(perm);
  const Image shuffled = permute_patches(safari(), g, perm);
  const int i = g.index(12, 8);
  for (PosMode mode : {PosMode::None, PosMode::Concat}) {
    const Settings s{.patch = 20, .pos = {.mode = mode}};
    HandMadeGpuEngine a, b;
    a.set_settings(s);
    a.set_image(safari());
    b.set_settings(s);
    b.set_image(shuffled);
    const auto back = undo_permutation(b.rows(inv[static_cast<size_t>(i)]).head(0), perm);
    const auto orig = a.rows(i).head(0);
    double worst = 0;
    for (int j = 0; j < g.N(); ++j)
      worst =
          std::max(worst, static_cast<double>(std::abs(back[static_cast<size_t>(j)] - orig[static_cast<size_t>(j)])));
    std::printf("%s: largest |difference| after undoing = %.3g (1/N = %.3g)\n",
                std::string(pos_mode_name(mode)).c_str(), worst, 1.0 / g.N());
    if (mode == PosMode::None)
      EXPECT_LT(worst, 1e-6);  // GPU float rounding only (weights ~1.6e-3)
    else
      EXPECT_GT(worst, 0.1 / g.N());
  }
}
