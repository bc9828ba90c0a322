#pragma once
// Fashion-MNIST (Xiao, Rasul & Vollgraf 2017; Zalando, MIT licence) as Debian's
// dataset-fashion-mnist installs it: four gzip-compressed IDX files in
// /usr/share/datasets/fashion-mnist, the published split of 60 000 training and 10 000 test
// images, 28 × 28 grey bytes (0 = background), labels 0–9. Read through zlib.
//
// IDX: a big-endian header — two zero bytes, the element type (0x08: unsigned byte), the number
// of dimensions d — then d big-endian 32-bit sizes, then the values, row-major.
#include "core/io/image.hpp"

#include <atomic>
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace attnlab {

/// Where Debian's dataset-fashion-mnist puts the files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

/// The folder the files are read from: kFashionMnistDir where Debian's package put them, else
/// share/attnlab/fashion-mnist beside the program's bin/ (the Windows installer bundles the
/// four files there, packaging/windows/installer.cmake); kFashionMnistDir when neither exists
/// (its errors then say how to install it).
std::filesystem::path fashion_mnist_dir();

/// The ten classes, in label order.
inline const std::array<const char*, 10> kFashionMnistLabels = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                                "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

/// The training set's pixel mean and standard deviation (of bytes/255), rounded as the bundled
/// model's train.py has them; the input normalization of every model trained here.
inline constexpr float kFashionMnistMean = 0.2860f, kFashionMnistStd = 0.3530f;

/// Images in the published test split (the Train tab's probe slider; the files are checked on reading).
inline constexpr int kFashionMnistTestCount = 10000;

/// The most test images an evaluation reads (attnlab train's periodic subset; the Train tab reads
/// 500): a test split with fewer is refused on reading, never indexed past its end.
inline constexpr int kFashionMnistEvalImages = 1000;

/// One split: `count` images of rows × cols bytes, image after image, and their labels.
struct FashionMnistSplit {
  int count = 0, rows = 0, cols = 0;
  std::vector<std::uint8_t> pixels;  ///< count·rows·cols, row-major per image
  std::vector<std::uint8_t> labels;  ///< count values in [0, 10)
};

/// Reads one gzip-compressed IDX file of unsigned bytes whose number of dimensions is `dims`
/// (3: images, 1: labels): the sizes into `shape`, the values returned. Throws Error with one
/// line naming the file for: a missing file (saying `apt-get install dataset-fashion-mnist`), one
/// that cannot be opened or decompressed, a header that is not IDX of unsigned bytes with `dims`
/// dimensions, sizes over 100 million values, and data shorter than the header says. `stop` (may
/// be null) is looked at before each 4 MiB of values: when set, throws Error("cancelled").
std::vector<std::uint8_t> read_idx_gz(const std::filesystem::path& path, int dims, std::vector<int>& shape,
                                      const std::atomic<bool>* stop = nullptr);

/// The training split (train = true: train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz) or
/// the test split (t10k-…) from `dir`. Throws Error as read_idx_gz(), and when the two files
/// disagree on the count, a label is 10 or more, the images are not 28 × 28, or the test split
/// has fewer than kFashionMnistEvalImages images; Error("cancelled") when `stop` is set while reading.
FashionMnistSplit load_fashion_mnist(bool train, const std::filesystem::path& dir = fashion_mnist_dir(),
                                     const std::atomic<bool>* stop = nullptr);

/// Image `index` of `split` as the model's input: 3 × rows × cols floats (channel, y, x), the grey
/// value (byte/255) copied to the three channels and normalized as (x − kFashionMnistMean) /
/// kFashionMnistStd, into `out`.
void fashion_mnist_input(const FashionMnistSplit& split, int index, float* out);

/// Image `index` of `split` as a photo (rows × cols, RGB in [0, 1]: the grey byte/255 in the three
/// channels), e.g. the probe the Train tab's maps are of. Throws Error for an index outside the split.
Image fashion_mnist_image(const FashionMnistSplit& split, int index);

/// A photo made as the training data is, to show a model trained on Fashion-MNIST: the largest
/// centred square of it, scaled to rows × cols (stb_image_resize's default filter), each pixel's
/// grey value (Rec. 601 luma, 0.299 R + 0.587 G + 0.114 B) rounded to a byte as the data's are,
/// /255, copied to the three channels. No inversion: a photo's dark background stays dark and
/// its sky bright, which is what the model sees. Throws Error for an empty photo or sizes < 1.
Image fashion_mnist_style(const Image& photo, int rows = 28, int cols = 28);

/// Training batches drawn from a split: an epoch is a permutation of its images (seeded), cut
/// into batches in order (the last partial batch dropped); each image optionally augmented as
/// the bundled model's train.py does it (a random crop of the image padded by `pad` pixels of
/// background, then a horizontal flip with probability 1/2). The same seed gives the same
/// batches.
class FashionMnistBatches {
 public:
  FashionMnistBatches(const FashionMnistSplit& split, int batch, std::uint64_t seed, int pad = 2, bool flip = true);
  /// The next batch as the model's input (batch·3·rows·cols floats, fashion_mnist_input()'s
  /// layout) and its labels.
  void next(std::vector<float>& images, std::vector<int>& labels);
  int batch() const { return batch_; }
  std::int64_t epoch() const { return epoch_; }  ///< complete passes begun so far, from 1

 private:
  const FashionMnistSplit& split_;
  int batch_, pad_;
  bool flip_;
  std::uint64_t state_;
  std::vector<int> order_;
  std::size_t next_ = 0;
  std::int64_t epoch_ = 0;
  std::uint64_t random();  ///< splitmix64: the same numbers on every platform
};

}  // namespace attnlab
