// DINOv2's own checkpoints (facebookresearch/dinov2, dinov2/models/vision_transformer.py): timm's
// names, the register tokens called `register_tokens` (Darcet et al. 2024), and a position
// embedding over [cls, patches] alone: the registers are inserted after it, with none.
#include "core/vit/model_family.hpp"

namespace attnlab {

namespace {

constexpr VitTensorPattern kTensors[] = {
    {VitTensor::Registers, "register_tokens"},
};

// Told from timm's by its registers' name.
constexpr VitTensor kMarkers[] = {VitTensor::Registers};

}  // namespace

const ModelFamily& dinov2_family() {
  static const ModelFamily family{
      .naming = VitNaming::Dinov2,
      .name = "dinov2",
      .description = "DINOv2 with registers (dinov2/models/vision_transformer.py): timm's names, register_tokens",
      .tensors = kTensors,
      .base = &timm_family(),
      .markers = kMarkers,
      // DINOv2's interpolate_pos_encoding: bicubic with antialias, as timm's.
      .input = {.antialiased_positions = true, .registers_have_positions = false, .positions_may_skip_prefix = false},
      .config = timm_family().config,
  };
  return family;
}

}  // namespace attnlab
