// The model families' table (core/vit/model_families.inc) and what is read from a family:
// names, detection, and the checks of a family's description.
#include "core/vit/model_family.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <string_view>

namespace attnlab {

namespace {

constexpr std::string_view kBlockIndex = "{i}";

std::span<const ModelFamily* const> table() {
  static const ModelFamily* const families[] = {
#define ATTNLAB_MODEL_FAMILY(id, function) &function(),
#include "core/vit/model_families.inc"
#undef ATTNLAB_MODEL_FAMILY
  };
  return families;
}

std::string kind_text(VitTensor kind) { return "kind " + std::to_string(static_cast<int>(kind)); }

/// The prefix in front of `suffix` in the first of `file`'s names that ends with it after a
/// prefix that is empty or ends in '.'; nullopt when none does.
std::optional<std::string> prefix_before(const SafetensorsFile& file, const std::string& suffix) {
  for (const auto& [name, t] : file.tensors)
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      std::string p = name.substr(0, name.size() - suffix.size());
      if (p.empty() || p.back() == '.') return p;
    }
  return std::nullopt;
}

std::string join_quoted(const std::vector<std::string>& names, std::size_t most, const char* separator) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < most; ++i) out += (i ? separator : "") + ("'" + names[i] + "'");
  // TRANSLATORS: after a list of tensor names: "'a', 'b', 'c' and 12 more" (with its leading space).
  if (names.size() > most) out += text_format(_(" and %zu more"), names.size() - most);
  return out;
}

// The kinds every family must name for the loader (the rest are optional); attention's weights
// are checked apart (qkv, or query, key and value).
constexpr VitTensor kRequired[] = {
    VitTensor::PatchWeight, VitTensor::ClsToken,    VitTensor::PosEmbed,    VitTensor::NormWeight,
    VitTensor::NormBias,    VitTensor::Norm1Weight, VitTensor::Norm1Bias,   VitTensor::ProjWeight,
    VitTensor::ProjBias,    VitTensor::Norm2Weight, VitTensor::Norm2Bias,   VitTensor::Fc1Weight,
    VitTensor::Fc1Bias,     VitTensor::Fc2Weight,   VitTensor::Fc2Bias,
};

}  // namespace

const VitTensorPattern* ModelFamily::find(VitTensor kind) const {
  for (const VitTensorPattern& p : tensors)
    if (p.kind == kind) return &p;
  return base ? base->find(kind) : nullptr;
}

std::string ModelFamily::tensor_name(VitTensor kind, int block, const std::string& prefix) const {
  const VitTensorPattern* p = find(kind);
  if (!p || !p->pattern)
    // TRANSLATORS: %s is a model family's name (hf, timm, dinov2); %d is a number for a kind of tensor.
    throw Error(text_format(_("a ViT in %s's names has no tensor of kind %d"), name, static_cast<int>(kind)));
  std::string out = p->prefixed ? prefix + p->pattern : std::string(p->pattern);
  if (const auto at = out.find(kBlockIndex); at != std::string::npos) out.replace(at, kBlockIndex.size(), std::to_string(block));
  return out;
}

std::span<const ModelFamily* const> model_families() { return table(); }

const ModelFamily& model_family(VitNaming naming) {
  const auto i = static_cast<std::size_t>(naming);
  if (i >= table().size()) throw Error(text_format(_("no model family of naming %zu"), i));
  return *table()[i];
}

DetectedFamily detect_model_family(const SafetensorsFile& file, const std::string& what) {
  std::vector<std::string> anchors;
  for (const ModelFamily* family : table()) {
    const std::string anchor = family->tensor_name(VitTensor::PatchWeight);
    if (std::find(anchors.begin(), anchors.end(), anchor) == anchors.end()) anchors.push_back(anchor);
    const auto prefix = prefix_before(file, anchor);
    if (!prefix) continue;
    const bool marked = std::all_of(family->markers.begin(), family->markers.end(), [&](VitTensor kind) {
      return family->has(kind) && file.tensors.count(family->tensor_name(kind, -1, *prefix)) > 0;
    });
    if (marked) return {family, *prefix};
  }
  // A ResNet (torchvision's and timm's names, core/cnn): said so, with where it opens instead.
  if (file.tensors.count("conv1.weight") && file.tensors.count("layer1.0.conv1.weight"))
    // TRANSLATORS: the first %s is the file, the second "a ResNet (conv1, layer1.0, ...), not a ViT" (kept in English:
    // the window looks for it). "render --view vit-cnn --cnn", "attnlab vit", "cka", "explain --receptive-field" are commands.
    throw Error(text_format(_("%s: %s: set it beside a ViT (the window's CNN tab, render --view vit-cnn --cnn), or give it to "
                              "attnlab vit, cka or explain --receptive-field"),
                            what.c_str(), kResnetNotVit));
  std::reverse(anchors.begin(), anchors.end());  // the most general family's first
  std::vector<std::string> some;
  for (const auto& [name, t] : file.tensors) some.push_back(name);
  // TRANSLATORS: between tensor names: "'patch_embed.proj.weight' or 'embeddings.patch_embeddings.projection.weight'".
  const std::string looked_for = join_quoted(anchors, anchors.size(), _(" or "));
  // TRANSLATORS: the checkpoint has no tensors at all ("its tensors are none").
  const std::string tensors = some.empty() ? std::string(_("none")) : join_quoted(some, 3, ", ");
  // TRANSLATORS: %1$s is the file; %2$s the tensor names looked for; %3$s a few of its tensors' names, or "none".
  throw Error(text_format(_("%s: not a ViT checkpoint: it has no patch embedding (%s); its tensors are %s"), what.c_str(),
                          looked_for.c_str(), tensors.c_str()));
}

std::vector<std::string> model_family_problems(const ModelFamily& family) {
  std::vector<std::string> problems;
  const std::string who = std::string(family.name ? family.name : "") + ": ";
  if (!family.name || !*family.name) problems.push_back("a family without a name");
  std::set<VitTensor> seen;
  for (const VitTensorPattern& p : family.tensors) {
    if (p.kind == VitTensor::Count || !p.pattern || !*p.pattern) problems.push_back(who + "a pair without a kind or a pattern");
    if (!seen.insert(p.kind).second) problems.push_back(who + kind_text(p.kind) + " is named twice");
  }
  for (const VitTensor kind : kRequired)
    if (!family.has(kind)) problems.push_back(who + kind_text(kind) + ", which the loader needs, is not named");
  const bool split = family.has(VitTensor::QueryWeight) && family.has(VitTensor::KeyWeight) && family.has(VitTensor::ValueWeight);
  if (family.has(VitTensor::QkvWeight) == split)
    problems.push_back(who + "attention's weights must be named either as qkv or as query, key and value");
  for (int k = 0; k < kVitTensorKinds; ++k) {
    const auto kind = static_cast<VitTensor>(k);
    const VitTensorPattern* p = family.find(kind);
    if (!p || !p->pattern) continue;
    const std::string_view pattern(p->pattern);
    if ((pattern.find(kBlockIndex) != std::string_view::npos) != is_block_tensor(kind))
      problems.push_back(who + "'" + p->pattern + "' (" + kind_text(kind) + ") " +
                         (is_block_tensor(kind) ? "lacks" : "has") + " the block index {i}");
    // The loader takes a weight's bias as the next kind (VitTensor lists them in pairs).
    if (pattern.ends_with(".weight") && k + 1 < kVitTensorKinds) {
      const VitTensorPattern* bias = family.find(static_cast<VitTensor>(k + 1));
      const std::string expected = std::string(pattern.substr(0, pattern.size() - 6)) + "bias";
      if (!bias || !bias->pattern || expected != bias->pattern)
        problems.push_back(who + "'" + p->pattern + "' has no bias '" + expected + "' as the next kind");
    }
  }
  for (const VitTensor kind : family.markers)
    if (!family.has(kind)) problems.push_back(who + "its marker " + kind_text(kind) + " is not one of its tensors");
  return problems;
}

std::vector<std::string> model_table_problems(std::span<const ModelFamily* const> families) {
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < families.size(); ++i) {
    const ModelFamily& a = *families[i];
    if (static_cast<std::size_t>(a.naming) != i)
      problems.push_back(std::string(a.name) + " is not at the place of its VitNaming in the table");
    for (std::size_t j = i + 1; j < families.size(); ++j) {
      const ModelFamily& b = *families[j];
      if (std::string_view(a.name) == b.name) problems.push_back(std::string("two families are named ") + a.name);
      if (!a.has(VitTensor::PatchWeight) || !b.has(VitTensor::PatchWeight) ||
          a.tensor_name(VitTensor::PatchWeight) != b.tensor_name(VitTensor::PatchWeight))
        continue;
      // `a` is tried first: were its markers all among b's, b could never be detected.
      const bool a_within_b = std::all_of(a.markers.begin(), a.markers.end(), [&](VitTensor kind) {
        return std::find(b.markers.begin(), b.markers.end(), kind) != b.markers.end() &&
               a.tensor_name(kind) == b.tensor_name(kind);
      });
      if (a_within_b)
        problems.push_back(std::string(b.name) + " can never be detected: " + a.name +
                           ", before it in the table, has its patch embedding and a subset of its markers");
    }
  }
  return problems;
}

}  // namespace attnlab
