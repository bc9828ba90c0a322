// The tensor names (core/vit/tensor_names.hpp, issue 39 item 4; since issue 48 each naming's are
// its model family's {kind, pattern} pairs, core/vit/families/), read by the loader, the
// trainer's parameter list and the checkpoints it writes.
#include "core/base/error.hpp"
#include "core/vit/tensor_names.hpp"
#include "core/vit/vit_train.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

using namespace attnlab;

namespace {

constexpr VitNaming kNamings[] = {VitNaming::Timm, VitNaming::Dinov2, VitNaming::HuggingFace};

TEST(TensorNames, NamesEachNamingAsItsLibraryDoes) {
  EXPECT_EQ(vit_tensor_name(VitNaming::Timm, VitTensor::QkvWeight, 3), "blocks.3.attn.qkv.weight");
  EXPECT_EQ(vit_tensor_name(VitNaming::Timm, VitTensor::Registers), "reg_token");
  EXPECT_EQ(vit_tensor_name(VitNaming::Dinov2, VitTensor::Registers), "register_tokens");
  EXPECT_EQ(vit_tensor_name(VitNaming::Dinov2, VitTensor::LayerScale2, 11), "blocks.11.ls2.gamma");
  EXPECT_EQ(vit_tensor_name(VitNaming::HuggingFace, VitTensor::KeyBias, 0, "vit."), "vit.encoder.layer.0.attention.attention.key.bias");
  EXPECT_EQ(vit_tensor_name(VitNaming::HuggingFace, VitTensor::PosEmbed, -1, "vit."), "vit.embeddings.position_embeddings");
  // HF's classifier sits outside the model's prefix.
  EXPECT_EQ(vit_tensor_name(VitNaming::HuggingFace, VitTensor::HeadWeight, -1, "vit."), "classifier.weight");
  EXPECT_EQ(vit_block_prefix(VitNaming::HuggingFace, "vit."), "vit.encoder.layer.");
  EXPECT_EQ(vit_block_prefix(VitNaming::Timm), "blocks.");
  // A kind the naming has not: an Error, not a made-up name.
  EXPECT_THROW(vit_tensor_name(VitNaming::HuggingFace, VitTensor::QkvWeight, 0), Error);
  EXPECT_THROW(vit_tensor_name(VitNaming::Timm, VitTensor::QueryWeight, 0), Error);
}

TEST(TensorNames, BlockKindsCarryTheIndexAndWeightsPairWithTheirBiases) {
  for (const VitNaming naming : kNamings)
    for (int k = 0; k < kVitTensorKinds; ++k) {
      const auto kind = static_cast<VitTensor>(k);
      const char* pattern = vit_tensor_entry(naming, kind).pattern;
      if (!pattern) continue;
      const std::string_view p(pattern);
      SCOPED_TRACE(std::string(naming_name(naming)) + " " + pattern);
      EXPECT_EQ(p.find("{i}") != std::string_view::npos, is_block_tensor(kind));
      // The loader takes a weight's bias as the next kind.
      if (p.ends_with(".weight")) {
        const char* bias = vit_tensor_entry(naming, static_cast<VitTensor>(k + 1)).pattern;
        ASSERT_NE(bias, nullptr);
        EXPECT_EQ(std::string(bias), std::string(p.substr(0, p.size() - 6)) + "bias");
      }
    }
}

TEST(TensorNames, TheTrainersParametersAreTimmsTableIndexedByKind) {
  VitTrainShape shape;
  shape.depth = 2;
  shape.pooling = VitPooling::Average;
  const VitTrainer trainer(shape, {}, 1, 1);
  for (const VitParam& p : trainer.params()) {
    EXPECT_EQ(p.name, vit_tensor_name(VitNaming::Timm, p.kind, p.block));
    EXPECT_EQ(&trainer.param(p.kind, p.block), &p);
    EXPECT_EQ(&trainer.param(p.name), &p);
  }
  EXPECT_EQ(trainer.param(VitTensor::FcNormWeight).name, "fc_norm.weight");
  EXPECT_THROW(trainer.param(VitTensor::NormWeight), Error);  // average pooling: fc_norm, no norm
  EXPECT_THROW(trainer.param(VitTensor::Norm1Weight, 2), Error);
  // Every parameter is in the checkpoint it writes, under the same name.
  const SafetensorsFile file = trainer.tensors();
  EXPECT_EQ(file.tensors.size(), trainer.params().size());
  for (const VitParam& p : trainer.params()) EXPECT_EQ(file.tensors.count(p.name), 1u) << p.name;
}

}  // namespace
