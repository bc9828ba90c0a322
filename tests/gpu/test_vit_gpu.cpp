// The ViT forward on the GPU (core/gpu/vit_engine) against the Eigen reference and the
// PyTorch golden files, on every test checkpoint and image size.
#include "core/gpu/vit_engine.hpp"
#include "core/vit_cpu.hpp"
#include "gpu_fixture.hpp"
#include "test_support.hpp"
#include "vit/vit_golden.hpp"

#include <cmath>

namespace attnlab {
namespace {

using testing::GpuTest;
using testing::VitGolden;

class VitGpu : public GpuTest {};

TEST_F(VitGpu, EveryLayerHeadRolloutDistanceAndClassMatchesTheCpuPathAndPyTorch) {
  VitGpuRunner runner;
  const auto goldens = testing::vit_goldens();
  ASSERT_EQ(goldens.size(), 24u);
  for (const VitGolden& g : goldens) {
    SCOPED_TRACE(g.name);
    const VitModel model = load_vit(g.model_dir, g.load_options());
    const VitInput input = vit_input(model, load_image(g.image));
    const VitPass ref = VitCpuRunner().run(model, input, vit_memory_budget());
    const VitPass gpu = runner.run(model, input, vit_memory_budget());
    ASSERT_EQ(gpu.path, "gpu");
    ASSERT_EQ(gpu.T, ref.T);
    ASSERT_EQ(gpu.layers(), ref.layers());
    ASSERT_EQ(gpu.H, ref.H);
    for (int l = 0; l < gpu.layers(); ++l)
      for (int h = 0; h < gpu.H; ++h) {
        const Matrix A = vit_attention(gpu, l, h);
        EXPECT_EQ(testing::compare_within(A, vit_attention(ref, l, h), 2e-4, 1e-3), "") << "vs CPU, layer " << l << " head " << h;
        EXPECT_EQ(testing::compare_within(A, g.attention(l, h), 2e-4, 1e-3), "") << "vs PyTorch, layer " << l << " head " << h;
      }
    // One row read alone is the same as the matrix's row.
    const int last = gpu.layers() - 1, query = gpu.T - 1;
    const auto rows = vit_attention_rows(gpu, last, query);
    for (int h = 0; h < gpu.H; ++h)
      for (int j = 0; j < gpu.T; ++j)
        EXPECT_NEAR(rows[static_cast<std::size_t>(h * gpu.T + j)], g.attention(last, h)(query, j), 2e-4);
    for (const auto& [name, fusion] : {std::pair{"mean", HeadFusion::Mean}, {"max", HeadFusion::Max}, {"min", HeadFusion::Min}})
      for (int q = 0; q < gpu.T; ++q) {
        const std::vector<float> row = vit_rollout_row(gpu, last, fusion, q);
        EXPECT_EQ(testing::compare_within(Eigen::Map<const Matrix>(row.data(), 1, gpu.T), g.rollout(name, last).row(q), 2e-4, 1e-3), "")
            << name << " query " << q;
      }
    for (int l = 0; l < gpu.layers(); ++l)
      for (int h = 0; h < gpu.H; ++h)
        EXPECT_NEAR(gpu.distance(l, h), g.json.at("distance").at(static_cast<std::size_t>(l)).at(static_cast<std::size_t>(h)).get<double>(), 1e-2);
    const auto logits = gpu.logits, ref_logits = ref.logits;
    ASSERT_EQ(logits.size(), ref_logits.size());
    for (std::size_t c = 0; c < logits.size(); ++c) {
      EXPECT_NEAR(logits[c], ref_logits[c], 1e-4 + 1e-3 * std::abs(ref_logits[c]));
      EXPECT_NEAR(logits[c], g.json.at("logits").at(c).get<float>(), 1e-4 + 1e-3 * std::abs(ref_logits[c]));
    }
  }
}

TEST_F(VitGpu, AnInputOverTheMemoryBudgetIsRefusedBeforeRunningNamingASizeThatFits) {
  const VitModel model = load_vit(testing::vit_data_dir() / "timm_reg_bf16");
  VitGpuRunner gpu;
  const VitInput small = vit_input(model, load_image(testing::vit_data_dir() / "safari_32x32.png"));
  const VitPass before = gpu.run(model, small, vit_memory_budget());
  // 8 px patches on 1200×1200: T = 22 502 tokens; a 16 MiB budget holds a few hundred.
  const VitInput huge = vit_input(model, testing::random_image(1200, 1200, 3));
  try {
    gpu.run(model, huge, std::int64_t{16} << 20);
    ADD_FAILURE() << "an input over the budget was run";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--resize"), std::string::npos) << e.what();
  }
  EXPECT_EQ(gpu.forward_passes(), 1);
  // The runner still works afterwards.
  const VitPass again = gpu.run(model, small, vit_memory_budget());
  EXPECT_EQ(vit_attention(again, 1, 0), vit_attention(before, 1, 0));
}

}  // namespace
}  // namespace attnlab
