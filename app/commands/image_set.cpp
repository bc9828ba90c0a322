#include "app/commands/image_set.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <algorithm>

namespace attnlab::app {

ImageSet::ImageSet(const std::string& images, std::optional<int> count) {
  if (images == "fashion") {
    fashion_ = load_fashion_mnist(false);
    count_ = std::min(count.value_or(500), fashion_->count);
    return;
  }
  if (!std::filesystem::is_directory(images))
    throw Error(text_format(_("--images: %s is not a folder (or give fashion)"), images.c_str()));
  files_ = image_files_in(images);
  if (files_.empty())
    throw Error(text_format(_("--images: %s holds no image files (.jpg, .jpeg, .png, .bmp, .tga)"), images.c_str()));
  count_ = std::min(count.value_or(static_cast<int>(files_.size())), static_cast<int>(files_.size()));
}

Image ImageSet::operator()(int i) const {
  return fashion_ ? fashion_mnist_image(*fashion_, i) : load_image(files_[static_cast<std::size_t>(i)]);
}

}  // namespace attnlab::app
