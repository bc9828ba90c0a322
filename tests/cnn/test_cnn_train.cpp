// The Train tab's CNN (core/cnn/cnn_train.hpp) against torch autograd and torch.optim.AdamW on
// torchvision's own ResNet (tests/cnn/make_cnn_train_golden.py), and the properties a run needs:
// torchvision's init, the parameter count the panel shows, a checkpoint that loads as a ResNet
// with the trainer's own logits, and a loss that falls.
#include "core/cnn/cnn_train.hpp"

#include "core/base/error.hpp"
#include "core/io/safetensors_write.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

namespace attnlab {
namespace {

using testing::expect_error_containing;
namespace fs = std::filesystem;
const fs::path kGolden = fs::path(ATTNLAB_SOURCE_DIR) / "tests/cnn/data/cnn_train_golden.safetensors";

const std::vector<float>& tensor(const SafetensorsFile& f, const std::string& name) {
  const auto it = f.tensors.find(name);
  if (it == f.tensors.end()) throw Error("the golden file has no " + name);
  return it->second.values;
}

double max_abs(std::span<const float> v) {
  double m = 0.0;
  for (const float x : v) m = std::max(m, static_cast<double>(std::abs(x)));
  return m;
}

// The largest |ours − ref| over an entry, relative to the tensor's largest entry.
double worst_relative(std::span<const float> ours, std::span<const float> ref) {
  double w = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) w = std::max(w, std::abs(static_cast<double>(ours[i]) - ref[i]));
  return w / (max_abs(ref) + 1e-12);
}

struct GoldenSetup {
  CnnTrainShape shape;
  VitTrainSettings settings;
};

GoldenSetup golden_setup(const SafetensorsFile& f) {
  const auto c = nlohmann::json::parse(f.metadata.at("settings"));
  GoldenSetup g;
  g.shape.image_side = c.at("image");
  g.shape.width = c.at("width");
  for (int s = 0; s < 4; ++s) g.shape.stage_blocks[static_cast<std::size_t>(s)] = c.at("layers").at(static_cast<std::size_t>(s));
  g.shape.classes = c.at("classes");
  VitTrainSettings& s = g.settings;
  s.lr = c.at("lr");
  s.min_lr = c.at("min_lr");
  s.beta1 = c.at("beta1");
  s.beta2 = c.at("beta2");
  s.adam_eps = c.at("adam_eps");
  s.weight_decay = c.at("weight_decay");
  s.warmup_steps = c.at("warmup_steps");
  s.total_steps = c.at("total_steps");
  s.clip_norm = c.at("clip_norm");
  s.label_smoothing = c.at("label_smoothing");
  return g;
}

// Gradients in float32 against float64: the worst entry, relative to its tensor's largest, was
// measured at about 1e-6; 1e-4 leaves a wide margin while a wrong term (a transposed product, a
// missed ReLU, a bias summed over the wrong axis) is off by 1e-1 and more.
constexpr double kGradRel = 1e-4;
// After three AdamW steps of lr 1e-2: an error in a gradient moves m̂/√v̂ by about its relative
// size, so entries agree within 2e-5·(1 + max|p|), a five-hundredth of one step.
constexpr double kParamAbs = 2e-5;

TEST(CnnTrainGolden, LogitsGradientsAndThreeAdamWStepsMatchTorchvision) {
  const SafetensorsFile golden = read_safetensors(kGolden);
  const GoldenSetup g = golden_setup(golden);
  const std::vector<float>& images = tensor(golden, "images");
  std::vector<int> labels;
  for (const float y : tensor(golden, "labels")) labels.push_back(static_cast<int>(y));
  ASSERT_EQ(labels.size(), 5u);
  for (const int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    CnnTrainer trainer(g.shape, g.settings, 1, threads);
    std::size_t golden_params = 0;
    for (const auto& [name, t] : golden.tensors) golden_params += name.rfind("grad/", 0) == 0;
    ASSERT_EQ(golden_params, trainer.params().size());  // every torch parameter is one of ours, and no more
    for (const VitParam& p : trainer.params()) {
      const std::vector<float>& init = tensor(golden, "init/" + p.name);
      ASSERT_EQ(init.size(), p.size) << p.name;
      std::copy(init.begin(), init.end(), trainer.values().begin() + static_cast<std::ptrdiff_t>(p.offset));
    }
    trainer.values_changed();
    const Matrix z = trainer.logits(images, 5);
    const std::vector<float>& ref_z = tensor(golden, "logits");
    EXPECT_LT(worst_relative(std::span<const float>(z.data(), static_cast<std::size_t>(z.size())), ref_z), 1e-5);

    const VitStepStats s0 = trainer.compute_gradients(images, labels);
    EXPECT_NEAR(s0.loss, tensor(golden, "loss")[0], 1e-5);
    double worst = 0.0;
    for (const VitParam& p : trainer.params()) {
      const double w = worst_relative(trainer.gradient_of(p), tensor(golden, "grad/" + p.name));
      worst = std::max(worst, w);
      EXPECT_LT(w, kGradRel) << p.name;
    }
    std::printf("threads %d: worst gradient %.2e of its tensor's largest\n", threads, worst);
    const std::vector<float>& norms = tensor(golden, "grad_norms");
    EXPECT_NEAR(trainer.apply_update().grad_norm, norms[0], 1e-4 * norms[0]);
    for (std::size_t step = 1; step < 3; ++step) EXPECT_NEAR(trainer.train_step(images, labels).grad_norm, norms[step], 1e-4 * norms[step]);
    EXPECT_EQ(trainer.step(), 3);
    for (const VitParam& p : trainer.params()) {
      const std::vector<float>& ref = tensor(golden, "step3/" + p.name);
      double err = 0.0;
      for (std::size_t i = 0; i < ref.size(); ++i) err = std::max(err, std::abs(static_cast<double>(trainer.values_of(p)[i]) - ref[i]));
      EXPECT_LT(err, kParamAbs * (1.0 + max_abs(ref))) << p.name;
    }
  }
}

TEST(CnnTrain, ParameterCountIsWhatItHoldsAndNearTheViTs) {
  for (const CnnTrainShape& s : {CnnTrainShape{}, CnnTrainShape{28, 8, {2, 1, 1, 2}, 10}, CnnTrainShape{32, 3, {1, 2, 3, 1}, 5}}) {
    const CnnTrainer t(s, {}, 1);
    EXPECT_EQ(static_cast<std::size_t>(s.parameters()), t.values().size());
  }
  // The default CNN is of about the Train tab's default ViT's size (issue 50: "about the ViT's
  // parameter count"): within 25 %.
  VitTrainShape vit;
  vit.D = 96, vit.depth = 4, vit.heads = 4, vit.mlp_hidden = 192, vit.patch = 7;
  const double vit_params = static_cast<double>(VitTrainer(vit, {}, 1, 1).values().size());
  EXPECT_EQ(vit.parameters(), static_cast<std::int64_t>(vit_params));
  for (VitTrainShape other : {VitTrainShape{}, vit}) {  // the masked task's head, average pooling, fixed codes
    other.task = VitTask::MaskedPatches;
    other.pos = VitPosKind::Sincos;
    EXPECT_EQ(other.parameters(), static_cast<std::int64_t>(VitTrainer(other, {}, 1, 1).values().size()));
    other.task = VitTask::Classify;
    other.pooling = VitPooling::Average;
    EXPECT_EQ(other.parameters(), static_cast<std::int64_t>(VitTrainer(other, {}, 1, 1).values().size()));
  }
  const double cnn_params = static_cast<double>(CnnTrainShape{}.parameters());
  std::printf("default ViT %.0f parameters, default CNN %.0f\n", vit_params, cnn_params);
  EXPECT_LT(std::abs(cnn_params / vit_params - 1.0), 0.25);
}

TEST(CnnTrain, InitIsTorchvisions) {
  const CnnTrainShape shape{28, 16, {1, 1, 1, 1}, 10};
  const CnnTrainer t(shape, {}, 7);
  for (const VitParam& p : t.params()) {
    const auto v = t.values_of(p);
    if (p.name.find("bn") != std::string::npos || p.name.find("downsample.1") != std::string::npos) {
      EXPECT_EQ(max_abs(v), 0.0) << p.name;  // a batch norm's β starts at 0
      continue;
    }
    if (p.name == "fc.weight" || p.name == "fc.bias") {
      EXPECT_LE(max_abs(v), 1.0 / std::sqrt(8.0 * shape.width)) << p.name;
      EXPECT_GT(max_abs(v), 0.8 / std::sqrt(8.0 * shape.width)) << p.name;
      continue;
    }
    // kaiming_normal_(fan_out): std √(2 / (out·k·k)).
    const double expected = std::sqrt(2.0 / static_cast<double>(p.shape[0] * p.shape[2] * p.shape[3]));
    double sq = 0.0;
    for (const float x : v) sq += static_cast<double>(x) * x;
    const double sd = std::sqrt(sq / static_cast<double>(v.size()));
    EXPECT_NEAR(sd, expected, 4.0 * expected / std::sqrt(2.0 * static_cast<double>(v.size()))) << p.name;
  }
}

// Random images and labels the same on every machine.
void random_batch(int count, int side, unsigned seed, std::vector<float>& images, std::vector<int>& labels) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  images.resize(static_cast<std::size_t>(count) * 3 * side * side);
  for (float& x : images) x = normal(gen);
  labels.resize(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) labels[static_cast<std::size_t>(i)] = static_cast<int>(gen() % 10);
}

TEST(CnnTrain, TheLossFallsOnABatchItLearns) {
  CnnTrainShape shape;
  shape.width = 8;
  VitTrainSettings s;
  s.lr = 3e-3, s.warmup_steps = 5, s.total_steps = 60;
  CnnTrainer t(shape, s, 3);
  std::vector<float> images;
  std::vector<int> labels;
  random_batch(16, 28, 11, images, labels);
  const double first = t.compute_gradients(images, labels).loss;
  EXPECT_NEAR(first, std::log(10.0), 0.5);  // near the uniform guess's at init
  double last = first;
  int correct = 0;
  for (int i = 0; i < 60; ++i) {
    const VitStepStats st = t.train_step(images, labels);
    last = st.loss, correct = st.correct;
  }
  EXPECT_LT(last, 0.5 * first);  // 16 random images are learnt by heart
  EXPECT_GE(correct, 14);
}

TEST(CnnTrain, TheSavedTensorsLoadAsAResnetWithTheTrainersLogits) {
  CnnTrainShape shape;
  shape.width = 6;
  shape.stage_blocks = {1, 2, 1, 1};
  CnnTrainer t(shape, {}, 5);
  std::vector<float> images;
  std::vector<int> labels;
  random_batch(4, 28, 12, images, labels);
  for (int i = 0; i < 3; ++i) t.train_step(images, labels);  // biases no longer 0
  const fs::path dir = testing::temp_dir();
  write_safetensors(dir / "model.safetensors", t.tensors());
  {
    std::ofstream(dir / "config.json") << cnn_train_config_json(shape, {0.5f, 0.5f, 0.5f}, {0.25f, 0.25f, 0.25f}, {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"});
  }
  const ResnetModel loaded = load_resnet(dir);
  EXPECT_EQ(loaded.arch.input_size, 28);
  EXPECT_EQ(loaded.arch.labels.at(3), "d");
  EXPECT_EQ(loaded.blocks.size(), 5u);
  const Matrix z = t.logits(images, 4);
  for (int b = 0; b < 4; ++b) {
    CnnInput in;
    in.width = in.height = 28;
    in.x = Eigen::Map<const Matrix>(images.data() + static_cast<std::size_t>(b) * 3 * 28 * 28, 3, 28 * 28);
    const ResnetPass pass = resnet_forward(loaded, in, std::int64_t{1} << 30, 1);  // the loader's Winograd path
    for (int c = 0; c < 10; ++c) EXPECT_NEAR(pass.logits[static_cast<std::size_t>(c)], z(b, c), 1e-4 * (1.0 + std::abs(z(b, c))));
  }
  // model() is that same reading.
  const ResnetModel m = t.model({0.5f, 0.5f, 0.5f}, {0.25f, 0.25f, 0.25f}, {});
  EXPECT_EQ(m.arch.parameters, loaded.arch.parameters);
  EXPECT_TRUE(m.stem.W.isApprox(loaded.stem.W));
}

// The trainer's batch goes through each convolution at once (every image's im2col side by side):
// the same logits as each image alone through the loader's path (Winograd for the 3×3s), and the
// same gradients as the images one at a time, for BasicBlocks and Bottlenecks with downsampling.
TEST(CnnTrain, ABatchAtOnceIsEachImageAlone) {
  const fs::path data = fs::path(ATTNLAB_SOURCE_DIR) / "tests/cnn/data";
  for (const fs::path& file : {data / "resnet18_narrow/model.pth", data / "resnet50_narrow/model.safetensors"}) {
    SCOPED_TRACE(file.string());
    const ResnetModel m = load_resnet(file);
    constexpr int kCount = 3, kH = 40, kW = 36;
    std::mt19937 gen(21);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> images(static_cast<std::size_t>(kCount) * 3 * kH * kW);
    for (float& x : images) x = normal(gen);
    const Matrix batch = resnet_batch_logits(m, images, kCount, kH, kW);
    ASSERT_EQ(batch.rows(), kCount);
    const std::size_t one = 3ull * kH * kW;
    ResnetParameterGradients together, alone;
    together.zero(m);
    alone.zero(m);
    const Matrix dz = Matrix::Random(kCount, m.arch.classes);  // any ∂loss/∂logits
    resnet_train_batch(m, images, kCount, kH, kW, [&](Matrix& z) { z = dz; }, together);
    for (int b = 0; b < kCount; ++b) {
      CnnInput in;
      in.width = kW, in.height = kH;
      in.x = Eigen::Map<const Matrix>(images.data() + one * static_cast<std::size_t>(b), 3, kH * kW);
      const ResnetPass pass = resnet_forward(m, in, std::int64_t{1} << 30, 1);
      for (int c = 0; c < m.arch.classes; ++c)
        EXPECT_NEAR(batch(b, c), pass.logits[static_cast<std::size_t>(c)], 1e-4 * (1.0 + std::abs(batch(b, c))));
      const Matrix z = resnet_train_batch(m, std::span<const float>(images).subspan(one * static_cast<std::size_t>(b), one), 1, kH, kW,
                                          [&](Matrix& g) { g = dz.row(b); }, alone);
      EXPECT_LT((z.row(0) - batch.row(b)).cwiseAbs().maxCoeff(), 1e-4);
    }
    ASSERT_EQ(together.convs.size(), alone.convs.size());
    for (std::size_t i = 0; i < together.convs.size(); ++i) {
      const double scale = 1e-4 * (1.0 + alone.convs[i].dW.cwiseAbs().maxCoeff());
      EXPECT_LT((together.convs[i].dW - alone.convs[i].dW).cwiseAbs().maxCoeff(), scale) << "convolution " << i;
      EXPECT_LT((together.convs[i].db - alone.convs[i].db).cwiseAbs().maxCoeff(), scale) << "convolution " << i;
    }
    EXPECT_LT((together.dW_fc - alone.dW_fc).cwiseAbs().maxCoeff(), 1e-4 * (1.0 + alone.dW_fc.cwiseAbs().maxCoeff()));
  }
}

TEST(CnnTrain, SameSeedAndThreadsGiveTheSameNumbers) {
  CnnTrainShape shape;
  shape.width = 4;
  std::vector<float> images;
  std::vector<int> labels;
  random_batch(6, 28, 13, images, labels);
  auto run = [&] {
    CnnTrainer t(shape, {}, 9, 2);
    for (int i = 0; i < 2; ++i) t.train_step(images, labels);
    return std::vector<float>(t.values().begin(), t.values().end());
  };
  EXPECT_EQ(run(), run());
}

TEST(CnnTrain, Refusals) {
  expect_error_containing([] { CnnTrainer(CnnTrainShape{12, 4, {1, 1, 1, 1}, 10}, {}, 1); }, "16 pixels");
  expect_error_containing([] { CnnTrainer(CnnTrainShape{28, 4, {1, 0, 1, 1}, 10}, {}, 1); }, "stages");
  CnnTrainer t(CnnTrainShape{28, 4, {1, 1, 1, 1}, 10}, {}, 1);
  std::vector<float> images;
  std::vector<int> labels;
  random_batch(2, 28, 14, images, labels);
  labels[1] = 10;
  expect_error_containing([&] { t.compute_gradients(images, labels); }, "label 10 is outside [0, 10)");
  labels[1] = 1;
  images.pop_back();
  expect_error_containing([&] { t.compute_gradients(images, labels); }, "not 2 images");
  EXPECT_EQ(t.step(), 0);
}

}  // namespace
}  // namespace attnlab
