// VitRun, the attention source of a real ViT: its step-by-step row (q_i, the scores, the
// softmax) against the forward pass's attention, its patch rows and prefix share against the
// whole row, its fused matrices against the heads', and DINO's mass mask on a row worked by hand.
#include "core/base/error.hpp"
#include "core/io/image.hpp"
#include "core/vit/vit_cpu.hpp"
#include "core/vit/vit_run.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

namespace attnlab {
namespace {

std::filesystem::path vit_data(const std::string& name) {
  return std::filesystem::path(ATTNLAB_SOURCE_DIR) / "tests" / "vit" / "data" / name;
}

VitRun source_on_safari(const std::string& checkpoint) {
  auto model = std::make_shared<const VitModel>(load_vit(vit_data(checkpoint)));
  VitCpuRunner runner;
  return VitRun(model, load_image(testing::asset("safari.jpg")), 0, runner, vit_memory_budget());
}

TEST(VitRun, HeadStepWorksTheForwardPassRowFromItsQueryAndKeys) {
  // One checkpoint without and one with registers and layer scale.
  for (const char* name : {"timm_f32", "dinov2_reg_f32"}) {
    SCOPED_TRACE(name);
    const VitRun src = source_on_safari(name);
    const int T = src.grid().T();
    for (int layer = 0; layer < src.layers(); ++layer)
      for (int head = 0; head < src.heads(); ++head)
        for (const int query : {0, T / 2, T - 1}) {
          const VitHeadStep step = src.head_step(layer, head, query);
          ASSERT_EQ(static_cast<int>(step.weights.size()), T);
          EXPECT_EQ(static_cast<int>(step.q.size()), step.m);
          EXPECT_EQ(step.m * src.heads(), src.model().arch.D);
          const Matrix A = src.matrix(layer, HeadChoice{head, HeadFusion::Mean});
          double sum = 0, z = 0;
          for (int j = 0; j < T; ++j) z += std::exp(static_cast<double>(step.scores[static_cast<size_t>(j)] - step.max_score));
          EXPECT_NEAR(z, step.Z, 1e-9 * z);
          for (int j = 0; j < T; ++j) {
            const float a = step.weights[static_cast<size_t>(j)];
            EXPECT_NEAR(a, A(query, j), 2e-6f) << "layer " << layer << " head " << head << " query " << query << " key " << j;
            EXPECT_NEAR(a, std::exp(static_cast<double>(step.scores[static_cast<size_t>(j)] - step.max_score)) / z, 1e-7);
            sum += a;
          }
          EXPECT_NEAR(sum, 1.0, 1e-6);
          EXPECT_FLOAT_EQ(step.max_score, *std::max_element(step.scores.begin(), step.scores.end()));
        }
    EXPECT_THROW(src.head_step(src.layers(), 0, 0), Error);
    EXPECT_THROW(src.head_step(0, src.heads(), 0), Error);
    EXPECT_THROW(src.head_step(0, 0, T), Error);
  }
}

TEST(VitRun, PatchRowAndPrefixShareMakeTheWholeRowAndFusionsFollowTheHeads) {
  const VitRun src = source_on_safari("dinov2_reg_f32");
  const SourceGrid g = src.grid();
  ASSERT_GT(g.prefix, 1) << "a checkpoint with registers";
  const int layer = src.layers() - 1, query = g.prefix + g.N() / 3;
  for (int head = 0; head < src.heads(); ++head) {
    const HeadChoice h{head, HeadFusion::Mean};
    const auto row = src.patch_row(layer, h, query);
    ASSERT_EQ(static_cast<int>(row.size()), g.N());
    const double patches = std::accumulate(row.begin(), row.end(), 0.0);
    EXPECT_NEAR(patches + src.prefix_share(layer, h, query), 1.0, 1e-5);
  }
  const Matrix mean = src.matrix(layer, HeadChoice{-1, HeadFusion::Mean});
  const Matrix max = src.matrix(layer, HeadChoice{-1, HeadFusion::Max});
  for (int j = 0; j < g.T(); ++j) {
    double m = 0;
    float top = 0;
    for (int head = 0; head < src.heads(); ++head) {
      const float a = src.matrix(layer, HeadChoice{head, HeadFusion::Mean})(query, j);
      m += a;
      top = std::max(top, a);
    }
    EXPECT_NEAR(mean(query, j), m / src.heads(), 1e-6);
    EXPECT_EQ(max(query, j), top);
  }
}

TEST(VitMassMask, KeepsTheLargestWeightsHoldingTheMassAsWorkedByHand) {
  // Sorted ascending 0.05 0.10 0.15 0.30 0.40, cumulative 0.05 0.15 0.30 0.60 1.00: with
  // p = 0.6 a weight is kept where the cumulative sum exceeds 0.4, i.e. 0.30 and 0.40.
  EXPECT_EQ(vit_mass_mask({0.10f, 0.40f, 0.05f, 0.30f, 0.15f}, 0.6f), (std::vector<std::uint8_t>{0, 1, 0, 1, 0}));
  // p = 0.75: cumulative > 0.25, so 0.15 joins them.
  EXPECT_EQ(vit_mass_mask({0.10f, 0.40f, 0.05f, 0.30f, 0.15f}, 0.75f), (std::vector<std::uint8_t>{0, 1, 0, 1, 1}));
  EXPECT_THROW(vit_mass_mask({1.0f}, 1.5f), Error);
}

}  // namespace
}  // namespace attnlab
