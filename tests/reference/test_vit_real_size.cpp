// The CPU ViT forward (VitCpuRunner) at real sizes (issue 27): the golden files of
// tests/vit/make_golden_real.py, two random-weight checkpoints with head width 64 on a 224 × 224
// image, timm names with 16-pixel patches (T = 197, a classifier) and DINOv2 names with 8-pixel
// patches and four registers (T = 789). The files hold selected rows (every layer and head), the
// rollout rows of two queries, the mean attention distance, token norms and logits: all of them
// are checked (tests/vit/vit_golden.cpp, expect_real_size_pass_matches).
#include "core/vit/vit_cpu.hpp"
#include "test_support.hpp"
#include "vit/vit_golden.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace attnlab {
namespace {

using testing::VitGolden;

TEST(VitRealSize, TheGoldenFilesAreThereAtRealSizes) {
  const auto goldens = testing::vit_real_goldens();
  ASSERT_EQ(goldens.size(), testing::kVitRealGoldens);  // an empty list would check nothing
  std::vector<int> Ts;
  for (const VitGolden& g : goldens) {
    SCOPED_TRACE(g.name);
    const auto& info = g.json.at("info");
    EXPECT_EQ(info.at("D").get<int>() / info.at("heads").get<int>(), 64);
    EXPECT_GE(g.json.at("T").get<int>(), 197);
    Ts.push_back(g.json.at("T").get<int>());
  }
  std::sort(Ts.begin(), Ts.end());
  EXPECT_EQ(Ts, (std::vector<int>{197, 789}));
}

TEST(VitRealSize, CpuPathMatchesPyTorchOnEveryStoredRowRolloutDistanceNormAndClass) {
  const auto goldens = testing::vit_real_goldens();
  ASSERT_EQ(goldens.size(), testing::kVitRealGoldens);
  for (const VitGolden& g : goldens) {
    SCOPED_TRACE(g.name);
    const VitModel model = load_vit(g.model_dir, g.load_options());
    const VitInput input = vit_input(model, load_image(g.image));
    VitCpuRunner runner;
    const VitPass pass = runner.run(model, input, vit_memory_budget());
    EXPECT_EQ(pass.path, "cpu");
    testing::expect_real_size_pass_matches(g, model, input, pass);
  }
}

}  // namespace
}  // namespace attnlab
