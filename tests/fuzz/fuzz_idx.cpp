// libFuzzer target: the Fashion-MNIST reader (core/io/fashion_mnist.hpp) on arbitrary bytes, as
// `attnlab train`, `attnlab vit --cka` and the Train tab read Debian's files. The first byte
// picks the split (bit 0: training, else test) and whether the harness gzip-compresses the
// images file (bit 1) and the labels file (bit 2) before writing them; the rest is the images
// file, then the line "\n--next-file--\n", then the labels file (no separator: the labels file
// is missing). Written as DIR/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz into a folder of
// the process's own, read by load_fashion_mnist(train, DIR): zlib reads a file that is not
// gzip as it is, so both the IDX checks and the decompression are reached. A split is either
// read with its promises kept (28 × 28 images, one label in 0…9 per image, every pixel there,
// at least 1000 test images) and then drawn from as the trainer does (fashion_mnist_input,
// fashion_mnist_image, a batch of FashionMnistBatches), or refused with one attnlab::Error of
// one line naming the file; anything else (a crash, a sanitizer report, another exception, a
// broken promise) is a finding. Seeds: tests/fuzz/corpus/idx (made by make_idx_seeds.py);
// findings are kept in tests/fuzz/regressions/idx and replayed by the fuzz_idx_replay test.
#include "tests/fuzz/fuzz_support.hpp"
#include "core/base/error.hpp"
#include "core/io/fashion_mnist.hpp"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;

using attnlab::fuzz::kFileSeparator;

[[noreturn]] void broken(const std::string& what) { attnlab::fuzz::report_finding("fuzz_idx", what); }

const fs::path& folder() { return attnlab::fuzz::temp_folder("idx"); }

void write_file(const fs::path& path, std::span<const std::uint8_t> bytes, bool gzip) {
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb");
    if (!f) broken("cannot write " + path.string());
    if (!bytes.empty() && gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) != static_cast<int>(bytes.size()))
      broken("cannot compress into " + path.string());
    if (gzclose(f) != Z_OK) broken("cannot close " + path.string());
    return;
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) broken("cannot write " + path.string());
}

void check_split(const attnlab::FashionMnistSplit& s, bool train) {
  if (s.rows != 28 || s.cols != 28) broken("a split of images that are not 28 x 28");
  if (s.count < 1 || (!train && s.count < attnlab::kFashionMnistEvalImages)) broken("a split with too few images");
  if (s.labels.size() != static_cast<std::size_t>(s.count)) broken("not one label per image");
  if (s.pixels.size() != static_cast<std::size_t>(s.count) * 28 * 28) broken("pixels missing or left over");
  for (const std::uint8_t y : s.labels)
    if (y >= 10) broken("a label outside 0..9");
  std::vector<float> input(3 * 28 * 28);
  for (const int i : {0, s.count - 1}) {
    attnlab::fashion_mnist_input(s, i, input.data());
    const attnlab::Image image = attnlab::fashion_mnist_image(s, i);
    if (image.width != 28 || image.height != 28) broken("an image that is not 28 x 28");
  }
  attnlab::FashionMnistBatches batches(s, std::min(s.count, 4), 1, 2, true);
  std::vector<float> images;
  std::vector<int> labels;
  batches.next(images, labels);
  batches.next(images, labels);  // a second epoch when the split holds one batch
  for (const int y : labels)
    if (y < 0 || y >= 10) broken("a batch label outside 0..9");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool train = (data[0] & 1) != 0, gzip_images = (data[0] & 2) != 0, gzip_labels = (data[0] & 4) != 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::size_t at = rest.find(kFileSeparator);
  const std::span<const std::uint8_t> images(data + 1, at == std::string_view::npos ? rest.size() : at);
  const fs::path dir = folder();
  const std::string prefix = train ? "train" : "t10k";
  const fs::path images_path = dir / (prefix + "-images-idx3-ubyte.gz"), labels_path = dir / (prefix + "-labels-idx1-ubyte.gz");
  std::error_code ec;
  for (const char* name : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                           "t10k-labels-idx1-ubyte.gz"})
    fs::remove(dir / name, ec);
  write_file(images_path, images, gzip_images);
  if (at != std::string_view::npos) {
    const std::size_t begin = 1 + at + kFileSeparator.size();
    write_file(labels_path, std::span<const std::uint8_t>(data + begin, size - begin), gzip_labels);
  }
  try {
    const attnlab::FashionMnistSplit split = attnlab::load_fashion_mnist(train, dir);
    check_split(split, train);
  } catch (const attnlab::Error& e) {
    const std::string message = e.what();
    if (message.empty() || message.find('\n') != std::string::npos) broken("an error that is not one line: " + message);
    if (message.find(images_path.string()) == std::string::npos && message.find(labels_path.string()) == std::string::npos)
      broken("an error that does not name the file: " + message);
  }
  return 0;
}
