// Model → Gallery in the real window under Xvfb, against the local hub (tests/hub/fake_hub.py):
// a download that stalls halfway shows its progress bar and is cancelled with the Cancel button
// (a banner, nothing loaded, only the `.incomplete` part in the cache); Download again resumes
// it with a Range request, checks it and opens the model, whose map is the checkpoint's; a
// repository the hub does not have gives one line and the loaded model stays.
#include <gtest/gtest.h>

#include "../hub/fake_hub_process.hpp"
#include "core/io/files.hpp"
#include "test_support.hpp"
#include "xvfb_session.hpp"

using namespace attnlab;
using namespace attnlab::testing;
namespace fs = std::filesystem;

namespace {

const std::string kDino = "timm/vit_small_patch16_224.dino", kDino8 = "timm/vit_small_patch8_224.dino";

fs::path vit_data(const std::string& name) { return fs::path(ATTNLAB_SOURCE_DIR) / "tests" / "vit" / "data" / name; }

// Opens Model → Gallery with real clicks; returns the sidecar of a frame showing the window.
nlohmann::json open_gallery(AppProcess& app) {
  const auto [start, png] = app.export_view();
  EXPECT_TRUE(click_menu_entry(app, start, "Model", "gallery")) << "the Model menu has no Gallery entry";
  return export_until(app, [](const nlohmann::json& j) { return j.at("widgets").contains("window:hub_gallery"); });
}

// Every file of a cached repository a reader could take for a complete blob (not `.incomplete`).
std::vector<fs::path> complete_blobs(const fs::path& cache, const std::string& folder) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cache / folder / "blobs", ec))
    if (e.path().extension() != ".incomplete") out.push_back(e.path());
  return out;
}

}  // namespace

TEST(AppUnderXvfb, TheGalleryDownloadsWithProgressAndCancelResumesAndOpensTheModel) {
  Xvfb x(1366, 768);
  const auto dir = temp_dir();
  FakeHubProcess hub(dir / "repos", dir / "requests.jsonl");
  const fs::path served = vit_data("timm_f32");
  hub.add_repo(kDino, served, {{"model.safetensors", "stall"}});  // half the weights, then nothing
  hub.add_repo(kDino8, served, {{"*", "404"}});
  const fs::path cache = dir / "cache";
  AppProcess app(x, dir, {},
                 {"HF_ENDPOINT=" + hub.endpoint(), "HF_HUB_CACHE=" + cache.string(),
                  "HF_HOME=" + (dir / "hf_home").string(), "ATTNLAB_HUB_STALL_SECONDS=120", "HF_HUB_OFFLINE=0"});
  ASSERT_NE(app.wait_for_window(), 0u) << app.log();

  // The gallery lists the model, not in the cache; Download starts; the bar shows while it stalls.
  const nlohmann::json gallery = open_gallery(app);
  ASSERT_TRUE(gallery.at("widgets").contains("hub:" + kDino)) << gallery.at("widgets").dump();
  EXPECT_FALSE(gallery.at("widgets").contains("hub_cached:" + kDino));
  const auto [dx, dy] = centre_of(gallery.at("widgets").at("hub:" + kDino));
  app.click(dx - 4, dy);  // the row's button is its last item
  const nlohmann::json loading =
      export_until(app, [](const nlohmann::json& j) { return j.at("widgets").contains("hub_cancel"); });
  EXPECT_TRUE(loading.at("widgets").contains("hub_progress"));
  EXPECT_FALSE(loading.contains("vit_drawn"));

  // Cancel: a banner, no model, and nothing in the cache a reader could take for the file.
  const auto [cx, cy] = centre_of(loading.at("widgets").at("hub_cancel"));
  app.click(cx, cy);
  const nlohmann::json cancelled = export_until(app, [](const nlohmann::json& j) {
    return j.at("banner").get<std::string>().find("download cancelled") != std::string::npos;
  });
  EXPECT_FALSE(cancelled.contains("vit_drawn"));
  EXPECT_FALSE(cancelled.at("widgets").contains("hub_cancel")) << "the pull is over";
  const std::string folder = "models--timm--vit_small_patch16_224.dino";
  for (const fs::path& p : complete_blobs(cache, folder))
    EXPECT_NE(read_file(p).size(), fs::file_size(served / "model.safetensors")) << p << " looks like the whole weights";

  // The hub behaves again: Download resumes the part (a Range request), checks it, opens it.
  hub.set_behaviour(kDino, nlohmann::json::object());
  const auto [again_x, again_y] = centre_of(cancelled.at("widgets").at("hub:" + kDino));
  app.click(again_x - 4, again_y);
  const nlohmann::json opened = export_until(app, [](const nlohmann::json& j) { return j.contains("vit_drawn"); });
  const std::string sha = file_sha256(served / "model.safetensors");
  EXPECT_EQ(opened.at("vit_drawn").at("sha256"), sha);
  EXPECT_EQ(opened.at("source"), "vit");
  EXPECT_FALSE(opened.at("widgets").contains("window:hub_gallery")) << "the gallery closes on the model it opened";
  EXPECT_EQ(opened.at("banner"), "") << "the cancelled try's error is over once the model opened";
  bool resumed = false;
  for (const auto& r : hub.requests())
    if (r.at("server") == "cdn" && r.at("method") == "GET" && r.at("range").is_string()) resumed = true;
  EXPECT_TRUE(resumed) << "the second download did not resume with a Range request";

  // Opened again, the gallery marks it in the cache; a repository the hub lacks gives one line,
  // and the model and its map stay.
  const nlohmann::json marked = open_gallery(app);
  EXPECT_TRUE(marked.at("widgets").contains("hub_cached:" + kDino));
  EXPECT_FALSE(marked.at("widgets").contains("hub_cached:" + kDino8));
  const auto [fx, fy] = centre_of(marked.at("widgets").at("hub:" + kDino8));
  app.click(fx - 4, fy);
  const nlohmann::json failed = export_until(app, [](const nlohmann::json& j) {
    return j.at("banner").get<std::string>().find("cannot download " + kDino8) != std::string::npos;
  });
  const std::string banner = failed.at("banner");
  EXPECT_EQ(banner.find('\n'), std::string::npos) << banner;
  EXPECT_EQ(failed.at("vit_drawn").at("sha256"), sha) << "the loaded model stays";
  EXPECT_TRUE(app.alive());
  EXPECT_EQ(app.close(), 0) << app.log();
}
