// The Train tab's second task in the real window under Xvfb (issue 29, item 7): a tiny ViT
// (ATTNLAB_TRAIN_DEFAULTS) learns to fill in masked patches of the window's photo (the safari
// photo, 64-pixel crops, 8 × 8 patches); its maps are of the whole photo, its loss on the fixed
// crops falls, the reconstruction is drawn, and the saved checkpoint (timm's ViT with a head on
// every token) opens as a ViT over the photo.
#include <gtest/gtest.h>

#include "core/io/files.hpp"
#include "test_support.hpp"
#include "xvfb_session.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>

using namespace attnlab;
using namespace attnlab::testing;

namespace {
double fixed_loss(const nlohmann::json& j) { return j.at("train_drawn").at("fixed_loss").get<double>(); }
std::int64_t step_of(const nlohmann::json& j) { return j.at("train_drawn").at("step").get<std::int64_t>(); }
}  // namespace

TEST(TrainUnderXvfb, MaskedPatchesOfThePhotoLearnSaveAndOpenAsViT) {
  Xvfb x;
  const auto dir = temp_dir();
  // A schedule of 600 steps: its warm-up (a tenth) is over by step 60, so the loss falls within
  // the first hundred steps, also in the sanitized tree's slow Debug build.
  AppProcess app(x, dir, {}, {"ATTNLAB_TRAIN_DEFAULTS=depth=1 dim=32 heads=2 batch=16 steps=600"});
  ASSERT_NE(app.wait_for_window(), 0u) << app.log();
  click_widget(app, app.export_view().first, "tab:train");
  const nlohmann::json panel = export_until(app, [](const nlohmann::json& j) { return j.at("widgets").contains("train:task_masked"); });
  click_widget(app, panel, "train:task_masked");
  const nlohmann::json masked = export_until(app, [](const nlohmann::json& j) {
    return j.at("widgets").contains("train:mask_ratio") && j.at("widgets").contains("train:start");
  });
  EXPECT_FALSE(masked.at("widgets").contains("train:pool_avg")) << "no pooling to choose: nothing is pooled";
  click_widget(app, masked, "train:start");

  const nlohmann::json first = export_until(app, [](const nlohmann::json& j) {
    return j.contains("train_drawn") && fixed_loss(j) > 0 && j.at("widgets").contains("train:recon_filled");
  });
  const auto& d0 = first.at("train_drawn");
  EXPECT_EQ(d0.at("task"), "masked-patches");
  EXPECT_EQ(d0.at("grid").at("cols"), 8) << "64-pixel crops of 8-pixel patches";
  EXPECT_EQ(d0.at("probe"), "the whole photo, safari.jpg, at 64 x 64 pixels");
  EXPECT_EQ(d0.at("test_accuracy"), -1.0);
  const double loss0 = fixed_loss(first);
  const std::int64_t step0 = step_of(first);

  // It learns: the loss on the same fixed crops and masks falls.
  const nlohmann::json later = export_until(app, [&](const nlohmann::json& j) {
    return j.contains("train_drawn") && step_of(j) >= step0 + 60 && fixed_loss(j) < 0.95 * loss0;
  }, 240);
  EXPECT_LT(fixed_loss(later), loss0);

  // The loaded ViT's distance view, on this run's snapshot (the lower panel's Distance tab).
  click_widget(app, later, "train_tab:distance");
  const auto [with_distance, png] = [&] {
    for (int n = 0; n < 60; ++n) {
      auto e = app.export_view(std::chrono::seconds(30), true);
      if (e.first.at("widgets").contains("vit_distance")) return e;
    }
    return app.export_view();
  }();
  EXPECT_TRUE(with_distance.at("widgets").contains("vit_distance")) << "the distance view of the run being trained";
  if (const char* shots = std::getenv("ATTNLAB_TEST_SHOTS")) std::filesystem::copy_file(png, std::filesystem::path(shots) / "masked-distance.png",
                                                                                       std::filesystem::copy_options::overwrite_existing);

  click_widget(app, with_distance, "train:pause");
  const nlohmann::json paused = export_until(app, [](const nlohmann::json& j) {
    return j.contains("train_drawn") && !j.at("train_drawn").at("in_flight").get<bool>() && j.at("widgets").contains("train:resume");
  });
  // F9: the shown run's map as CSV, its probe named with its own size (not the classifier's 28 x 28 grey).
  app.key("F9");
  const ExportedCsv csv = wait_for_csv(app.export_dir(), "attnlab-train-a-row-layer0-token0");
  EXPECT_NE(csv.header.find("# probe: the whole photo, safari.jpg, at 64 x 64 pixels\n"), std::string::npos) << csv.header;
  EXPECT_EQ(csv.header.find("28 x 28"), std::string::npos) << csv.header;
  EXPECT_EQ(csv.values().size(), 64u) << "the 8 x 8 patches' row";
  const auto folder = app.export_dir() / "trained-vit";
  click_widget(app, paused, "train:save");
  const nlohmann::json saved = export_until(app, [](const nlohmann::json& j) { return j.at("widgets").contains("train:open"); });
  const auto config = nlohmann::json::parse(read_file(folder / "config.json"));
  EXPECT_EQ(config.at("global_pool"), "");
  EXPECT_EQ(config.at("attnlab").at("task"), "masked-patches");
  EXPECT_EQ(config.at("label_names"), nlohmann::json::array());
  const std::string log = read_file(folder / "log.csv");
  EXPECT_EQ(log.substr(0, log.find('\n')), "step,loss,fixed_crops_loss,seconds");

  // Open as ViT: the checkpoint, no classifier, over the photo at its 64 pixels.
  const auto sha = file_sha256(folder / "model.safetensors");
  click_widget(app, saved, "train:open");
  const nlohmann::json opened = export_until(app, [&](const nlohmann::json& j) {
    return j.contains("vit_drawn") && j.at("vit_drawn").at("sha256") == sha;
  });
  EXPECT_EQ(opened.at("source"), "vit");
  EXPECT_EQ(opened.at("vit_drawn").at("grid").at("cols"), 8);
  EXPECT_EQ(app.close(), 0) << app.log();
}
