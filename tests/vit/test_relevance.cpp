// Issue 49: gradients through a loaded ViT (core/vit/vit_gradients) and what is read from them
// (core/vit/relevance): every class-relevance method and the effective receptive field against
// PyTorch autograd (tests/vit/make_relevance_golden.py: an independent forward with the
// attention's softmax explicit, ∂y/∂A kept by retain_grad), on timm and Hugging Face names,
// a model with registers pooled by averaging, and the bundled Fashion-MNIST model (receptive
// fields also on two models with layer scale and registers, without a classifier); the forward's
// logits against the CPU runner's; refusals.
#include "core/vit/relevance.hpp"
#include "core/vit/faithfulness.hpp"

#include "core/base/error.hpp"
#include "core/io/fashion_mnist.hpp"
#include "core/io/image.hpp"
#include "core/vit/vit_cpu.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

namespace attnlab {
namespace {

const std::filesystem::path kRoot = std::filesystem::path(ATTNLAB_SOURCE_DIR);
const std::filesystem::path kGolden = kRoot / "tests/vit/data/relevance/golden";
constexpr std::size_t kRelevanceGoldens = 9;  // 7 with a classifier, 2 with layer scale and none (receptive fields only)
constexpr std::int64_t kBudget = std::int64_t{1} << 30;

struct Golden {
  std::string name;
  nlohmann::json json;
  VitModel model;
  VitInput input;
};

/// Every golden file, its model loaded and its image prepared; throws unless there are
/// kRelevanceGoldens of them (a loop over none would pass by checking nothing).
std::vector<Golden> goldens() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(kGolden))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.size() != kRelevanceGoldens)
    throw std::runtime_error(kGolden.string() + " holds " + std::to_string(files.size()) + " golden files, not " +
                             std::to_string(kRelevanceGoldens));
  std::vector<Golden> out;
  for (const auto& f : files) {
    std::ifstream in(f);
    Golden g{f.stem().string(), nlohmann::json::parse(in), {}, {}};
    VitLoadOptions options;  // the golden's extra arguments: only --heads is used
    const auto& args = g.json.at("args");
    for (std::size_t i = 0; i + 1 < args.size(); i += 2)
      if (args.at(i) == "--heads") options.heads = std::stoi(args.at(i + 1).get<std::string>());
    g.model = load_vit(kRoot / g.json.at("model").get<std::string>(), options);
    g.input = vit_input(g.model, load_image(kRoot / g.json.at("image").get<std::string>()));
    out.push_back(std::move(g));
  }
  return out;
}

const std::vector<Golden>& all() {
  static const std::vector<Golden> g = goldens();
  return g;
}

/// The goldens of models with a classifier (the class-relevance maps); at least one each of
/// timm names, Hugging Face names, registers with average pooling, the bundled model.
std::vector<const Golden*> classifiers() {
  std::vector<const Golden*> out;
  for (const Golden& g : all())
    if (g.json.contains("relevance")) out.push_back(&g);
  if (out.size() != 7) throw std::runtime_error("7 goldens with a classifier expected, found " + std::to_string(out.size()));
  return out;
}

const Golden& named(const std::string& name) {
  for (const Golden& g : all())
    if (g.name == name) return g;
  throw std::runtime_error("no golden " + name);
}

/// |got − want| ≤ 1e-4·max|want| + 1e-3·|want| for every value: float32 against float32
/// autograd, the products in double on both sides.
void expect_map(const std::vector<float>& got, const nlohmann::json& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double peak = 0.0;
  for (const auto& w : want) peak = std::max(peak, std::abs(w.get<double>()));
  ASSERT_GT(peak, 0.0) << what;
  int bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double w = want.at(i).get<double>();
    if (std::abs(got[i] - w) > 1e-4 * peak + 1e-3 * std::abs(w) && ++bad <= 3)
      ADD_FAILURE() << what << " value " << i << ": " << got[i] << ", PyTorch " << w << " (largest " << peak << ")";
  }
}

TEST(Relevance, EveryMethodMatchesPyTorchAutogradForBothClasses) {
  for (const Golden* gp : classifiers()) {
    const Golden& g = *gp;
    SCOPED_TRACE(g.name);
    ASSERT_EQ(g.input.cols, g.json.at("grid").at(0).get<int>());
    ASSERT_EQ(g.input.rows, g.json.at("grid").at(1).get<int>());
    const auto& want_logits = g.json.at("logits");
    for (const auto& c : g.json.at("classes")) {
      const int klass = c.get<int>();
      const VitGradients grad = vit_gradients(g.model, g.input, VitGradientTarget::class_logit(klass), kBudget);
      ASSERT_EQ(grad.klass, klass);
      ASSERT_EQ(grad.logits.size(), want_logits.size());
      for (std::size_t i = 0; i < grad.logits.size(); ++i)
        EXPECT_NEAR(grad.logits[i], want_logits.at(i).get<double>(), 1e-4 + 1e-4 * std::abs(want_logits.at(i).get<double>()));
      for (const RelevanceMethod m : kRelevanceMethods) {
        const std::string name = relevance_method_name(m);
        expect_map(relevance_map(grad, m), g.json.at("relevance").at(std::to_string(klass)).at(name),
                   "class " + std::to_string(klass) + " " + name);
      }
    }
  }
}

TEST(Relevance, ReceptiveFieldsMatchPyTorchAutograd) {
  for (const Golden& g : all()) {
    SCOPED_TRACE(g.name);
    for (const auto& f : g.json.at("receptive_field")) {
      const int layer = f.at("layer"), token = f.at("token");
      const Matrix field = vit_receptive_field(g.model, g.input, layer, token, kBudget);
      ASSERT_EQ(field.cols(), g.json.at("input").at(0).get<int>());
      ASSERT_EQ(field.rows(), g.json.at("input").at(1).get<int>());
      expect_map(std::vector<float>(field.data(), field.data() + field.size()), f.at("map"),
                 "layer " + std::to_string(layer) + " token " + std::to_string(token));
    }
  }
}

// The gradient pass's forward is the model's forward: its logits are the CPU runner's, and "top"
// is the likeliest class.
TEST(Relevance, TheGradientPassLeavesTheForwardsLogitsAndTopIsTheLikeliestClass) {
  for (const Golden* gp : classifiers()) {
    const Golden& g = *gp;
    SCOPED_TRACE(g.name);
    const VitPass pass = VitCpuRunner(1).run(g.model, g.input, kBudget);
    const VitGradients grad = vit_gradients(g.model, g.input, VitGradientTarget::class_logit(VitGradientTarget::kTopClass), kBudget);
    ASSERT_EQ(grad.logits.size(), pass.logits.size());
    for (std::size_t i = 0; i < pass.logits.size(); ++i) EXPECT_NEAR(grad.logits[i], pass.logits[i], 1e-5 + 1e-5 * std::abs(pass.logits[i]));
    EXPECT_EQ(grad.klass, vit_top_classes(pass.logits, 1).at(0).first);
    EXPECT_EQ(grad.klass, g.json.at("classes").at(0).get<int>());
    ASSERT_EQ(grad.A.size(), static_cast<std::size_t>(g.model.arch.depth));
    // Every head's A is a softmax: its rows sum to 1.
    for (const Matrix& A : grad.A) EXPECT_LT((A.rowwise().sum().array() - 1.0f).abs().maxCoeff(), 1e-5f);
  }
}

// A token's receptive field after block 0 of a model without attention across tokens would be its
// own patch; with attention it spreads. Here: after block 0 the query's own patch holds the largest
// share of the field (the residual path), and after the last block more of the image is reached.
TEST(Relevance, TheReceptiveFieldIsWidestAfterTheLastBlock) {
  const Golden& g = named("fashion_vit__14_bag");
  const int P = g.model.arch.patch, cols = g.input.cols, q = g.input.N() / 2, pre = g.model.arch.prefix();
  auto own_share = [&](int layer) {
    const Matrix f = vit_receptive_field(g.model, g.input, layer, pre + q, kBudget);
    return f.block((q / cols) * P, (q % cols) * P, P, P).sum() / f.sum();
  };
  const float first = own_share(0), last = own_share(g.model.arch.depth - 1);
  EXPECT_GT(first, 1.0f / static_cast<float>(g.input.N()));
  EXPECT_LT(last, first);
}

TEST(Relevance, ClassesAreNamedByIndexLabelOrTop) {
  const VitModel model = load_vit(kRoot / "tests/vit/data/timm_f32");  // labels cat, dog, giraffe, zebra, grass
  EXPECT_EQ(vit_class_named(model.arch, "3"), 3);
  EXPECT_EQ(vit_class_named(model.arch, "zebra"), 3);
  EXPECT_EQ(vit_class_named(model.arch, "ZEBRA"), 3);
  EXPECT_EQ(vit_class_named(model.arch, "top"), VitGradientTarget::kTopClass);
  testing::expect_error_containing([&] { vit_class_named(model.arch, "5"); }, "outside 0…4");
  testing::expect_error_containing([&] { vit_class_named(model.arch, "99999999999"); }, "outside 0…4");
  testing::expect_error_containing([&] { vit_class_named(model.arch, "okapi"); }, "no class is named 'okapi'");
  for (const RelevanceMethod m : kRelevanceMethods) EXPECT_EQ(parse_relevance_method(relevance_method_name(m)), m);
  EXPECT_FALSE(parse_relevance_method("gradcam"));
}

TEST(Relevance, RefusalsAreOneLineAndAllocateNothing) {
  const Golden& g = named("fashion_vit__14_bag");
  // Over the budget: refused with the --resize that fits.
  testing::expect_error_containing(
      [&] { vit_gradients(g.model, g.input, VitGradientTarget::class_logit(0), 64 * 1024); }, "gradient pass would need");
  testing::expect_error_containing([&] { vit_gradients(g.model, g.input, VitGradientTarget::class_logit(99), kBudget); }, "class 99");
  testing::expect_error_containing([&] { vit_gradients(g.model, g.input, VitGradientTarget::token_sum(7, 0), kBudget); }, "layer 7");
  testing::expect_error_containing([&] { vit_gradients(g.model, g.input, VitGradientTarget::token_sum(0, 999), kBudget); },
                                 "query token 999");
  const VitModel headless = load_vit(kRoot / "tests/vit/data/dinov2_reg_f32");
  const VitInput input = vit_input(headless, load_image(kRoot / "tests/vit/data/safari_32x32.png"));
  testing::expect_error_containing([&] { vit_gradients(headless, input, VitGradientTarget::class_logit(0), kBudget); }, "no classifier");
  testing::expect_error_containing([&] { vit_class_named(headless.arch, "top"); }, "no classifier");
  // Cancelled between blocks.
  std::atomic<bool> stop{true};
  testing::expect_error_containing([&] { vit_gradients(g.model, g.input, VitGradientTarget::class_logit(0), kBudget, &stop); }, "cancelled");
}

// ---- Faithfulness (RISE's deletion and insertion, SPEC §13; core/vit/faithfulness).

TEST(Faithfulness, StepsAreTenthsOfThePatchesAndTheAreaIsTheTrapezoidRule) {
  const std::vector<int> want = {0, 4, 9, 14, 19, 24, 29, 34, 39, 44, 49};  // ⌊s·49/10⌋
  for (int s = 0; s < kFaithfulnessSteps; ++s) EXPECT_EQ(faithfulness_patches(s, 49), want[static_cast<std::size_t>(s)]);
  std::array<double, kFaithfulnessSteps> falling{}, flat{}, step{};
  for (int s = 0; s < kFaithfulnessSteps; ++s) {
    falling[static_cast<std::size_t>(s)] = 1.0 - s / 10.0;
    flat[static_cast<std::size_t>(s)] = 0.75;
    step[static_cast<std::size_t>(s)] = s == 0 ? 1.0 : 0.0;  // all gone after the first tenth: ½·(1 + 0)·0.1
  }
  EXPECT_DOUBLE_EQ(curve_area(falling), 0.5);
  EXPECT_DOUBLE_EQ(curve_area(flat), 0.75);
  EXPECT_DOUBLE_EQ(curve_area(step), 0.05);
}

TEST(Faithfulness, OrdersAreLargestFirstTiesByIndexAndRandomIsAFixedPermutation) {
  const std::vector<float> map = {0.1f, 0.5f, 0.1f, 0.9f, 0.5f};
  EXPECT_EQ(relevance_order(map), (std::vector<int>{3, 1, 4, 0, 2}));
  const std::vector<int> r = random_patch_order(49, 7);
  EXPECT_EQ(r, random_patch_order(49, 7));
  EXPECT_NE(r, random_patch_order(49, 8));
  std::vector<int> sorted = r;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 49; ++i) EXPECT_EQ(sorted[static_cast<std::size_t>(i)], i);
  EXPECT_NE(r, sorted);
}

// Each point of both curves is the class probability of the image with the first ⌊s·N/10⌋
// patches of the order replaced by (deletion) or restored into (insertion) the mean colour,
// worked here by hand from the input tensor.
TEST(Faithfulness, CurvesAreTheProbabilitiesOfThePartlyBlankedImages) {
  const Golden& g = named("fashion_vit__14_bag");
  const int N = g.input.N(), klass = g.json.at("classes").at(0), P2 = g.model.arch.patch * g.model.arch.patch;
  const std::vector<int> order = random_patch_order(N, 3);
  const FaithfulnessCurves c = faithfulness_curves(g.model, g.input, klass, order, kBudget);
  auto probability = [&](const VitInput& x) {
    const auto top = vit_top_classes(VitCpuRunner(1).run(g.model, x, kBudget).logits, g.model.arch.classes);
    for (const auto& [k, p] : top)
      if (k == klass) return static_cast<double>(p);
    return -1.0;
  };
  for (const int s : {0, 3, 10}) {
    VitInput deleted = g.input, inserted = g.input;
    for (int p = 0; p < N; ++p) {
      const bool gone = std::find(order.begin(), order.begin() + faithfulness_patches(s, N), p) != order.begin() + faithfulness_patches(s, N);
      for (int ch = 0; ch < 3; ++ch) {
        const float mean = g.input.patches.middleCols(ch * P2, P2).mean();
        if (gone) deleted.patches.row(p).segment(ch * P2, P2).setConstant(mean);
        else inserted.patches.row(p).segment(ch * P2, P2).setConstant(mean);
      }
    }
    EXPECT_NEAR(c.deletion[static_cast<std::size_t>(s)], probability(deleted), 1e-6) << "step " << s;
    EXPECT_NEAR(c.insertion[static_cast<std::size_t>(s)], probability(inserted), 1e-6) << "step " << s;
  }
  EXPECT_NEAR(c.deletion.front(), c.insertion.back(), 1e-9);  // the whole image
  EXPECT_NEAR(c.deletion.back(), c.insertion.front(), 1e-9);  // the mean-colour image
  EXPECT_DOUBLE_EQ(c.deletion_auc, curve_area(c.deletion));
  EXPECT_DOUBLE_EQ(c.insertion_auc, curve_area(c.insertion));
}

// The measure on the bundled model (here over 30 Fashion-MNIST test images; the docs'
// table is over 500): chefer's deletion area is below random's and its insertion area above.
TEST(Faithfulness, CheferBeatsTheRandomOrderOnTheBundledModel) {
  const VitModel model = load_vit(kRoot / "assets/fashion_vit");
  const FashionMnistSplit test = load_fashion_mnist(false);
  const std::array methods = {RelevanceMethod::Chefer, RelevanceMethod::Attention};
  int progress = 0;
  const auto rows = faithfulness_table(
      model, 30, [&](int i) { return vit_input(model, fashion_mnist_image(test, i)); }, methods, kBudget,
      [&](int done, int count) {
        EXPECT_EQ(done, ++progress);
        EXPECT_EQ(count, 30);
      });
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].method, "chefer");
  EXPECT_EQ(rows[1].method, "attention");
  EXPECT_EQ(rows[2].method, "random");
  for (const auto& r : rows) EXPECT_EQ(r.images, 30);
  EXPECT_LT(rows[0].deletion_auc, rows[2].deletion_auc);
  EXPECT_GT(rows[0].insertion_auc, rows[2].insertion_auc);
}

}  // namespace
}  // namespace attnlab
