// Why did it decide? in the real window under Xvfb (issue 49): the bundled Fashion-MNIST model on
// a bag; each class of the Model panel's top 5 clicked in turn opens the Why? view on that
// class, and the map it draws (F12's sidecar, relevance_drawn) is core's Chefer relevance of that
// class, computed here in-process; the maps differ between classes; the faithfulness curves
// arrive; the window stays responsive while the gradients run (the Field view's job included).
// A second method drawn beside the first is that method's map; the switch puts the relevance
// on the main map.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/io/image.hpp"
#include "core/vit/relevance.hpp"
#include "core/vit/vit_cpu.hpp"
#include "test_support.hpp"
#include "xvfb_session.hpp"

using namespace attnlab;
using namespace attnlab::testing;

TEST(RelevanceUnderXvfb, EachClassOfTheTopFiveClickedShowsItsOwnRelevanceMap) {
  Xvfb x;
  const auto dir = temp_dir();
  const auto model_dir = asset("fashion_vit"), image = asset("fashion_vit/images/14_bag.png");
  AppProcess app(x, dir, {image.string(), "--model", model_dir.string()});
  ASSERT_NE(app.wait_for_window(), 0u) << app.log();
  const VitModel model = load_vit(model_dir);
  const VitInput input = vit_input(model, load_image(image));
  const VitPass pass = VitCpuRunner(1).run(model, input, vit_memory_budget());
  const auto top = vit_top_classes(pass.logits, 5);
  ASSERT_EQ(top.size(), 5u);
  ASSERT_EQ(model.arch.labels.at(static_cast<std::size_t>(top[0].first)), "Bag");
  // Clicked where the list is once the model is idle and lists this image's classes, Bag first:
  // while it runs, its progress bar above the list moves the rows down a line, and a run on
  // another image orders them otherwise (a click meant for one class chose another under ASan in
  // CI). (Only the first is checked: the others' order may differ from the CPU's in near ties.)
  const auto idle_with_top_five = [&](const nlohmann::json& j) {
    if (!j.contains("vit_drawn") || j.at("vit_drawn").at("busy").get<bool>()) return false;
    const nlohmann::json& w = j.at("widgets");
    const std::string first = "vit_top:" + std::to_string(top[0].first);
    for (const auto& entry : top)
      if (!w.contains("vit_top:" + std::to_string(entry.first))) return false;
    for (const auto& entry : top)
      if (w.at("vit_top:" + std::to_string(entry.first)).at(1).get<float>() < w.at(first).at(1).get<float>()) return false;
    return true;
  };
  nlohmann::json shown = export_until(app, idle_with_top_five);
  EXPECT_FALSE(shown.contains("relevance_drawn")) << "the lower panel opens on the distance plot";
  std::vector<std::vector<float>> maps;
  for (const auto& entry : top) {
    const int klass = entry.first;  // a plain variable: clang 14 captures no structured binding
    SCOPED_TRACE("class " + std::to_string(klass));
    // Under a sanitizer the list has moved a line between the sidecar and the click (a click meant
    // for Bag chose the row below in two CI runs): a click that did not choose the class is made
    // again where the class is drawn now (a click on the class chosen keeps it chosen).
    bool chosen = false;
    for (int attempt = 0; attempt < 3 && !chosen; ++attempt) {
      if (attempt > 0) shown = export_until(app, idle_with_top_five);
      click_widget(app, shown, "vit_top:" + std::to_string(klass));
      for (int i = 0; i < 20 && !chosen; ++i) {
        chosen = app.export_view().first.at("vit").at("relevance").value("class", "") == std::to_string(klass);
        if (!chosen) std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    }
    ASSERT_TRUE(chosen) << "three clicks on class " << klass << " did not choose it";
    shown = export_until(app, [&](const nlohmann::json& j) {
      return j.contains("relevance_drawn") && j.at("relevance_drawn").value("class", -1) == klass &&
             j.at("relevance_drawn").contains("deletion") && idle_with_top_five(j);
    });
    EXPECT_EQ(shown.at("vit").at("view"), "relevance");
    EXPECT_EQ(shown.at("vit").at("relevance").at("class"), std::to_string(klass));
    const nlohmann::json& drawn = shown.at("relevance_drawn");
    EXPECT_EQ(drawn.at("label"), model.arch.labels.at(static_cast<std::size_t>(klass)));
    EXPECT_EQ(drawn.at("method"), "chefer");
    const std::vector<float> want = vit_relevance(model, input, klass, RelevanceMethod::Chefer, vit_memory_budget());
    const auto got = drawn.at("map").get<std::vector<float>>();
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6f + 1e-5f * std::abs(want[i])) << i;
    EXPECT_TRUE(shown.at("widgets").contains("relevance_map"));
    EXPECT_TRUE(shown.at("widgets").contains("relevance_curves"));
    maps.push_back(got);
  }
  for (std::size_t a = 0; a < maps.size(); ++a)
    for (std::size_t b = a + 1; b < maps.size(); ++b) EXPECT_NE(maps[a], maps[b]) << "classes " << a << " and " << b << " drew the same map";
  // A second method beside the first (the combo, then its item): both maps, each its method's.
  click_widget(app, shown, "relevance_beside");
  shown = export_until(app, [](const nlohmann::json& j) { return j.at("widgets").contains("relevance_beside:rollout"); });
  click_widget(app, shown, "relevance_beside:rollout");
  shown = export_until(app, [](const nlohmann::json& j) {
    return j.contains("relevance_drawn") && j.at("relevance_drawn").contains("beside") && j.at("widgets").contains("relevance_map_beside");
  });
  EXPECT_EQ(shown.at("vit").at("relevance").at("beside"), "rollout");
  const int last = top[4].first;
  const nlohmann::json& two = shown.at("relevance_drawn");
  EXPECT_EQ(two.at("class"), last);
  EXPECT_EQ(two.at("method"), "chefer");
  EXPECT_EQ(two.at("beside").at("method"), "rollout");
  const std::vector<float> rollout = vit_relevance(model, input, last, RelevanceMethod::Rollout, vit_memory_budget());
  const auto got_rollout = two.at("beside").at("map").get<std::vector<float>>();
  ASSERT_EQ(got_rollout.size(), rollout.size());
  for (std::size_t i = 0; i < rollout.size(); ++i) EXPECT_NEAR(got_rollout[i], rollout[i], 1e-6f + 1e-5f * std::abs(rollout[i])) << i;
  EXPECT_EQ(two.at("map").get<std::vector<float>>(), maps.back()) << "the first method's map stays";
  // The same class's relevance on the main map (the view's switch), in place of the row.
  click_widget(app, shown, "vit.relevance.on_map");
  shown = export_until(app, [](const nlohmann::json& j) {
    return j.contains("vit_drawn") && j.at("vit_drawn").value("shows", "") == "relevance";
  });
  EXPECT_EQ(shown.at("vit").at("relevance").at("on_map"), true);
  const auto on_map = shown.at("vit_drawn").at("values").get<std::vector<float>>();
  EXPECT_EQ(on_map, maps.back()) << "the main map draws the Why? view's map of the same class and method";
  click_widget(app, shown, "vit.relevance.on_map");
  shown = export_until(app, [](const nlohmann::json& j) { return j.contains("vit_drawn") && j.at("vit_drawn").value("shows", "") == "row"; });
  // The receptive field of the query after the last layer, a job of its own.
  click_widget(app, shown, "vit_tab:erf");
  const nlohmann::json field = export_until(app, [](const nlohmann::json& j) { return j.contains("field_drawn"); });
  EXPECT_EQ(field.at("field_drawn").at("width"), 28);
  EXPECT_EQ(field.at("field_drawn").at("height"), 28);
  EXPECT_GT(field.at("field_drawn").at("sum").get<double>(), 0.0);
  EXPECT_EQ(app.close(), 0) << app.log();
}
