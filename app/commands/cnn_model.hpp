#pragma once
// The ResNet the document names (cnn.model, `--cnn`): a checkpoint, or kCnnRandomResnet18, a
// ResNet-18 with random weights made on the spot. Shared by the window's views that set a CNN
// beside the attention (the CNN view, the chapter's matrix view). No window.
#include "core/cnn/resnet.hpp"

#include <atomic>
#include <filesystem>

namespace attnlab::app {

/// Loads `path` with load_resnet(), or makes the random ResNet-18 (random_resnet_tensors(false,
/// {2, 2, 2, 2}, 64, 1000, 0)) for kCnnRandomResnet18. Throws what load_resnet() throws.
ResnetModel open_cnn_model(const std::filesystem::path& path, const std::atomic<bool>* stop = nullptr);

/// What the views call it: "random ResNet-18", a checkpoint folder's name (for its
/// model.safetensors or pytorch_model.bin), else the file's name.
std::string cnn_model_name(const std::filesystem::path& path);

}  // namespace attnlab::app
