// The GPU ViT engine (VitGpuRunner) at real sizes (issue 27): the same golden files and checks
// as tests/reference/test_vit_real_size.cpp (T = 197 and T = 789, head width 64), and the
// stored rows against the CPU path's on the same input.
#include "core/gpu/vit_engine.hpp"
#include "core/vit/vit_cpu.hpp"
#include "gpu_fixture.hpp"
#include "test_support.hpp"
#include "vit/vit_golden.hpp"

namespace attnlab {
namespace {

using testing::GpuTest;
using testing::VitGolden;

class VitGpuRealSize : public GpuTest {};

TEST_F(VitGpuRealSize, GpuPathMatchesPyTorchAndTheCpuPathOnEveryStoredRowRolloutDistanceNormAndClass) {
  const auto goldens = testing::vit_real_goldens();
  ASSERT_EQ(goldens.size(), testing::kVitRealGoldens);  // an empty list would check nothing
  VitGpuRunner runner;
  for (const VitGolden& g : goldens) {
    SCOPED_TRACE(g.name);
    const VitModel model = load_vit(g.model_dir, g.load_options());
    const VitInput input = vit_input(model, load_image(g.image));
    const VitPass gpu = runner.run(model, input, vit_memory_budget());
    ASSERT_EQ(gpu.path, "gpu");
    testing::expect_real_size_pass_matches(g, model, input, gpu);
    // The same rows from the CPU path.
    const VitPass cpu = VitCpuRunner().run(model, input, vit_memory_budget());
    ASSERT_EQ(cpu.T, gpu.T);
    for (int l = 0; l < gpu.layers(); ++l)
      for (const int q : g.json.at("queries").get<std::vector<int>>()) {
        const auto a = vit_attention_rows(gpu, l, q), b = vit_attention_rows(cpu, l, q);
        const auto n = static_cast<Eigen::Index>(a.size());
        ASSERT_EQ(a.size(), b.size());
        EXPECT_EQ(testing::compare_within(Eigen::Map<const Matrix>(a.data(), 1, n), Eigen::Map<const Matrix>(b.data(), 1, n), 2e-4, 1e-3), "")
            << "vs CPU, layer " << l << " query " << q;
      }
  }
}

}  // namespace
}  // namespace attnlab
