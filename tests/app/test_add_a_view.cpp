// docs/DEVELOPING.md's worked example, "Add a view in one file", compiled and run: the view below
// is the document's, word for word between the markers. It needs only rows of A, so it works on
// the hand-made heads and on a ViT alike; the test draws it on both and checks that it lists the
// source's own strongest keys.
#include "app/gui/maps/view.hpp"
#include "app/gui/sessions/hand_made_session.hpp"
#include "app/gui/sessions/vit_session.hpp"
#include "app/gui/state/scheduler.hpp"
#include "app/gui/window/headless.hpp"
#include "core/io/image.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <vector>

using namespace attnlab;
using namespace attnlab::app;
using namespace attnlab::testing;

namespace attnlab::app {
// --- docs/DEVELOPING.md: begin
// The query's five strongest keys, from any source: it needs only rows of A.
class TopKeysView final : public View {
 public:
  TopKeysView() : View(ViewText{"top-keys", "Top keys", "The query's strongest keys"}, kNeedRows) {}
  std::vector<int> listed;  // the keys listed in the last frame, strongest first

  void draw(ViewSource& source) override {
    const MainMap map = source.map.main_map(source.map.choice());  // the main map's row of A
    listed.resize(map.values.size());
    std::iota(listed.begin(), listed.end(), 0);
    const auto top = listed.begin() + std::min<std::ptrdiff_t>(5, std::ssize(listed));
    std::partial_sort(listed.begin(), top, listed.end(),
                      [&](int i, int j) { return map.values[i] > map.values[j]; });
    listed.erase(top, listed.end());
    for (const int j : listed) ImGui::Text("key %d: %s = %.4f", j, map.value_name.c_str(), map.values[j]);
  }
};

std::unique_ptr<View> make_top_keys_view() { return std::make_unique<TopKeysView>(); }
// --- docs/DEVELOPING.md: end
}  // namespace attnlab::app

namespace {

std::vector<int> drawn_top(ViewSource& source, Scheduler& scheduler, HandMadeSession* hand_made) {
  TopKeysView view;
  EXPECT_TRUE(view.works_on(source));
  HeadlessUi ui(800, 600);
  ui.render(
      [&] {
        scheduler.drain();
        if (hand_made) hand_made->begin_frame();
        ImGui::Begin("##top");
        view.draw(source);
        ImGui::End();
      },
      3, [&] { return hand_made && hand_made->rows_pending(); });
  return view.listed;
}

// The source's own row, strongest key first (ties by index), for the check.
std::vector<int> strongest(const std::vector<float>& row) {
  std::vector<int> order(row.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int i, int j) { return row[i] > row[j]; });
  order.resize(std::min<std::size_t>(5, order.size()));
  return order;
}

}  // namespace

TEST(AddAView, TheWorkedExampleListsEachSourcesStrongestKeys) {
  Scheduler scheduler{1};
  const Image photo = load_image(asset("safari.jpg"));
  {  // the hand-made heads
    AppState state;
    state.attention.patch = 32;
    HandMadeSession hand_made(scheduler);
    hand_made.set_image(photo, state.attention);
    HandMadeMapSource map(state, hand_made);
    ViewSource source{state, map, kHandMadeOffers, &hand_made, nullptr, nullptr, {}};
    const std::vector<int> listed = drawn_top(source, scheduler, &hand_made);
    const MainMap row = map.main_map(map.choice());
    ASSERT_EQ(listed.size(), 5u);
    for (std::size_t k = 0; k < listed.size(); ++k)
      EXPECT_FLOAT_EQ(row.values[static_cast<std::size_t>(listed[k])], row.values[static_cast<std::size_t>(strongest(row.values)[k])]) << k;
  }
  {  // a ViT
    AppState state;
    VitSession vit(scheduler, "vit");
    vit.open(std::filesystem::path(ATTNLAB_SOURCE_DIR) / "tests" / "vit" / "data" / "timm_f32", photo, 48);
    const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (!vit.run() && std::chrono::steady_clock::now() < until) {
      scheduler.wait(std::chrono::milliseconds(100));
      scheduler.drain();
      if (const auto e = vit.poll()) FAIL() << *e;
    }
    ASSERT_NE(vit.run(), nullptr);
    state.vit_resize = 48;
    VitMapSource map(state, vit);
    ViewSource source{state, map, kVitOffers, nullptr, &vit, &state.vit, [] {}};
    const std::vector<int> listed = drawn_top(source, scheduler, nullptr);
    const MainMap row = map.main_map(map.choice());
    ASSERT_EQ(listed.size(), 5u);
    for (std::size_t k = 0; k < listed.size(); ++k)
      EXPECT_FLOAT_EQ(row.values[static_cast<std::size_t>(listed[k])], row.values[static_cast<std::size_t>(strongest(row.values)[k])]) << k;
  }
}
