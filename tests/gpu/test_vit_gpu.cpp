// The ViT forward on the GPU (core/gpu/vit_engine) against the Eigen reference and the
// PyTorch golden files, on every test checkpoint and image size.
#include "core/gpu/vit_engine.hpp"
#include "core/vit_reference.hpp"
#include "gpu_fixture.hpp"
#include "test_support.hpp"
#include "vit/vit_golden.hpp"

#include <cmath>

namespace attnlab {
namespace {

using testing::GpuTest;
using testing::VitGolden;

class VitGpu : public GpuTest {};

TEST_F(VitGpu, EveryLayerHeadRolloutDistanceAndClassMatchesEigenAndPyTorch) {
  VitGpuEngine gpu;
  for (const VitGolden& g : testing::vit_goldens()) {
    SCOPED_TRACE(g.name);
    const VitModel model = load_vit(g.model_dir, g.load_options());
    const VitInput input = vit_input(model, load_image(g.image));
    VitReference ref;
    ref.run(model, input);
    gpu.run(model, input);
    ASSERT_EQ(gpu.T(), ref.T());
    ASSERT_EQ(gpu.layers(), ref.layers());
    ASSERT_EQ(gpu.heads(), ref.heads());
    for (int l = 0; l < gpu.layers(); ++l)
      for (int h = 0; h < gpu.heads(); ++h) {
        const Matrix A = gpu.attention(l, h);
        EXPECT_EQ(testing::compare_within(A, ref.attention(l, h), 2e-4, 1e-3), "") << "vs Eigen, layer " << l << " head " << h;
        EXPECT_EQ(testing::compare_within(A, g.attention(l, h), 2e-4, 1e-3), "") << "vs PyTorch, layer " << l << " head " << h;
      }
    // One row read alone is the same as the matrix's row.
    const int last = gpu.layers() - 1, query = gpu.T() - 1;
    const auto rows = gpu.attention_rows(last, query);
    for (int h = 0; h < gpu.heads(); ++h)
      for (int j = 0; j < gpu.T(); ++j)
        EXPECT_NEAR(rows[static_cast<std::size_t>(h * gpu.T() + j)], g.attention(last, h)(query, j), 2e-4);
    for (const auto& [name, fusion] : {std::pair{"mean", HeadFusion::Mean}, {"max", HeadFusion::Max}, {"min", HeadFusion::Min}})
      EXPECT_EQ(testing::compare_within(vit_rollout(gpu, last, fusion), g.rollout(name, last), 2e-4, 1e-3), "") << name;
    const Matrix d = vit_attention_distance(gpu, model.arch.prefix(), input.cols, input.rows, model.arch.patch);
    for (int l = 0; l < gpu.layers(); ++l)
      for (int h = 0; h < gpu.heads(); ++h)
        EXPECT_NEAR(d(l, h), g.json.at("distance").at(static_cast<std::size_t>(l)).at(static_cast<std::size_t>(h)).get<double>(), 1e-2);
    const auto logits = gpu.logits(), ref_logits = ref.logits();
    ASSERT_EQ(logits.size(), ref_logits.size());
    for (std::size_t c = 0; c < logits.size(); ++c) {
      EXPECT_NEAR(logits[c], ref_logits[c], 1e-4 + 1e-3 * std::abs(ref_logits[c]));
      EXPECT_NEAR(logits[c], g.json.at("logits").at(c).get<float>(), 1e-4 + 1e-3 * std::abs(ref_logits[c]));
    }
  }
}

TEST_F(VitGpu, ReadingAnotherLayerHeadOrQueryRunsNoForwardPass) {
  const VitModel model = load_vit(testing::vit_data_dir() / "hf_cls_f32");
  VitGpuEngine gpu;
  gpu.run(model, vit_input(model, load_image(testing::vit_data_dir() / "safari_48x48.png")));
  ASSERT_EQ(gpu.forward_passes(), 1);
  for (int l = 0; l < gpu.layers(); ++l)
    for (int q = 0; q < gpu.T(); q += 7) {
      const auto rows = gpu.attention_rows(l, q);
      for (int h = 0; h < gpu.heads(); ++h) {
        double s = 0.0;
        for (int j = 0; j < gpu.T(); ++j) s += rows[static_cast<std::size_t>(h * gpu.T() + j)];
        EXPECT_NEAR(s, 1.0, 1e-5);
      }
    }
  vit_rollout(gpu, gpu.layers() - 1, HeadFusion::Max);
  EXPECT_EQ(gpu.forward_passes(), 1);
}

TEST_F(VitGpu, AnImageTooLargeForOneBufferIsRefusedAndThePreviousResultStays) {
  const VitModel model = load_vit(testing::vit_data_dir() / "timm_reg_bf16");
  VitGpuEngine gpu;
  gpu.run(model, vit_input(model, load_image(testing::vit_data_dir() / "safari_32x32.png")));
  const Matrix before = gpu.attention(1, 0);
  // 8 px patches on 1200×1200: T = 22 502, 2 heads × T² floats ≈ 3.8 GiB for one layer.
  const VitInput huge = vit_input(model, testing::random_image(1200, 1200, 3));
  try {
    gpu.run(model, huge);
    ADD_FAILURE() << "a layer's attention of several GiB was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--resize"), std::string::npos) << e.what();
  }
  EXPECT_EQ(gpu.attention(1, 0), before);
}

}  // namespace
}  // namespace attnlab
