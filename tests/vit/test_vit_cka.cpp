// A loaded ViT's representations and their CKA (core/vit/vit_similarity): the tokens the CPU path
// hands out at every depth against the trainer's own forward (VitTrainer::layer_tokens) and
// against PyTorch (tests/vit/make_cka_vit_golden.py), the bundled Fashion-MNIST model's layer ×
// layer CKA against PyTorch's tokens through numpy's HSIC form, the two-model form, refusals.
#include "core/vit/cka.hpp"
#include "core/base/error.hpp"
#include "core/io/fashion_mnist.hpp"
#include "core/vit/vit_similarity.hpp"
#include "core/vit/vit_train.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>

namespace attnlab {
namespace {

const std::filesystem::path kData = std::filesystem::path(ATTNLAB_SOURCE_DIR) / "tests/vit/data";

nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  return nlohmann::json::parse(in);
}

constexpr float kMean = kFashionMnistMean, kStd = kFashionMnistStd;

/// A small trainer, a few steps into training on random images (so that its blocks are no
/// longer at their initialization), and `count` random 28 × 28 grey images as photos and as
/// the trainer's normalized input.
struct Trained {
  VitTrainer trainer;
  std::vector<Image> photos;
  std::vector<float> input;
  Trained(std::uint64_t seed, int patch, int count)
      : trainer(
            [&] {
              const VitTrainShape s{.patch = patch, .D = 16, .depth = 3, .heads = 2, .mlp_hidden = 32};
              return s;
            }(),
            {}, seed, 1) {
    std::mt19937 gen(static_cast<unsigned>(seed));
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    auto grey_image = [&] {
      Image img;
      img.width = img.height = 28;
      img.rgb.resize(28 * 28 * 3);
      for (int i = 0; i < 28 * 28; ++i) img.rgb[static_cast<std::size_t>(i) * 3] = img.rgb[static_cast<std::size_t>(i) * 3 + 1] =
          img.rgb[static_cast<std::size_t>(i) * 3 + 2] = std::round(u(gen) * 255.0f) / 255.0f;
      return img;
    };
    auto as_input = [](const Image& img, std::vector<float>& out) {  // fashion_mnist_input()'s layout
      for (int c = 0; c < 3; ++c)
        for (int i = 0; i < 28 * 28; ++i) out.push_back((img.rgb[static_cast<std::size_t>(i) * 3 + c] - kMean) / kStd);
    };
    std::vector<float> batch;
    for (int i = 0; i < 8; ++i) as_input(grey_image(), batch);
    const std::vector<int> labels = {0, 1, 2, 3, 4, 5, 6, 7};
    for (int s = 0; s < 3; ++s) trainer.train_step(batch, labels);
    for (int i = 0; i < count; ++i) {
      photos.push_back(grey_image());
      as_input(photos.back(), input);
    }
  }
  VitModel model() const {
    const std::vector<std::string> labels(10, "c");
    return trainer.model({kMean, kMean, kMean}, {kStd, kStd, kStd}, labels);
  }
};

// The CPU path's tokens at every depth for a trainer's model (the VitModel it would save) are
// the trainer's own forward's: the same float32 weights and inputs (vit_input's normalization is
// the trainer's, bit for bit), the same operations, in another order of summation (the runner's
// sgemm calls per block of rows and its own LayerNorm loop against the trainer's). Measured:
// at most 1.2e-7 apart, one or two float32 ulps of tokens of magnitude about 1 to 3; the bound
// 1e-6 of the largest magnitude leaves a factor of about ten for other CPUs' sgemm kernels.
TEST(VitCka, TokensOfATrainersModelAreTheTrainersLayerTokens) {
  Trained t(3, 7, 5);
  const VitModel model = t.model();
  const std::vector<Matrix> got = vit_layer_tokens(model, t.photos, 0, vit_memory_budget());
  const std::vector<Matrix> want = t.trainer.layer_tokens(t.input, 5);
  ASSERT_EQ(got.size(), 4u);
  ASSERT_EQ(want.size(), 4u);
  for (std::size_t d = 0; d < got.size(); ++d) {
    ASSERT_EQ(got[d].rows(), 5 * 17) << d;
    ASSERT_EQ(got[d].cols(), 16);
    const float scale = want[d].cwiseAbs().maxCoeff();
    EXPECT_GT(scale, 0.1f);
    EXPECT_LE((got[d] - want[d]).cwiseAbs().maxCoeff(), 1e-6f * scale) << "depth " << d;
  }
  // Their CKA is the same matrix: tokens that far apart move it by 2e-11 (measured); 1e-9.
  const Eigen::MatrixXd a = vit_cka(model, model, t.photos, 0, vit_memory_budget()).cka;
  EXPECT_LE((a - cka_matrix(want, want)).cwiseAbs().maxCoeff(), 1e-9);
}

// PyTorch's tokens (make_golden.py's forward: timm, Hugging Face and DINOv2 names, registers,
// layer scale, a resampled position embedding) against the CPU path's. Both float32 with the
// same weights, summed in the two libraries' own orders; measured: at most 5.8e-6·(1 + |x|)
// apart (values up to about 10, the bicubic resampling of the position embedding done in
// float32 by both); the bound 5e-5·(1 + |x|) leaves a factor of about eight.
TEST(VitCka, TokensAtEveryDepthMatchPyTorchForTimmHfAndDinov2) {
  int checked = 0;
  for (const char* name : {"timm_reg_ls_f16", "hf_cls_f32", "dinov2_reg_f32"}) {
    SCOPED_TRACE(name);
    const nlohmann::json g = read_json(kData / "layer_tokens" / (std::string(name) + ".json"));
    VitLoadOptions options;
    const auto args = g.at("args").get<std::vector<std::string>>();
    if (args.size() == 2 && args[0] == "--heads") options.heads = std::stoi(args[1]);
    const VitModel model = load_vit(kData / name, options);
    const Image image = load_image(kData / g.at("image").get<std::string>());
    const std::vector<Image> images = {image};
    // resize 48: the image's own short side (0 would scale it to the checkpoints' 32).
    const std::vector<Matrix> got = vit_layer_tokens(model, images, 48, vit_memory_budget());
    const int T = g.at("T"), D = g.at("D");
    ASSERT_EQ(got.size(), g.at("tokens").size());
    ASSERT_EQ(static_cast<int>(got.size()), model.arch.depth + 1);
    for (std::size_t d = 0; d < got.size(); ++d) {
      ASSERT_EQ(got[d].rows(), T);
      ASSERT_EQ(got[d].cols(), D);
      const auto& want = g.at("tokens")[d];
      ASSERT_EQ(want.size(), static_cast<std::size_t>(T) * D);
      double worst = 0;
      for (int t = 0; t < T; ++t)
        for (int c = 0; c < D; ++c) {
          const double w = want[static_cast<std::size_t>(t) * D + c].get<double>();
          worst = std::max(worst, std::abs(got[d](t, c) - w) / (1.0 + std::abs(w)));
        }
      EXPECT_LE(worst, 5e-5) << "depth " << d;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 3 + 4 + 3);  // the three models' depths + 1
}

/// The first `count` tiles of tests/vit/data/fashion/test500.png: test images 0 … count − 1.
std::vector<Image> mosaic_images(int count) {
  const Image mosaic = load_image(kData / "fashion/test500.png");
  std::vector<Image> out;
  for (int k = 0; k < count; ++k) {
    Image img;
    img.width = img.height = 28;
    img.rgb.resize(28 * 28 * 3);
    for (int y = 0; y < 28; ++y)
      for (int x = 0; x < 28; ++x)
        for (int c = 0; c < 3; ++c) img.at(x, y, c) = mosaic.at((k % 25) * 28 + x, (k / 25) * 28 + y, c);
    out.push_back(std::move(img));
  }
  return out;
}

// The bundled model's 7 × 7 matrix over 40 test images (2000 tokens) against numpy's HSIC form
// of PyTorch's tokens (an n × n Gram matrix, the other form of the formula). The tokens agree
// to float32 rounding of the two libraries; CKA, a ratio of sums over 2000 tokens, differs by
// at most 2e-8 (measured); the bound 1e-6 leaves a factor of fifty.
TEST(VitCka, FashionModelMatchesPyTorchsTokensThroughTheHsicForm) {
  const nlohmann::json g = read_json(kData / "fashion/cka_golden.json");
  const VitModel model = load_vit(testing::asset("fashion_vit"));
  const std::vector<Image> images = mosaic_images(40);
  int calls = 0, last = 0;
  const VitCka m = vit_cka(model, model, images, 0, vit_memory_budget(), 0, nullptr, [&](int done, int total) {
    ++calls;
    last = done;
    EXPECT_EQ(total, 40);
  });
  EXPECT_EQ(calls, 40);
  EXPECT_EQ(last, 40);
  EXPECT_EQ(m.examples, 40 * 50);
  ASSERT_EQ(m.cka.rows(), 7);
  ASSERT_EQ(m.cka.cols(), 7);
  EXPECT_EQ(vit_cka_labels(6), g.at("labels").get<std::vector<std::string>>());
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 7; ++j) EXPECT_NEAR(m.cka(i, j), g.at("cka_40")[i][j].get<double>(), 1e-6) << i << "," << j;
  // Not a trivial matrix: the input and the last block differ clearly.
  EXPECT_LT(m.cka(0, 6), 0.8);
}

// The two-model form: model A's layers against model B's over the same images is cka_matrix of
// both trainers' own tokens. The two are float32 forward passes through different code (the CPU
// runner's OpenBLAS products, the trainer's own), tokens about 1e-7 apart: their CKA differs by
// what float32 rounding gives, which depends on the BLAS kernel OpenBLAS picks at run time
// (6e-10 on an Intel machine, 2.8e-8 on an AMD EPYC with OPENBLAS_CORETYPE=Haswell, both
// measured); bound 1e-6, a few float32 epsilons (1.2e-7). A second copy of one model (another object, another load id)
// against itself gives ones on the diagonal and the one-model matrix.
TEST(VitCka, TwoModelsAreComparedLayerByLayerOverTheSameExamples) {
  Trained a(11, 7, 4), b(12, 7, 4);
  b.photos = a.photos;
  b.input = a.input;
  const VitModel ma = a.model(), mb = b.model(), ma2 = a.model();
  ASSERT_NE(ma.id, ma2.id);
  const VitCka ab = vit_cka(ma, mb, a.photos, 0, vit_memory_budget());
  const Eigen::MatrixXd want = cka_matrix(a.trainer.layer_tokens(a.input, 4), b.trainer.layer_tokens(b.input, 4));
  ASSERT_EQ(ab.cka.rows(), 4);
  ASSERT_EQ(ab.cka.cols(), 4);
  EXPECT_LE((ab.cka - want).cwiseAbs().maxCoeff(), 1e-6);
  EXPECT_LT(ab.cka.diagonal().minCoeff(), 0.999);  // two seeds: not the same representations
  const Eigen::MatrixXd self = vit_cka(ma, ma2, a.photos, 0, vit_memory_budget()).cka;
  const Eigen::MatrixXd one = vit_cka(ma, ma, a.photos, 0, vit_memory_budget()).cka;
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(self(i, i), 1.0, 1e-9);
  EXPECT_LE((self - one).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(VitCka, RefusesOtherExamplesTooLittleMemoryAndStops) {
  Trained p7(1, 7, 2), p4(2, 4, 2);
  const VitModel m7 = p7.model(), m4 = p4.model();
  try {
    vit_cka(m7, m4, p7.photos, 0, vit_memory_budget());
    ADD_FAILURE() << "different token counts were compared";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("17 tokens per image and model B 50"), std::string::npos) << e.what();
  }
  EXPECT_THROW(vit_cka(m7, m7, std::span<const Image>(), 0, vit_memory_budget()), Error);
  // 2 images of 17 tokens: 4 representations of 16 floats + doubles each = 6528 bytes, and the pass.
  const std::int64_t pass = vit_pass_bytes(m7.arch, 17);
  EXPECT_EQ(vit_cka_bytes(m7.arch, 34), 34 * 16 * 4 * 12);
  try {
    vit_cka(m7, m7, p7.photos, 0, pass + vit_cka_bytes(m7.arch, 17) + 100);
    ADD_FAILURE() << "over the budget";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("at most 1 images fit"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(vit_cka(m7, m7, p7.photos, 0, pass + vit_cka_bytes(m7.arch, 34)));
  std::atomic<bool> stop{true};
  try {
    vit_cka(m7, m7, p7.photos, 0, vit_memory_budget(), 1, &stop);
    ADD_FAILURE() << "not stopped";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cancelled");
  }
}

}  // namespace
}  // namespace attnlab
