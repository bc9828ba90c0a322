#pragma once
// The kinds of tensor a ViT has (VitTensor), in the style of llama.cpp's LLM_TENSOR_NAMES, and
// the namings they are read in (VitNaming: one per model family, core/vit/model_family.hpp).
// Each family names its tensors as explicit {kind, pattern} pairs in its own file
// (core/vit/families/), "{i}" standing for the block index; vit_tensor_name() reads them. The
// loader (core/vit/vit_load.cpp) finds a checkpoint's tensors through them, the trainer
// (core/vit/vit_train.cpp) names and indexes its parameters by kind, and so the checkpoints it
// writes (VitTrainer::tensors(), written by core/io/safetensors_write.hpp) carry timm's names.
// The wrappers and name prefixes a PyTorch checkpoint's state dict may carry (DINO's "teacher",
// DDP's "module.", "backbone.") are the reader's, applied before any family is known:
// kPytorchStateDictWrappers, kPytorchModulePrefix and kPytorchBackbonePrefix in
// core/io/pytorch_checkpoint.hpp.
#include <string>
#include <string_view>

namespace attnlab {

/// Whose tensor names a checkpoint uses: one value per model family, from the families' one
/// table (core/vit/model_families.inc): HuggingFace (transformers' ViTModel /
/// ViTForImageClassification: encoder.layer.{i} …), Dinov2 (DINOv2's own: timm's names plus
/// `register_tokens` that get no position code), Timm (timm's VisionTransformer, DeiT's and
/// DINO's own checkpoints: blocks.{i}.attn.qkv …). Each family's rules, the position
/// embedding's resampling among them, are its ModelFamily (model_family(naming)).
enum class VitNaming {
#define ATTNLAB_MODEL_FAMILY(id, function) id,
#include "core/vit/model_families.inc"
#undef ATTNLAB_MODEL_FAMILY
};
const char* naming_name(VitNaming naming);  ///< the family's name: "timm", "dinov2", "hf"

/// The kinds of tensor a ViT checkpoint holds. Whole-model kinds first, then the per-block kinds
/// (kFirstBlockTensor … kVitTensorKinds − 1), whose names carry the block index.
enum class VitTensor {
  PatchWeight,     ///< the patch embedding's conv kernel, D × 3 × P × P
  PatchBias,       ///< D
  ClsToken,        ///< 1 × 1 × D
  Registers,       ///< 1 × R × D register tokens (timm `reg_token`, DINOv2 `register_tokens`)
  PosEmbed,        ///< 1 × L × D position embedding
  MaskToken,       ///< a masked-image-modeling token, read past
  NormWeight,      ///< the final LayerNorm (timm `norm`, HF `layernorm`), D
  NormBias,
  FcNormWeight,    ///< timm's LayerNorm after average pooling (`fc_norm`), D
  FcNormBias,
  HeadWeight,      ///< the classifier, classes × D (HF's `classifier`, outside the model's prefix)
  HeadBias,
  PoolerWeight,    ///< HF's pooler, read past
  PoolerBias,
  // Per block ({i}):
  Norm1Weight,     ///< the LayerNorm before attention, D
  Norm1Bias,
  QkvWeight,       ///< timm: W_q, W_k, W_v stacked, 3D × D
  QkvBias,         ///< 3D
  QueryWeight,     ///< HF: W_q alone, D × D
  QueryBias,
  KeyWeight,       ///< HF: W_k
  KeyBias,
  ValueWeight,     ///< HF: W_v
  ValueBias,
  ProjWeight,      ///< attention's output projection, D × D
  ProjBias,
  Norm2Weight,     ///< the LayerNorm before the MLP, D
  Norm2Bias,
  Fc1Weight,       ///< the MLP's first layer, hidden × D
  Fc1Bias,
  Fc2Weight,       ///< its second, D × hidden
  Fc2Bias,
  LayerScale1,     ///< timm's layer scale after attention (`ls1.gamma`), D
  LayerScale2,     ///< after the MLP
  Count
};
inline constexpr int kVitTensorKinds = static_cast<int>(VitTensor::Count);
inline constexpr int kFirstBlockTensor = static_cast<int>(VitTensor::Norm1Weight);
/// Whether the kind's name carries a block index.
constexpr bool is_block_tensor(VitTensor kind) { return static_cast<int>(kind) >= kFirstBlockTensor; }

/// One kind's name in one naming.
struct VitTensorName {
  const char* pattern = nullptr;  ///< e.g. "blocks.{i}.norm1.weight"; null: the naming has no such tensor
  bool prefixed = true;           ///< false: the name stands outside the model's prefix (HF's "classifier")
};

/// The entry for `kind` in `naming`'s family (its own pair, else its base family's; {} when neither names it).
VitTensorName vit_tensor_entry(VitNaming naming, VitTensor kind);

/// The name of `kind` in `naming`, `prefix` in front (the checkpoint's, e.g. "vit." for HF
/// classifiers, "" for timm) unless the entry stands outside it, "{i}" replaced by `block`.
/// Throws Error when the naming has no such tensor.
std::string vit_tensor_name(VitNaming naming, VitTensor kind, int block = -1, const std::string& prefix = "");

/// The text in front of a block's index, e.g. "blocks." (timm) or "encoder.layer." (HF), `prefix` in front.
std::string vit_block_prefix(VitNaming naming, const std::string& prefix = "");

}  // namespace attnlab
