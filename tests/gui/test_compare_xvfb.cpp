// View → Compare in the real window under Xvfb (issue 48): two random-weight ViTs side by side,
// one with 4 registers and a finer patch grid (real-size test checkpoints), on the safari photo
// at 1366×768. Each half's map must be that model's own row, computed here in-process from the
// same files; a click on either half moves both queries to the same place on the photo; F12's
// sidecar redrawn by `attnlab render --from` gives the same two maps; S swaps the models, and
// the pair is kept in settings.json.
#include <gtest/gtest.h>

#include "core/io/files.hpp"
#include "core/io/image.hpp"
#include "core/vit/vit_cpu.hpp"
#include "core/vit/vit_run.hpp"
#include "test_support.hpp"
#include "xvfb_session.hpp"

#include <cmath>
#include <fstream>

using namespace attnlab;
using namespace attnlab::testing;

namespace {

std::filesystem::path real_vit(const std::string& name) {
  return std::filesystem::path(ATTNLAB_SOURCE_DIR) / "tests" / "vit" / "data" / "real" / name;
}

void expect_values(const nlohmann::json& drawn, const std::vector<float>& expected, const std::string& side) {
  const auto values = drawn.at("values").get<std::vector<float>>();
  ASSERT_EQ(values.size(), expected.size()) << side;
  for (std::size_t j = 0; j < values.size(); ++j) EXPECT_NEAR(values[j], expected[j], 1e-6f) << side << " patch " << j;
}

bool both_drawn(const nlohmann::json& j) {
  return j.contains("vit_drawn") && j.contains("compare") && j.at("compare").contains("vit_drawn");
}

// The patch (col, row) of a side's grid under a point of its drawn map, from its vit_drawn's
// origin and cell size (window pixels).
std::pair<float, float> patch_centre(const nlohmann::json& drawn, int col, int row) {
  const float ox = drawn.at("origin")[0], oy = drawn.at("origin")[1], cw = drawn.at("cell")[0], ch = drawn.at("cell")[1];
  return {ox + (static_cast<float>(col) + 0.5f) * cw, oy + (static_cast<float>(row) + 0.5f) * ch};
}

}  // namespace

TEST(CompareUnderXvfb, TwoViTsSideBySideFollowOneClickAndExportThePair) {
  Xvfb x(1366, 768);
  const auto dir = temp_dir();
  const auto a_path = real_vit("timm_p16_f16"), b_path = real_vit("dinov2_p8_reg4_bf16");
  std::filesystem::create_directories(dir / "config" / "attnlab");
  write_file(dir / "config" / "attnlab" / "settings.json",
             nlohmann::json{{"compare", {{"model", b_path.string()}, {"match_layers", "depth"}}}}.dump());
  AppProcess app(x, dir, {"--model", a_path.string()});
  ASSERT_NE(app.wait_for_window(), 0u) << app.log();

  // The engines' side: each model on the photo at its trained size (224: A 14 x 14 patches of
  // 16, B 28 x 28 of 8 with CLS and 4 registers).
  VitCpuRunner cpu;
  const Image photo = load_image(asset("safari.jpg"));
  const VitRun ea(std::make_shared<const VitModel>(load_vit(a_path)), photo, 0, cpu, vit_memory_budget());
  const VitRun eb(std::make_shared<const VitModel>(load_vit(b_path)), photo, 0, cpu, vit_memory_budget());
  const SourceGrid ga = ea.grid(), gb = eb.grid();
  ASSERT_EQ(ga.cols * ea.patch(), gb.cols * eb.patch()) << "the test's click mapping assumes the same input size";
  const HeadChoice mean{-1, HeadFusion::Mean};

  const nlohmann::json start = export_until(app, both_drawn);
  ASSERT_TRUE(both_drawn(start)) << app.log();
  const auto& b_entry = start.at("compare");
  EXPECT_EQ(b_entry.at("model"), b_path.string());
  EXPECT_EQ(b_entry.at("vit_model_sha256"), file_sha256(b_path / "model.safetensors"));
  EXPECT_EQ(start.at("vit_drawn").at("sha256"), file_sha256(a_path / "model.safetensors"));
  EXPECT_EQ(b_entry.at("match_layers"), "depth");
  // CLS of the last layer in both (relative depth: the last is the last).
  EXPECT_EQ(b_entry.at("vit_drawn").at("token"), 0);
  EXPECT_EQ(b_entry.at("vit_drawn").at("layer"), eb.layers() - 1);
  expect_values(start.at("vit_drawn"), ea.patch_row(ea.layers() - 1, mean, 0), "A");
  expect_values(b_entry.at("vit_drawn"), eb.patch_row(eb.layers() - 1, mean, 0), "B");
  // B's half lies right of A's.
  EXPECT_GT(b_entry.at("vit_drawn").at("origin")[0].get<float>(), start.at("vit_drawn").at("origin")[0].get<float>() + 200);

  // A click on A's giraffe neck, patch (8, 2): B's query is the patch under its centre, (17, 5).
  const auto [ax, ay] = patch_centre(start.at("vit_drawn"), 8, 2);
  app.click(ax, ay);
  const int a_token = ga.prefix + 2 * ga.cols + 8, b_token = gb.prefix + 5 * gb.cols + 17;
  const nlohmann::json clicked = export_until(app, [&](const nlohmann::json& j) {
    return both_drawn(j) && j.at("vit_drawn").at("token") == a_token && j.at("compare").at("vit_drawn").at("token") == b_token;
  });
  ASSERT_TRUE(both_drawn(clicked));
  expect_values(clicked.at("vit_drawn"), ea.patch_row(ea.layers() - 1, mean, a_token), "A");
  expect_values(clicked.at("compare").at("vit_drawn"), eb.patch_row(eb.layers() - 1, mean, b_token), "B");

  // A click on B's zebra, patch (19, 19) of B: A's query follows to (9, 9), and B's stays.
  const auto [bx, by] = patch_centre(clicked.at("compare").at("vit_drawn"), 19, 19);
  app.click(bx, by);
  const int a_zebra = ga.prefix + 9 * ga.cols + 9, b_zebra = gb.prefix + 19 * gb.cols + 19;
  const auto [zebra, zebra_png] = [&] {
    (void)export_until(app, [&](const nlohmann::json& j) {
      return both_drawn(j) && j.at("vit_drawn").at("token") == a_zebra && j.at("compare").at("vit_drawn").at("token") == b_zebra;
    });
    return app.export_view();  // F12 of the settled pair
  }();
  ASSERT_TRUE(both_drawn(zebra)) << zebra.dump(1);
  expect_values(zebra.at("compare").at("vit_drawn"), eb.patch_row(eb.layers() - 1, mean, b_zebra), "B");

  // The export redrawn from its sidecar alone: the same pair of maps.
  auto sidecar = zebra_png;
  sidecar.replace_extension(".json");
  const auto again = dir / "again.png";
  const std::string log = (dir / "again.log").string();
  ASSERT_EQ(std::system(("EGL_LOG_LEVEL=fatal '" + std::string(ATTNLAB_BINARY) + "' render --from '" + sidecar.string() + "' --out '" +
                         again.string() + "' > '" + log + "' 2>&1")
                            .c_str()),
            0)
      << read_file(log);
  std::ifstream in(std::filesystem::path(again).replace_extension(".json"));
  const nlohmann::json redrawn = nlohmann::json::parse(in);
  ASSERT_TRUE(both_drawn(redrawn)) << redrawn.dump(1);
  expect_values(redrawn.at("vit_drawn"), zebra.at("vit_drawn").at("values").get<std::vector<float>>(), "A redrawn");
  expect_values(redrawn.at("compare").at("vit_drawn"), zebra.at("compare").at("vit_drawn").at("values").get<std::vector<float>>(),
                "B redrawn");

  // S swaps the two models: A is now the DINOv2 with registers, B the timm ViT.
  app.key("s");
  const nlohmann::json swapped = export_until(app, [&](const nlohmann::json& j) {
    return both_drawn(j) && j.at("vit_drawn").at("sha256") == file_sha256(b_path / "model.safetensors") &&
           j.at("compare").at("vit_model_sha256") == file_sha256(a_path / "model.safetensors");
  });
  ASSERT_TRUE(both_drawn(swapped));
  EXPECT_EQ(swapped.at("compare").at("model"), a_path.string());
  // Each keeps its place on the photo: the zebra's patch, now (19, 19) in A and (9, 9) in B.
  EXPECT_EQ(swapped.at("vit_drawn").at("token"), b_zebra);
  EXPECT_EQ(swapped.at("compare").at("vit_drawn").at("token"), a_zebra);

  // Kept for the next start.
  EXPECT_EQ(app.close(), 0) << app.log();
  std::ifstream saved_in(dir / "config" / "attnlab" / "settings.json");
  const nlohmann::json saved = nlohmann::json::parse(saved_in);
  EXPECT_EQ(saved.at("compare").at("model"), a_path.string());
  EXPECT_EQ(saved.at("vit").at("model"), b_path.string());
}
