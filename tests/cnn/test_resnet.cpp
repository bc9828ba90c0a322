// Issue 50: ResNets beside the ViTs (core/cnn) against torchvision (tests/cnn/make_resnet_golden.py:
// torchvision's own BasicBlock and Bottleneck in narrow ResNet-18 and -50 with random weights and
// random batch-norm statistics, computed in float64): the logits, every residual block's output,
// Grad-CAM, the input gradient and receptive fields; the CKA across two models against numpy
// (exact and minibatch); the loader's refusals; `attnlab vit` and `attnlab cka` as a user runs them.
#include "core/cnn/any_model.hpp"
#include "core/cnn/model_cka.hpp"
#include "core/cnn/resnet.hpp"

#include "core/base/error.hpp"
#include "core/io/image.hpp"
#include "core/io/safetensors.hpp"

#include "command_support.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace attnlab {
namespace {

namespace fs = std::filesystem;
using namespace attnlab::testing;
const fs::path kRoot = fs::path(ATTNLAB_SOURCE_DIR);
const fs::path kData = kRoot / "tests/cnn/data";
constexpr std::int64_t kBudget = std::int64_t{1} << 30;

struct Golden {
  std::string name;
  nlohmann::json json;
  ResnetModel model;
  CnnInput input;
};

fs::path model_path(const std::string& model) {
  return model == "resnet18_narrow" ? kData / "resnet18_narrow/model.pth" : kData / "resnet50_narrow/model.safetensors";
}

/// The four goldens (two models × two images), models loaded, images prepared; throws unless all
/// four are there (a loop over none would check nothing).
const std::vector<Golden>& goldens() {
  static const std::vector<Golden> all = [] {
    std::vector<Golden> out;
    for (const char* model : {"resnet18_narrow", "resnet50_narrow"})
      for (const char* image : {"safari_48x48", "safari_61x45"}) {
        Golden g;
        g.name = std::string(model) + "__" + image;
        g.json = read_json(kData / "golden" / (g.name + ".json"));
        g.model = load_resnet(model_path(model));
        g.input = cnn_input(g.model.arch, load_image(kRoot / g.json.at("image").get<std::string>()));
        out.push_back(std::move(g));
      }
    return out;
  }();
  return all;
}

/// |got − want| ≤ 1e-5·max|want| + 1e-4·|want| for every value: float32 against float64 torch.
void expect_values(const float* got, std::size_t n, const nlohmann::json& want, const std::string& what) {
  ASSERT_EQ(n, want.size()) << what;
  double peak = 0.0;
  for (const auto& w : want) peak = std::max(peak, std::abs(w.get<double>()));
  ASSERT_GT(peak, 0.0) << what;
  int bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double w = want.at(i).get<double>();
    if (std::abs(got[i] - w) > 1e-5 * peak + 1e-4 * std::abs(w) && ++bad <= 3)
      ADD_FAILURE() << what << " value " << i << ": " << got[i] << ", torchvision " << w << " (largest " << peak << ")";
  }
}

TEST(Resnet, ReadsTorchvisionNamesFromPthAndSafetensorsWithConfig) {
  const ResnetModel r18 = load_resnet(model_path("resnet18_narrow"));
  EXPECT_EQ(r18.arch.name(), "resnet18");
  EXPECT_FALSE(r18.arch.bottleneck);
  EXPECT_EQ(r18.blocks.size(), 8u);
  EXPECT_EQ(r18.arch.input_size, 48);
  EXPECT_EQ(r18.arch.labels.at(2), "giraffe");
  EXPECT_EQ(r18.sha256.size(), 64u);
  const ResnetModel r50 = load_resnet(kData / "resnet50_narrow");  // the folder: model.safetensors in it
  EXPECT_EQ(r50.arch.name(), "resnet50");
  EXPECT_TRUE(r50.arch.bottleneck);
  EXPECT_EQ(r50.blocks.size(), 16u);
  EXPECT_EQ(r50.blocks[3].name, "layer2.0");
  EXPECT_TRUE(r50.blocks[3].downsample.has_value());
  EXPECT_EQ(r50.arch.mean[0], 0.5f);  // config.json's, not ImageNet's
  EXPECT_EQ(r50.W_fc.cols(), 256);
  // load_any_model tells it from a ViT.
  EXPECT_TRUE(load_any_model(model_path("resnet50_narrow")).resnet.has_value());
  EXPECT_TRUE(load_any_model(kRoot / "tests/vit/data/timm_f32/model.safetensors").vit.has_value());
}

TEST(Resnet, LogitsAndEveryBlockMatchTorchvision) {
  for (const Golden& g : goldens()) {
    SCOPED_TRACE(g.name);
    ASSERT_EQ(g.input.width, g.json.at("width").get<int>());
    ASSERT_EQ(g.input.height, g.json.at("height").get<int>());
    const ResnetPass pass = resnet_forward(g.model, g.input, kBudget);
    expect_values(pass.logits.data(), pass.logits.size(), g.json.at("logits"), "logits");
    const auto& blocks = g.json.at("blocks");
    ASSERT_EQ(pass.blocks.size(), blocks.size());
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      const auto& w = blocks[b];
      const FeatureMap& m = pass.blocks[b];
      EXPECT_EQ(g.model.blocks[b].name, w.at("name").get<std::string>());
      ASSERT_EQ(m.channels, w.at("channels").get<int>());
      ASSERT_EQ(m.height, w.at("height").get<int>());
      ASSERT_EQ(m.width, w.at("width").get<int>());
      const auto size = resnet_map_size(g.model, static_cast<int>(b), g.input.width, g.input.height);
      EXPECT_EQ(size[0], m.width);
      EXPECT_EQ(size[1], m.height);
      expect_values(m.v.data(), static_cast<std::size_t>(m.v.size()), w.at("values"), "block " + w.at("name").get<std::string>());
    }
    const auto top = vit_top_classes(pass.logits, 1);
    EXPECT_EQ(top.at(0).first, g.json.at("top_class").get<int>());
  }
}

TEST(Resnet, GradCamAndInputGradientMatchTorchAutograd) {
  for (const Golden& g : goldens()) {
    SCOPED_TRACE(g.name);
    const CnnGradients grad = resnet_gradients(g.model, g.input, CnnGradientTarget::class_logit(CnnGradientTarget::kTopClass), kBudget);
    ASSERT_EQ(grad.klass, g.json.at("top_class").get<int>());
    for (const auto& cam : g.json.at("grad_cam")) {
      ASSERT_EQ(cam.at("class").get<int>(), grad.klass);
      const Matrix map = resnet_grad_cam(grad, cam.at("block").get<int>());
      ASSERT_EQ(map.rows(), cam.at("height").get<int>());
      ASSERT_EQ(map.cols(), cam.at("width").get<int>());
      expect_values(map.data(), static_cast<std::size_t>(map.size()), cam.at("values"), "Grad-CAM at block " + cam.at("block").dump());
    }
    const auto& ig = g.json.at("input_gradient");
    const Matrix map = cnn_input_gradient_map(grad);
    ASSERT_EQ(map.rows(), ig.at("height").get<int>());
    ASSERT_EQ(map.cols(), ig.at("width").get<int>());
    expect_values(map.data(), static_cast<std::size_t>(map.size()), ig.at("values"), "input gradient");
  }
}

TEST(Resnet, ReceptiveFieldsMatchTorchAutograd) {
  for (const Golden& g : goldens()) {
    SCOPED_TRACE(g.name);
    for (const auto& f : g.json.at("receptive_field")) {
      const Matrix field = resnet_receptive_field(g.model, g.input, f.at("block").get<int>(), f.at("col").get<int>(), f.at("row").get<int>(), kBudget);
      ASSERT_EQ(field.rows(), f.at("height").get<int>());
      ASSERT_EQ(field.cols(), f.at("width").get<int>());
      expect_values(field.data(), static_cast<std::size_t>(field.size()), f.at("values"),
                    "field of block " + f.at("block").dump() + " at " + f.at("col").dump() + "," + f.at("row").dump());
    }
  }
}

TEST(Resnet, RefusesWhatIsNoResnetWithOneLine) {
  SafetensorsFile file = read_safetensors(kData / "resnet50_narrow/model.safetensors");
  auto without = [&](const std::string& name) {
    SafetensorsFile f = file;
    f.tensors.erase(name);
    return f;
  };
  expect_error_containing([&] { resnet_from_tensors(without("layer2.0.bn2.running_var"), "", "m"); },
                          "tensor 'layer2.0.bn2.running_var' of the ResNet is missing");
  expect_error_containing([&] { resnet_from_tensors(without("layer3.0.downsample.0.weight"), "", "m"); }, "no 'downsample' tensors");
  SafetensorsFile extra = file;
  extra.tensors["head.weight"] = extra.tensors.at("fc.bias");
  expect_error_containing([&] { resnet_from_tensors(extra, "", "m"); }, "not part of a ResNet as read here: head.weight");
  SafetensorsFile wrong = file;
  wrong.tensors.at("layer1.0.conv2.weight").shape = {8, 5, 3, 3};
  expect_error_containing([&] { resnet_from_tensors(wrong, "", "m"); }, "it takes 5 channels where the layer before gives 8");
  expect_error_containing([&] { resnet_from_tensors(file, "{\"pretrained_cfg\": {\"std\": [1, 0, 1]}}", "m"); }, "std must be positive");
  // Targets out of range, named.
  const Golden& g = goldens().front();
  expect_error_containing([&] { resnet_gradients(g.model, g.input, CnnGradientTarget::class_logit(5), kBudget); }, "class 5 is out of range");
  expect_error_containing([&] { resnet_gradients(g.model, g.input, CnnGradientTarget::position_sum(8, 0, 0), kBudget); }, "block 8 is out of range");
  expect_error_containing([&] { resnet_gradients(g.model, g.input, CnnGradientTarget::position_sum(1, 12, 0), kBudget); }, "outside block 1's 12x12 map");
  // Over the budget: refused before anything is allocated, naming a size that fits.
  expect_error_containing([&] { resnet_forward(g.model, g.input, 1 << 16); }, "give --resize");
}

// ---- CKA across two models (SPEC §14) ----

std::vector<Image> cka_images(const nlohmann::json& golden) {
  std::vector<Image> images;
  for (const auto& p : golden.at("images")) images.push_back(load_image(kRoot / p.get<std::string>()));
  if (images.size() != 8) throw std::runtime_error("8 CKA images expected");
  return images;
}

void expect_cka(const Eigen::MatrixXd& got, const nlohmann::json& want, double tol, const std::string& what) {
  ASSERT_EQ(got.rows(), static_cast<Eigen::Index>(want.size())) << what;
  ASSERT_EQ(got.cols(), static_cast<Eigen::Index>(want.at(0).size())) << what;
  for (Eigen::Index i = 0; i < got.rows(); ++i)
    for (Eigen::Index j = 0; j < got.cols(); ++j)
      EXPECT_NEAR(got(i, j), want.at(static_cast<std::size_t>(i)).at(static_cast<std::size_t>(j)).get<double>(), tol)
          << what << " (" << i << ", " << j << ")";
}

TEST(CrossCka, ResnetAgainstResnetMatchesNumpyExactAndMinibatch) {
  const nlohmann::json golden = read_json(kData / "golden/cka_resnet18_narrow__resnet50_narrow.json");
  const std::vector<Image> images = cka_images(golden);
  const ResnetModel a = load_resnet(model_path("resnet18_narrow")), b = load_resnet(model_path("resnet50_narrow"));
  const CkaModel ma = resnet_cka_model(a, kBudget), mb = resnet_cka_model(b, kBudget);
  ASSERT_EQ(ma.layers, golden.at("rows").get<std::vector<std::string>>());
  ASSERT_EQ(mb.layers, golden.at("cols").get<std::vector<std::string>>());
  auto image = [&](int i) { return images[static_cast<std::size_t>(i)]; };
  int last = 0, total = 0;
  const CrossCka exact = cross_cka(ma, mb, 8, image, 0, kBudget, nullptr, [&](int done, int n) { last = done, total = n; });
  EXPECT_EQ(exact.images, 8);
  EXPECT_EQ(exact.batch, 0);
  EXPECT_EQ(last, 16);  // each image once per model
  EXPECT_EQ(total, 16);
  expect_cka(exact.cka, golden.at("cka"), 1e-5, "exact");
  const CrossCka mini = cross_cka(ma, mb, 8, image, 4, kBudget);
  EXPECT_EQ(mini.images, 8);
  expect_cka(mini.cka, golden.at("cka_minibatch"), 1e-4, "minibatch of 4");
  // kCkaAutoBatch (the window's): exact when the features fit half the budget, image 0 passed once per model.
  const CrossCka chosen = cross_cka(ma, mb, 8, image, kCkaAutoBatch, kBudget, nullptr, [&](int done, int n) { last = done, total = n; });
  EXPECT_EQ(chosen.batch, 0);
  EXPECT_EQ(last, 16);
  expect_cka(chosen.cka, golden.at("cka"), 1e-5, "exact, chosen");
  // Over half the budget: minibatches of min(100, 8) images.
  std::int64_t fa = 0, fb = 0;
  for (const auto& l : ma.features(cka_square_image(image(0), ma.input_size), nullptr)) fa += static_cast<std::int64_t>(l.size());
  for (const auto& l : mb.features(cka_square_image(image(0), mb.input_size), nullptr)) fb += static_cast<std::int64_t>(l.size());
  const std::int64_t need = cross_cka_bytes(8, fa, fb, static_cast<int>(ma.layers.size() + mb.layers.size()));
  EXPECT_EQ(cross_cka(ma, mb, 8, image, kCkaAutoBatch, need * 2).batch, 0) << "exact while they fit half the budget";
  const CrossCka tight = cross_cka(ma, mb, 8, image, kCkaAutoBatch, need * 3 / 2);
  EXPECT_EQ(tight.batch, 8);
  EXPECT_EQ(tight.images, 8);
  const CrossCka by_hand = cross_cka(ma, mb, 8, image, 8, kBudget);
  EXPECT_LT((tight.cka - by_hand.cka).cwiseAbs().maxCoeff(), 1e-12);
  const CrossCka self = cross_cka(ma, ma, 8, image, 0, kBudget);
  expect_cka(self.cka, golden.at("cka_self"), 1e-5, "self");
  for (Eigen::Index i = 0; i < self.cka.rows(); ++i) EXPECT_NEAR(self.cka(i, i), 1.0, 1e-6);
}

TEST(CrossCka, VitAgainstResnetMatchesNumpy) {
  const nlohmann::json golden = read_json(kData / "golden/cka_timm_f32__resnet18_narrow.json");
  const std::vector<Image> images = cka_images(golden);
  const VitModel vit = load_vit(kRoot / "tests/vit/data/timm_f32/model.safetensors");
  const ResnetModel r18 = load_resnet(model_path("resnet18_narrow"));
  CkaModel ma = vit_cka_model(vit, kBudget);
  ma.input_size = 48;  // the golden runs the ViT on the 48 × 48 crops, its position embedding resampled
  const CkaModel mb = resnet_cka_model(r18, kBudget);
  ASSERT_EQ(ma.layers, golden.at("rows").get<std::vector<std::string>>());
  auto image = [&](int i) { return images[static_cast<std::size_t>(i)]; };
  expect_cka(cross_cka(ma, mb, 8, image, 0, kBudget).cka, golden.at("cka"), 1e-5, "exact");
  expect_cka(cross_cka(ma, mb, 8, image, 4, kBudget).cka, golden.at("cka_minibatch"), 1e-4, "minibatch of 4");
}

TEST(CrossCka, GramFormEqualsTheFeatureFormAndRefusals) {
  // Hand-made features: Y = X rotated and scaled has CKA 1; an unrelated Y less.
  Eigen::MatrixXd X(5, 3);
  X << 1, 2, 0, 0, 1, 3, 2, 2, 2, 5, 0, 1, 1, 1, 4;
  Eigen::MatrixXd R(3, 3);
  R << 0, -2, 0, 2, 0, 0, 0, 0, 2;  // a rotation by 90° in the first plane, times 2
  const Eigen::MatrixXd Y = X * R;
  EXPECT_NEAR(gram_cka(X * X.transpose(), Y * Y.transpose()), 1.0, 1e-12);
  Eigen::MatrixXd Z(5, 2);
  Z << 1, 0, 0, 1, 1, 1, 0, 0, 2, 1;
  // The feature form, ‖ZcᵀXc‖²/(‖XcᵀXc‖‖ZcᵀZc‖), worked out here with the columns centred.
  const Eigen::MatrixXd Xc = X.rowwise() - X.colwise().mean(), Zc = Z.rowwise() - Z.colwise().mean();
  const double want = (Zc.transpose() * Xc).squaredNorm() / ((Xc.transpose() * Xc).norm() * (Zc.transpose() * Zc).norm());
  EXPECT_NEAR(gram_cka(X * X.transpose(), Z * Z.transpose()), want, 1e-12);
  EXPECT_LT(want, 0.99);
  // The unbiased HSIC of a Gram with itself is positive for features with variance.
  EXPECT_GT(unbiased_hsic(X * X.transpose(), X * X.transpose()), 0.0);

  const ResnetModel r18 = load_resnet(model_path("resnet18_narrow"));
  const CkaModel m = resnet_cka_model(r18, kBudget);
  const Image crop = load_image(kData / "cka_images/crop_0.png");
  auto image = [&](int) { return crop; };
  expect_error_containing([&] { cross_cka(m, m, 1, image, 0, kBudget); }, "at least 2 images");
  expect_error_containing([&] { cross_cka(m, m, 8, image, 3, kBudget); }, "--batch must be at least 4");
  expect_error_containing([&] { cross_cka(m, m, 100000, image, 0, kBudget); }, "over the memory budget of 1024 MiB: give --batch");
  std::atomic<bool> stop{true};
  expect_error_containing([&] { cross_cka(m, m, 8, image, 0, kBudget, &stop); }, "cancelled");
}

TEST(CrossCka, SquareImageScalesTheShortSideAndCropsTheCentre) {
  const Image wide = random_image(90, 60, 3);
  const Image sq = cka_square_image(wide, 30);
  EXPECT_EQ(sq.width, 30);
  EXPECT_EQ(sq.height, 30);
  const Image scaled = vit_scaled_image(wide, 30);  // 45 × 30: the centred 30 columns start at 7
  ASSERT_EQ(scaled.width, 45);
  EXPECT_EQ(sq.at(0, 0, 1), scaled.at(7, 0, 1));
  EXPECT_EQ(sq.at(29, 29, 2), scaled.at(36, 29, 2));
  const Image same = random_image(30, 30, 4);
  EXPECT_EQ(cka_square_image(same, 30).rgb, same.rgb);  // already the size: as it is
}

// ---- As a user runs them ----

CommandRun run_attnlab(const std::string& args) { return run_attnlab_binary(ATTNLAB_BINARY, args, "cnn"); }

std::vector<std::vector<double>> csv_numbers(const std::string& text, bool header) {
  std::vector<std::vector<double>> rows;
  std::istringstream in(text);
  std::string line;
  if (header) std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::istringstream cells(line);
    std::string cell;
    bool first = true;
    while (std::getline(cells, cell, ',')) {
      if (header && first) {
        first = false;
        continue;
      }
      row.push_back(std::stod(cell));
    }
    rows.push_back(row);
  }
  return rows;
}

TEST(CnnCommandLine, VitCommandTakesAResnet) {
  const std::string m18 = "'" + model_path("resnet18_narrow").string() + "'";
  const std::string img = "'" + (kRoot / "tests/vit/data/safari_61x45.png").string() + "'";
  const CommandRun top = run_attnlab("vit --model " + m18 + " --image " + img + " --top 2");
  ASSERT_EQ(top.code, 0) << top.err;
  EXPECT_EQ(top.out.substr(0, top.out.find(',')), std::to_string(goldens()[1].json.at("top_class").get<int>()));
  // The receptive field of block 1 at its map's (8, 6): one CSV line per row of input pixels.
  const CommandRun field = run_attnlab("vit --model " + m18 + " --image " + img + " --receptive-field --layer 1 --query 8,6");
  ASSERT_EQ(field.code, 0) << field.err;
  const auto rows = csv_numbers(field.out, false);
  ASSERT_EQ(rows.size(), 45u);
  ASSERT_EQ(rows[0].size(), 61u);
  const auto& want = goldens()[1].json.at("receptive_field").at(0);
  ASSERT_EQ(want.at("col").get<int>(), 8);
  EXPECT_NEAR(rows[20][30], want.at("values").at(20 * 61 + 30).get<double>(), 1e-4 * (1 + std::abs(rows[20][30])));
  const CommandRun cam = run_attnlab("vit --model " + m18 + " --image " + img + " --relevance top");
  ASSERT_EQ(cam.code, 0) << cam.err;
  EXPECT_EQ(csv_numbers(cam.out, false).size(), 2u);  // Grad-CAM at the last block: its 2 × 2 map
  expect_one_line_error(run_attnlab("vit --model " + m18 + " --image " + img + " --distance"), "is a ResNet: it has no attention");
  expect_one_line_error(run_attnlab("vit --model " + m18 + " --image " + img + " --relevance top --method chefer"),
                        "a ResNet's --method is grad-cam (default) or input-gradient");
  expect_one_line_error(run_attnlab("vit --model " + m18 + " --image " + img + " --receptive-field --layer 8"), "outside this ResNet's blocks 0…7");
  // Where a ViT is needed (render --model), a ResNet is named as one, with where it opens.
  expect_one_line_error(run_attnlab("render --model " + m18 + " --image " + img + " --out '" + (temp_dir() / "r.png").string() + "'"),
                        "a ResNet (conv1, layer1.0, ...), not a ViT: set it beside a ViT");
}

TEST(CnnCommandLine, CkaTakesTheModelExactlyTwiceAndWritesTheMatrix) {
  const std::string m18 = "'" + model_path("resnet18_narrow").string() + "'", m50 = "'" + model_path("resnet50_narrow").string() + "'";
  const std::string images = "'" + (kData / "cka_images").string() + "'";
  const fs::path out = temp_dir() / ("cka-" + std::to_string(::getpid()) + ".csv");
  fs::remove(out);
  expect_one_line_error(run_attnlab("cka --model " + m18 + " --images " + images + " --out '" + out.string() + "'"),
                        "--model must be given exactly twice");
  expect_one_line_error(run_attnlab("cka --model " + m18 + " --model " + m18 + " --model " + m50 + " --images " + images + " --out '" +
                                    out.string() + "'"),
                        "--model must be given exactly twice");
  const CommandRun r = run_attnlab("cka --model " + m18 + " --model " + m50 + " --images " + images + " --out '" + out.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("cka: 8 images, exact"), std::string::npos) << r.err;
  const std::string csv = read_file(out);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "layer,layer1.0,layer1.1,layer1.2,layer2.0,layer2.1,layer2.2,layer2.3,layer3.0,layer3.1,"
                                           "layer3.2,layer3.3,layer3.4,layer3.5,layer4.0,layer4.1,layer4.2");
  const auto rows = csv_numbers(csv, true);
  const nlohmann::json golden = read_json(kData / "golden/cka_resnet18_narrow__resnet50_narrow.json");
  ASSERT_EQ(rows.size(), 8u);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < rows[i].size(); ++j) EXPECT_NEAR(rows[i][j], golden.at("cka").at(i).at(j).get<double>(), 1e-5);
  expect_one_line_error(run_attnlab("cka --model " + m18 + " --model " + m50 + " --images " + images + " --out '" + out.string() + "'"),
                        "exists (give --force to replace it)");
  fs::remove(out);
}

}  // namespace
}  // namespace attnlab

namespace attnlab {
namespace {

// The window's CNN view, drawn headless by `attnlab render --view vit-cnn` (app/gui/cnn/cnn_view.cpp).
TEST(CnnView, RenderDrawsBothFieldsAtMatchedDepthAndTheCkaTheCommandLineComputes) {
  const fs::path dir = temp_dir();
  const std::string vit = "'" + (kRoot / "assets/fashion_vit").string() + "' --image '" + (kRoot / "assets/safari.jpg").string() + "'";
  const fs::path field_png = dir / "field.png";
  const CommandRun field = run_attnlab("render --model " + vit + " --view vit-cnn --cnn random-resnet18 --layer 2 --query 3,3 --size 900x300 --out '" +
                                   field_png.string() + "'");
  ASSERT_EQ(field.code, 0) << field.err;
  const nlohmann::json f = read_json(dir / "field.json").at("cnn_drawn");
  EXPECT_EQ(f.at("show"), "field");
  EXPECT_EQ(f.at("layer"), 2);
  EXPECT_EQ(f.at("block"), 3);  // layer 2 of 6 is half way: block 3 of ResNet-18's 8 (layer2.1)
  EXPECT_EQ(f.at("block_name"), "layer2.1");
  EXPECT_EQ(f.at("vit_size"), nlohmann::json::array({28, 28}));
  const auto resnet = f.at("resnet_size");
  // The patch (3,3) is the photo's centre: the ResNet's position is the centre of its map too.
  const auto [mw, mh] = resnet_map_size(testing::random_resnet(false, {2, 2, 2, 2}, 64, 1000, 0), 3, resnet[0].get<int>(), resnet[1].get<int>());
  EXPECT_EQ(f.at("position"), nlohmann::json::array({mw / 2, mh / 2}));
  EXPECT_GT(f.at("resnet_reach").get<double>(), 0.0);

  // The CKA the view draws is the one `attnlab cka` writes for the same models and images.
  const CommandRun cka = run_attnlab("render --model " + vit + " --view vit-cnn --cnn random-resnet18 --cnn-show cka --cka-count 8 --size 900x300 --out '" +
                                 (dir / "cka.png").string() + "'");
  ASSERT_EQ(cka.code, 0) << cka.err;
  const nlohmann::json c = read_json(dir / "cka.json").at("cnn_drawn");
  ASSERT_EQ(c.at("show"), "cka");
  EXPECT_EQ(c.at("rows"), nlohmann::json::array({"L0", "L1", "L2", "L3", "L4", "L5"}));
  EXPECT_EQ(c.at("cols").size(), 8u);
  const fs::path r18 = testing::write_random_resnet(dir / "random_r18", false, {2, 2, 2, 2}, 64, 1000, 0);
  const CommandRun cli = run_attnlab("cka --model '" + (kRoot / "assets/fashion_vit").string() + "' --model '" + r18.string() +
                                 "' --images fashion --count 8 --out '" + (dir / "cka.csv").string() + "'");
  ASSERT_EQ(cli.code, 0) << cli.err;
  const auto rows = csv_numbers(read_file(dir / "cka.csv"), true);
  ASSERT_EQ(rows.size(), 6u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 8u);
    for (std::size_t j = 0; j < rows[i].size(); ++j) EXPECT_NEAR(c.at("cka").at(i).at(j).get<double>(), rows[i][j], 1e-5) << i << "," << j;
  }

  const CommandRun cam = run_attnlab("render --model " + vit + " --view vit-cnn --cnn random-resnet18 --cnn-show grad-cam --size 900x300 --out '" +
                                 (dir / "cam.png").string() + "'");
  ASSERT_EQ(cam.code, 0) << cam.err;
  const nlohmann::json g = read_json(dir / "cam.json").at("cnn_drawn");
  EXPECT_EQ(g.at("show"), "grad-cam");
  EXPECT_EQ(g.at("block"), 7);  // the last layer: the last block
  EXPECT_GE(g.at("class").get<int>(), 0);

  // One channel of the matched block's feature maps: the ResNet's own forward on the photo, as here.
  const CommandRun feat = run_attnlab("render --model " + vit + " --view vit-cnn --cnn random-resnet18 --cnn-show features --cnn-channel 5 "
                                      "--layer 0 --size 900x300 --out '" + (dir / "feat.png").string() + "'");
  ASSERT_EQ(feat.code, 0) << feat.err;
  const nlohmann::json fm = read_json(dir / "feat.json").at("cnn_drawn");
  EXPECT_EQ(fm.at("show"), "features");
  EXPECT_EQ(fm.at("block"), 0);  // layer 0 of 6: block round(8/6) − 1 = 0
  EXPECT_EQ(fm.at("channel"), 5);
  const ResnetModel r18m = testing::random_resnet(false, {2, 2, 2, 2}, 64, 1000, 0);
  const ResnetPass pass = resnet_forward(r18m, cnn_input(r18m.arch, load_image(kRoot / "assets/safari.jpg"), 224), kBudget);
  const FeatureMap& m0 = pass.blocks[0];
  EXPECT_EQ(fm.at("size"), nlohmann::json::array({m0.width, m0.height}));
  EXPECT_NEAR(fm.at("max").get<double>(), m0.v.row(5).maxCoeff(), 1e-4 * (1 + m0.v.row(5).maxCoeff()));
  EXPECT_NEAR(fm.at("sum").get<double>(), m0.v.row(5).sum(), 1e-4 * (1 + m0.v.row(5).sum()));

  expect_one_line_error(run_attnlab("render --model " + vit + " --view vit-cnn --out '" + (dir / "none.png").string() + "'"),
                        "--view vit-cnn needs --cnn");
  expect_one_line_error(run_attnlab("render --model " + vit + " --view vit-cnn --cnn '" + (dir / "missing.pth").string() + "' --out '" +
                                    (dir / "bad.png").string() + "'"),
                        "missing.pth");
}

}  // namespace
}  // namespace attnlab

namespace attnlab {
namespace {

TEST(CnnCommandLine, ExplainAveragesAResnetsReceptiveFieldOverAFolder) {
  const fs::path dir = temp_dir();
  const ResnetModel r18 = load_resnet(model_path("resnet18_narrow"));
  const fs::path images = kData / "cka_images";
  const CommandRun r = run_attnlab("explain --model '" + model_path("resnet18_narrow").string() + "' --images '" + images.string() +
                                   "' --receptive-field --layer 3 --out '" + (dir / "field.csv").string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto rows = csv_numbers(read_file(dir / "field.csv"), false);
  ASSERT_EQ(rows.size(), 48u);  // the model's input size (config.json: 48)
  ASSERT_EQ(rows[0].size(), 48u);
  // The mean of each crop's field at block 3's centre, computed here one by one.
  const auto [mw, mh] = resnet_map_size(r18, 3, 48, 48);
  Eigen::MatrixXd want = Eigen::MatrixXd::Zero(48, 48);
  const auto files = image_files_in(images);
  ASSERT_EQ(files.size(), 8u);
  for (const auto& f : files) want += resnet_receptive_field(r18, cnn_input(r18.arch, load_image(f)), 3, mw / 2, mh / 2, kBudget).cast<double>();
  want /= 8.0;
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 48; ++x) EXPECT_NEAR(rows[static_cast<std::size_t>(y)][static_cast<std::size_t>(x)], want(y, x), 1e-5 + 1e-4 * want(y, x));
  expect_one_line_error(run_attnlab("explain --model '" + model_path("resnet18_narrow").string() + "' --images '" + images.string() +
                                    "' --out '" + (dir / "t.csv").string() + "'"),
                        "is a ResNet: explain measures a ViT's relevance methods");
}

}  // namespace
}  // namespace attnlab

namespace attnlab {
namespace {

// Fig. 26.21 with a real convolution: the stem's kernel as the chapter's matrix view draws it,
// against the checkpoint's own conv1 and bn1 folded here by hand (w·γ/√(σ² + 1e-5)).
TEST(Resnet, StemKernelIsConv1WithItsBatchNormFolded) {
  const fs::path file = kData / "resnet50_narrow/model.safetensors";
  const SafetensorsFile raw = read_safetensors(file);
  const ResnetModel m = load_resnet(file);
  const Tensor& w = raw.tensors.at("conv1.weight");  // out × 3 × 7 × 7
  const auto& gamma = raw.tensors.at("bn1.weight").values;
  const auto& var = raw.tensors.at("bn1.running_var").values;
  const int out = static_cast<int>(w.shape[0]), k = static_cast<int>(w.shape[2]);
  ASSERT_EQ(m.stem.k, 7);
  std::vector<double> sum(static_cast<std::size_t>(k * k), 0.0);
  for (int o = 0; o < out; ++o) {
    const double scale = gamma[static_cast<std::size_t>(o)] / std::sqrt(var[static_cast<std::size_t>(o)] + 1e-5);
    for (int c = 0; c < 3; ++c)
      for (int t = 0; t < k * k; ++t)
        sum[static_cast<std::size_t>(t)] += std::abs(w.values[static_cast<std::size_t>((o * 3 + c) * k * k + t)] * scale);
  }
  const std::vector<float> all = resnet_stem_kernel(m, -1, 0);
  ASSERT_EQ(all.size(), sum.size());
  for (std::size_t t = 0; t < sum.size(); ++t) EXPECT_NEAR(all[t], sum[t], 1e-5 * sum[t]) << t;
  // One pair: output 5 from the green channel, signs kept.
  const std::vector<float> pair = resnet_stem_kernel(m, 5, 1);
  const double scale5 = gamma[5] / std::sqrt(var[5] + 1e-5);
  for (int t = 0; t < k * k; ++t)
    EXPECT_NEAR(pair[static_cast<std::size_t>(t)], w.values[static_cast<std::size_t>((5 * 3 + 1) * k * k + t)] * scale5, 1e-6);
  expect_error_containing([&] { resnet_stem_kernel(m, out, 0); }, "outside conv1's");
}

}  // namespace
}  // namespace attnlab
