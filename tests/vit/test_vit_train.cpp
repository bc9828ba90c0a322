// The ViT trainer (core/vit/vit_train): its gradients against finite differences and against
// PyTorch autograd, its AdamW steps against torch.optim.AdamW (the golden file written once by
// tests/vit/make_train_golden.py, in float64), its determinism, its sine–cosine codes, and that
// what it saves is what load_vit() and the CPU forward read back.
#include "core/base/error.hpp"
#include "core/io/safetensors_write.hpp"
#include "core/vit/vit_cpu.hpp"
#include "core/vit/vit_train.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <malloc.h>
#include <filesystem>
#include <functional>
#include <random>

namespace attnlab {
namespace {

using testing::expect_error_containing;

const std::filesystem::path kGolden = std::filesystem::path(ATTNLAB_SOURCE_DIR) / "tests/vit/data/train/train_golden.safetensors";

/// Worst |ours − ref| / (abs_scale + |ref|) over a tensor, and where.
struct Worst {
  double ratio = 0.0, ours = 0.0, ref = 0.0;
  std::size_t index = 0;
};

Worst compare(std::span<const float> ours, std::span<const float> ref, double abs_scale) {
  Worst w;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double r = std::abs(static_cast<double>(ours[i]) - ref[i]) / (abs_scale + std::abs(static_cast<double>(ref[i])));
    if (r > w.ratio) w = {r, ours[i], ref[i], i};
  }
  return w;
}

// Built with ThreadSanitizer (its allocator, like AddressSanitizer's, bypasses glibc's arenas).
constexpr bool thread_sanitized() {
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
  return true;
#endif
#endif
#if defined(__SANITIZE_THREAD__)
  return true;
#endif
  return false;
}

// The parameter floats of a shape, counted from a trainer's own list.
std::size_t t_params(const VitTrainShape& s) {
  const VitTrainer t(s, {}, 1, 1);
  return t.values().size();
}

// layer_tokens()'s output for `count` images: depth + 1 matrices of count·T × D floats.
std::size_t layer_tokens_bytes(const VitTrainShape& s, std::size_t count) {
  return static_cast<std::size_t>(s.depth + 1) * count * static_cast<std::size_t>(s.T()) * static_cast<std::size_t>(s.D) * sizeof(float);
}

double max_abs(std::span<const float> v) {
  double m = 0.0;
  for (const float x : v) m = std::max(m, static_cast<double>(std::abs(x)));
  return m;
}

struct GoldenCase {
  std::string name;
  VitTrainShape shape;
  VitTrainSettings settings;
};

GoldenCase golden_case(const SafetensorsFile& file, const std::string& name) {
  const auto c = nlohmann::json::parse(file.metadata.at(name));
  GoldenCase g;
  g.name = name;
  g.shape.image_rows = g.shape.image_cols = c.at("image");
  g.shape.patch = c.at("patch");
  g.shape.D = c.at("D");
  g.shape.heads = c.at("heads");
  g.shape.depth = c.at("depth");
  g.shape.mlp_hidden = c.at("mlp_hidden");
  g.shape.classes = c.at("classes");
  g.shape.eps = c.at("eps");
  g.shape.pooling = c.at("pooling") == "token" ? VitPooling::Token : VitPooling::Average;
  const std::string pos = c.at("pos");
  g.shape.pos = pos == "learned" ? VitPosKind::Learned : pos == "sincos" ? VitPosKind::Sincos : VitPosKind::None;
  g.shape.task = c.value("task", "classify") == "masked" ? VitTask::MaskedPatches : VitTask::Classify;
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

const std::vector<float>& tensor(const SafetensorsFile& file, const std::string& name) {
  const auto it = file.tensors.find(name);
  if (it == file.tensors.end()) throw Error("golden file: no tensor " + name);
  return it->second.values;
}

// Tolerances against the float64 golden (docs in the test names' comments below):
//   gradients: |ours − ref| / (kGradAbs·max|ref| + |ref|) ≤ kGradRel, max over the tensor.
// The reference is exact to float64; ours runs in float32 (unit roundoff 6e-8) through two
// blocks: a gradient entry is a sum of up to T·B = 68 products per GEMM, chained through ~20
// GEMMs, softmaxes and LayerNorms whose backward subtracts nearly equal terms. The worst
// ratio measured was 6e-5 (the test prints it per case); 5e-4 leaves an 8× margin while a
// wrong term (a missing factor, a transposed product, a dropped path) gives ratios of 1e-2 and
// more. Relative to the tensor's largest entry, since an entry that is a cancellation of large
// terms carries the absolute error of those terms, not of itself.
constexpr double kGradRel = 5e-4, kGradAbs = 1e-2;
// Parameters after three AdamW steps: each step moves an entry by about lr·m̂/√v̂ ≤ lr = 1e-2;
// an error δ in a gradient entry changes m̂/√v̂ by about δ/|g| (largest for the smallest
// gradients), so the parameters are compared with an absolute bound of 2e-5·(1 + max|p|) (the
// worst measured: a quarter of 1e-5·(1 + max|p|)), a five-hundredth of one step, far below the 1e-2 an optimizer mistake (a wrong bias correction,
// decay on the wrong tensor, no clipping) moves them.
constexpr double kParamAbs = 2e-5;

TEST(VitTrainGolden, GradientsAndThreeAdamWStepsMatchPyTorch) {
  const SafetensorsFile golden = read_safetensors(kGolden);
  const auto cases = nlohmann::json::parse(golden.metadata.at("cases"));
  ASSERT_EQ(cases.size(), 6u);
  const std::vector<float>& images = tensor(golden, "images");
  std::vector<int> labels;
  for (const float y : tensor(golden, "labels")) labels.push_back(static_cast<int>(y));
  std::vector<std::uint8_t> masks;
  for (const float m : tensor(golden, "masks")) masks.push_back(m != 0.0f ? 1 : 0);
  for (const std::string name : cases) {
    for (const int threads : {1, 2}) {
      SCOPED_TRACE(name + ", threads " + std::to_string(threads));
      const GoldenCase g = golden_case(golden, name);
      VitTrainer trainer(g.shape, g.settings, 1, threads);
      for (const VitParam& p : trainer.params()) {
        const std::vector<float>& init = tensor(golden, name + "/init/" + p.name);
        ASSERT_EQ(init.size(), p.size) << p.name;
        if (!p.trained) {  // fixed codes: ours must already be the reference's
          const Worst w = compare(trainer.values_of(p), init, 1e-6);
          EXPECT_LT(w.ratio, 1e-5) << p.name << " entry " << w.index << ": " << w.ours << " vs " << w.ref;
        }
        std::copy(init.begin(), init.end(), trainer.values_of(p).begin());
      }
      // Every tensor of the golden case is one of ours.
      std::size_t golden_tensors = 0;
      for (const auto& [n, t] : golden.tensors) golden_tensors += n.rfind(name + "/grad/", 0) == 0;
      EXPECT_EQ(golden_tensors, trainer.params().size());

      const bool masked = g.shape.task == VitTask::MaskedPatches;
      const VitStepStats s0 = masked ? trainer.compute_gradients_masked(images, masks) : trainer.compute_gradients(images, labels);
      EXPECT_NEAR(s0.loss, tensor(golden, name + "/loss")[0], 1e-5);
      double worst = 0.0;
      for (const VitParam& p : trainer.params()) {
        const std::vector<float>& ref = tensor(golden, name + "/grad/" + p.name);
        const Worst w = compare(trainer.gradient_of(p), ref, kGradAbs * max_abs(ref) + 1e-12);
        worst = std::max(worst, w.ratio);
        EXPECT_LT(w.ratio, kGradRel) << p.name << " entry " << w.index << ": " << w.ours << " vs " << w.ref;
      }
      std::printf("%s, %d thread(s): worst gradient ratio %.2e\n", name.c_str(), threads, worst);
      const std::vector<float>& norms = tensor(golden, name + "/grad_norms");
      const VitStepStats u0 = trainer.apply_update();
      EXPECT_NEAR(u0.grad_norm, norms[0], 1e-4 * norms[0]);
      for (int step = 1; step < 3; ++step) {
        const VitStepStats st = masked ? trainer.train_step_masked(images, masks) : trainer.train_step(images, labels);
        EXPECT_NEAR(st.grad_norm, norms[static_cast<std::size_t>(step)], 1e-4 * norms[static_cast<std::size_t>(step)]);
      }
      EXPECT_EQ(trainer.step(), 3);
      worst = 0.0;
      for (const VitParam& p : trainer.params()) {
        const std::vector<float>& ref = tensor(golden, name + "/step3/" + p.name);
        // The key bias's third of qkv.bias has a gradient of exactly 0 (it adds q_i·b_k to every
        // score of row i, which the softmax ignores): both gradients are rounding noise, 1e-17
        // in float64 and 1e-9 in float32, which Adam divides by its own size, so these entries
        // walk by up to lr·(noise/(noise + ε)) per step, differently in each. They are checked
        // to stay within 3·lr of their start and to have a gradient of rounding size instead.
        const bool qkv_bias = p.name.find("attn.qkv.bias") != std::string::npos;
        const std::size_t D = static_cast<std::size_t>(g.shape.D);
        double abs_err = 0.0;
        for (std::size_t i = 0; i < ref.size(); ++i) {
          if (qkv_bias && i >= D && i < 2 * D) {
            EXPECT_LE(std::abs(trainer.values_of(p)[i] - tensor(golden, name + "/init/" + p.name)[i]), 3.0 * g.settings.lr);
            EXPECT_LT(std::abs(tensor(golden, name + "/grad/" + p.name)[i]), 1e-12);
            continue;
          }
          abs_err = std::max(abs_err, std::abs(static_cast<double>(trainer.values_of(p)[i]) - ref[i]));
        }
        const double bound = kParamAbs * (1.0 + max_abs(ref));
        worst = std::max(worst, abs_err / bound);
        EXPECT_LT(abs_err, bound) << p.name;
      }
      std::printf("%s, %d thread(s): worst parameter error after 3 steps %.2e of its bound\n", name.c_str(), threads, worst);
    }
  }
}

/// A tiny model with spread-out parameters (so that no gradient is trivially small).
VitTrainer tiny_trainer(VitPooling pooling, VitPosKind pos, int threads, VitTask task = VitTask::Classify) {
  const VitTrainShape shape{.image_rows = 14, .image_cols = 14, .patch = 7, .D = 8, .depth = 2, .heads = 2,
                            .mlp_hidden = 16, .classes = 5, .pooling = pooling, .pos = pos, .task = task};
  VitTrainSettings settings;
  settings.label_smoothing = 0.1;
  VitTrainer t(shape, settings, 7, threads);
  std::mt19937 gen(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const VitParam& p : t.params()) {
    if (!p.trained) continue;
    const bool norm_weight = p.name.find("norm") != std::string::npos && p.name.find(".weight") != std::string::npos;
    for (float& v : t.values_of(p)) v = (norm_weight ? 1.0f : 0.0f) + 0.4f * normal(gen);
  }
  return t;
}

std::vector<float> random_images(int count, int side, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(count) * 3 * side * side);
  for (float& x : v) x = normal(gen);
  return v;
}

// Central differences (h = 1e-2) of the batch-mean loss for 12 random entries of every tensor.
// The forward runs in float32: the loss (≈ 2) carries a rounding noise of about 1e-6, i.e.
// 5e-5 in a difference quotient over 2h, and the truncation error h²·f'''/6 is of order 1e-5;
// hence |fd − g| ≤ 1e-3 + 2e-2·|g|. A wrong gradient term is off by its whole size.
// Checks 12 random entries of every trained tensor of `t`: the gradient `loss()` leaves (called
// once first, at the current values) against central differences of the loss it returns.
void expect_finite_differences(VitTrainer& t, const std::function<double()>& loss, unsigned seed) {
  loss();
  const std::vector<float> grad(t.gradients().begin(), t.gradients().end());
  std::mt19937 pick(seed);
  int checked = 0;
  for (const VitParam& p : t.params()) {
    if (!p.trained) continue;
    for (int k = 0; k < 12; ++k) {
      const std::size_t i = p.offset + std::uniform_int_distribution<std::size_t>(0, p.size - 1)(pick);
      const float keep = t.values()[i], h = 1e-2f;
      t.values()[i] = keep + h;
      const double up = loss();
      t.values()[i] = keep - h;
      const double down = loss();
      t.values()[i] = keep;
      const double fd = (up - down) / (2.0 * h), g = grad[i];
      EXPECT_LE(std::abs(fd - g), 1e-3 + 2e-2 * std::abs(g)) << p.name << " entry " << i - p.offset << ": fd " << fd << ", backward " << g;
      ++checked;
    }
  }
  EXPECT_GT(checked, 250);
}

TEST(VitTrainGradient, MatchesFiniteDifferencesForEveryKindOfTensor) {
  const std::vector<int> labels = {0, 3, 1, 4, 2};
  const std::vector<float> images = random_images(5, 14, 3);
  for (const VitPooling pooling : {VitPooling::Token, VitPooling::Average})
    for (const VitPosKind pos : {VitPosKind::Learned, VitPosKind::Sincos}) {
      SCOPED_TRACE(std::string(pooling == VitPooling::Token ? "token" : "avg") + ", " + pos_kind_name(pos));
      VitTrainer t = tiny_trainer(pooling, pos, 2);
      expect_finite_differences(t, [&] { return t.compute_gradients(images, labels).loss; }, 5);
    }
}

// The same for masked-patch reconstruction: 5 images of 2 × 2 patches, one to three masked each
// (the loss ≈ 1–3 and the same float32 noise, so the same bound).
TEST(VitTrainGradient, MaskedPatchReconstructionMatchesFiniteDifferences) {
  const std::vector<float> images = random_images(5, 14, 4);
  const std::vector<std::uint8_t> masked = {1, 0, 0, 0, 0, 1, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 0, 1, 1, 1};
  for (const VitPosKind pos : {VitPosKind::Learned, VitPosKind::Sincos}) {
    SCOPED_TRACE(pos_kind_name(pos));
    VitTrainer t = tiny_trainer(VitPooling::Token, pos, 2, VitTask::MaskedPatches);
    EXPECT_EQ(t.param("head.weight").shape, (std::vector<std::int64_t>{3 * 7 * 7, 8}));
    expect_finite_differences(t, [&] { return t.compute_gradients_masked(images, masked).loss; }, 6);
  }
}

// The model never sees a masked patch: its pixels change nothing (not the loss's other terms,
// not any prediction), while a visible patch's pixels change the predictions of the masked ones.
TEST(VitTrain, AMaskedPatchsPixelsReachNothing) {
  VitTrainer t = tiny_trainer(VitPooling::Token, VitPosKind::Learned, 1, VitTask::MaskedPatches);
  const std::vector<std::uint8_t> masked = {0, 1, 0, 1};  // patches (1,0) and (1,1): the right column
  std::vector<float> images = random_images(1, 14, 8);
  const Matrix before = t.reconstruct(images, masked, 1);
  std::vector<float> changed = images;
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < 14; ++y)
      for (int x = 7; x < 14; ++x) changed[(static_cast<std::size_t>(c) * 14 + y) * 14 + x] += 3.0f;  // the masked right half
  const Matrix after = t.reconstruct(changed, masked, 1);
  EXPECT_EQ(before, after);
  changed = images;
  changed[0] += 3.0f;  // a pixel of patch 0, visible
  const Matrix moved = t.reconstruct(changed, masked, 1);
  EXPECT_GT((moved.row(1) - before.row(1)).cwiseAbs().maxCoeff(), 1e-4f);
  EXPECT_GT((moved.row(3) - before.row(3)).cwiseAbs().maxCoeff(), 1e-4f);
  // reconstruct()'s loss is compute_gradients_masked()'s.
  double loss = 0.0;
  t.reconstruct(images, masked, 1, &loss);
  EXPECT_NEAR(loss, t.compute_gradients_masked(images, masked).loss, 1e-6 * loss);
}

TEST(VitTrain, MaskedPatchRefusals) {
  VitTrainer t = tiny_trainer(VitPooling::Token, VitPosKind::Learned, 1, VitTask::MaskedPatches);
  const std::vector<float> images = random_images(2, 14, 8);
  expect_error_containing([&] { t.compute_gradients_masked(images, std::vector<std::uint8_t>{1, 0, 0, 0, 0, 0, 0, 0}); },
                          "image 1 of the batch has no masked patch");
  expect_error_containing([&] { t.compute_gradients_masked(images, std::vector<std::uint8_t>{1, 0, 0}); }, "no whole number of images");
  expect_error_containing([&] { t.compute_gradients(images, std::vector<int>{0, 1}); }, "reconstructs masked patches");
  expect_error_containing([&] { t.logits(images, 2); }, "no class logits");
  VitTrainer c = tiny_trainer(VitPooling::Token, VitPosKind::Learned, 1);
  expect_error_containing([&] { c.compute_gradients_masked(images, std::vector<std::uint8_t>(8, 1)); }, "this model classifies");
}

TEST(VitTrainGradient, FixedPositionCodesGetNoGradientAndNeverMove) {
  for (const VitPosKind pos : {VitPosKind::Sincos, VitPosKind::None}) {
    VitTrainer t = tiny_trainer(VitPooling::Token, pos, 1);
    const VitParam& p = t.param("pos_embed");
    EXPECT_FALSE(p.trained);
    const std::vector<float> before(t.values_of(p).begin(), t.values_of(p).end());
    for (int s = 0; s < 3; ++s) t.train_step(random_images(2, 14, 9), std::vector<int>{1, 2});
    EXPECT_TRUE(std::equal(before.begin(), before.end(), t.values_of(p).begin()));
    EXPECT_EQ(max_abs(t.gradient_of(p)), 0.0);
  }
}

TEST(VitTrain, SameSeedAndThreadsGiveTheSameNumbers) {
  const VitTrainShape shape{.image_rows = 28, .image_cols = 28, .patch = 7, .D = 16, .depth = 2, .heads = 2,
                            .mlp_hidden = 32};
  VitTrainSettings settings;
  settings.warmup_steps = 2;
  settings.total_steps = 5;
  auto run = [&](int threads, std::uint64_t seed) {
    VitTrainer t(shape, settings, seed, threads);
    std::vector<double> losses;
    for (int s = 0; s < 4; ++s)
      losses.push_back(t.train_step(random_images(6, 28, 20 + s), std::vector<int>{0, 1, 2, 3, 4, 5}).loss);
    return std::make_pair(losses, std::vector<float>(t.values().begin(), t.values().end()));
  };
  const auto a = run(2, 1), b = run(2, 1), c = run(2, 2), d = run(1, 1);
  EXPECT_EQ(a.first, b.first);
  EXPECT_EQ(a.second, b.second);
  EXPECT_NE(a.second, c.second);
  // One thread sums the batch in another order: the same to rounding.
  for (std::size_t i = 0; i < a.first.size(); ++i) EXPECT_NEAR(a.first[i], d.first[i], 1e-5);
  EXPECT_LT(a.first.back(), a.first.front());  // it learns something even on random images
}

TEST(VitTrain, InitIsTimms) {
  const VitTrainShape shape{.D = 64, .depth = 2, .mlp_hidden = 256};
  VitTrainer t(shape, {}, 3, 1);
  auto stddev = [&](const std::string& name) {
    const auto v = t.values_of(t.param(name));
    double s = 0.0, s2 = 0.0;
    for (const float x : v) s += x, s2 += static_cast<double>(x) * x;
    const double n = static_cast<double>(v.size());
    return std::sqrt(s2 / n - (s / n) * (s / n));
  };
  EXPECT_NEAR(stddev("blocks.0.attn.qkv.weight"), 0.02, 0.001);
  EXPECT_NEAR(stddev("pos_embed"), 0.02, 0.002);
  EXPECT_NEAR(stddev("head.weight"), 0.02, 0.003);
  EXPECT_LT(max_abs(t.values_of(t.param("cls_token"))), 1e-5);
  EXPECT_EQ(max_abs(t.values_of(t.param("blocks.1.mlp.fc1.bias"))), 0.0);
  const auto ln = t.values_of(t.param("blocks.1.norm2.weight"));
  EXPECT_TRUE(std::all_of(ln.begin(), ln.end(), [](float x) { return x == 1.0f; }));
  EXPECT_LE(max_abs(t.values_of(t.param("patch_embed.proj.weight"))), 1.0 / std::sqrt(48.0));
  EXPECT_GT(max_abs(t.values_of(t.param("patch_embed.proj.weight"))), 0.9 / std::sqrt(48.0));
  // Decay on matrices only.
  for (const VitParam& p : t.params()) EXPECT_EQ(p.decay, p.shape.size() >= 2 && p.name != "cls_token" && p.name != "pos_embed") << p.name;
}

TEST(VitTrain, LearningRateWarmsUpThenFollowsTheCosine) {
  VitTrainSettings s;
  s.lr = 1.0;
  s.min_lr = 0.0;
  s.warmup_steps = 4;
  s.total_steps = 14;
  EXPECT_DOUBLE_EQ(vit_learning_rate(s, 0), 0.25);
  EXPECT_DOUBLE_EQ(vit_learning_rate(s, 3), 1.0);
  EXPECT_DOUBLE_EQ(vit_learning_rate(s, 4), 1.0);
  EXPECT_NEAR(vit_learning_rate(s, 9), 0.5, 1e-12);
  EXPECT_NEAR(vit_learning_rate(s, 14), 0.0, 1e-12);
  EXPECT_NEAR(vit_learning_rate(s, 20), 0.0, 1e-12);
}

TEST(VitTrain, RefusesShapesThatCannotWork) {
  auto refused = [](auto edit) {
    VitTrainShape s;
    edit(s);
    try {
      VitTrainer t(s, {}, 1, 1);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refused([](VitTrainShape& s) { s.heads = 3; }).find("heads do not divide D"), std::string::npos);
  EXPECT_NE(refused([](VitTrainShape& s) { s.patch = 5; }).find("does not divide"), std::string::npos);
  EXPECT_NE(refused([](VitTrainShape& s) { s.D = 6, s.heads = 2, s.pos = VitPosKind::Sincos; }).find("multiple of 4"), std::string::npos);
  EXPECT_NE(refused([](VitTrainShape& s) { s.depth = 0; }).find("depth"), std::string::npos);
}

// The training budget's estimate (vit_train_bytes) against what a trainer really takes from the
// heap: one thread (the main arena only, which mallinfo2 reports), a training step of a batch of 64
// and an evaluation of 128 images (the chunk the estimate counts). The estimate holds at least what
// was allocated (a smaller one would let a budget pass training that then goes over it) and is not
// far above it (the model handed to the views, counted but not made here, is its only extra).
TEST(VitTrainBudget, TheEstimateHoldsWhatATrainerAllocates) {
  if (ATTNLAB_ASAN || thread_sanitized()) GTEST_SKIP() << "a sanitizer's allocator does not report to mallinfo2";
  for (const VitTask task : {VitTask::Classify, VitTask::MaskedPatches}) {
    VitTrainShape s;
    s.D = 96, s.depth = 3, s.heads = 4, s.mlp_hidden = 192, s.patch = 4, s.task = task;
    const std::size_t image = 3 * 28 * 28;
    std::vector<float> images(image * 128, 0.25f);
    std::vector<int> labels(64, 3);
    std::vector<std::uint8_t> masked(static_cast<std::size_t>(64) * s.N(), 0);
    for (std::size_t i = 0; i < masked.size(); i += 3) masked[i] = 1;
    const auto heap = [] { const struct mallinfo2 m = mallinfo2(); return m.uordblks + m.hblkhd; };  // + mmap()ed blocks
    const std::size_t before = heap();
    std::size_t grown = 0;
    {
      VitTrainer t(s, {}, 1, /*threads=*/1);
      if (task == VitTask::Classify) {
        t.train_step(std::span<const float>(images).first(image * 64), labels);
        t.logits(images, 128);
      } else {
        t.train_step_masked(std::span<const float>(images).first(image * 64), masked);
        t.layer_tokens(images, 128);  // 128 images in one chunk; its output is not the trainer's
      }
      grown = heap() - before;
    }
    const std::size_t estimate = vit_train_bytes(s, 64, 1);
    const std::size_t params = t_params(s) * sizeof(float);
    EXPECT_GE(estimate, grown - (task == VitTask::MaskedPatches ? layer_tokens_bytes(s, 128) : 0)) << task_name(task);
    EXPECT_LE(estimate, grown + params + grown / 5) << task_name(task);
  }
}

// A model or a batch too large is refused before anything is made: one line, the batch that fits.
TEST(VitTrainBudget, RefusalNamesTheBatchThatFits) {
  VitTrainShape s;
  s.D = 512, s.depth = 12, s.heads = 8, s.mlp_hidden = 1024;
  EXPECT_NO_THROW(vit_check_train_budget(VitTrainShape{}, 128, 2, std::uint64_t{256} << 20));  // the default model
  try {
    vit_check_train_budget(s, 4096, 2, std::uint64_t{8} << 30);
    ADD_FAILURE() << "a 4096-image batch of a D=512 ViT passed an 8 GiB budget";
  } catch (const Error& e) {
    const std::string m = e.what();
    const auto at = m.find("a batch of up to ");
    ASSERT_NE(at, std::string::npos) << m;
    const int fits = std::atoi(m.c_str() + at + 17);
    EXPECT_LE(vit_train_bytes(s, fits, 2), std::size_t{8} << 30) << m;
    EXPECT_GT(vit_train_bytes(s, fits + 1, 2), std::size_t{8} << 30) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
  s.D = 4096, s.depth = 64, s.mlp_hidden = 16384;
  try {
    vit_check_train_budget(s, 1, 1, std::uint64_t{6} << 30);
    ADD_FAILURE() << "a 13-billion-parameter ViT passed a 6 GiB budget";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no batch fits"), std::string::npos) << e.what();
  }
}

// A 14 × 14 photo of uniform random pixels (seeded) and the trainer's input of it: (channel, y, x)
// floats normalized by `mean` and `sd`, as vit_input() normalizes the photo for the loaded model.
struct PhotoAndInput {
  Image photo;
  std::vector<float> chw;
};
PhotoAndInput random_photo_and_input(unsigned seed, const std::array<float, 3>& mean, const std::array<float, 3>& sd) {
  PhotoAndInput out;
  out.photo.width = out.photo.height = 14;
  out.photo.rgb.resize(14 * 14 * 3);
  std::mt19937 gen(seed);
  for (float& v : out.photo.rgb) v = std::uniform_real_distribution<float>(0.0f, 1.0f)(gen);
  out.chw.resize(3 * 14 * 14);
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t i = 0; i < 14 * 14; ++i) out.chw[c * 196 + i] = (out.photo.rgb[i * 3 + c] - mean[c]) / sd[c];
  return out;
}

// What the trainer saves is what load_vit() reads, and the CPU forward on the read model gives
// the trainer's own logits (the same model, two implementations of its forward pass).
TEST(VitTrain, SavedCheckpointLoadsAndGivesTheTrainersLogits) {
  for (const VitPooling pooling : {VitPooling::Token, VitPooling::Average}) {
    VitTrainer t = tiny_trainer(pooling, VitPosKind::Learned, 2);
    const auto dir = std::filesystem::temp_directory_path() / ("attnlab_train_ckpt_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    write_safetensors(dir / "model.safetensors", t.tensors());
    const std::array<float, 3> mean{0.5f, 0.5f, 0.5f}, sd{0.25f, 0.25f, 0.25f};
    write_file_atomically(dir / "config.json", vit_train_config_json(t.shape(), mean, sd, {"a", "b", "c", "d", "e"}));
    const VitModel model = load_vit(dir);
    std::filesystem::remove_all(dir);
    EXPECT_EQ(model.arch.pooling, pooling);
    EXPECT_EQ(model.arch.heads, 2);
    EXPECT_EQ(model.arch.depth, 2);
    EXPECT_EQ(model.arch.classes, 5);
    EXPECT_EQ(model.arch.labels[3], "d");
    EXPECT_EQ(model.arch.pos_layout, PosLayout::AllTokens);
    // One image through both: the runner takes an Image (pixels in [0,1]) and normalizes it.
    const auto [img, chw] = random_photo_and_input(4, mean, sd);
    const Matrix ours = t.logits(chw, 1);
    VitCpuRunner runner(1);
    const VitPass pass = runner.run(model, vit_input(model, img), vit_memory_budget());
    ASSERT_EQ(pass.logits.size(), 5u);
    for (int c = 0; c < 5; ++c) EXPECT_NEAR(pass.logits[static_cast<std::size_t>(c)], ours(0, c), 1e-4);
  }
}

// A masked-patch model saves as timm's VisionTransformer with global_pool "" (a head on every
// token): it loads as a ViT with no classifier, its per-token head noted, and runs the same
// blocks as the trainer (the norms of the last block's tokens agree).
TEST(VitTrain, AMaskedPatchCheckpointLoadsAsAViTWithoutAClassifier) {
  VitTrainer t = tiny_trainer(VitPooling::Token, VitPosKind::Sincos, 1, VitTask::MaskedPatches);
  const std::array<float, 3> mean{0.4f, 0.5f, 0.3f}, sd{0.2f, 0.25f, 0.3f};
  const std::string config = vit_train_config_json(t.shape(), mean, sd, {});
  const auto json = nlohmann::json::parse(config);
  EXPECT_EQ(json.at("global_pool"), "");
  EXPECT_EQ(json.at("num_classes"), 147);
  EXPECT_EQ(json.at("attnlab").at("task"), "masked-patches");
  const VitModel model = vit_from_tensors(t.tensors(), config, "", {}, "test");
  EXPECT_EQ(model.arch.classes, 0);
  EXPECT_EQ(model.arch.token_head, 147);
  EXPECT_NE(vit_info(model).find("token head: 147"), std::string::npos);
  const auto [img, chw] = random_photo_and_input(5, mean, sd);
  const std::vector<Matrix> tokens = t.layer_tokens(chw, 1);
  VitCpuRunner runner(1);
  const VitPass pass = runner.run(model, vit_input(model, img), vit_memory_budget());
  EXPECT_TRUE(pass.logits.empty());
  ASSERT_EQ(pass.token_norms.size(), 2u);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(pass.token_norms[1][i], tokens[2].row(i).norm(), 1e-4 * tokens[2].row(i).norm()) << "token " << i;
}

}  // namespace
}  // namespace attnlab
