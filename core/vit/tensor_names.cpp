// The tensor names of each naming, read from its model family's {kind, pattern} pairs
// (core/vit/model_family.hpp, core/vit/families/).
#include "core/vit/tensor_names.hpp"

#include "core/vit/model_family.hpp"

#include <string_view>

namespace attnlab {

const char* naming_name(VitNaming naming) { return model_family(naming).name; }

VitTensorName vit_tensor_entry(VitNaming naming, VitTensor kind) {
  const VitTensorPattern* p = model_family(naming).find(kind);
  if (!p) return {};
  return {p->pattern, p->prefixed};
}

std::string vit_tensor_name(VitNaming naming, VitTensor kind, int block, const std::string& prefix) {
  return model_family(naming).tensor_name(kind, block, prefix);
}

std::string vit_block_prefix(VitNaming naming, const std::string& prefix) {
  const std::string_view pattern = model_family(naming).find(VitTensor::Norm1Weight)->pattern;
  return prefix + std::string(pattern.substr(0, pattern.find("{i}")));
}

}  // namespace attnlab
