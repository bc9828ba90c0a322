// View → Compare in the real window under Xvfb (issue 48): two random-weight ViTs side by side,
// one with 4 registers and a finer patch grid (real-size test checkpoints), on the safari photo
// at 1366×768. Each half's map must be that model's own row, computed here in-process from the
// same files; a click on either half moves both queries to the same place on the photo; each
// half's pixels are that model's single picture of the same state (`render --model`); F12's
// sidecar redrawn by `attnlab render --from` gives the same two maps; S swaps the models, and
// the pair is kept in settings.json.
#include <gtest/gtest.h>

#include "core/hand_made/reference.hpp"
#include "core/io/files.hpp"
#include "core/io/image.hpp"
#include "core/vit/vit_cpu.hpp"
#include "core/vit/vit_run.hpp"
#include "test_support.hpp"
#include "xvfb_session.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <tuple>

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

// Runs the app's command line; fails the test with its output when it does not exit 0.
void run_cli(const std::filesystem::path& dir, const std::string& args) {
  const std::string log = (dir / "cli.log").string();
  ASSERT_EQ(std::system(("EGL_LOG_LEVEL=fatal '" + std::string(ATTNLAB_BINARY) + "' " + args + " > '" + log + "' 2>&1").c_str()), 0)
      << args << "\n"
      << read_file(log);
}

// Each patch's colour at its centre in a half of the window's export (`window`, drawn as
// `drawn` says) against the same patch in `single`, that model's own picture drawn by `render
// --model` (its sidecar's vit_drawn `single_drawn`), the query's patch left out (its outline).
// Opaque grey maps: a patch's centre is exactly its texel.
void expect_same_patches(const Image& window, const nlohmann::json& drawn, const Image& single, const nlohmann::json& single_drawn,
                         const std::string& side) {
  const int cols = drawn.at("grid").at("cols"), rows = drawn.at("grid").at("rows"), prefix = drawn.at("grid").at("prefix");
  ASSERT_EQ(single_drawn.at("grid").at("cols").get<int>(), cols) << side;
  ASSERT_EQ(single_drawn.at("token").get<int>(), drawn.at("token").get<int>()) << side;
  int compared = 0, differing = 0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      if (prefix + r * cols + c == drawn.at("token").get<int>()) continue;
      const auto [wx, wy] = patch_centre(drawn, c, r);
      const auto [sx, sy] = patch_centre(single_drawn, c, r);
      float worst = 0;
      for (int ch = 0; ch < 3; ++ch)
        worst = std::max(worst, std::abs(window.at(static_cast<int>(wx), static_cast<int>(wy), ch) -
                                         single.at(static_cast<int>(sx), static_cast<int>(sy), ch)));
      ++compared;
      if (worst > 1.5f / 255.0f) {
        if (++differing <= 5) ADD_FAILURE() << side << " patch (" << c << "," << r << "): the window's colour differs from the single picture's by " << worst * 255 << "/255";
      }
    }
  EXPECT_EQ(differing, 0) << side << ": " << differing << " of " << compared << " patches differ";
  EXPECT_GT(compared, cols * rows - 2) << side;
}

}  // namespace

TEST(CompareUnderXvfb, TwoViTsSideBySideFollowOneClickAndExportThePair) {
  Xvfb x(1366, 768);
  const auto dir = temp_dir();
  const auto a_path = real_vit("timm_p16_f16"), b_path = real_vit("dinov2_p8_reg4_bf16");
  std::filesystem::create_directories(dir / "config" / "attnlab");
  write_file(dir / "config" / "attnlab" / "settings.json",
             nlohmann::json{{"compare", {{"model", b_path.string()}, {"match_layers", "depth"}}},
                            {"display", {{"colormap", "gray"}, {"opacity", 1.0}}}}
                 .dump());  // opaque grey maps: the pixel test reads each patch's colour back
  AppProcess app(x, dir, {"--model", a_path.string()});
  const unsigned long window = app.wait_for_window();
  ASSERT_NE(window, 0u) << app.log();

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
    const nlohmann::json settled = export_until(app, [&](const nlohmann::json& j) {
      return both_drawn(j) && j.at("vit_drawn").at("token") == a_zebra && j.at("compare").at("vit_drawn").at("token") == b_zebra;
    });
    // The pointer off the grids (just above A's map; the keyboard follows the pointer, so it
    // stays in the window): no tooltip over a patch.
    const auto& o = settled.at("vit_drawn").at("origin");
    app.xdotool("mousemove --window " + std::to_string(window) + " " + std::to_string(static_cast<int>(o[0].get<float>()) + 4) + " " +
                std::to_string(static_cast<int>(o[1].get<float>()) - 4));
    return app.export_view();  // F12 of the settled pair
  }();
  ASSERT_TRUE(both_drawn(zebra)) << zebra.dump(1);
  expect_values(zebra.at("compare").at("vit_drawn"), eb.patch_row(eb.layers() - 1, mean, b_zebra), "B");

  // Each half's pixels are that model's single picture of the same state: `render --model`
  // with the same layer, head and query (the zebra), one model at a time.
  const Image window_png = load_image(zebra_png);
  for (const auto& [side, path, drawn, query] :
       {std::tuple{"A", a_path, zebra.at("vit_drawn"), "9,9"}, std::tuple{"B", b_path, zebra.at("compare").at("vit_drawn"), "19,19"}}) {
    const auto single = dir / (std::string("single_") + side + ".png");
    run_cli(dir, "render --model '" + path.string() + "' --image '" + asset("safari.jpg").string() + "' --layer " +
                     std::to_string(drawn.at("layer").get<int>()) + " --head mean --query " + query +
                     " --colormap gray --opacity 1 --out '" + single.string() + "'");
    std::ifstream single_in(std::filesystem::path(single).replace_extension(".json"));
    const nlohmann::json single_json = nlohmann::json::parse(single_in);
    expect_same_patches(window_png, drawn, load_image(single), single_json.at("vit_drawn"), side);
  }

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

// A projector: 1024×768, presentation mode (F5), UI scale 1 and 2, one colour scale and one
// each. The two maps share the window's width, each at least 40 % of it: the colour bars lie
// under the maps (one under both for one scale), not beside each, where they took half of
// each map's room.
TEST(CompareUnderXvfb, PresentationModeOnAProjectorGivesEachMapNearlyHalfTheWidth) {
  Xvfb x(1024, 768);
  for (const double scale : {1.0, 2.0})
    for (const bool one_scale : {false, true}) {
      const auto dir = temp_dir();
      std::filesystem::create_directories(dir / "config" / "attnlab");
      write_file(dir / "config" / "attnlab" / "settings.json",
                 nlohmann::json{{"compare", {{"model", real_vit("dinov2_p8_reg4_bf16").string()}, {"one_scale", one_scale}}},
                                {"classroom", {{"ui_scale", scale}}}}
                     .dump());
      AppProcess app(x, dir, {"--model", real_vit("timm_p16_f16").string()});
      ASSERT_NE(app.wait_for_window(), 0u) << app.log();
      ASSERT_TRUE(both_drawn(export_until(app, both_drawn))) << app.log();
      app.key("F5");
      const std::string what = "UI scale " + std::to_string(scale) + (one_scale ? ", one scale" : ", a scale each");
      const nlohmann::json shown = export_until(app, [](const nlohmann::json& j) {
        return both_drawn(j) && j.at("classroom").at("presentation").get<bool>();
      });
      ASSERT_TRUE(both_drawn(shown)) << what << "\n" << app.log();
      const nlohmann::json& a = shown.at("vit_drawn");
      const nlohmann::json& b = shown.at("compare").at("vit_drawn");
      const float a_width = a.at("cell")[0].get<float>() * a.at("grid").at("cols").get<float>();
      const float b_width = b.at("cell")[0].get<float>() * b.at("grid").at("cols").get<float>();
      EXPECT_GE(a_width, 0.4f * 1024) << what;
      EXPECT_GE(b_width, 0.4f * 1024) << what;
      EXPECT_GE(b.at("origin")[0].get<float>(), a.at("origin")[0].get<float>() + a_width) << what << ": side by side";
      EXPECT_LE(b.at("origin")[0].get<float>() + b_width, 1024.0f) << what;
      EXPECT_EQ(b.at("scale").at("shared").get<bool>(), one_scale) << what;
      EXPECT_EQ(app.close(), 0) << app.log();
    }
}

// B the hand-made heads (View > Compare > "B = the hand-made heads"): the chapter's six heads on
// the same photo beside a ViT. A click on the ViT's giraffe moves B's query to the hand-made
// patch under that place on the photo, and B's row is the CPU reference's; a click on B moves
// A's query back (A keeps its layer and head); S does not swap (A is always a model).
TEST(CompareUnderXvfb, TheHandMadeHeadsBesideAViTFollowTheSameClick) {
  Xvfb x(1366, 768);
  const auto dir = temp_dir();
  const auto a_path = real_vit("timm_p16_f16");
  std::filesystem::create_directories(dir / "config" / "attnlab");
  write_file(dir / "config" / "attnlab" / "settings.json", nlohmann::json{{"compare", {{"model", "hand-made"}}}}.dump());
  AppProcess app(x, dir, {"--model", a_path.string()});
  ASSERT_NE(app.wait_for_window(), 0u) << app.log();
  auto hand_made_drawn = [](const nlohmann::json& j) {
    return j.contains("vit_drawn") && j.contains("compare") && j.at("compare").contains("hand_made_drawn");
  };
  const nlohmann::json start = export_until(app, hand_made_drawn);
  ASSERT_TRUE(hand_made_drawn(start)) << app.log();
  EXPECT_EQ(start.at("compare").at("model"), "hand-made");
  const Image photo = load_image(asset("safari.jpg"));
  const Reference ref(photo, Settings{});  // the hand-made heads at the default K = 16
  const PatchGrid& g = ref.grid();
  const nlohmann::json& b0 = start.at("compare").at("hand_made_drawn");
  EXPECT_EQ(b0.at("grid").at("cols").get<int>(), g.cols);
  EXPECT_EQ(b0.at("grid").at("rows").get<int>(), g.rows);

  // A click on A's giraffe neck, patch (8, 2) of the 14 x 14 grid over the photo scaled to 224:
  // its centre on the photo, (8.5, 2.5) * 16 * 500 / 224, lies in hand-made patch (18, 5).
  const int a_cols = start.at("vit_drawn").at("grid").at("cols"), a_prefix = start.at("vit_drawn").at("grid").at("prefix");
  const double photo_per_input = static_cast<double>(std::min(photo.width, photo.height)) / 224.0;
  const int b_col = static_cast<int>(std::floor(8.5 * 16 * photo_per_input / g.K)), b_row = static_cast<int>(std::floor(2.5 * 16 * photo_per_input / g.K));
  ASSERT_EQ(b_col, 18);
  ASSERT_EQ(b_row, 5);
  const auto [ax, ay] = patch_centre(start.at("vit_drawn"), 8, 2);
  app.click(ax, ay);
  const int a_token = a_prefix + 2 * a_cols + 8, b_token = g.index(b_col, b_row);
  const nlohmann::json clicked = export_until(app, [&](const nlohmann::json& j) {
    return hand_made_drawn(j) && j.at("vit_drawn").at("token") == a_token && j.at("compare").at("hand_made_drawn").at("token") == b_token &&
           j.at("compare").at("hand_made_drawn").at("values_of") == b_token;
  });
  ASSERT_TRUE(hand_made_drawn(clicked)) << app.log();
  const nlohmann::json& b = clicked.at("compare").at("hand_made_drawn");
  const auto values = b.at("values").get<std::vector<float>>();
  const auto want = ref.row(b.at("head").get<int>(), b_token).weights;
  ASSERT_EQ(values.size(), want.size());
  for (std::size_t j = 0; j < values.size(); ++j) EXPECT_NEAR(values[j], want[j], 1e-5f) << "key " << j;
  const int a_layer = clicked.at("vit_drawn").at("layer");
  const nlohmann::json a_head = clicked.at("vit_drawn").at("head");

  // A click on B's zebra, hand-made patch (20, 18): A's query moves to the ViT patch there,
  // (20.5, 18.5) * 16 * 224 / 500 / 16 = (9, 8); A's layer and head stay.
  const auto [bx, by] = patch_centre(b, 20, 18);
  app.click(bx, by);
  const int a_zebra = a_prefix + 8 * a_cols + 9;
  const nlohmann::json zebra = export_until(app, [&](const nlohmann::json& j) {
    return hand_made_drawn(j) && j.at("vit_drawn").at("token") == a_zebra && j.at("compare").at("hand_made_drawn").at("token") == g.index(20, 18);
  });
  ASSERT_TRUE(hand_made_drawn(zebra)) << app.log();
  EXPECT_EQ(zebra.at("vit_drawn").at("layer"), a_layer);
  EXPECT_EQ(zebra.at("vit_drawn").at("head"), a_head);

  // F12 of the pair, redrawn by `render --from`: B on the patch it was clicked on (not the one
  // under A's coarser patch's centre, (21, 18)), the same rows.
  const auto [exported, exported_png] = app.export_view();
  ASSERT_EQ(exported.at("compare").at("hand_made_drawn").at("token"), g.index(20, 18));
  auto sidecar = exported_png;
  sidecar.replace_extension(".json");
  const auto again = dir / "again.png";
  run_cli(dir, "render --from '" + sidecar.string() + "' --out '" + again.string() + "'");
  std::ifstream in(std::filesystem::path(again).replace_extension(".json"));
  const nlohmann::json redrawn = nlohmann::json::parse(in);
  ASSERT_TRUE(hand_made_drawn(redrawn)) << redrawn.dump(1);
  EXPECT_EQ(redrawn.at("compare").at("hand_made_drawn").at("token"), g.index(20, 18));
  EXPECT_EQ(redrawn.at("vit_drawn").at("token"), a_zebra);
  expect_values(redrawn.at("compare").at("hand_made_drawn"),
                exported.at("compare").at("hand_made_drawn").at("values").get<std::vector<float>>(), "B redrawn");

  // S: nothing to swap with the hand-made heads; both halves stay.
  app.key("s");
  const nlohmann::json after = export_until(app, hand_made_drawn);
  EXPECT_EQ(after.at("vit_drawn").at("sha256"), file_sha256(a_path / "model.safetensors"));
  EXPECT_EQ(after.at("compare").at("model"), "hand-made");
  EXPECT_EQ(app.close(), 0) << app.log();
}
