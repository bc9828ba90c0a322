// HandMadeSession takes the query as an argument (issue 28): it keeps no "current query", only
// the rows it has (RowSet::query says whose) and the query it asked the model for. A query whose
// rows it does not have is answered with the rows it has, and its own arrive at a later
// begin_frame (the GPU's fence; the CPU reference at once); exports read them at once
// (rows_blocking). Runs under HeadlessUi's context: the GPU engine where the context has compute
// shaders, else the CPU reference — the behaviour asked of both is the same.
#include "app/gui/sessions/hand_made_session.hpp"
#include "app/gui/window/headless.hpp"
#include "core/base/error.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

using namespace attnlab;
using namespace attnlab::app;

namespace {

// 100 × 80 pixels of colour that changes across the image: K = 20 gives a 5 × 4 grid, N = 20.
Image gradient_image() {
  Image img;
  img.width = 100;
  img.height = 80;
  img.rgb.resize(static_cast<std::size_t>(img.width) * img.height * 3);
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) {
      img.at(x, y, 0) = static_cast<float>(x) / static_cast<float>(img.width);
      img.at(x, y, 1) = static_cast<float>(y) / static_cast<float>(img.height);
      img.at(x, y, 2) = static_cast<float>((x * 7 + y * 3) % 50) / 50.0f;
    }
  return img;
}

// Calls begin_frame until the rows asked for have arrived (at most 20 s).
void frames_until_rows_arrive(HandMadeSession& session) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (session.rows_pending() && std::chrono::steady_clock::now() < give_up) {
    session.begin_frame();
    if (session.rows_pending()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

TEST(HandMadeSession, EveryCallNamesItsQueryAndANewQuerysRowsArriveAFrameLater) {
  HeadlessUi ui(64, 64);  // a current context for the engine and the textures
  Scheduler scheduler;
  HandMadeSession session(scheduler);
  Settings settings;
  settings.patch = 20;
  session.set_image(gradient_image(), settings);
  ASSERT_EQ(session.grid().N(), 20);

  // After a new image: the rows of the query asked for, at once.
  EXPECT_EQ(session.latest_rows(3).query, 3);
  EXPECT_FALSE(session.rows_pending());

  // Another query: the rows held (query 3) until query 7's have arrived, never another's.
  EXPECT_EQ(session.latest_rows(7).query, 3);
  EXPECT_TRUE(session.rows_pending());
  frames_until_rows_arrive(session);
  ASSERT_FALSE(session.rows_pending()) << "query 7's rows never arrived";
  const RowSet seven = session.latest_rows(7);
  EXPECT_EQ(seven.query, 7);
  EXPECT_EQ(seven.weights, session.rows_of(7).weights);
  EXPECT_NE(seven.weights, session.rows_of(3).weights);

  // rows_blocking reads any query at once; latest_rows then has it too.
  EXPECT_EQ(session.rows_blocking(11).query, 11);
  EXPECT_EQ(session.latest_rows(11).query, 11);
  EXPECT_EQ(session.latest_rows(11).weights, session.rows_of(11).weights);
  EXPECT_FALSE(session.rows_pending());

  // The main map and the mask overlay for any query; the query is checked against the grid.
  const HeatmapStyle style;
  EXPECT_NE(session.heatmap(7, 0, style), nullptr);
  EXPECT_NE(session.mask_overlay(7), nullptr);
  for (const int bad : {-1, 20}) {
    EXPECT_THROW(session.latest_rows(bad), Error) << bad;
    EXPECT_THROW(session.rows_blocking(bad), Error) << bad;
    EXPECT_THROW(session.heatmap(bad, 0, style), Error) << bad;
    EXPECT_THROW(session.mask_overlay(bad), Error) << bad;
  }

  // Other settings: other numbers for the query asked for, at once (not the old rows).
  settings.temperature = 0.25f;
  session.latest_rows(5);  // asks for query 5 …
  session.set_settings(settings);  // … then the settings change before it arrives
  const RowSet& sharp = session.latest_rows(5);
  EXPECT_EQ(sharp.query, 5);
  EXPECT_FALSE(session.rows_pending());
  EXPECT_EQ(sharp.weights, session.rows_of(5).weights);
}
