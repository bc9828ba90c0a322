#include "core/vit/tensor_names.hpp"

#include "core/base/error.hpp"

#include <array>

namespace attnlab {

namespace {

using Table = std::array<VitTensorName, kVitTensorKinds>;

// Each naming's table, in VitTensor's order: {pattern, prefixed}; {} where the naming has no such tensor.
constexpr Table kTimm = {{
    {"patch_embed.proj.weight"}, {"patch_embed.proj.bias"}, {"cls_token"}, {"reg_token"}, {"pos_embed"}, {"mask_token"},
    {"norm.weight"}, {"norm.bias"}, {"fc_norm.weight"}, {"fc_norm.bias"}, {"head.weight"}, {"head.bias"}, {}, {},
    // blocks
    {"blocks.{i}.norm1.weight"}, {"blocks.{i}.norm1.bias"}, {"blocks.{i}.attn.qkv.weight"}, {"blocks.{i}.attn.qkv.bias"},
    {}, {}, {}, {}, {}, {},
    {"blocks.{i}.attn.proj.weight"}, {"blocks.{i}.attn.proj.bias"}, {"blocks.{i}.norm2.weight"}, {"blocks.{i}.norm2.bias"},
    {"blocks.{i}.mlp.fc1.weight"}, {"blocks.{i}.mlp.fc1.bias"}, {"blocks.{i}.mlp.fc2.weight"}, {"blocks.{i}.mlp.fc2.bias"},
    {"blocks.{i}.ls1.gamma"}, {"blocks.{i}.ls2.gamma"},
}};

// DINOv2: timm's names, its registers called register_tokens.
constexpr Table dinov2_table() {
  Table t = kTimm;
  t[static_cast<int>(VitTensor::Registers)] = {"register_tokens"};
  return t;
}
constexpr Table kDinov2 = dinov2_table();

constexpr Table kHuggingFace = {{
    {"embeddings.patch_embeddings.projection.weight"}, {"embeddings.patch_embeddings.projection.bias"},
    {"embeddings.cls_token"}, {}, {"embeddings.position_embeddings"}, {"embeddings.mask_token"},
    {"layernorm.weight"}, {"layernorm.bias"}, {}, {}, {"classifier.weight", false}, {"classifier.bias", false},
    {"pooler.dense.weight"}, {"pooler.dense.bias"},
    // blocks
    {"encoder.layer.{i}.layernorm_before.weight"}, {"encoder.layer.{i}.layernorm_before.bias"}, {}, {},
    {"encoder.layer.{i}.attention.attention.query.weight"}, {"encoder.layer.{i}.attention.attention.query.bias"},
    {"encoder.layer.{i}.attention.attention.key.weight"}, {"encoder.layer.{i}.attention.attention.key.bias"},
    {"encoder.layer.{i}.attention.attention.value.weight"}, {"encoder.layer.{i}.attention.attention.value.bias"},
    {"encoder.layer.{i}.attention.output.dense.weight"}, {"encoder.layer.{i}.attention.output.dense.bias"},
    {"encoder.layer.{i}.layernorm_after.weight"}, {"encoder.layer.{i}.layernorm_after.bias"},
    {"encoder.layer.{i}.intermediate.dense.weight"}, {"encoder.layer.{i}.intermediate.dense.bias"},
    {"encoder.layer.{i}.output.dense.weight"}, {"encoder.layer.{i}.output.dense.bias"},
    {}, {},
}};

const Table& table(VitNaming naming) {
  switch (naming) {
    case VitNaming::Dinov2: return kDinov2;
    case VitNaming::HuggingFace: return kHuggingFace;
    case VitNaming::Timm: break;
  }
  return kTimm;
}

constexpr std::string_view kBlockIndex = "{i}";

}  // namespace

const char* naming_name(VitNaming naming) {
  switch (naming) {
    case VitNaming::Timm: return "timm";
    case VitNaming::Dinov2: return "dinov2";
    case VitNaming::HuggingFace: return "hf";
  }
  return "?";
}

const VitTensorName& vit_tensor_entry(VitNaming naming, VitTensor kind) {
  return table(naming)[static_cast<std::size_t>(kind)];
}

std::string vit_tensor_name(VitNaming naming, VitTensor kind, int block, const std::string& prefix) {
  const VitTensorName& e = vit_tensor_entry(naming, kind);
  if (!e.pattern)
    throw Error(std::string("a ViT in ") + naming_name(naming) + "'s names has no tensor of kind " +
                std::to_string(static_cast<int>(kind)));
  std::string name = e.prefixed ? prefix + e.pattern : std::string(e.pattern);
  if (const auto at = name.find(kBlockIndex); at != std::string::npos) name.replace(at, kBlockIndex.size(), std::to_string(block));
  return name;
}

std::string vit_block_prefix(VitNaming naming, const std::string& prefix) {
  const std::string_view pattern = vit_tensor_entry(naming, VitTensor::Norm1Weight).pattern;
  return prefix + std::string(pattern.substr(0, pattern.find(kBlockIndex)));
}

}  // namespace attnlab
