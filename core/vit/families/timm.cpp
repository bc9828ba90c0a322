// timm's VisionTransformer (timm/models/vision_transformer.py), the names DeiT's and DINO's own
// checkpoints use too: DeiT (Touvron et al. 2021) is timm's VisionTransformer trained another
// way, so `timm/deit_*` checkpoints are this family's. DeiT's distilled variants
// (VisionTransformerDistilled, timm/models/deit.py: a second prefix token `dist_token` and a
// second head `head_dist`) are not read: loading one fails with one line (its position
// embedding covers one prefix token more than this family's).
#include "core/vit/model_family.hpp"

namespace attnlab {

namespace {

using K = VitTensor;

constexpr VitTensorPattern kTensors[] = {
    {K::PatchWeight, "patch_embed.proj.weight"},
    {K::PatchBias, "patch_embed.proj.bias"},
    {K::ClsToken, "cls_token"},
    {K::Registers, "reg_token"},
    {K::PosEmbed, "pos_embed"},
    {K::MaskToken, "mask_token"},
    {K::NormWeight, "norm.weight"},
    {K::NormBias, "norm.bias"},
    {K::FcNormWeight, "fc_norm.weight"},
    {K::FcNormBias, "fc_norm.bias"},
    {K::HeadWeight, "head.weight"},
    {K::HeadBias, "head.bias"},
    {K::Norm1Weight, "blocks.{i}.norm1.weight"},
    {K::Norm1Bias, "blocks.{i}.norm1.bias"},
    {K::QkvWeight, "blocks.{i}.attn.qkv.weight"},
    {K::QkvBias, "blocks.{i}.attn.qkv.bias"},
    {K::ProjWeight, "blocks.{i}.attn.proj.weight"},
    {K::ProjBias, "blocks.{i}.attn.proj.bias"},
    {K::Norm2Weight, "blocks.{i}.norm2.weight"},
    {K::Norm2Bias, "blocks.{i}.norm2.bias"},
    {K::Fc1Weight, "blocks.{i}.mlp.fc1.weight"},
    {K::Fc1Bias, "blocks.{i}.mlp.fc1.bias"},
    {K::Fc2Weight, "blocks.{i}.mlp.fc2.weight"},
    {K::Fc2Bias, "blocks.{i}.mlp.fc2.bias"},
    {K::LayerScale1, "blocks.{i}.ls1.gamma"},
    {K::LayerScale2, "blocks.{i}.ls2.gamma"},
};

// timm's config.json (pretrained_cfg and model_args, as timm's push_to_hf_hub writes it).
constexpr const char* kHeadsKeys[] = {"model_args.num_heads", "num_heads"};
constexpr const char* kEpsKeys[] = {"model_args.norm_eps"};

}  // namespace

const ModelFamily& timm_family() {
  static const ModelFamily family{
      .naming = VitNaming::Timm,
      .name = "timm",
      .description = "timm's VisionTransformer (timm/models/vision_transformer.py); DeiT's and DINO's checkpoints",
      .tensors = kTensors,
      .base = nullptr,
      .markers = {},
      // timm's resample_abs_pos_embed: F.interpolate(mode="bicubic", antialias=True); an
      // embedding of all tokens, or of the patches alone (no_embed_class).
      .input = {.antialiased_positions = true, .registers_have_positions = true, .positions_may_skip_prefix = true},
      .config = {.heads_keys = kHeadsKeys,
                 .eps_keys = kEpsKeys,
                 .default_eps = 1e-6f,
                 .default_eps_from = "default of timm",
                 .reads_global_pool = true},
  };
  return family;
}

}  // namespace attnlab
