#include "app/commands/image_set.hpp"

#include "core/base/error.hpp"

#include <algorithm>

namespace attnlab::app {

ImageSet::ImageSet(const std::string& images, std::optional<int> count) {
  if (images == "fashion") {
    fashion_ = load_fashion_mnist(false);
    count_ = std::min(count.value_or(500), fashion_->count);
    return;
  }
  if (!std::filesystem::is_directory(images)) throw Error("--images: " + images + " is not a folder (or give fashion)");
  files_ = image_files_in(images);
  if (files_.empty()) throw Error("--images: " + images + " holds no image files (.jpg, .jpeg, .png, .bmp, .tga)");
  count_ = std::min(count.value_or(static_cast<int>(files_.size())), static_cast<int>(files_.size()));
}

Image ImageSet::operator()(int i) const {
  return fashion_ ? fashion_mnist_image(*fashion_, i) : load_image(files_[static_cast<std::size_t>(i)]);
}

}  // namespace attnlab::app
