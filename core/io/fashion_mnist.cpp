#include "core/io/fashion_mnist.hpp"

#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/base/splitmix.hpp"
#include "core/base/translate.hpp"

#include <stb_image_resize.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <memory>

namespace attnlab {

namespace {

// Marked for the catalog; translated where it is used.
// TRANSLATORS: a command to run: keep "apt-get install dataset-fashion-mnist" as it is.
const char* const kInstall = N_("install it with: apt-get install dataset-fashion-mnist");

struct GzClose {
  void operator()(gzFile f) const { gzclose(f); }
};

/// Reads exactly `size` bytes, or throws naming the file; in 4 MiB pieces, `stop` (may be null)
/// looked at before each.
void read_exactly(gzFile f, const std::filesystem::path& path, std::uint8_t* out, std::size_t size, const char* what,
                  const std::atomic<bool>* stop = nullptr) {
  std::size_t done = 0;
  while (done < size) {
    if (stop && stop->load(std::memory_order_relaxed)) throw Error(_("cancelled"));
    const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(size - done, 4u << 20));
    const int got = gzread(f, out + done, chunk);
    if (got < 0) {
      int code = 0;
      const char* msg = gzerror(f, &code);
      // TRANSLATORS: %1$s is a file, %2$s zlib's reason, %3$s a part of the file ("header", "values"); keep the command
      // "apt-get install --reinstall dataset-fashion-mnist" as it is.
      throw Error(text_format(_("%s: corrupt (%s while reading its %s); reinstall it with: "
                                "apt-get install --reinstall dataset-fashion-mnist"),
                              path.string().c_str(), msg ? msg : _("zlib error"), what));
    }
    if (got == 0)
      // TRANSLATORS: %1$s is a file, %2$s a part of it ("header", "values"), then bytes read and bytes expected; keep
      // the command "apt-get install --reinstall dataset-fashion-mnist" as it is.
      throw Error(text_format(_("%s: truncated (its %s ends after %zu of %zu bytes); reinstall it with: "
                                "apt-get install --reinstall dataset-fashion-mnist"),
                              path.string().c_str(), what, done, size));
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
    // TRANSLATORS: %1$s is a file; dataset-fashion-mnist is a Debian package; %2$s says how to install it.
    throw Error(text_format(_("%s: missing (Fashion-MNIST comes with Debian's dataset-fashion-mnist; %s)"), path.string().c_str(),
                            _(kInstall)));
  if (!std::filesystem::is_regular_file(path, ec)) throw Error(text_format(_("%s: not a regular file"), path.string().c_str()));
  // Opened by the platform layer (a wide-character name on Windows), then handed to zlib.
  int fd = -1;
  std::uint64_t size = 0;
  if (platform::open_regular_for_reading(path, fd, size) != 0)
    throw Error(text_format(_("%s: cannot be opened"), path.string().c_str()));
  std::unique_ptr<gzFile_s, GzClose> f(gzdopen(fd, "rb"));
  if (!f) {
    platform::close_file(fd);
    throw Error(text_format(_("%s: cannot be opened"), path.string().c_str()));
  }
  std::uint8_t head[4];
  // TRANSLATORS: the header of a data file, in "while reading its header" and "its header ends after ...".
  read_exactly(f.get(), path, head, 4, tr_c("part of a data file", "header"));
  if (head[0] != 0 || head[1] != 0 || head[2] != 0x08 || head[3] != dims)
    // TRANSLATORS: %1$s is a file, %2$d a number of dimensions; IDX is the data set's file format; keep the command
    // "apt-get install --reinstall dataset-fashion-mnist" as it is.
    throw Error(text_format(_("%s: not an IDX file of unsigned bytes with %d dimension(s) (its first bytes are wrong); "
                              "reinstall it with: apt-get install --reinstall dataset-fashion-mnist"),
                            path.string().c_str(), dims));
  shape.assign(static_cast<std::size_t>(dims), 0);
  std::uint64_t total = 1;
  for (int d = 0; d < dims; ++d) {
    std::uint8_t b[4];
    read_exactly(f.get(), path, b, 4, tr_c("part of a data file", "header"));
    const std::uint32_t n = (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
    total *= n;
    if (n == 0 || total > 100'000'000ull)
      // TRANSLATORS: %1$s is a file, %2$u the size read from its header; IDX is the data set's file format.
      throw Error(text_format(_("%s: the IDX header's sizes are not usable (%u)"), path.string().c_str(),
                              static_cast<unsigned>(n)));
    shape[static_cast<std::size_t>(d)] = static_cast<int>(n);
  }
  std::vector<std::uint8_t> values(total);
  // TRANSLATORS: the values (pixels or labels) of a data file, in "while reading its values" and "its values end...".
  read_exactly(f.get(), path, values.data(), values.size(), tr_c("part of a data file", "values"), stop);
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
    // TRANSLATORS: %1$s is a file, %2$d×%3$d the images' width and height in pixels.
    throw Error(text_format(_("%s: images of %d×%d pixels, not 28×28"), images_path.string().c_str(), ishape[2], ishape[1]));
  if (ishape[0] != lshape[0])
    // TRANSLATORS: %1$s is a file, then the number of labels and the number of images.
    throw Error(text_format(_("%s: %d labels for %d images"), labels_path.string().c_str(), lshape[0], ishape[0]));
  for (const std::uint8_t y : s.labels)
    if (y >= 10)
      throw Error(text_format(_("%s: label %d is not one of the 10 classes"), labels_path.string().c_str(), static_cast<int>(y)));
  if (!train && ishape[0] < kFashionMnistEvalImages)
    // TRANSLATORS: %1$s is a file, %2$d the images it has, %3$d the images needed, %4$s how to install the data set.
    throw Error(text_format(_("%s: %d images, fewer than the %d the evaluations read (a short or partial file); "
                              "reinstall it with: %s"),
                            images_path.string().c_str(), ishape[0], kFashionMnistEvalImages, _(kInstall)));
  s.count = ishape[0];
  s.rows = ishape[1];
  s.cols = ishape[2];
  return s;
}

void fashion_mnist_input(const FashionMnistSplit& split, int index, float* out) {
  if (index < 0 || index >= split.count)
    // TRANSLATORS: %1$d is an image's index; a split is the training or the test set; %2$d its last index.
    throw Error(text_format(_("image %d is outside the split (0 … %d)"), index, split.count - 1));
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
    throw Error(text_format(_("image %d is outside the split (0 … %d)"), index, split.count - 1));
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
  if (photo.empty()) throw Error(_("no photo to make a Fashion-MNIST-style image of"));
  if (rows < 1 || cols < 1) throw Error(_("a Fashion-MNIST-style image needs at least one pixel"));
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
    // TRANSLATORS: a width and a height in pixels.
    throw Error(text_format(_("could not scale the photo to %d x %d"), cols, rows));
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
  if (batch <= 0 || batch > split.count) throw Error(text_format(_("the batch size must be between 1 and %d"), split.count));
  if (pad < 0 || pad >= split.rows) throw Error(text_format(_("the crop padding must be between 0 and %d"), split.rows - 1));
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
