// The similarity (CKA) view in the real window under Xvfb (issue 29, item 5): the bundled
// Fashion-MNIST ViT opened, its lower panel's "Similarity (CKA)" tab clicked; the matrix the
// view draws (F12's sidecar, cka_drawn) must be core's vit_cka over the same 500 test images,
// computed here in-process, and again over the photo's tokens once that choice is clicked. The
// model being trained has the same view in the Train tab's lower panel.
#include <gtest/gtest.h>

#include "core/io/fashion_mnist.hpp"
#include "core/vit/vit.hpp"
#include "core/vit/vit_similarity.hpp"
#include "test_support.hpp"
#include "xvfb_session.hpp"


using namespace attnlab;
using namespace attnlab::testing;

namespace {

const char* const kFashionTest = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz";

bool cka_shown(const nlohmann::json& j, const std::string& examples_start) {
  return j.contains("cka_drawn") && j.at("cka_drawn").at("current").get<bool>() &&
         j.at("cka_drawn").at("examples").get<std::string>().rfind(examples_start, 0) == 0;
}

// The view's numbers are core's: the same function on the same images, one thread as the app
// runs it, so the same operations in the same order; JSON keeps doubles exactly. 1e-12 only
// for the last bit of the centring's sums.
void expect_matrix(const nlohmann::json& drawn, const Eigen::MatrixXd& want) {
  const auto& m = drawn.at("cka");
  ASSERT_EQ(m.size(), static_cast<std::size_t>(want.rows()));
  for (Eigen::Index i = 0; i < want.rows(); ++i) {
    ASSERT_EQ(m[static_cast<std::size_t>(i)].size(), static_cast<std::size_t>(want.cols()));
    for (Eigen::Index j = 0; j < want.cols(); ++j)
      EXPECT_NEAR(m[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)].get<double>(), want(i, j), 1e-12) << i << "," << j;
  }
}

}  // namespace

TEST(CkaUnderXvfb, TheViTsSimilarityTabIsCoresMatrixOverTestImagesAndOverThePhoto) {
  if (!std::filesystem::exists(kFashionTest)) GTEST_SKIP() << "dataset-fashion-mnist is not installed (./setup.sh installs it)";
  Xvfb x;
  const auto dir = temp_dir();
  const auto model_dir = asset("fashion_vit"), image = asset("fashion_vit/images/04_shirt.png");
  AppProcess app(x, dir, {image.string(), "--model", model_dir.string()});
  ASSERT_NE(app.wait_for_window(), 0u) << app.log();
  const nlohmann::json opened = export_until(app, [](const nlohmann::json& j) {
    return j.contains("vit_drawn") && j.at("widgets").contains("vit_tab:cka");
  });
  EXPECT_FALSE(opened.contains("cka_drawn")) << "the lower panel opens on the distance plot";
  click_widget(app, opened, "vit_tab:cka");
  const nlohmann::json tests = export_until(app, [](const nlohmann::json& j) { return cka_shown(j, "500 Fashion-MNIST"); });
  const auto& drawn = tests.at("cka_drawn");
  EXPECT_EQ(tests.at("vit").at("view"), "cka");
  EXPECT_EQ(drawn.at("rows"), nlohmann::json({"input", "L0", "L1", "L2", "L3", "L4", "L5"}));
  EXPECT_EQ(drawn.at("cols"), drawn.at("rows"));
  EXPECT_EQ(drawn.at("tokens"), 500 * 50);
  EXPECT_EQ(drawn.at("model_a"), "fashion_vit/model.safetensors");
  EXPECT_TRUE(tests.at("widgets").contains("cka_heatmap"));

  const VitModel model = load_vit(model_dir);
  const FashionMnistSplit split = load_fashion_mnist(false);
  std::vector<Image> images;
  for (int i = 0; i < 500; ++i) images.push_back(fashion_mnist_image(split, i));
  expect_matrix(drawn, vit_cka(model, model, images, 0, vit_memory_budget(), 1).cka);

  // The photo's tokens instead: 50 examples, another matrix.
  click_widget(app, tests, "cka_examples_photo");
  const nlohmann::json photo = export_until(app, [](const nlohmann::json& j) { return cka_shown(j, "the tokens of the photo"); });
  EXPECT_EQ(photo.at("cka").at("examples"), "photo");
  EXPECT_EQ(photo.at("cka_drawn").at("tokens"), 50);
  const std::vector<Image> one = {load_image(image)};
  expect_matrix(photo.at("cka_drawn"), vit_cka(model, model, one, 0, vit_memory_budget(), 1).cka);
  EXPECT_EQ(app.close(), 0) << app.log();
}

TEST(CkaUnderXvfb, TheModelBeingTrainedHasItsOwnSimilarityTab) {
  if (!std::filesystem::exists(kFashionTest)) GTEST_SKIP() << "dataset-fashion-mnist is not installed (./setup.sh installs it)";
  Xvfb x;
  const auto dir = temp_dir();
  AppProcess app(x, dir, {}, {"ATTNLAB_TRAIN_DEFAULTS=depth=2 dim=32 heads=2 batch=32 steps=100000"});
  ASSERT_NE(app.wait_for_window(), 0u) << app.log();
  start_run_a(app);
  const nlohmann::json trained = export_until(app, [](const nlohmann::json& j) {
    return j.contains("train_drawn") && j.at("train_drawn").at("step").get<int>() >= 20 && j.at("widgets").contains("train:pause");
  });
  click_widget(app, trained, "train:pause");
  const nlohmann::json paused = export_until(app, [](const nlohmann::json& j) {
    return j.contains("train_drawn") && !j.at("train_drawn").at("running").get<bool>() && j.at("widgets").contains("train_tab:cka");
  });
  click_widget(app, paused, "train_tab:cka");
  // Paused, the snapshot stays: its matrix is computed without a click.
  const nlohmann::json shown = export_until(app, [](const nlohmann::json& j) { return cka_shown(j, "500 Fashion-MNIST"); });
  const auto& d = shown.at("cka_drawn");
  EXPECT_EQ(d.at("rows"), nlohmann::json({"input", "L0", "L1"}));
  EXPECT_EQ(d.at("model_a").get<std::string>().rfind("being trained (run A): step ", 0), 0u) << d.at("model_a");
  EXPECT_EQ(d.at("tokens"), 500 * 17);  // patch 7: 16 patches and the class token
  const auto& m = d.at("cka");
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) {
      EXPECT_NEAR(m[i][j].get<double>(), m[j][i].get<double>(), 1e-12);
      EXPECT_GE(m[i][j].get<double>(), 0.0);
      EXPECT_LE(m[i][j].get<double>(), 1.0 + 1e-12);
      if (i == j) {
        EXPECT_NEAR(m[i][j].get<double>(), 1.0, 1e-12);
      }
    }
  // Run B (run A's settings, average pooling), trained a little and paused: the tab compares run
  // A's layers (rows) with run B's (columns) over the same examples.
  start_run_b_averaging(app, shown);
  const nlohmann::json b_trained = export_until(app, [](const nlohmann::json& j) {
    return j.contains("train_drawn") && j.at("train_drawn").at("run") == "B" && j.at("train_drawn").at("step").get<int>() >= 20 &&
           j.at("widgets").contains("train:pause");
  });
  click_widget(app, b_trained, "train:pause");
  const nlohmann::json b_paused = export_until(app, [](const nlohmann::json& j) {
    return j.contains("train_drawn") && !j.at("train_drawn").at("running").get<bool>() && !j.at("train_drawn").at("in_flight").get<bool>() &&
           j.at("widgets").contains("train:cka_runs");
  });
  click_widget(app, b_paused, "train:cka_runs");
  const nlohmann::json across = export_until(app, [](const nlohmann::json& j) {
    return cka_shown(j, "500 Fashion-MNIST") && j.at("cka_drawn").at("model_b").get<std::string>().rfind("being trained (run B)", 0) == 0;
  });
  const auto& ab = across.at("cka_drawn");
  EXPECT_EQ(ab.at("model_a").get<std::string>().rfind("being trained (run A)", 0), 0u) << ab.at("model_a");
  EXPECT_EQ(ab.at("cols"), nlohmann::json({"input", "L0", "L1"}));
  double off_one = 0.0;  // two models: their matching layers are alike, not the same
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t j = 0; j < 3; ++j) {
      EXPECT_GE(ab.at("cka")[i][j].get<double>(), 0.0);
      EXPECT_LE(ab.at("cka")[i][j].get<double>(), 1.0 + 1e-12);
    }
    off_one = std::max(off_one, 1.0 - ab.at("cka")[i][i].get<double>());
  }
  EXPECT_GT(off_one, 1e-4);
  EXPECT_EQ(app.close(), 0) << app.log();
}

// Over the memory budget (1 MiB here: 500 images' tokens need 134 MB) the job is refused with a
// banner of one line naming how many images fit: (1 MiB − the pass's 318 000 bytes) over
// 50 tokens × 64 × 7 representations × 12 bytes = 268 800 per image: 2. The photo's 50 tokens
// fit and are drawn.
TEST(CkaUnderXvfb, OverTheMemoryBudgetIsABannerAndThePhotosTokensStillFit) {
  if (!std::filesystem::exists(kFashionTest)) GTEST_SKIP() << "dataset-fashion-mnist is not installed (./setup.sh installs it)";
  Xvfb x;
  const auto dir = temp_dir();
  std::filesystem::create_directories(dir / "config" / "attnlab");
  write_file(dir / "config" / "attnlab" / "settings.json", R"({"vit": {"tab": 4}})");
  AppProcess app(x, dir, {asset("fashion_vit/images/04_shirt.png").string(), "--model", asset("fashion_vit").string()},
                 {"ATTNLAB_MEMORY_BUDGET_MB=1"});
  ASSERT_NE(app.wait_for_window(), 0u) << app.log();
  const nlohmann::json refused = export_until(app, [](const nlohmann::json& j) {
    return j.at("banner").get<std::string>().find("memory budget") != std::string::npos;
  });
  const std::string banner = refused.at("banner");
  EXPECT_NE(banner.find("CKA"), std::string::npos) << banner;
  EXPECT_NE(banner.find("at most 2 images fit"), std::string::npos) << banner;
  EXPECT_EQ(std::count(banner.begin(), banner.end(), '\n'), 0) << banner;
  EXPECT_FALSE(refused.contains("cka_drawn")) << "nothing was computed";
  click_widget(app, refused, "cka_examples_photo");
  const nlohmann::json photo = export_until(app, [](const nlohmann::json& j) { return cka_shown(j, "the tokens of the photo"); });
  EXPECT_EQ(photo.at("cka_drawn").at("tokens"), 50);
  EXPECT_TRUE(app.alive());
  EXPECT_EQ(app.close(), 0) << app.log();
}
