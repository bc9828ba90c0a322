// Fashion-MNIST's reader (core/io/fashion_mnist) on Debian's dataset-fashion-mnist (installed by
// ./setup.sh --tests) and on broken copies of its files.
#include "core/base/error.hpp"
#include "core/io/fashion_mnist.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <fstream>
#include <numeric>

namespace attnlab {
namespace {

namespace fs = std::filesystem;

std::string refusal(const fs::path& dir, bool train = true) {
  try {
    load_fashion_mnist(train, dir);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::vector<char> file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const fs::path& p, const char* data, std::size_t n) {
  std::ofstream out(p, std::ios::binary);
  out.write(data, static_cast<std::streamsize>(n));
}

/// A temporary folder with copies of the test split's files, removed at the end.
struct TempCopy {
  fs::path dir = fs::temp_directory_path() / ("attnlab_fmnist_" + std::to_string(::getpid()));
  TempCopy() {
    fs::create_directories(dir);
    for (const char* name : {"t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"})
      fs::copy_file(fs::path(kFashionMnistDir) / name, dir / name, fs::copy_options::overwrite_existing);
  }
  ~TempCopy() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

TEST(FashionMnist, ReadsThePublishedSplit) {
  const FashionMnistSplit train = load_fashion_mnist(true), test = load_fashion_mnist(false);
  EXPECT_EQ(train.count, 60000);
  EXPECT_EQ(test.count, 10000);
  EXPECT_EQ(train.rows, 28);
  EXPECT_EQ(train.cols, 28);
  EXPECT_EQ(train.pixels.size(), 60000u * 784);
  // Every class 6000 times in train, 1000 in test (the dataset's balance).
  std::array<int, 10> counts{};
  for (const auto y : train.labels) ++counts[y];
  for (const int c : counts) EXPECT_EQ(c, 6000);
  counts = {};
  for (const auto y : test.labels) ++counts[y];
  for (const int c : counts) EXPECT_EQ(c, 1000);
  // The first training image is an ankle boot (label 9), the first test image too (published).
  EXPECT_EQ(train.labels[0], 9);
  EXPECT_EQ(test.labels[0], 9);
  // The pixel mean of the training set is the normalization's mean.
  const double mean = std::accumulate(train.pixels.begin(), train.pixels.end(), 0.0) / static_cast<double>(train.pixels.size()) / 255.0;
  EXPECT_NEAR(mean, kFashionMnistMean, 5e-4);
  std::vector<float> in(3 * 784);
  fashion_mnist_input(test, 0, in.data());
  EXPECT_FLOAT_EQ(in[0], (0.0f - kFashionMnistMean) / kFashionMnistStd);
  for (int i = 0; i < 784; ++i) {
    EXPECT_EQ(in[i], in[784 + i]);
    EXPECT_EQ(in[i], in[2 * 784 + i]);
  }
}

TEST(FashionMnist, AMissingFileSaysWhichAndHowToInstallIt) {
  TempCopy t;
  fs::remove(t.dir / "t10k-labels-idx1-ubyte.gz");
  const std::string e = refusal(t.dir, false);
  EXPECT_NE(e.find("t10k-labels-idx1-ubyte.gz: missing"), std::string::npos) << e;
  EXPECT_NE(e.find("apt-get install dataset-fashion-mnist"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos);
  EXPECT_NE(refusal(t.dir, true).find("train-images-idx3-ubyte.gz: missing"), std::string::npos);
}

TEST(FashionMnist, ATruncatedFileIsRefusedNamingIt) {
  TempCopy t;
  const fs::path p = t.dir / "t10k-images-idx3-ubyte.gz";
  const std::vector<char> bytes = file_bytes(p);
  write_bytes(p, bytes.data(), bytes.size() / 2);
  const std::string e = refusal(t.dir, false);
  EXPECT_NE(e.find("t10k-images-idx3-ubyte.gz"), std::string::npos) << e;
  EXPECT_TRUE(e.find("truncated") != std::string::npos || e.find("corrupt") != std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos);
}

TEST(FashionMnist, CorruptBytesAreRefusedNamingTheFile) {
  TempCopy t;
  const fs::path p = t.dir / "t10k-images-idx3-ubyte.gz";
  std::vector<char> bytes = file_bytes(p);
  for (std::size_t i = 100; i < 2000; ++i) bytes[i] = static_cast<char>(i * 31);  // inside the deflate stream
  write_bytes(p, bytes.data(), bytes.size());
  const std::string e = refusal(t.dir, false);
  EXPECT_NE(e.find("t10k-images-idx3-ubyte.gz: corrupt"), std::string::npos) << e;
  // Not gzip and not IDX at all.
  write_bytes(p, "hello, this is no dataset", 25);
  const std::string e2 = refusal(t.dir, false);
  EXPECT_NE(e2.find("not an IDX file"), std::string::npos) << e2;
}

TEST(FashionMnist, LabelsThatDisagreeWithTheImagesAreRefused) {
  TempCopy t;
  // A valid gzip-compressed IDX of 3 labels, for 10 000 images.
  const unsigned char idx[] = {0, 0, 8, 1, 0, 0, 0, 3, 1, 2, 3};
  gzFile f = gzopen((t.dir / "t10k-labels-idx1-ubyte.gz").c_str(), "wb");
  gzwrite(f, idx, sizeof idx);
  gzclose(f);
  const std::string e = refusal(t.dir, false);
  EXPECT_NE(e.find("3 labels for 10000 images"), std::string::npos) << e;
}

// Issue 38: a test split shorter than the evaluations read (here 100 images and labels, a valid
// file) was read without complaint, and the Train tab's 500-image accuracy then read past its
// end. Now refused on reading, in one line naming the file.
TEST(FashionMnist, ATestSplitShorterThanTheEvaluationsIsRefused) {
  TempCopy t;
  const int n = 100;
  std::vector<unsigned char> images = {0, 0, 8, 3, 0, 0, 0, static_cast<unsigned char>(n), 0, 0, 0, 28, 0, 0, 0, 28};
  images.resize(images.size() + static_cast<std::size_t>(n) * 28 * 28, 7);
  std::vector<unsigned char> labels = {0, 0, 8, 1, 0, 0, 0, static_cast<unsigned char>(n)};
  labels.resize(labels.size() + n, 3);
  for (const auto& [name, bytes] :
       {std::pair{"t10k-images-idx3-ubyte.gz", &images}, std::pair{"t10k-labels-idx1-ubyte.gz", &labels}}) {
    gzFile f = gzopen((t.dir / name).c_str(), "wb");
    gzwrite(f, bytes->data(), static_cast<unsigned>(bytes->size()));
    gzclose(f);
  }
  const std::string e = refusal(t.dir, false);
  EXPECT_NE(e.find("t10k-images-idx3-ubyte.gz: 100 images, fewer than the 1000"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  // And an index past a split's end is an Error, not a read outside it.
  FashionMnistSplit small;
  small.count = 2;
  small.rows = small.cols = 28;
  small.pixels.assign(2 * 28 * 28, 0);
  std::vector<float> out(3 * 28 * 28);
  EXPECT_THROW(fashion_mnist_input(small, 2, out.data()), Error);
}

// The Train tab's photo probe: made as the data are, a centred square scaled to 28 x 28, grey in
// bytes copied to the three channels.
TEST(FashionMnist, APhotoIsMadeAsTheDataAreCentredSquareGreyBytes) {
  // 60 x 30: a red left third, a blue right third (cut off by the square), a white square in the middle.
  Image photo;
  photo.width = 60;
  photo.height = 30;
  photo.rgb.assign(60 * 30 * 3, 0.0f);
  for (int y = 0; y < 30; ++y)
    for (int x = 0; x < 60; ++x) {
      if (x < 15) photo.at(x, y, 0) = 1.0f;                       // red, outside the centred square
      else if (x >= 45) photo.at(x, y, 2) = 1.0f;                 // blue, outside too
      else if (x >= 25 && x < 35 && y >= 10 && y < 20)            // white, in the middle of the square
        for (int c = 0; c < 3; ++c) photo.at(x, y, c) = 1.0f;
      else for (int c = 0; c < 3; ++c) photo.at(x, y, c) = 0.5f;  // grey around it
    }
  const Image out = fashion_mnist_style(photo);
  ASSERT_EQ(out.width, 28);
  ASSERT_EQ(out.height, 28);
  ASSERT_EQ(out.rgb.size(), 28u * 28u * 3u);
  for (int y = 0; y < 28; ++y)
    for (int x = 0; x < 28; ++x) {
      const float v = out.at(x, y, 0);
      EXPECT_EQ(out.at(x, y, 1), v);
      EXPECT_EQ(out.at(x, y, 2), v);
      EXPECT_NEAR(v * 255.0f, std::round(v * 255.0f), 1e-3f) << "a byte / 255, as the data";
    }
  EXPECT_NEAR(out.at(14, 14, 0), 1.0f, 0.01f) << "the white square in the middle";
  EXPECT_NEAR(out.at(1, 1, 0), 0.5f, 0.01f) << "grey at the square's corner: the red third is cropped away";
  EXPECT_NEAR(out.at(26, 26, 0), 0.5f, 0.01f) << "and the blue one";
  // Luma, not the mean of the channels: pure green is 0.587.
  Image green;
  green.width = green.height = 10;
  green.rgb.assign(300, 0.0f);
  for (int i = 0; i < 100; ++i) green.rgb[static_cast<std::size_t>(i) * 3 + 1] = 1.0f;
  EXPECT_NEAR(fashion_mnist_style(green, 5, 5).at(2, 2, 0), std::round(0.587f * 255) / 255, 1e-4f);
  EXPECT_THROW(fashion_mnist_style(Image{}), Error);
  EXPECT_THROW(fashion_mnist_style(green, 0, 28), Error);
}

TEST(FashionMnist, ATestImageAsAPhotoIsItsBytesInTheThreeChannels) {
  FashionMnistSplit split;
  split.count = 2;
  split.rows = 2;
  split.cols = 3;
  split.pixels = {0, 51, 102, 153, 204, 255, 255, 0, 0, 0, 0, 0};
  split.labels = {1, 2};
  const Image img = fashion_mnist_image(split, 0);
  EXPECT_EQ(img.width, 3);
  EXPECT_EQ(img.height, 2);
  EXPECT_FLOAT_EQ(img.at(1, 0, 2), 0.2f);
  EXPECT_FLOAT_EQ(img.at(2, 1, 0), 1.0f);
  EXPECT_FLOAT_EQ(fashion_mnist_image(split, 1).at(0, 0, 1), 1.0f);
  EXPECT_THROW(fashion_mnist_image(split, 2), Error);
  EXPECT_THROW(fashion_mnist_image(split, -1), Error);
}

}  // namespace
}  // namespace attnlab
