// The Train tab in the real window under Xvfb (issue 29, item 4): a tiny ViT (depth 1, D 32,
// ATTNLAB_TRAIN_DEFAULTS) trained from the panel on the scheduler while the window stays live;
// its maps start uniform (the CLS row's flatness at step 0) and focus as it learns; pause holds
// the step; the checkpoint is saved (the files of `attnlab train --out`), a second save into
// the same folder is refused with a banner, and "Open as ViT" opens it as a loaded ViT.
#include <gtest/gtest.h>

#include "core/files.hpp"
#include "test_support.hpp"
#include "xvfb_session.hpp"

#include <cstdlib>
#include <functional>
#include <thread>

using namespace attnlab;
using namespace attnlab::testing;

namespace {

double entropy_ratio(const nlohmann::json& j) { return j.at("train_drawn").at("flatness").at("entropy_ratio").get<double>(); }
std::int64_t step_of(const nlohmann::json& j) { return j.at("train_drawn").at("step").get<std::int64_t>(); }

}  // namespace

TEST(TrainUnderXvfb, TrainFromThePanelPauseSaveAndOpenAsViT) {
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed (./setup.sh installs it)";
  Xvfb x;
  const auto dir = temp_dir();
  AppProcess app(x, dir, {}, {"ATTNLAB_TRAIN_DEFAULTS=depth=1 dim=32 heads=2 batch=32 steps=100000"});
  ASSERT_NE(app.wait_for_window(), 0u) << app.log();
  const auto start = app.export_view().first;
  click_widget(app, start, "tab:train");
  const nlohmann::json panel = export_until(app, [](const nlohmann::json& j) {
    return j.at("source") == "train" && j.at("widgets").contains("train:start");
  });
  EXPECT_FALSE(panel.contains("train_drawn")) << "nothing is drawn before Start";
  click_widget(app, panel, "train:start");

  // Step 0's snapshot: attention of a fresh model is nearly uniform.
  const nlohmann::json first = export_until(app, [](const nlohmann::json& j) { return j.contains("train_drawn"); });
  const auto& d0 = first.at("train_drawn");
  EXPECT_EQ(d0.at("token"), 0) << "the CLS query";
  EXPECT_EQ(d0.at("layer"), 0) << "the last (only) layer";
  EXPECT_EQ(d0.at("grid").at("cols"), 4) << "patch 7 on 28 x 28";
  EXPECT_EQ(first.at("source"), "train");
  const std::int64_t step0 = step_of(first);
  const double flat0 = entropy_ratio(first);
  EXPECT_GT(flat0, 0.97) << "a fresh model's CLS row is nearly uniform";

  // It learns while the window answers: the step advances and the CLS row focuses.
  const nlohmann::json later = export_until(app, [&](const nlohmann::json& j) {
    return j.contains("train_drawn") && step_of(j) >= step0 + 200 && entropy_ratio(j) < flat0 - 0.02;
  }, 240);
  EXPECT_TRUE(later.at("train_drawn").at("running").get<bool>());
  EXPECT_GT(later.at("train_drawn").at("steps_per_second").get<double>(), 0.0);
  EXPECT_LT(entropy_ratio(later), flat0) << "the CLS row's flatness falls from step 0";

  // Pause: the step holds.
  click_widget(app, later, "train:pause");
  const nlohmann::json paused = export_until(app, [](const nlohmann::json& j) {
    return j.contains("train_drawn") && !j.at("train_drawn").at("running").get<bool>() && j.at("widgets").contains("train:resume");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const nlohmann::json still = export_until(app, [](const nlohmann::json& j) { return j.contains("train_drawn"); });
  EXPECT_EQ(step_of(still), step_of(paused)) << "no step while paused";

  // Save: the files of attnlab train --out, in the export folder's trained-vit.
  const auto folder = app.export_dir() / "trained-vit";
  click_widget(app, still, "train:save");
  const nlohmann::json saved = export_until(app, [](const nlohmann::json& j) { return j.at("widgets").contains("train:open"); });
  for (const char* f : {"model.safetensors", "config.json", "log.csv"}) EXPECT_TRUE(std::filesystem::exists(folder / f)) << f;
  const std::string log = read_file(folder / "log.csv");
  EXPECT_EQ(log.substr(0, log.find('\n')), "step,loss,train_accuracy,test_accuracy,seconds");

  // Again into the same folder: refused, one line.
  const auto sha = file_sha256(folder / "model.safetensors");
  click_widget(app, saved, "train:save");
  const nlohmann::json refused = export_until(app, [](const nlohmann::json& j) {
    return j.at("banner").get<std::string>().find("exists") != std::string::npos;
  });
  const std::string banner = refused.at("banner");
  EXPECT_EQ(std::count(banner.begin(), banner.end(), '\n'), 0) << banner;
  EXPECT_EQ(file_sha256(folder / "model.safetensors"), sha) << "never written over";

  // Open as ViT: the checkpoint becomes the loaded ViT, drawn as any.
  click_widget(app, refused, "train:open");
  const nlohmann::json opened = export_until(app, [&](const nlohmann::json& j) {
    return j.contains("vit_drawn") && j.at("vit_drawn").at("sha256") == sha;
  });
  EXPECT_EQ(opened.at("source"), "vit");
  EXPECT_EQ(opened.at("vit_drawn").at("grid").at("cols"), 4);
  EXPECT_TRUE(app.alive());
  EXPECT_EQ(app.close(), 0) << app.log();
}

// The README's pictures (docs/train-*.png): the default model trained from the panel, the
// window exported at step 0 and after a minute. Run by hand:
//   ATTNLAB_TRAIN_PICTURES=/tmp/pics build/tests/test_app --gtest_also_run_disabled_tests --gtest_filter='*TrainPictures*'
TEST(TrainUnderXvfb, DISABLED_TrainPictures) {
  const char* out = std::getenv("ATTNLAB_TRAIN_PICTURES");
  if (!out) GTEST_SKIP() << "set ATTNLAB_TRAIN_PICTURES to a folder";
  Xvfb x;
  const auto dir = temp_dir();
  AppProcess app(x, dir);
  ASSERT_NE(app.wait_for_window(), 0u) << app.log();
  const auto start = app.export_view().first;
  click_widget(app, start, "tab:train");
  const nlohmann::json panel = export_until(app, [](const nlohmann::json& j) { return j.at("widgets").contains("train:start"); });
  click_widget(app, panel, "train:start");
  const auto [first, first_png] = [&] {
    for (;;) {
      auto e = app.export_view(std::chrono::seconds(30), true);
      if (e.first.contains("train_drawn")) return e;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  }();
  std::filesystem::create_directories(out);
  std::filesystem::copy_file(first_png, std::filesystem::path(out) / "train-step0.png", std::filesystem::copy_options::overwrite_existing);
  std::this_thread::sleep_for(std::chrono::seconds(60));
  const auto [late, late_png] = app.export_view();
  std::filesystem::copy_file(late_png, std::filesystem::path(out) / "train-1min.png", std::filesystem::copy_options::overwrite_existing);
  std::printf("step 0: %s\nafter 1 min: %s\n", first.at("train_drawn").dump().substr(0, 600).c_str(),
              late.at("train_drawn").dump().substr(0, 600).c_str());
  // Longer (ATTNLAB_TRAIN_PICTURE_MINUTES, whole minutes): the distance plot as the heads part.
  const char* more = std::getenv("ATTNLAB_TRAIN_PICTURE_MINUTES");
  if (more && std::atoi(more) > 1) {
    std::this_thread::sleep_for(std::chrono::seconds(60 * (std::atoi(more) - 1)));
    const auto [last, last_png] = app.export_view();
    std::filesystem::copy_file(last_png, std::filesystem::path(out) / "train-later.png", std::filesystem::copy_options::overwrite_existing);
    std::printf("later: %s\nwidgets: %s\n", last.at("train_drawn").dump().substr(0, 600).c_str(),
                last.at("widgets").at("train:distance_plot").dump().c_str());
  }
  EXPECT_EQ(app.close(), 0) << app.log();
}
