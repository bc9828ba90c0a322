// The document (the settings an export's sidecar saves and --from restores) through its one
// field table (app/gui/app_state.cpp): every field written is read back, under the same name,
// and a bad value is refused with its name while the state stays as it was. No window needed.
#include "app/gui/app_state.hpp"
#include "core/error.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

using namespace attnlab;
using namespace attnlab::app;

namespace {

// Every leaf of a JSON object under its dotted path ("vit.cell.col").
void leaves(const nlohmann::json& j, const std::string& path, std::map<std::string, nlohmann::json>& out) {
  if (j.is_object() && !j.empty()) {
    for (const auto& [k, v] : j.items()) leaves(v, path.empty() ? k : path + "." + k, out);
  } else {
    out[path] = j;
  }
}

// A state with every saved setting away from its default.
AppState changed() {
  AppState s;
  Settings& a = s.attention;
  s.image_path = "/photos/zebra.jpg";
  a.patch = 25;
  a.edge = EdgeMode::Pad;
  a.temperature = 0.25f;
  a.seed = 11;
  s.main_head = 3;
  s.query = {4, 9};
  s.query_pinned = true;
  s.pinned = {{1, 2}, {3, 4}};
  a.mask = {.kind = MaskKind::Window, .radius = 4, .ratio = 0.3f, .seed = 5, .painted = {7, 8}};
  a.pos = {.mode = PosMode::Concat, .B = 3.0f, .P = 5, .sincos = true, .lambda = 2.5f};
  a.custom.W_q[1] = 0.5f;
  a.custom.W_k[3] = -1.0f;
  s.colormap = Colormap::Kbgyw;
  s.normalization = Normalization::Log;
  s.opacity = 0.4f;
  s.show_grid = false;
  s.show_mask = false;
  s.zoom = 2.0f;
  s.pan = {10, -20};
  s.ui_scale = 1.5f;
  s.presentation = true;
  s.show_controls = s.show_heads = s.show_pinned = s.show_images = false;
  s.show_diagnostics = true;
  s.open_views = {{"step", true}};
  s.tour_step = 2;
  s.vit_source = true;
  s.model_path = "/models/dino";
  s.vit_layer = 4;
  s.vit_head = kVitHeadMax;
  s.vit_token = -1;
  s.vit_cell = {6, 7};
  s.vit_pinned = {{2, 2}};
  s.vit_tab = 3;
  s.vit_rollout = s.vit_masks = s.vit_norms = s.bilinear = true;
  s.vit_mass = 0.8f;
  s.vit_resize = 448;
  s.recent_models = {"/models/dino", "/models/deit"};
  s.export_dir = "/tmp/slides";
  s.export_map_only = true;
  return s;
}

TEST(Document, EveryFieldWrittenIsReadBackUnderTheSameName) {
  const nlohmann::json defaults = to_json(AppState{}), saved = to_json(changed());
  std::map<std::string, nlohmann::json> d, c;
  leaves(defaults, "", d);
  leaves(saved, "", c);
  EXPECT_GE(d.size(), 50u);
  for (const auto& [path, value] : d) {
    if (value.is_object()) {  // an empty map by default (views): filled in the changed state
      const auto inside = c.lower_bound(path + ".");
      EXPECT_TRUE(inside != c.end() && inside->first.starts_with(path + ".")) << path;
      continue;
    }
    ASSERT_TRUE(c.count(path)) << path;
    EXPECT_NE(c[path], value) << path << " kept its default: the test state must change every field";
  }
  AppState restored;  // from defaults, reading the saved document
  apply_json(saved, restored);
  EXPECT_EQ(to_json(restored), saved);
  EXPECT_EQ(restored.vit_cell, (Cell{6, 7}));
  EXPECT_EQ(restored.attention.mask.kind, MaskKind::Window);
  EXPECT_EQ(restored.colormap, Colormap::Kbgyw);
}

TEST(Document, ABadValueIsRefusedWithItsNameAndNothingChanges) {
  const AppState before = changed();
  const nlohmann::json bad[] = {
      {{"mask", {{"radius", "wide"}}}},     {{"edge", "diagonal"}},
      {{"display", {{"colormap", "rainbow"}}}}, {{"vit", {{"cell", {{"col", 1}}}}}},
      {{"temperature", -2.0}},              {{"patch", 1e40}},
  };
  const char* names[] = {"mask.radius", "edge", "rainbow", "vit.cell", "temperature", "patch"};
  for (size_t n = 0; n < std::size(bad); ++n) {
    AppState s = before;
    try {
      apply_json(bad[n], s);
      ADD_FAILURE() << bad[n].dump() << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(names[n]), std::string::npos) << e.what();
    }
    EXPECT_EQ(to_json(s), to_json(before)) << bad[n].dump();
  }
}

}  // namespace
