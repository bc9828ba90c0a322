// The hand-made model behind one interface (core/hand_made/hand_made.hpp): the GPU engine and the CPU
// reference answer the same calls with the same numbers, the query is an argument, and a bad
// change leaves either one as it was. The app holds a HandMadeModel and never asks which.
#include "core/base/error.hpp"
#include "core/gpu/hand_made_gpu.hpp"
#include "core/hand_made/hand_made.hpp"
#include "core/hand_made/hand_made_source.hpp"
#include "gpu_fixture.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

using namespace attnlab;
using namespace attnlab::testing;

namespace {

class HandMade : public GpuTest {};

// The largest |a − b| / (kRel·|b| + kAbs) over two rows sets (every head); > 1 fails.
double worst_ratio(const RowSet& a, const RowSet& b) {
  double worst = 0;
  EXPECT_EQ(a.N, b.N);
  EXPECT_EQ(a.query, b.query);
  for (size_t n = 0; n < a.weights.size() && n < b.weights.size(); ++n)
    worst = std::max(worst, std::abs(static_cast<double>(a.weights[n]) - b.weights[n]) / (kRel * std::abs(b.weights[n]) + kAbs));
  return worst;
}

TEST_F(HandMade, TheGpuAndTheReferenceAnswerTheSameCallsWithTheSameNumbers) {
  std::unique_ptr<HandMadeModel> models[] = {std::make_unique<GpuHandMade>(), make_reference_model()};
  EXPECT_EQ(models[0]->short_name(), "GPU");
  EXPECT_EQ(models[1]->short_name(), "CPU reference");
  Settings s;
  s.patch = 25;  // 20 × 20 = 400 tokens
  s.mask.kind = MaskKind::Window;
  s.mask.radius = 3;
  s.pos.mode = PosMode::Concat;
  for (auto& m : models) m->set_image(safari(), s);
  // The query is an argument: asking for two queries in turn gives each its own row.
  for (int query : {0, 208, 399, 208}) {
    const RowSet gpu = models[0]->rows(query), ref = models[1]->rows(query);
    EXPECT_LE(worst_ratio(gpu, ref), 1.0) << "query " << query;
    for (int h = 0; h < kHeadCount; ++h) {
      double sum = 0;
      for (float w : gpu.head(h)) sum += w;
      EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << query << " of head " << h << " sums to 1";
      const bool key0_in_window = query % 20 <= 3 && query / 20 <= 3;  // radius 3 around (col, row)
      EXPECT_EQ(gpu.head(h)[0] == 0.0f, !key0_in_window) << "window mask, query " << query << ", head " << h;
    }
  }
  const Matrix A_gpu = models[0]->matrix(1), A_ref = models[1]->matrix(1);
  ASSERT_EQ(A_gpu.rows(), 400);
  EXPECT_LE((A_gpu - A_ref).cwiseAbs().maxCoeff(), 1e-5);
  EXPECT_LE((models[0]->merged_output() - models[1]->merged_output()).cwiseAbs().maxCoeff(), 1e-4);
  EXPECT_LE((models[0]->tokens() - models[1]->tokens()).cwiseAbs().maxCoeff(), 1e-4);

  // Changing the settings through the interface changes both the same way.
  s.temperature = 0.25f;
  for (auto& m : models) m->set_settings(s);
  EXPECT_LE(worst_ratio(models[0]->rows(50), models[1]->rows(50)), 1.0);
}

TEST_F(HandMade, ABadChangeLeavesEitherModelAsItWas) {
  std::unique_ptr<HandMadeModel> models[] = {std::make_unique<GpuHandMade>(), make_reference_model()};
  for (auto& m : models) {
    EXPECT_THROW(m->rows(0), Error) << m->name() << ": no image yet";
    Settings s;
    s.patch = 50;
    m->set_image(safari(), s);
    const RowSet before = m->rows(12);
    Settings bad = s;
    bad.patch = 600;  // larger than the 500 × 500 photo
    EXPECT_THROW(m->set_settings(bad), Error) << m->name();
    EXPECT_THROW(m->set_image(safari(), bad), Error) << m->name();
    bad = s;
    bad.temperature = -1;
    EXPECT_THROW(m->set_settings(bad), Error) << m->name();
    EXPECT_THROW(m->rows(100), Error) << m->name() << ": 10 × 10 grid, query 100 is outside";
    EXPECT_THROW(m->qkv(kHeadCount), Error) << m->name();
    EXPECT_EQ(m->rows(12).weights, before.weights) << m->name();
  }
}

// The image and the settings are replaced together: a K too small for the photo held (K = 1 on
// the 500 × 500 safari: 250 000 tokens, over the limit) suits a 40 × 30 image, and is checked
// against that one. The GPU engine once checked it against the photo held and refused the small
// image with the large one's token count (a lesson step, a photo opened at the K the user wanted).
TEST_F(HandMade, NewSettingsAreCheckedAgainstTheNewImageNotTheOneHeld) {
  std::unique_ptr<HandMadeModel> models[] = {std::make_unique<GpuHandMade>(), make_reference_model()};
  Image small;
  small.width = 40;
  small.height = 30;
  small.rgb.resize(static_cast<std::size_t>(small.width) * small.height * 3);
  for (int y = 0; y < small.height; ++y)
    for (int x = 0; x < small.width; ++x)
      for (int c = 0; c < 3; ++c) small.at(x, y, c) = safari().at(x * 10, y * 10, c);
  for (auto& m : models) {
    Settings s;
    s.patch = 16;
    m->set_image(safari(), s);
    Settings one = s;
    one.patch = 1;
    EXPECT_THROW(m->set_settings(one), Error) << m->name() << ": 250 000 tokens on the safari";
    EXPECT_NO_THROW(m->set_image(small, one)) << m->name();
    EXPECT_EQ(m->N(), 40 * 30) << m->name();
    EXPECT_THROW(m->set_image(safari(), one), Error) << m->name();
    EXPECT_EQ(m->N(), 40 * 30) << m->name() << ": the refused photo changed nothing";
    EXPECT_EQ(m->rows(40 * 30 - 1).N, 40 * 30) << m->name();
  }
}

}  // namespace

namespace {

// What a view does with any AttentionSource: the heaviest patch key of a query's row.
int heaviest_key(const AttentionSource& src, int layer, HeadChoice head, int query) {
  const std::vector<float> row = src.patch_row(layer, head, query);
  EXPECT_EQ(static_cast<int>(row.size()), src.grid().N());
  return static_cast<int>(std::max_element(row.begin(), row.end()) - row.begin());
}

TEST_F(HandMade, TheHeadsAreAnAttentionSourceOfOneLayer) {
  const Settings s{.patch = 25, .mask = {.kind = MaskKind::Causal}};
  GpuHandMade gpu;
  std::unique_ptr<HandMadeModel> ref = make_reference_model();
  gpu.set_image(safari(), s);
  ref->set_image(safari(), s);
  const PatchGrid grid = make_setup(safari().width, safari().height, s).grid;
  const HandMadeSource a(gpu, grid), b(*ref, grid);
  EXPECT_EQ(a.layers(), 1);
  EXPECT_EQ(a.heads(), kHeadCount);
  EXPECT_EQ(a.grid().N(), 400);
  EXPECT_EQ(a.grid().prefix, 0);
  EXPECT_EQ(a.grid().covered_w, 500.0);
  const int query = 250;
  const RowSet rows = ref->rows(query);
  for (int h = 0; h < kHeadCount; ++h) {
    const std::vector<float> row = b.patch_row(0, HeadChoice{h}, query);
    EXPECT_EQ(row, std::vector<float>(rows.head(h).begin(), rows.head(h).end())) << "head " << h;
    EXPECT_EQ(heaviest_key(a, 0, HeadChoice{h}, query), heaviest_key(b, 0, HeadChoice{h}, query)) << "head " << h;
  }
  // Fused over the heads, worked from the six rows: mean, max, min per key; causal keys past
  // the query stay exactly 0.
  const auto mean = b.patch_row(0, HeadChoice{-1, HeadFusion::Mean}, query);
  const auto mx = b.patch_row(0, HeadChoice{-1, HeadFusion::Max}, query);
  const auto mn = b.patch_row(0, HeadChoice{-1, HeadFusion::Min}, query);
  for (int j = 0; j < 400; ++j) {
    double sum = 0;
    float hi = rows.head(0)[j], lo = hi;
    for (int h = 0; h < kHeadCount; ++h) {
      sum += rows.head(h)[j];
      hi = std::max(hi, rows.head(h)[j]);
      lo = std::min(lo, rows.head(h)[j]);
    }
    EXPECT_NEAR(mean[j], sum / kHeadCount, 1e-7) << j;
    EXPECT_EQ(mx[j], hi) << j;
    EXPECT_EQ(mn[j], lo) << j;
    if (j > query) {
      EXPECT_EQ(mx[j], 0.0f) << "causal: key " << j << " is after the query";
    }
  }
  const Matrix A = a.matrix(0, HeadChoice{-1, HeadFusion::Mean});
  ASSERT_EQ(A.rows(), 400);
  EXPECT_NEAR(A.row(query).sum(), 1.0f, 1e-5f);  // a mean of rows that sum to 1
  EXPECT_THROW(a.patch_row(1, HeadChoice{0}, query), Error);
  EXPECT_THROW(a.patch_row(0, HeadChoice{kHeadCount}, query), Error);
  EXPECT_THROW(a.patch_row(0, HeadChoice{0}, 400), Error);
}

}  // namespace
