#include "core/cnn/any_model.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/io/files.hpp"
#include "core/io/pytorch_checkpoint.hpp"

namespace attnlab {

AnyModel load_any_model(const std::filesystem::path& path, const VitLoadOptions& options) {
  const std::filesystem::path file = checkpoint_file(path);
  const auto dir = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  SafetensorsFile tensors = open_checkpoint(file, options.stop);
  AnyModel out;
  if (is_resnet_checkpoint(tensors)) {
    if (options.heads || options.eps)
      // TRANSLATORS: %s is the file; --heads and --eps are command-line options.
      throw Error(text_format(_("%s: a ResNet has no heads and no LayerNorm (--heads and --eps are for a ViT)"),
                              file.string().c_str()));
    out.resnet = resnet_from_tensors(std::move(tensors), read_config_file(dir / "config.json"), file.string(), options.stop);
    out.resnet->file = file;
  } else {
    out.vit = vit_from_tensors(std::move(tensors), read_config_file(dir / "config.json"),
                               read_config_file(dir / "preprocessor_config.json"), options, file.string());
    out.vit->file = file;
  }
  return out;
}

}  // namespace attnlab
