// The ViT forward on the GPU (core/gpu/vit_engine) against the Eigen reference and the
// PyTorch golden files, on every test checkpoint and image size.
#include "core/gpu/vit_engine.hpp"
#include "core/vit/vit_cpu.hpp"
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

// Real sizes: a random ViT with heads 64 wide (D 128, 2 heads, 2 blocks, MLP 512, 10 classes) on
// 224 × 224 with patch 16 (T = 197) and patch 8 (T = 785), every output of the pass against the
// CPU path. Both sum the same float32 products in other orders (OpenBLAS's blocked sgemm against
// the GPU's vec4 steps; the CPU's softmax per row against the GPU's online softmax), so each
// dot product of K terms differs by about √K·ε·Σ|terms| (K = 128 for q, k and the scores, 512
// for the MLP's second product, 768 or 192 for the patch embedding; ε = 6e-8): ~1e-6 relative
// per product, grown by each LayerNorm's 1/σ and by two blocks. Hence 1e-4 absolute + 1e-4
// relative on q and k (values O(1)), 2e-5 on attention weights (≤ 1), 1e-4 relative on the
// token norms, 1e-3 px on the distance (tens of px, summed in double on both sides), 1e-4 + 1e-4
// relative on the logits. A wrong index, scale or missing term is off by far more.
void expect_pass_matches_cpu(const VitPass& gpu, const VitPass& cpu) {
  ASSERT_EQ(gpu.path, "gpu");
  ASSERT_EQ(gpu.T, cpu.T);
  ASSERT_EQ(gpu.H, cpu.H);
  ASSERT_EQ(gpu.m, cpu.m);
  ASSERT_EQ(gpu.layers(), cpu.layers());
  for (int l = 0; l < gpu.layers(); ++l) {
    const auto L = static_cast<std::size_t>(l);
    EXPECT_EQ(testing::compare_within(gpu.Q[L], cpu.Q[L], 1e-4, 1e-4), "") << "q, layer " << l;
    EXPECT_EQ(testing::compare_within(gpu.K[L], cpu.K[L], 1e-4, 1e-4), "") << "k, layer " << l;
    EXPECT_EQ(testing::compare_within(gpu.token_norms[L], cpu.token_norms[L], 0.0, 1e-4), "") << "token norms, layer " << l;
    for (int query : {0, 1, gpu.T / 2, gpu.T - 1}) {
      const std::vector<float> g = vit_attention_rows(gpu, l, query), c = vit_attention_rows(cpu, l, query);
      EXPECT_EQ(testing::compare_within(Eigen::Map<const Matrix>(g.data(), gpu.H, gpu.T), Eigen::Map<const Matrix>(c.data(), cpu.H, cpu.T),
                                        2e-5, 0.0),
                "")
          << "attention rows, layer " << l << " query " << query;
    }
  }
  EXPECT_EQ(testing::compare_within(gpu.distance, cpu.distance, 1e-3, 0.0), "") << "mean attention distance";
  ASSERT_EQ(gpu.logits.size(), cpu.logits.size());
  ASSERT_FALSE(gpu.logits.empty());
  EXPECT_EQ(testing::compare_within(Eigen::Map<const Matrix>(gpu.logits.data(), 1, static_cast<Eigen::Index>(gpu.logits.size())),
                                    Eigen::Map<const Matrix>(cpu.logits.data(), 1, static_cast<Eigen::Index>(cpu.logits.size())), 1e-4, 1e-4),
            "")
      << "logits";
}

TEST_F(VitGpu, RealSizeHeads64WideMatchTheCpuPathLayerByLayer) {
  VitGpuRunner runner;
  for (const int patch : {16, 8}) {
    SCOPED_TRACE("patch " + std::to_string(patch));
    const VitModel model = testing::random_vit(128, 2, 2, patch, 10);
    const VitInput input = vit_input(model, testing::random_image(224, 224, 7));
    const VitPass cpu = VitCpuRunner().run(model, input, vit_memory_budget());
    const VitPass gpu = runner.run(model, input, vit_memory_budget());
    ASSERT_EQ(gpu.T, patch == 16 ? 197 : 785);
    EXPECT_EQ(runner.chunked_dispatches(), 0);
    // The distance is not trivially small: a few patches at least.
    EXPECT_GT(cpu.distance.minCoeff(), 2.0f * static_cast<float>(patch));
    expect_pass_matches_cpu(gpu, cpu);
  }
}

TEST_F(VitGpu, ActivationsOverOneStorageBlockRunInChunksOfRowsWithTheSameResult) {
  // T = 785 tokens: X is 785 × 128 floats (392 KiB), q/k/v 1.2 MiB, the MLP's hidden layer
  // 1.6 MiB; with every storage binding capped at 64 KiB, each is bound a chunk of rows at a
  // time (the path a real input over the driver's 128 MiB takes, e.g. ViT-B/16 past 1900 px).
  const VitModel model = testing::random_vit(128, 2, 2, 8, 10);
  const VitInput input = vit_input(model, testing::random_image(224, 224, 11));
  VitGpuRunner runner;
  const VitPass whole = runner.run(model, input, vit_memory_budget());
  EXPECT_EQ(runner.chunked_dispatches(), 0);
  runner.set_storage_limit(std::size_t{64} << 10);
  const VitPass chunked = runner.run(model, input, vit_memory_budget());
  EXPECT_GT(runner.chunked_dispatches(), 0);
  // Every value is computed by the same lines whichever chunk holds its row: equal, bit for bit.
  for (int l = 0; l < whole.layers(); ++l) {
    const auto L = static_cast<std::size_t>(l);
    EXPECT_EQ(chunked.Q[L], whole.Q[L]) << "layer " << l;
    EXPECT_EQ(chunked.K[L], whole.K[L]) << "layer " << l;
    EXPECT_EQ(chunked.token_norms[L], whole.token_norms[L]) << "layer " << l;
  }
  EXPECT_EQ(chunked.distance, whole.distance);
  EXPECT_EQ(chunked.logits, whole.logits);
  expect_pass_matches_cpu(chunked, VitCpuRunner().run(model, input, vit_memory_budget()));
  // Back to the driver's limit.
  runner.set_storage_limit(0);
  EXPECT_EQ(runner.run(model, input, vit_memory_budget()).logits, whole.logits);
  EXPECT_EQ(runner.chunked_dispatches(), 0);
}

}  // namespace
}  // namespace attnlab
