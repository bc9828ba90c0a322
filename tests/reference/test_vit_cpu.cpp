// The CPU ViT forward (core/vit/vit_cpu) and the readouts against the PyTorch golden files
// of tests/vit/make_golden.py, on six random-weight checkpoints (timm, DINOv2 and Hugging Face
// names; F32, F16, BF16; registers; layer scale) at three image sizes; and the loader's
// inferences and refusals.
#include "core/base/error.hpp"
#include "core/vit/vit_cpu.hpp"
#include "test_support.hpp"
#include "vit/vit_golden.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace attnlab {
namespace {

using testing::VitGolden;

constexpr double kAttentionAbs = 2e-4, kAttentionRel = 1e-3;  // the tolerance on weights

TEST(VitLoad, EveryTestCheckpointIsReadAsItsGoldenFileSays) {
  const auto goldens = testing::vit_goldens();
  ASSERT_EQ(goldens.size(), 24u);
  for (const VitGolden& g : goldens) {
    SCOPED_TRACE(g.name);
    const VitModel model = load_vit(g.model_dir, g.load_options());
    const auto& info = g.json.at("info");
    const VitArchitecture& a = model.arch;
    EXPECT_EQ(naming_name(a.naming), info.at("naming").get<std::string>());
    EXPECT_EQ(a.depth, info.at("depth").get<int>());
    EXPECT_EQ(a.heads, info.at("heads").get<int>());
    EXPECT_EQ(a.D, info.at("D").get<int>());
    EXPECT_EQ(a.patch, info.at("patch").get<int>());
    EXPECT_EQ(a.mlp_hidden, info.at("mlp_hidden").get<int>());
    EXPECT_EQ(a.registers, info.at("registers").get<int>());
    EXPECT_EQ(a.prefix(), info.at("prefix").get<int>());
    EXPECT_EQ(a.layer_scale, info.at("layer_scale").get<bool>());
    EXPECT_EQ(a.qkv_bias, info.at("qkv_bias").get<bool>());
    EXPECT_EQ(a.classes, info.at("classes").get<int>());
    EXPECT_EQ(dtype_name(a.dtype), info.at("dtype").get<std::string>());
    EXPECT_EQ(a.parameters, info.at("parameters").get<std::int64_t>());
    EXPECT_FLOAT_EQ(a.eps, info.at("eps").get<float>());
    for (int c = 0; c < 3; ++c) {
      EXPECT_FLOAT_EQ(a.mean[static_cast<std::size_t>(c)], info.at("mean").at(static_cast<std::size_t>(c)).get<float>());
      EXPECT_FLOAT_EQ(a.std[static_cast<std::size_t>(c)], info.at("std").at(static_cast<std::size_t>(c)).get<float>());
    }
    if (a.classes) {
      EXPECT_EQ(a.labels, g.json.at("labels").get<std::vector<std::string>>());
    }
  }
}

/// Runs the CPU path on a golden case.
VitPass run_reference(const VitGolden& g, VitInput* input_out = nullptr) {
  const VitModel model = load_vit(g.model_dir, g.load_options());
  const VitInput input = vit_input(model, load_image(g.image));
  if (input_out) *input_out = input;
  return VitCpuRunner().run(model, input, vit_memory_budget());
}

TEST(VitCpu, AttentionOfEveryLayerAndHeadMatchesPyTorch) {
  for (const VitGolden& g : testing::vit_goldens()) {
    SCOPED_TRACE(g.name);
    VitInput input;
    const VitPass ref = run_reference(g, &input);
    EXPECT_EQ(input.cols, g.json.at("grid").at(0).get<int>());
    EXPECT_EQ(input.rows, g.json.at("grid").at(1).get<int>());
    ASSERT_EQ(ref.T, g.json.at("T").get<int>());
    for (int l = 0; l < ref.layers(); ++l)
      for (int h = 0; h < ref.H; ++h) {
        const Matrix A = vit_attention(ref, l, h);
        EXPECT_EQ(testing::compare_within(A, g.attention(l, h), kAttentionAbs, kAttentionRel), "") << "layer " << l << " head " << h;
        // Every row of A sums to 1 (eq. 26.20).
        EXPECT_LT((A.rowwise().sum().array() - 1.0f).abs().maxCoeff(), 1e-5f);
      }
  }
}

TEST(VitCpu, RolloutDistanceAndClassesMatchPyTorch) {
  for (const VitGolden& g : testing::vit_goldens()) {
    SCOPED_TRACE(g.name);
    VitInput input;
    const VitPass ref = run_reference(g, &input);
    const VitModel model = load_vit(g.model_dir, g.load_options());
    for (const auto& [name, fusion] : {std::pair{"mean", HeadFusion::Mean}, {"max", HeadFusion::Max}, {"min", HeadFusion::Min}})
      for (int l = 0; l < ref.layers(); ++l)
        for (int q = 0; q < ref.T; ++q) {
          const std::vector<float> row = vit_rollout_row(ref, l, fusion, q);
          const Matrix got = Eigen::Map<const Matrix>(row.data(), 1, ref.T);
          EXPECT_EQ(testing::compare_within(got, g.rollout(name, l).row(q), kAttentionAbs, kAttentionRel), "")
              << name << " layer " << l << " query " << q;
        }
    // The distance the forward pass streamed, and the one recomputed from q and k.
    const Matrix d = vit_attention_distance(ref, model.arch.prefix(), input.cols, input.rows, model.arch.patch);
    ASSERT_EQ(ref.distance.rows(), ref.layers());
    for (int l = 0; l < ref.layers(); ++l)
      for (int h = 0; h < ref.H; ++h) {
        const double want = g.json.at("distance").at(static_cast<std::size_t>(l)).at(static_cast<std::size_t>(h)).get<double>();
        EXPECT_NEAR(d(l, h), want, 1e-2) << "layer " << l << " head " << h;
        EXPECT_NEAR(ref.distance(l, h), want, 1e-2) << "layer " << l << " head " << h;
      }
    if (!g.json.contains("logits")) {
      EXPECT_TRUE(ref.logits.empty());
      continue;
    }
    const auto logits = ref.logits;
    const auto want = g.json.at("logits").get<std::vector<float>>();
    ASSERT_EQ(logits.size(), want.size());
    for (std::size_t c = 0; c < want.size(); ++c) EXPECT_NEAR(logits[c], want[c], 1e-4 + 1e-3 * std::abs(want[c]));
    const auto probs = g.json.at("probabilities").get<std::vector<float>>();
    const auto top = vit_top_classes(logits, static_cast<int>(want.size()));
    for (const auto& [c, p] : top) EXPECT_NEAR(p, probs[static_cast<std::size_t>(c)], 1e-4);
    for (std::size_t k = 1; k < top.size(); ++k) EXPECT_GE(top[k - 1].second, top[k].second);
  }
}

TEST(VitCpu, PatchRowDropsThePrefixKeysWithoutRenormalizing) {
  const auto goldens = testing::vit_goldens();
  const auto it = std::find_if(goldens.begin(), goldens.end(), [](const VitGolden& g) { return g.name == "dinov2_reg_f32__safari_61x45"; });
  ASSERT_NE(it, goldens.end());
  const VitPass ref = run_reference(*it);
  const int prefix = 5;  // cls and four registers
  const int last = ref.layers() - 1;
  const Matrix A0 = it->attention(last, 0), A1 = it->attention(last, 1);
  // The patch query whose head-0 row gives the prefix keys the most weight.
  int query = prefix;
  for (int i = prefix; i < ref.T; ++i)
    if (A0.row(i).head(prefix).sum() > A0.row(query).head(prefix).sum()) query = i;
  const auto row0 = vit_patch_row(ref, prefix, last, {0, HeadFusion::Mean}, query);
  const auto mean = vit_patch_row(ref, prefix, last, {-1, HeadFusion::Mean}, query);
  const auto mx = vit_patch_row(ref, prefix, last, {-1, HeadFusion::Max}, query);
  const auto mn = vit_patch_row(ref, prefix, last, {-1, HeadFusion::Min}, query);
  ASSERT_EQ(row0.size(), static_cast<std::size_t>(ref.T - prefix));
  double sum = 0.0, dropped = 0.0;
  for (int j = 0; j < prefix; ++j) dropped += A0(query, j);
  for (std::size_t j = 0; j < row0.size(); ++j) {
    const float a0 = A0(query, prefix + static_cast<int>(j)), a1 = A1(query, prefix + static_cast<int>(j));
    EXPECT_NEAR(row0[j], a0, 2e-4);
    EXPECT_NEAR(mean[j], (a0 + a1) / 2, 2e-4);
    EXPECT_NEAR(mx[j], std::max(a0, a1), 2e-4);
    EXPECT_NEAR(mn[j], std::min(a0, a1), 2e-4);
    sum += row0[j];
  }
  EXPECT_GT(dropped, 1e-3);  // the prefix keys hold some weight ...
  EXPECT_NEAR(sum + dropped, 1.0, 1e-3);  // ... which the patch row leaves out
}

TEST(VitCpu, LayerNormAndGeluByHand) {
  Matrix X(1, 4);
  X << 1, 2, 3, 6;  // mean 3, variance (4+1+0+9)/4 = 3.5
  RowVector w(4), b(4);
  w << 1, 2, 1, 1;
  b << 0, 0, 1, 0;
  const Matrix Y = layer_norm(X, w, b, 0.0f);
  const float s = std::sqrt(3.5f);
  EXPECT_NEAR(Y(0, 0), -2 / s, 1e-6);
  EXPECT_NEAR(Y(0, 1), -2 / s, 1e-6);
  EXPECT_NEAR(Y(0, 2), 1.0f, 1e-6);
  EXPECT_NEAR(Y(0, 3), 3 / s, 1e-6);
  Matrix G(1, 3);
  G << 1, -1, 0;
  const Matrix g = gelu(G);
  EXPECT_NEAR(g(0, 0), 0.8413447, 1e-6);  // Φ(1) = 0.8413447
  EXPECT_NEAR(g(0, 1), -0.1586553, 1e-6);
  EXPECT_EQ(g(0, 2), 0.0f);
}

TEST(VitCpu, PositionEmbeddingIsKeptAtTheCheckpointsGridAndResampledElsewhere) {
  const VitModel model = load_vit(testing::vit_data_dir() / "timm_f32");
  EXPECT_EQ(vit_position_embedding(model, 4, 4), model.pos);
  const Matrix up = vit_position_embedding(model, 8, 8);
  ASSERT_EQ(up.rows(), 1 + 64);
  EXPECT_EQ(up.row(0), model.pos.row(0));  // the cls token's code is never resampled
  // A constant grid stays constant (the kernel's weights sum to 1), in both libraries' ways.
  VitModel flat = model;
  flat.pos.bottomRows(16).setConstant(0.25f);
  for (const auto naming : {VitNaming::Timm, VitNaming::HuggingFace}) {
    flat.arch.naming = naming;
    for (const auto& [r, c] : {std::pair{2, 3}, {7, 5}, {3, 9}}) {
      const Matrix p = vit_position_embedding(flat, r, c);
      EXPECT_LT((p.bottomRows(r * c).array() - 0.25f).abs().maxCoeff(), 1e-6f) << r << "x" << c;
    }
  }
}

TEST(VitLoad, RefusesWhatIsNotAViTNamingTheTensors) {
  auto expect_refusal = [](const std::map<std::string, Tensor>& tensors, const std::string& part) {
    const std::string bytes = testing::safetensors_f32_bytes(tensors);
    const auto file = parse_safetensors({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, "x.safetensors");
    try {
      vit_from_tensors(file, "", "", {}, "x.safetensors");
      ADD_FAILURE() << "accepted, expected: " << part;
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(part), std::string::npos) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
  };
  auto t = [](std::vector<std::int64_t> shape) {
    Tensor x;
    x.shape = shape;
    std::int64_t n = 1;
    for (auto s : shape) n *= s;
    x.values.assign(static_cast<std::size_t>(n), 0.1f);
    return x;
  };
  // A BERT checkpoint and a CNN.
  expect_refusal({{"bert.embeddings.word_embeddings.weight", t({30, 8})}, {"bert.pooler.dense.weight", t({8, 8})}},
                 "not a ViT checkpoint");
  expect_refusal({{"conv1.weight", t({8, 3, 7, 7})}, {"fc.weight", t({10, 8})}}, "'conv1.weight'");
  // The test model without block 1: its tensors are named as missing.
  const SafetensorsFile full = read_safetensors(testing::vit_data_dir() / "timm_f32" / "model.safetensors");
  std::map<std::string, Tensor> cut(full.tensors.begin(), full.tensors.end());
  for (auto it = cut.begin(); it != cut.end();) it = it->first.rfind("blocks.1.", 0) == 0 ? cut.erase(it) : std::next(it);
  expect_refusal(cut, "'blocks.1.norm1.weight'");
  // An extra tensor is named as unknown; a wrong shape is named with both shapes.
  std::map<std::string, Tensor> extra(full.tensors.begin(), full.tensors.end());
  extra["blocks.0.attn.rel_pos"] = t({3});
  expect_refusal(extra, "'blocks.0.attn.rel_pos'");
  std::map<std::string, Tensor> wrong(full.tensors.begin(), full.tensors.end());
  wrong["blocks.2.mlp.fc2.weight"] = t({48, 100});
  expect_refusal(wrong, "'blocks.2.mlp.fc2.weight' has shape [48, 100], expected [48, 192]");
  // D = 48 without a config: no default number of heads.
  expect_refusal(std::map<std::string, Tensor>(full.tensors.begin(), full.tensors.end()), "--heads");
}

TEST(VitLoad, HeadsThatDoNotDivideDAreRefused) {
  try {
    load_vit(testing::vit_data_dir() / "timm_f32", VitLoadOptions{.heads = 5, .eps = std::nullopt});
    ADD_FAILURE() << "5 heads accepted for D = 48";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("do not divide D = 48"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attnlab
