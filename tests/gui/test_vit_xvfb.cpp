// A real ViT in the real window under Xvfb: a random-weight test checkpoint dropped on the
// window (XDND, as a file manager sends it), a patch clicked, layer and head changed with real
// keys; the map drawn must be the engine's row, computed here in-process from the same files.
// A hostile checkpoint dropped next leaves the model and its map as they were.
#include <gtest/gtest.h>

#include "core/io/files.hpp"
#include "core/io/image.hpp"
#include "core/vit/vit_cpu.hpp"
#include "core/vit/vit_run.hpp"
#include "test_support.hpp"
#include "xdnd_drop.hpp"
#include "xvfb_session.hpp"

#include <fstream>
#include <sstream>
#include <thread>

using namespace attnlab;
using namespace attnlab::testing;

namespace {

std::filesystem::path vit_data(const std::string& name) {
  return std::filesystem::path(ATTNLAB_SOURCE_DIR) / "tests" / "vit" / "data" / name;
}

// Clicks the text field of an InputInt recorded in a sidecar's "widgets" (the recorded group
// holds the field, its −/+ buttons and its label: the field is at its left).
void click_number_field(AppProcess& app, const nlohmann::json& sidecar, const std::string& widget) {
  const auto r = sidecar.at("widgets").at(widget);
  app.click(r[0].get<float>() + 12.0f, r[1].get<float>() + r[3].get<float>() * 0.5f);
}

void expect_row(const nlohmann::json& drawn, const std::vector<float>& engine) {
  const auto values = drawn.at("values").get<std::vector<float>>();
  ASSERT_EQ(values.size(), engine.size());
  for (std::size_t j = 0; j < values.size(); ++j) EXPECT_NEAR(values[j], engine[j], 1e-6f) << "patch " << j;
}

// The engine's side of a test: the checkpoint in `folder` on the safari photo at the model's
// trained size, on the CPU (the window's map must show its rows).
VitRun engine_on_safari(const std::filesystem::path& folder) {
  VitCpuRunner cpu;
  return VitRun(std::make_shared<const VitModel>(load_vit(folder)), load_image(asset("safari.jpg")), 0, cpu, vit_memory_budget());
}

}  // namespace

TEST(AppUnderXvfb, DroppedViTShowsTheEnginesRowsForClickedPatchLayerAndHead) {
  Xvfb x;
  const auto dir = temp_dir();
  AppProcess app(x, dir);
  const unsigned long window = app.wait_for_window();
  ASSERT_NE(window, 0u) << app.log();
  const auto [start, start_png] = app.export_view();
  EXPECT_FALSE(start.contains("vit_drawn")) << "the hand-made heads are drawn first";
  const int w = start.at("window").at("width").get<int>(), h = start.at("window").at("height").get<int>();

  // The engine's side: the same checkpoint on the same photo, at the model's trained size.
  const auto folder = vit_data("timm_f32");
  const VitRun engine = engine_on_safari(folder);
  const SourceGrid g = engine.grid();
  const int L = engine.layers();

  ASSERT_TRUE(xdnd_drop(x.display(), window, folder, w / 2, h / 2));
  const nlohmann::json opened = export_until(app, [](const nlohmann::json& j) { return j.contains("vit_drawn"); });
  const auto& cls = opened.at("vit_drawn");
  EXPECT_EQ(cls.at("sha256").get<std::string>(), file_sha256(folder / "model.safetensors"));
  EXPECT_EQ(cls.at("layer"), L - 1) << "a model opens on its last layer";
  EXPECT_EQ(cls.at("token"), 0) << "and the CLS query";
  EXPECT_EQ(cls.at("head_label"), "mean of heads");
  expect_row(cls, engine.patch_row(L - 1, HeadChoice{-1, HeadFusion::Mean}, 0));
  EXPECT_EQ(opened.at("source"), "vit");

  // Click patch (2,1) of the ViT's grid, then PgUp (one layer down) and key 1 (head 1: heads count from 0).
  const float ox = cls.at("origin")[0], oy = cls.at("origin")[1], cw = cls.at("cell")[0], ch = cls.at("cell")[1];
  app.click(ox + 2.5f * cw, oy + 1.5f * ch);
  app.key("Prior");
  app.key("1");
  const int token = g.prefix + 1 * g.cols + 2;
  const nlohmann::json picked = export_until(app, [&](const nlohmann::json& j) {
    if (!j.contains("vit_drawn")) return false;
    const auto& d = j.at("vit_drawn");
    return d.at("token") == token && d.at("layer") == L - 2 && d.at("head") == 1;
  });
  expect_row(picked.at("vit_drawn"), engine.patch_row(L - 2, HeadChoice{1, HeadFusion::Mean}, token));
  const float share = picked.at("vit_drawn").at("prefix_share");
  EXPECT_NEAR(share, engine.prefix_share(L - 2, HeadChoice{1, HeadFusion::Mean}, token), 1e-6f);

  // P pins the patch query and shows the pinned queries' tab (the tab drawn in the frame of the
  // key press once took the request back: the pin was made, the tab never showed).
  app.key("p");
  const nlohmann::json pinned = export_until(app, [](const nlohmann::json& j) { return j.at("vit").at("view") == "pinned"; });
  EXPECT_EQ(pinned.at("vit").at("pins"), (nlohmann::json::array({{{"col", 2}, {"row", 1}}})));

  // PgDn twice stops at the last layer; R shows the rollout up to it.
  app.key("Next");
  app.key("Next");
  app.key("r");
  const nlohmann::json rolled = export_until(app, [&](const nlohmann::json& j) {
    if (!j.contains("vit_drawn")) return false;
    const auto& d = j.at("vit_drawn");
    return d.at("shows") == "rollout" && d.at("layer") == L - 1;
  });
  expect_row(rolled.at("vit_drawn"), engine.rollout_row(L - 1, HeadFusion::Mean, token));

  // F9: the rollout as CSV, its header naming the model's SHA-256 and the query.
  app.key("F9");
  const ExportedCsv exported = wait_for_csv(app.export_dir(), "attnlab-vit-rollout-layer");
  const std::string& header = exported.header;
  const std::vector<float> from_csv = exported.values();
  EXPECT_NE(header.find(cls.at("sha256").get<std::string>()), std::string::npos) << header;
  EXPECT_NE(header.find("(token " + std::to_string(token) + ")"), std::string::npos) << header;
  EXPECT_NE(header.find("# layer: " + std::to_string(L - 1) + " (from 0)\n"), std::string::npos)
      << "the CSV counts layers from 0, as the sidecar and the command line:\n" << header;
  const auto rollout = engine.rollout_row(L - 1, HeadFusion::Mean, token);
  ASSERT_EQ(from_csv.size(), rollout.size());
  for (std::size_t j = 0; j < rollout.size(); ++j) EXPECT_NEAR(from_csv[j], rollout[j], 1e-6f) << "patch " << j;

  // A hostile checkpoint (a header length far past the file's end) dropped on the window: a
  // banner, and the model and its map stay.
  write_file(dir / "broken.safetensors", std::string("\xff\xff\xff\xff\xff\xff\x00\x00{}", 10));
  ASSERT_TRUE(xdnd_drop(x.display(), window, dir / "broken.safetensors", w / 2, h / 2));
  const nlohmann::json kept = export_until(app, [](const nlohmann::json& j) {
    return j.at("banner").get<std::string>().find("cannot open the model") != std::string::npos;
  });
  EXPECT_NE(kept.at("banner").get<std::string>().find("broken.safetensors"), std::string::npos) << kept.at("banner");
  EXPECT_EQ(kept.at("vit_drawn").at("sha256"), cls.at("sha256"));
  expect_row(kept.at("vit_drawn"), engine.rollout_row(L - 1, HeadFusion::Mean, token));
  EXPECT_TRUE(app.alive());
  EXPECT_EQ(app.close(), 0) << app.log();
}

// The ViT's input enlarged past the memory budget (ATTNLAB_MEMORY_BUDGET_MB) from the model
// panel: a banner naming a size that fits, the previous map stays; then Diagnostics switches
// the runner to the GPU engine, and the sidecar says the GPU ran, with the same row.
TEST(AppUnderXvfb, AViTInputOverTheMemoryBudgetIsABannerAndDiagnosticsSwitchesTheRunner) {
  Xvfb x;
  const auto dir = temp_dir();
  // Diagnostics open from the start (a remembered setting), so its runner switch can be clicked.
  std::filesystem::create_directories(dir / "config" / "attnlab");
  write_file(dir / "config" / "attnlab" / "settings.json", R"({"classroom": {"panels": {"diagnostics": true}}})");
  AppProcess app(x, dir, {}, {"ATTNLAB_MEMORY_BUDGET_MB=1"});
  const unsigned long window = app.wait_for_window();
  ASSERT_NE(window, 0u) << app.log();
  const auto [start, start_png] = app.export_view();
  const int w = start.at("window").at("width").get<int>(), h = start.at("window").at("height").get<int>();
  const auto folder = vit_data("timm_f32");
  const VitRun engine = engine_on_safari(folder);
  const int L = engine.layers();

  ASSERT_TRUE(xdnd_drop(x.display(), window, folder, w / 2, h / 2));
  // The model tab comes up the frame after the first map.
  const nlohmann::json opened =
      export_until(app, [](const nlohmann::json& j) { return j.contains("vit_drawn") && j.at("widgets").contains("vit_resize"); });
  const auto& first = opened.at("vit_drawn");
  EXPECT_EQ(first.at("backend"), "cpu") << first.at("backend_why");  // auto on llvmpipe
  expect_row(first, engine.patch_row(L - 1, HeadChoice{-1, HeadFusion::Mean}, 0));

  // 3000 px on the short side: 8 px patches give 140 000 tokens, far over 1 MiB.
  click_number_field(app, opened, "vit_resize");
  app.key("ctrl+a");
  app.xdotool("type --delay 20 '3000'");
  app.key("Return");
  const nlohmann::json refused = export_until(app, [](const nlohmann::json& j) {
    return j.at("banner").get<std::string>().find("memory budget") != std::string::npos;
  });
  const std::string banner = refused.at("banner");
  EXPECT_NE(banner.find("use --resize "), std::string::npos) << banner;
  EXPECT_EQ(std::count(banner.begin(), banner.end(), '\n'), 0) << banner;
  EXPECT_EQ(refused.at("vit_drawn").at("grid"), first.at("grid")) << "the previous input stays";
  expect_row(refused.at("vit_drawn"), engine.patch_row(L - 1, HeadChoice{-1, HeadFusion::Mean}, 0));
  EXPECT_TRUE(app.alive());

  // Back to the model's own size, then the GPU engine from Diagnostics: it runs again there.
  click_number_field(app, refused, "vit_resize");
  app.key("ctrl+a");
  app.xdotool("type --delay 20 '0'");
  app.key("Return");
  ASSERT_TRUE(refused.at("widgets").contains("diagnostics:vit_backend:gpu")) << "Diagnostics is not open";
  click_widget(app, refused, "diagnostics:vit_backend:gpu");
  const nlohmann::json on_gpu = export_until(app, [](const nlohmann::json& j) {
    return j.contains("vit_drawn") && j.at("vit_drawn").at("backend") == "gpu";
  });
  const auto& drawn = on_gpu.at("vit_drawn");
  EXPECT_EQ(drawn.at("backend_why").get<std::string>().rfind("gpu: asked for", 0), 0u) << drawn.at("backend_why");
  EXPECT_EQ(on_gpu.at("vit").at("backend"), "gpu");
  const auto values = drawn.at("values").get<std::vector<float>>();
  const auto row = engine.patch_row(L - 1, HeadChoice{-1, HeadFusion::Mean}, 0);
  ASSERT_EQ(values.size(), row.size());
  for (std::size_t j = 0; j < row.size(); ++j) EXPECT_NEAR(values[j], row[j], 2e-4 + 1e-3 * row[j]) << "patch " << j;
  EXPECT_EQ(app.close(), 0) << app.log();
}
