// Views × sources (issue 48, SPEC §12): every view that needs only rows of A (the main map, the
// layers × heads grid, the pinned queries) drawn on every real source the window has: the
// chapter's hand-made heads (one layer, six heads, GPU rows), a loaded ViT (VitMapSource over
// the ViT tab's choice) and the model of the Train tab (the same class over the Train tab's
// choice). Each pair is drawn in-process (HeadlessUi) and checked against the source itself:
// the main map's row is the source's row of its query, the grid has a map for every layer and
// head, the pinned view a map for every pinned patch. test_map_source.cpp checks the views'
// pixels on a made-up source; this test is the list of pairs the window offers.
#include "app/gui/maps/map_source.hpp"
#include "app/gui/maps/view.hpp"
#include "app/gui/sessions/hand_made_session.hpp"
#include "app/gui/sessions/vit_session.hpp"
#include "app/gui/state/scheduler.hpp"
#include "app/gui/state/widget_log.hpp"
#include "app/gui/views/view_registry.hpp"
#include "app/gui/window/headless.hpp"
#include "core/hand_made/reference.hpp"
#include "core/io/image.hpp"
#include "core/vit/vit_run.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace attnlab;
using namespace attnlab::app;
using namespace attnlab::testing;

namespace {

enum class Source { HandMade, Vit, Train };
enum class Drawn { Map, HeadsGrid, Pinned };

std::string name_of(Source s) { return s == Source::HandMade ? "hand-made" : s == Source::Vit ? "vit" : "train"; }
std::string name_of(Drawn v) { return v == Drawn::Map ? "map" : v == Drawn::HeadsGrid ? "heads-grid" : "pinned"; }

// One source of the window, ready to draw: its session loaded and its map source.
struct Fixture {
  Scheduler scheduler{1};
  AppState state;
  Image photo = load_image(asset("safari.jpg"));
  std::unique_ptr<HandMadeSession> hand_made;
  std::unique_ptr<VitSession> vit;
  std::unique_ptr<MapSource> source;
  const VitRun* run = nullptr;

  explicit Fixture(Source s) {
    if (s == Source::HandMade) {
      state.attention.patch = 32;  // a 15 × 15 grid
      hand_made = std::make_unique<HandMadeSession>(scheduler);
      hand_made->set_image(photo, state.attention);
      source = std::make_unique<HandMadeMapSource>(state, *hand_made);
      return;
    }
    vit = std::make_unique<VitSession>(scheduler, "vit");
    vit->open(std::filesystem::path(ATTNLAB_SOURCE_DIR) / "tests" / "vit" / "data" / "timm_f32", photo, 48);
    const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (!vit->run() && std::chrono::steady_clock::now() < until) {
      scheduler.wait(std::chrono::milliseconds(100));
      scheduler.drain();
      if (const auto e = vit->poll()) ADD_FAILURE() << *e;
    }
    run = vit->run();
    state.vit_resize = 48;
    source = std::make_unique<VitMapSource>(state, *vit, s == Source::Train ? ShownSource::Train : ShownSource::Vit);
  }
  // The source as the views see it (app/gui/maps/view.hpp), offering what the window's does.
  ViewSource view_source(Source s) {
    if (hand_made) return ViewSource{state, *source, kHandMadeOffers, hand_made.get(), nullptr, nullptr, {}};
    return ViewSource{state, *source, kVitOffers, nullptr, vit.get(), s == Source::Train ? &state.train : &state.vit,
                      [] { ImGui::TextUnformatted("similarity"); }};
  }
  // The source's own row of A for its choice's layer, head and query (patch keys, raster order).
  std::vector<float> own_row(const SourceChoice& c, int query) const {
    if (hand_made) {
      const Reference ref(photo, state.attention);
      const RowVector row = ref.row(c.head.head, query).weights;
      return std::vector<float>(row.data(), row.data() + row.size());
    }
    return run->patch_row(choice_layer(c, run->layers()), choice_head(c, run->heads()), query);
  }
};

class ViewsTimesSources : public ::testing::TestWithParam<std::tuple<Source, Drawn>> {};

}  // namespace

TEST_P(ViewsTimesSources, EveryViewOfRowsDrawsEverySource) {
  // Not a structured binding: clang 14 (the sanitized trees) cannot capture one in a lambda.
  const Source which = std::get<0>(GetParam());
  const Drawn view = std::get<1>(GetParam());
  HeadlessUi ui(1000, 700);
  Fixture f(which);
  ASSERT_TRUE(f.source->info().ready) << name_of(which) << " did not load";
  SourceChoice& choice = f.source->choice();
  choice.layer = 0;
  choice.head = HeadChoice{1, HeadFusion::Mean};
  choice.prefix_token = -1;
  choice.cell = Cell{3, 2};
  choice.query_pinned = true;
  choice.pins = {Cell{0, 0}, Cell{5, 4}};
  ViewGeometry geometry;
  MainMap drawn;
  const auto views = make_views();
  ViewSource offered = f.view_source(which);
  View* pinned = find_view(views_for(views, offered), "pinned");
  ASSERT_NE(pinned, nullptr) << name_of(which) << " does not offer the pinned queries";
  ui.render(
      [&] {
        f.scheduler.drain();
        if (f.hand_made) f.hand_made->begin_frame();
        widget_log().clear();
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
        ImGui::Begin("##test", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoMove);
        if (view == Drawn::Map) draw_source_map(f.state, *f.source, geometry);
        else if (view == Drawn::HeadsGrid) draw_heads_grid(f.state, *f.source);
        else pinned->draw(offered);  // the registry's pinned view, through the one interface
        ImGui::End();
      },
      4, [&] { return f.hand_made && (f.hand_made->rows_pending() || f.hand_made->pinned_pending()); });
  const SourceInfo info = f.source->info();
  const SourceGrid g = info.grid;
  const std::string what = name_of(which) + " × " + name_of(view);
  if (view == Drawn::Map) {
    ASSERT_TRUE(geometry.valid) << what;
    const int query = g.prefix + 2 * g.cols + 3;
    EXPECT_EQ(geometry.query, query) << what;
    drawn = f.source->main_map(choice);
    const std::vector<float> want = f.own_row(choice, query);
    ASSERT_EQ(drawn.values.size(), want.size()) << what;
    for (std::size_t j = 0; j < want.size(); ++j) EXPECT_NEAR(drawn.values[j], want[j], 1e-5f) << what << ", key " << j;
  } else if (view == Drawn::HeadsGrid) {
    int maps = 0;
    for (int l = 0; l < info.layers; ++l)
      for (int h = 0; h < info.heads; ++h) {
        const std::string id = info.layers == 1 ? "head:" + std::to_string(h) : "head:" + std::to_string(l) + ":" + std::to_string(h);
        maps += widget_log().rects.contains(id);
      }
    EXPECT_EQ(maps, info.layers * info.heads) << what << ": a map for every layer and head";
    EXPECT_GE(info.layers * info.heads, 4) << what;
  } else {
    for (const Cell c : {Cell{0, 0}, Cell{5, 4}})
      EXPECT_TRUE(widget_log().rects.contains("pinned:" + std::to_string(c.col) + "," + std::to_string(c.row)))
          << what << ": no map for pinned patch (" << c.col << "," << c.row << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(AllPairs, ViewsTimesSources,
                         ::testing::Combine(::testing::Values(Source::HandMade, Source::Vit, Source::Train),
                                            ::testing::Values(Drawn::Map, Drawn::HeadsGrid, Drawn::Pinned)),
                         [](const auto& pair) {
                           std::string n = name_of(std::get<0>(pair.param)) + "_" + name_of(std::get<1>(pair.param));
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

// The registry's views (app/gui/views/view_registry.cpp) against the three sources: a view works
// on a source exactly when the source offers all it needs; the views that need only rows of A
// work on every source; and every view a source offers draws on it without an error.
TEST(ViewRegistry, EachSourceOffersTheViewsItHasWhatTheyNeedAndEachDraws) {
  for (const Source which : {Source::HandMade, Source::Vit, Source::Train}) {
    Fixture f(which);
    ASSERT_TRUE(f.source->info().ready) << name_of(which) << " did not load";
    const auto views = make_views();  // after the fixture: gone before its scheduler
    ViewSource source = f.view_source(which);
    const std::vector<View*> offered = views_for(views, source);
    std::vector<std::string> names;
    for (const View* v : offered) names.emplace_back(v->name());
    for (const auto& v : views) {
      const bool rows_only = (v->needs() & ~kNeedRows) == 0;
      const bool hand_made_view = (v->needs() & kNeedHandMadeHeads) != 0, vit_view = (v->needs() & kNeedVitPass) != 0;
      const bool expected = rows_only || (hand_made_view ? which == Source::HandMade : vit_view && which != Source::HandMade);
      EXPECT_EQ(v->works_on(source), expected) << v->name() << " on " << name_of(which);
    }
    // The names a source offers are unique: the saved settings and render name views by them.
    std::vector<std::string> sorted = names;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << name_of(which) << " offers a name twice";
    if (which == Source::HandMade) {
      EXPECT_EQ(names, (std::vector<std::string>{"tokenization", "question", "step", "output", "permutation", "matrix",
                                                  "positional", "cost", "pinned"}));
    } else {  // the ViT and Train tabs' lower views, in their tabs' order
      EXPECT_EQ(names, (std::vector<std::string>{"distance", "pinned", "matrix", "step", "cka", "high-norm", "relevance", "erf", "cnn"}));
    }
    HeadlessUi ui(1000, 700);
    for (View* v : offered) {
      std::string error;
      ui.render(
          [&] {
            f.scheduler.drain();
            if (f.hand_made) f.hand_made->begin_frame();
            ImGui::SetNextWindowPos(ImVec2(0, 0));
            ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
            ImGui::Begin("##test", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings);
            try {
              v->draw(source);
            } catch (const std::exception& e) {
              error = e.what();
            }
            ImGui::End();
          },
          2, [] { return false; });
      EXPECT_EQ(error, "") << v->name() << " on " << name_of(which);
    }
  }
}
