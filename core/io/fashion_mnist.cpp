#include "core/io/fashion_mnist.hpp"

#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/base/splitmix.hpp"

#include <stb_image_resize.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <memory>

namespace attnlab {

namespace {

const char* const kInstall = "install it with: apt-get install dataset-fashion-mnist";

struct GzClose {
  void operator()(gzFile f) const { gzclose(f); }
};

/// Reads exactly `size` bytes, or throws naming the file; in 4 MiB pieces, `stop` (may be null)
/// looked at before each.
void read_exactly(gzFile f, const std::filesystem::path& path, std::uint8_t* out, std::size_t size, const char* what,
                  const std::atomic<bool>* stop = nullptr) {
  std::size_t done = 0;
  while (done < size) {
    if (stop && stop->load(std::memory_order_relaxed)) throw Error("cancelled");
    const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(size - done, 4u << 20));
    const int got = gzread(f, out + done, chunk);
    if (got < 0) {
      int code = 0;
      const char* msg = gzerror(f, &code);
      throw Error(path.string() + ": corrupt (" + (msg ? msg : "zlib error") + " while reading its " + what + "); reinstall it with: "
                  "apt-get install --reinstall dataset-fashion-mnist");
    }
    if (got == 0)
      throw Error(path.string() + ": truncated (its " + what + " ends after " + std::to_string(done) + " of " + std::to_string(size) +
                  " bytes); reinstall it with: apt-get install --reinstall dataset-fashion-mnist");
    done += static_cast<std::size_t>(got);
  }
}

}  // namespace

std::filesystem::path fashion_mnist_dir() {
  std::error_code ec;
  if (std::filesystem::is_directory(kFashionMnistDir, ec)) return kFashionMnistDir;
  const auto exe = platform::executable_path();
  if (!exe.empty()) {
    const auto bundled = exe.parent_path().parent_path() / "share" / "attnlab" / "fashion-mnist";
    if (std::filesystem::is_directory(bundled, ec)) return bundled;
  }
  return kFashionMnistDir;
}

std::vector<std::uint8_t> read_idx_gz(const std::filesystem::path& path, int dims, std::vector<int>& shape, const std::atomic<bool>* stop) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw Error(path.string() + ": missing (Fashion-MNIST comes with Debian's dataset-fashion-mnist; " + kInstall + ")");
  if (!std::filesystem::is_regular_file(path, ec)) throw Error(path.string() + ": not a regular file");
  // Opened by the platform layer (a wide-character name on Windows), then handed to zlib.
  int fd = -1;
  std::uint64_t size = 0;
  if (platform::open_regular_for_reading(path, fd, size) != 0) throw Error(path.string() + ": cannot be opened");
  std::unique_ptr<gzFile_s, GzClose> f(gzdopen(fd, "rb"));
  if (!f) {
    platform::close_file(fd);
    throw Error(path.string() + ": cannot be opened");
  }
  std::uint8_t head[4];
  read_exactly(f.get(), path, head, 4, "header");
  if (head[0] != 0 || head[1] != 0 || head[2] != 0x08 || head[3] != dims)
    throw Error(path.string() + ": not an IDX file of unsigned bytes with " + std::to_string(dims) +
                " dimension(s) (its first bytes are wrong); reinstall it with: apt-get install --reinstall dataset-fashion-mnist");
  shape.assign(static_cast<std::size_t>(dims), 0);
  std::uint64_t total = 1;
  for (int d = 0; d < dims; ++d) {
    std::uint8_t b[4];
    read_exactly(f.get(), path, b, 4, "header");
    const std::uint32_t n = (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
    total *= n;
    if (n == 0 || total > 100'000'000ull) throw Error(path.string() + ": the IDX header's sizes are not usable (" + std::to_string(n) + ")");
    shape[static_cast<std::size_t>(d)] = static_cast<int>(n);
  }
  std::vector<std::uint8_t> values(total);
  read_exactly(f.get(), path, values.data(), values.size(), "values", stop);
  return values;
}

FashionMnistSplit load_fashion_mnist(bool train, const std::filesystem::path& dir, const std::atomic<bool>* stop) {
  const std::string prefix = train ? "train" : "t10k";
  const auto images_path = dir / (prefix + "-images-idx3-ubyte.gz"), labels_path = dir / (prefix + "-labels-idx1-ubyte.gz");
  FashionMnistSplit s;
  std::vector<int> ishape, lshape;
  s.pixels = read_idx_gz(images_path, 3, ishape, stop);
  s.labels = read_idx_gz(labels_path, 1, lshape, stop);
  if (ishape[1] != 28 || ishape[2] != 28)
    throw Error(images_path.string() + ": images of " + std::to_string(ishape[2]) + "×" + std::to_string(ishape[1]) + " pixels, not 28×28");
  if (ishape[0] != lshape[0])
    throw Error(labels_path.string() + ": " + std::to_string(lshape[0]) + " labels for " + std::to_string(ishape[0]) + " images");
  for (const std::uint8_t y : s.labels)
    if (y >= 10) throw Error(labels_path.string() + ": label " + std::to_string(y) + " is not one of the 10 classes");
  if (!train && ishape[0] < kFashionMnistEvalImages)
    throw Error(images_path.string() + ": " + std::to_string(ishape[0]) + " images, fewer than the " +
                std::to_string(kFashionMnistEvalImages) +
                " the evaluations read (a short or partial file); reinstall it with: " + kInstall);
  s.count = ishape[0];
  s.rows = ishape[1];
  s.cols = ishape[2];
  return s;
}

void fashion_mnist_input(const FashionMnistSplit& split, int index, float* out) {
  if (index < 0 || index >= split.count)
    throw Error("image " + std::to_string(index) + " is outside the split (0 … " + std::to_string(split.count - 1) +
                ")");
  const std::size_t n = static_cast<std::size_t>(split.rows) * split.cols;
  const std::uint8_t* px = split.pixels.data() + static_cast<std::size_t>(index) * n;
  for (std::size_t i = 0; i < n; ++i) {
    const float v = (static_cast<float>(px[i]) / 255.0f - kFashionMnistMean) / kFashionMnistStd;
    out[i] = v;
    out[n + i] = v;
    out[2 * n + i] = v;
  }
}

Image fashion_mnist_image(const FashionMnistSplit& split, int index) {
  if (index < 0 || index >= split.count)
    throw Error("image " + std::to_string(index) + " is outside the split (0 … " + std::to_string(split.count - 1) + ")");
  Image img;
  img.width = split.cols;
  img.height = split.rows;
  img.rgb.resize(static_cast<std::size_t>(img.width) * img.height * 3);
  const std::uint8_t* px = split.pixels.data() + static_cast<std::size_t>(index) * split.rows * split.cols;
  for (int i = 0; i < img.width * img.height; ++i)
    for (int c = 0; c < 3; ++c) img.rgb[static_cast<std::size_t>(i) * 3 + c] = static_cast<float>(px[i]) / 255.0f;
  return img;
}

Image fashion_mnist_style(const Image& photo, int rows, int cols) {
  if (photo.empty()) throw Error("no photo to make a Fashion-MNIST-style image of");
  if (rows < 1 || cols < 1) throw Error("a Fashion-MNIST-style image needs at least one pixel");
  // The largest centred square, as grey.
  const int side = std::min(photo.width, photo.height);
  const int x0 = (photo.width - side) / 2, y0 = (photo.height - side) / 2;
  std::vector<float> grey(static_cast<std::size_t>(side) * side);
  for (int y = 0; y < side; ++y)
    for (int x = 0; x < side; ++x)
      grey[static_cast<std::size_t>(y) * side + x] =
          0.299f * photo.at(x0 + x, y0 + y, 0) + 0.587f * photo.at(x0 + x, y0 + y, 1) + 0.114f * photo.at(x0 + x, y0 + y, 2);
  std::vector<float> small(static_cast<std::size_t>(rows) * cols);
  if (!stbir_resize_float(grey.data(), side, side, 0, small.data(), cols, rows, 0, 1))
    throw Error("could not scale the photo to " + std::to_string(cols) + " x " + std::to_string(rows));
  Image out;
  out.width = cols;
  out.height = rows;
  out.rgb.resize(small.size() * 3);
  for (std::size_t i = 0; i < small.size(); ++i) {
    const float byte = std::round(std::clamp(small[i], 0.0f, 1.0f) * 255.0f);  // a byte, as the data set's pixels
    for (int c = 0; c < 3; ++c) out.rgb[i * 3 + static_cast<std::size_t>(c)] = byte / 255.0f;
  }
  return out;
}

FashionMnistBatches::FashionMnistBatches(const FashionMnistSplit& split, int batch, std::uint64_t seed, int pad, bool flip)
    : split_(split), batch_(batch), pad_(pad), flip_(flip), state_(seed ^ 0x6a09e667f3bcc908ull) {
  if (batch <= 0 || batch > split.count) throw Error("the batch size must be between 1 and " + std::to_string(split.count));
  if (pad < 0 || pad >= split.rows) throw Error("the crop padding must be between 0 and " + std::to_string(split.rows - 1));
  order_.resize(static_cast<std::size_t>(split.count));
  next_ = order_.size();  // shuffle on the first call
}

std::uint64_t FashionMnistBatches::random() { return splitmix64(state_); }

void FashionMnistBatches::next(std::vector<float>& images, std::vector<int>& labels) {
  if (next_ + static_cast<std::size_t>(batch_) > order_.size()) {
    for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<int>(i);
    splitmix64_shuffle(order_.begin(), order_.size(), state_);
    next_ = 0;
    ++epoch_;
  }
  const int R = split_.rows, C = split_.cols, n = R * C;
  images.resize(static_cast<std::size_t>(batch_) * 3 * n);
  labels.resize(static_cast<std::size_t>(batch_));
  std::vector<std::uint8_t> crop(static_cast<std::size_t>(n));
  for (int b = 0; b < batch_; ++b) {
    const int index = order_[next_++];
    labels[static_cast<std::size_t>(b)] = split_.labels[static_cast<std::size_t>(index)];
    const std::uint8_t* px = split_.pixels.data() + static_cast<std::size_t>(index) * n;
    const int dy = pad_ ? static_cast<int>(random() % static_cast<std::uint64_t>(2 * pad_ + 1)) - pad_ : 0;
    const int dx = pad_ ? static_cast<int>(random() % static_cast<std::uint64_t>(2 * pad_ + 1)) - pad_ : 0;
    const bool mirror = flip_ && (random() & 1u);
    for (int y = 0; y < R; ++y)
      for (int x = 0; x < C; ++x) {
        // The crop's (x, y) is the padded image's (x + dx, y + dy); flipped, (C − 1 − x + dx, y + dy).
        const int sy = y + dy, sx = (mirror ? C - 1 - x : x) + dx;
        crop[static_cast<std::size_t>(y) * C + x] = sy >= 0 && sy < R && sx >= 0 && sx < C ? px[static_cast<std::size_t>(sy) * C + sx] : 0;
      }
    float* out = images.data() + static_cast<std::size_t>(b) * 3 * n;
    for (int i = 0; i < n; ++i) {
      const float v = (static_cast<float>(crop[static_cast<std::size_t>(i)]) / 255.0f - kFashionMnistMean) / kFashionMnistStd;
      out[i] = out[n + i] = out[2 * n + i] = v;
    }
  }
}

}  // namespace attnlab
