// Hugging Face transformers' ViTModel and ViTForImageClassification
// (transformers/models/vit/modeling_vit.py), and the DINO checkpoints published in its names
// (facebook/dino-vits16): attention's query, key and value apart, the classifier outside the
// model's prefix ("classifier" beside "vit.").
#include "core/vit/model_family.hpp"

namespace attnlab {

namespace {

using K = VitTensor;

constexpr VitTensorPattern kTensors[] = {
    {K::PatchWeight, "embeddings.patch_embeddings.projection.weight"},
    {K::PatchBias, "embeddings.patch_embeddings.projection.bias"},
    {K::ClsToken, "embeddings.cls_token"},
    {K::PosEmbed, "embeddings.position_embeddings"},
    {K::MaskToken, "embeddings.mask_token"},
    {K::NormWeight, "layernorm.weight"},
    {K::NormBias, "layernorm.bias"},
    {K::HeadWeight, "classifier.weight", false},
    {K::HeadBias, "classifier.bias", false},
    {K::PoolerWeight, "pooler.dense.weight"},
    {K::PoolerBias, "pooler.dense.bias"},
    {K::Norm1Weight, "encoder.layer.{i}.layernorm_before.weight"},
    {K::Norm1Bias, "encoder.layer.{i}.layernorm_before.bias"},
    {K::QueryWeight, "encoder.layer.{i}.attention.attention.query.weight"},
    {K::QueryBias, "encoder.layer.{i}.attention.attention.query.bias"},
    {K::KeyWeight, "encoder.layer.{i}.attention.attention.key.weight"},
    {K::KeyBias, "encoder.layer.{i}.attention.attention.key.bias"},
    {K::ValueWeight, "encoder.layer.{i}.attention.attention.value.weight"},
    {K::ValueBias, "encoder.layer.{i}.attention.attention.value.bias"},
    {K::ProjWeight, "encoder.layer.{i}.attention.output.dense.weight"},
    {K::ProjBias, "encoder.layer.{i}.attention.output.dense.bias"},
    {K::Norm2Weight, "encoder.layer.{i}.layernorm_after.weight"},
    {K::Norm2Bias, "encoder.layer.{i}.layernorm_after.bias"},
    {K::Fc1Weight, "encoder.layer.{i}.intermediate.dense.weight"},
    {K::Fc1Bias, "encoder.layer.{i}.intermediate.dense.bias"},
    {K::Fc2Weight, "encoder.layer.{i}.output.dense.weight"},
    {K::Fc2Bias, "encoder.layer.{i}.output.dense.bias"},
};

// transformers' ViTConfig.
constexpr const char* kHeadsKeys[] = {"num_attention_heads"};
constexpr const char* kEpsKeys[] = {"layer_norm_eps"};

}  // namespace

const ModelFamily& hugging_face_family() {
  static const ModelFamily family{
      .naming = VitNaming::HuggingFace,
      .name = "hf",
      .description = "Hugging Face transformers' ViTModel / ViTForImageClassification (modeling_vit.py)",
      .tensors = kTensors,
      .base = nullptr,
      .markers = {},
      // ViTEmbeddings.interpolate_pos_encoding: bicubic without antialias; the embedding covers
      // the CLS token and the patches.
      .input = {.antialiased_positions = false, .registers_have_positions = true, .positions_may_skip_prefix = false},
      .config = {.heads_keys = kHeadsKeys,
                 .eps_keys = kEpsKeys,
                 .default_eps = 1e-12f,
                 .default_eps_from = "default of HF's ViTConfig",
                 .reads_global_pool = false},
  };
  return family;
}

}  // namespace attnlab
