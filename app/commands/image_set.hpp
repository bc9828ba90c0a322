#pragma once
// The images a data-set command runs over (`attnlab explain`, `attnlab cka`): `--images fashion`,
// Fashion-MNIST's test split (Debian's dataset-fashion-mnist), or `--images DIR`, the image files
// of a folder by name; the first `--count` of them. No window.
#include "core/io/fashion_mnist.hpp"
#include "core/io/image.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace attnlab::app {

class ImageSet {
 public:
  /// Opens `images` ("fashion" or a folder) and takes its first `count` images (default: 500 of
  /// Fashion-MNIST, all of a folder), at most as many as it holds. Throws Error with one line for
  /// a path that is not a folder, a folder without image files, and a data set that cannot be read.
  ImageSet(const std::string& images, std::optional<int> count);
  int count() const { return count_; }
  /// Image i (0 … count − 1), read when asked: a Fashion-MNIST image in RGB, or the folder's i-th file.
  Image operator()(int i) const;

 private:
  std::optional<FashionMnistSplit> fashion_;
  std::vector<std::filesystem::path> files_;
  int count_ = 0;
};

}  // namespace attnlab::app
