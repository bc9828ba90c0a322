#pragma once
// What a model family is, in one description (issue 48): how its checkpoints are told from
// others, its tensors' names as explicit {kind, pattern} pairs, where its position embedding
// covers the tokens and how it is resampled, its input's normalization defaults, and where its
// config.json keeps the number of heads and LayerNorm's ε. Each family is one file of
// core/vit/families/ and one line of the table core/vit/model_families.inc; the loader
// (core/vit/vit_load.cpp), the input (core/vit/vit_input.cpp) and the tensor names
// (core/vit/tensor_names.hpp) read the family and know no family by name.
//
// Not a family's: what happens before a family can be known. The PyTorch reader's state-dict
// wrappers and prefixes (core/io/pytorch_checkpoint.hpp) and the files the Hub fetches
// (config.json, model.safetensors or pytorch_model.bin, preprocessor_config.json;
// core/io/hub.hpp) serve every family; core/io lies below core/vit and includes nothing of it.
#include "core/io/safetensors.hpp"
#include "core/vit/tensor_names.hpp"

#include <array>
#include <span>
#include <string>
#include <vector>

namespace attnlab {

/// One tensor's name in a family: its kind and the pattern, "{i}" standing for the block.
struct VitTensorPattern {
  VitTensor kind = VitTensor::Count;
  const char* pattern = nullptr;  ///< e.g. "blocks.{i}.norm1.weight"
  bool prefixed = true;           ///< false: outside the model's prefix (HF's "classifier" beside "vit.")
};

/// Where config.json keeps what the tensors cannot say, and the defaults without it.
struct FamilyConfig {
  /// config.json's keys for the number of heads, tried in order; "a.b" is key b of the object a
  /// (timm's "model_args.num_heads"). A key present but no finite number is an error.
  std::span<const char* const> heads_keys;
  std::span<const char* const> eps_keys;  ///< the same for LayerNorm's ε
  float default_eps = 1e-6f;              ///< ε without a key (timm's 1e-6, HF ViTConfig's 1e-12)
  const char* default_eps_from = "";      ///< what `attnlab vit --info` says of it ("default of timm")
  /// Whether config.json's `global_pool` is read (timm's: "avg" pools the patches for the
  /// classifier, "" puts a head on every token, which is no classifier).
  bool reads_global_pool = false;
};

/// The input as the family's own library prepares it. Resizing the image (the short side to
/// --resize, stb's filter) and cutting it into patches are the same for every family.
struct FamilyInput {
  /// Per RGB channel, on values in [0, 1], when neither config.json's pretrained_cfg nor
  /// preprocessor_config.json says (ImageNet's, for every family today).
  std::array<float, 3> mean{0.485f, 0.456f, 0.406f}, std{0.229f, 0.224f, 0.225f};
  /// How the position embedding is resampled to another grid: bicubic with antialias (timm's
  /// resample_abs_pos_embed) or without (transformers' interpolate_pos_encoding).
  bool antialiased_positions = true;
  /// Whether the register tokens get position codes: false for DINOv2, whose embedding covers
  /// [cls, patches] and whose registers are inserted after it (PosLayout::ClsAndPatches).
  bool registers_have_positions = true;
  /// Whether an embedding may cover the patches alone (timm's no_embed_class; PosLayout::PatchesOnly).
  bool positions_may_skip_prefix = true;
};

/// One model family. Read with model_family(naming) or model_families().
struct ModelFamily {
  VitNaming naming = VitNaming::Timm;
  const char* name = "";         ///< short, as `attnlab vit --info` prints it: "timm", "dinov2", "hf"
  const char* description = "";  ///< whose models, and the source they follow
  /// Its tensors' names, in any order, each kind at most once. A kind it does not name is
  /// `base`'s (DINOv2: timm's, but for the registers); a kind neither names it has not.
  std::span<const VitTensorPattern> tensors;
  const ModelFamily* base = nullptr;
  /// Detection: a checkpoint is this family's when it names its patch embedding
  /// (VitTensor::PatchWeight) as this family does, after a prefix that is empty or ends in '.'
  /// (HF's "vit."), and names every kind of `markers` with the same prefix.
  std::span<const VitTensor> markers;
  FamilyInput input;
  FamilyConfig config;

  /// The pattern of `kind`: its own pair, else its base's; null when neither names it.
  const VitTensorPattern* find(VitTensor kind) const;
  bool has(VitTensor kind) const { return find(kind) != nullptr; }
  /// The name of `kind`, `prefix` in front unless the pattern stands outside it, "{i}" replaced
  /// by `block`. Throws Error when the family has no such tensor.
  std::string tensor_name(VitTensor kind, int block = -1, const std::string& prefix = "") const;
};

// Each family's function, one per line of the table (written in core/vit/families/).
#define ATTNLAB_MODEL_FAMILY(id, function) const ModelFamily& function();
#include "core/vit/model_families.inc"
#undef ATTNLAB_MODEL_FAMILY

/// Every family, in the table's order (the order detection tries them).
std::span<const ModelFamily* const> model_families();

/// The family of `naming`.
const ModelFamily& model_family(VitNaming naming);

/// A checkpoint's family and the prefix in front of its names (e.g. "vit." for HF classifiers).
struct DetectedFamily {
  const ModelFamily* family = nullptr;
  std::string prefix;
};

/// What the Error of find_family() says of a ResNet's tensors ("<what>: a ResNet (conv1,
/// layer1.0, ...), not a ViT: ..."): the window tells it apart and sets the file in the CNN tab.
inline constexpr const char* kResnetNotVit = "a ResNet (conv1, layer1.0, ...), not a ViT";

/// The first family of the table whose detection rule `file`'s tensor names meet (see
/// ModelFamily::markers). Throws Error "<what>: not a ViT checkpoint: …" naming the patch
/// embeddings looked for and a few of its tensors when none does.
DetectedFamily detect_model_family(const SafetensorsFile& file, const std::string& what);

/// What is wrong with a family's description, one line each (empty: nothing): a kind named
/// twice in its own pairs; a kind the loader needs that it names not (the patch embedding,
/// CLS token, position embedding, final LayerNorm, and per block both LayerNorms, the output
/// projection, the MLP, and attention's qkv or its query, key and value); a pattern with "{i}"
/// for a kind that is not a block's, or without it for one that is; a weight whose bias (the
/// next kind, as the loader takes it) is not named the same with ".bias"; a marker it does
/// not name; a name that is empty. ModelFamilies.* holds every family of the table to it.
std::vector<std::string> model_family_problems(const ModelFamily& family);

/// What is wrong with the table itself: a family not at its VitNaming's place, two with the same
/// name, or a family that can never be detected because one before it in the table has the
/// same patch embedding and a subset of its markers.
std::vector<std::string> model_table_problems(std::span<const ModelFamily* const> families);

}  // namespace attnlab
