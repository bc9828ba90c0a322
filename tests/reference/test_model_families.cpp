// The model families (core/vit/model_family.hpp, issue 48 item 6): one description per family
// in its own file, one table line each. Each family names each kind of tensor at most once, as
// explicit {kind, pattern} pairs, and every kind the loader needs; the table tries the special
// cases first; detection tells each family's checkpoints by their names alone.
#include "core/base/error.hpp"
#include "core/vit/model_family.hpp"
#include "core/vit/tensor_names.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace attnlab;

namespace {

std::string lines(const std::vector<std::string>& problems) {
  std::string out;
  for (const auto& p : problems) out += p + "\n";
  return out;
}

bool mentions(const std::vector<std::string>& problems, const std::string& text) {
  return std::any_of(problems.begin(), problems.end(), [&](const std::string& p) { return p.find(text) != std::string::npos; });
}

SafetensorsFile names_only(const std::vector<std::string>& names) {
  SafetensorsFile file;
  for (const auto& n : names) file.tensors[n];
  return file;
}

TEST(ModelFamilies, EveryFamilyNamesEachKindOnceAndAllTheLoaderNeeds) {
  ASSERT_EQ(model_families().size(), 3u);
  for (const ModelFamily* family : model_families()) {
    SCOPED_TRACE(family->name);
    EXPECT_EQ(&model_family(family->naming), family);
    EXPECT_EQ(std::string(naming_name(family->naming)), family->name);
    const auto problems = model_family_problems(*family);
    EXPECT_TRUE(problems.empty()) << lines(problems);
    // Each kind at most once, counted here too rather than only by the function under test.
    for (int k = 0; k < kVitTensorKinds; ++k)
      EXPECT_LE(std::count_if(family->tensors.begin(), family->tensors.end(),
                              [k](const VitTensorPattern& p) { return static_cast<int>(p.kind) == k; }),
                1)
          << "kind " << k;
  }
  const auto table = model_table_problems(model_families());
  EXPECT_TRUE(table.empty()) << lines(table);
}

TEST(ModelFamilies, TheFamiliesKeepTheirLibrariesRules) {
  const ModelFamily& timm = model_family(VitNaming::Timm);
  const ModelFamily& dinov2 = model_family(VitNaming::Dinov2);
  const ModelFamily& hf = model_family(VitNaming::HuggingFace);
  // DINOv2 is timm's names but for its registers.
  EXPECT_EQ(dinov2.base, &timm);
  EXPECT_EQ(dinov2.tensor_name(VitTensor::Registers), "register_tokens");
  EXPECT_EQ(dinov2.tensor_name(VitTensor::QkvWeight, 2), timm.tensor_name(VitTensor::QkvWeight, 2));
  // The position embedding: timm and DINOv2 resample with antialias, HF without; DINOv2's
  // registers have no position code.
  EXPECT_TRUE(timm.input.antialiased_positions);
  EXPECT_TRUE(dinov2.input.antialiased_positions);
  EXPECT_FALSE(hf.input.antialiased_positions);
  EXPECT_FALSE(dinov2.input.registers_have_positions);
  EXPECT_TRUE(timm.input.positions_may_skip_prefix);
  EXPECT_FALSE(hf.input.positions_may_skip_prefix);
  // ε's defaults: timm's LayerNorm(eps=1e-6), HF ViTConfig's layer_norm_eps=1e-12.
  EXPECT_EQ(timm.config.default_eps, 1e-6f);
  EXPECT_EQ(hf.config.default_eps, 1e-12f);
  EXPECT_TRUE(timm.config.reads_global_pool);
  EXPECT_FALSE(hf.config.reads_global_pool);
}

TEST(ModelFamilies, DetectionTellsEachFamilyByItsNames) {
  const auto timm = detect_model_family(names_only({"cls_token", "patch_embed.proj.weight", "blocks.0.norm1.weight"}), "t");
  EXPECT_EQ(timm.family->naming, VitNaming::Timm);
  EXPECT_EQ(timm.prefix, "");
  // timm's names with DINOv2's registers, behind a prefix.
  const auto dinov2 = detect_model_family(names_only({"m.patch_embed.proj.weight", "m.register_tokens"}), "d");
  EXPECT_EQ(dinov2.family->naming, VitNaming::Dinov2);
  EXPECT_EQ(dinov2.prefix, "m.");
  // timm's own registers are timm's.
  EXPECT_EQ(detect_model_family(names_only({"patch_embed.proj.weight", "reg_token"}), "r").family->naming, VitNaming::Timm);
  const auto hf = detect_model_family(names_only({"vit.embeddings.patch_embeddings.projection.weight", "classifier.weight"}), "h");
  EXPECT_EQ(hf.family->naming, VitNaming::HuggingFace);
  EXPECT_EQ(hf.prefix, "vit.");
  // A name that merely ends like a patch embedding is none.
  EXPECT_THROW(detect_model_family(names_only({"xpatch_embed.proj.weight"}), "x"), Error);
  try {
    detect_model_family(names_only({"a", "b"}), "f.pth");
    ADD_FAILURE() << "no family should be detected";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "f.pth: not a ViT checkpoint: it has no patch embedding ('patch_embed.proj.weight' or "
              "'embeddings.patch_embeddings.projection.weight'); its tensors are 'a', 'b'");
  }
}

// The checks themselves catch what they are for: a family written wrong, a table in the wrong order.
TEST(ModelFamilies, TheChecksCatchAFamilyWrittenWrong) {
  static constexpr VitTensorPattern kBroken[] = {
      {VitTensor::PatchWeight, "patch.weight"},
      {VitTensor::PatchWeight, "patch2.weight"},       // twice
      {VitTensor::Norm1Weight, "norm1.weight"},        // a block's kind without {i}
      {VitTensor::Norm1Bias, "blocks.{i}.norm1.b"},    // not the weight's bias
  };
  static constexpr VitTensor kMarkers[] = {VitTensor::Registers};
  ModelFamily broken;
  broken.name = "broken";
  broken.tensors = kBroken;
  broken.markers = kMarkers;
  const auto problems = model_family_problems(broken);
  EXPECT_TRUE(mentions(problems, "kind 0 is named twice")) << lines(problems);
  EXPECT_TRUE(mentions(problems, "'norm1.weight' (kind 14) lacks the block index")) << lines(problems);
  EXPECT_TRUE(mentions(problems, "'patch.weight' has no bias 'patch.bias'")) << lines(problems);
  EXPECT_TRUE(mentions(problems, "kind 4, which the loader needs, is not named")) << lines(problems);  // PosEmbed
  EXPECT_TRUE(mentions(problems, "attention's weights")) << lines(problems);
  EXPECT_TRUE(mentions(problems, "its marker kind 3")) << lines(problems);

  // timm before DINOv2: DINOv2's checkpoints would be read as timm's.
  const ModelFamily* wrong_order[] = {&model_family(VitNaming::HuggingFace), &model_family(VitNaming::Timm),
                                      &model_family(VitNaming::Dinov2)};
  const auto table = model_table_problems(wrong_order);
  EXPECT_TRUE(mentions(table, "dinov2 can never be detected")) << lines(table);
}

}  // namespace
