#pragma once
// A checkpoint of either family the app reads, told by its tensors: a ViT (core/vit/vit.hpp) or
// a ResNet (core/cnn/resnet.hpp). The file is opened once (a PyTorch checkpoint is read once).
#include "core/cnn/resnet.hpp"
#include "core/vit/vit.hpp"

#include <filesystem>
#include <optional>

namespace attnlab {

/// Exactly one of the two is set.
struct AnyModel {
  std::optional<VitModel> vit;
  std::optional<ResnetModel> resnet;
};

/// Loads `path` (a file, or a folder as checkpoint_file() reads it) as a ResNet when it holds a
/// ResNet's tensors (is_resnet_checkpoint()), otherwise as a ViT with `options` (--heads and --eps
/// are refused for a ResNet). Throws as load_vit() and load_resnet().
AnyModel load_any_model(const std::filesystem::path& path, const VitLoadOptions& options = {});

}  // namespace attnlab
