#include "app/commands/cnn_model.hpp"

#include "app/commands/document.hpp"

#include "core/base/translate.hpp"

namespace attnlab::app {

ResnetModel open_cnn_model(const std::filesystem::path& path, const std::atomic<bool>* stop) {
  if (path == kCnnRandomResnet18) {
    ResnetModel m = resnet_from_tensors(random_resnet_tensors(false, {2, 2, 2, 2}, 64, 1000, 0), "", "random ResNet-18", stop);
    m.file = path;
    return m;
  }
  return load_resnet(path, stop);
}

std::string cnn_model_name(const std::filesystem::path& p) {
  // TRANSLATORS: the name shown for a ResNet-18 with random weights (never trained).
  if (p == kCnnRandomResnet18) return _("random ResNet-18");
  return (p.filename() == "model.safetensors" || p.filename() == "pytorch_model.bin") && p.has_parent_path()
             ? p.parent_path().filename().string()
             : p.filename().string();
}

}  // namespace attnlab::app
