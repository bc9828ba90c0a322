// The GPU engine against the CPU reference, on Mesa llvmpipe through headless EGL.
#include "core/base/colormap.hpp"
#include "core/gpu/context.hpp"
#include "core/gpu/debug.hpp"
#include "core/gpu/hand_made_gpu_engine.hpp"
#include "core/gpu/gl.hpp"
#include "core/hand_made/reference.hpp"
#include "gpu_fixture.hpp"
#include "test_support.hpp"

#include <epoxy/gl.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>

using namespace attnlab;
using namespace attnlab::testing;

namespace {

class Gpu : public GpuTest {};



// Compares every head's row of the engine with the reference; returns the worst error ratio
// (error / allowed), which must stay <= 1.
double compare_rows(HandMadeGpuEngine& engine, const Reference& ref, int query, const std::string& what) {
  const RowSet& rows = engine.rows(query);
  double worst = 0;
  for (int h = 0; h < kHeadCount; ++h) {
    const RowResult expect = ref.row(h, query);
    EXPECT_EQ(rows.empty[h], expect.empty) << what << " head " << h;
    const auto got = rows.head(h);
    for (int j = 0; j < ref.N(); ++j) {
      const double e = expect.weights[j], err = std::abs(got[j] - e);
      const double ratio = err / (kRel * std::abs(e) + kAbs);
      if (ratio > 1) {
        ADD_FAILURE() << what << " head " << head_name(static_cast<HeadKind>(h)) << " a_" << query << "," << j
                      << ": gpu " << got[j] << " reference " << e;
        return ratio;
      }
      if (!ref.setup().mask.allowed(query, j)) {
        EXPECT_EQ(got[j], 0.0f) << "masked weight must be exactly 0";
      }
      worst = std::max(worst, ratio);
    }
  }
  return worst;
}

}  // namespace

TEST_F(Gpu, ReportsTheRendererAndComputeSupport) {
  const auto& info = context().info();
  std::printf("OpenGL: %s on %s via %s\n", info.version.c_str(), info.renderer.c_str(), info.platform.c_str());
  EXPECT_FALSE(info.renderer.empty());
  EXPECT_TRUE(info.major > 4 || (info.major == 4 && info.minor >= 3)) << info.version;
}

TEST_F(Gpu, TokensMatchTheReference) {
  for (PosMode mode : {PosMode::None, PosMode::Add}) {
    Settings s{.patch = 20, .pos = {.mode = mode}};
    HandMadeGpuEngine engine(safari(), s);
    const Reference ref(safari(), s);
    const Matrix X = engine.tokens();
    ASSERT_EQ(X.rows(), ref.X().rows());
    ASSERT_EQ(X.cols(), ref.X().cols());
    const double err = (X - ref.X()).cwiseAbs().maxCoeff();
    std::printf("tokens (%s): max |gpu - ref| = %.3g\n", std::string(pos_mode_name(mode)).c_str(), err);
    EXPECT_LT(err, 2e-5);
  }
}

TEST_F(Gpu, RowsMatchForEveryHeadMaskAndPositionalModeOnTheSafari) {
  Settings s;
  s.patch = 20;
  HandMadeGpuEngine engine;
  engine.set_image(safari());
  const PatchGrid g = make_grid(500, 500, 20, EdgeMode::Crop);
  double worst = 0;
  for (PosMode pos : {PosMode::None, PosMode::Concat, PosMode::Add})
    for (const MaskSpec& mask : every_mask(g.N())) {
      s.pos.mode = pos;
      s.mask = mask;
      engine.set_settings(s);
      const Reference ref(safari(), s);
      const std::string what = std::string(pos_mode_name(pos)) + "/" + std::string(mask_kind_name(mask.kind));
      for (int query : {0, g.index(12, 8), g.index(5, 20), g.N() - 1}) worst = std::max(worst, compare_rows(engine, ref, query, what));
    }
  std::printf("worst error / allowed = %.3f (allowed: %.0e relative + %.0e)\n", worst, kRel, kAbs);
}

TEST_F(Gpu, RowsMatchAtExtremeTemperaturesOnARandomImage) {
  const Image img = attnlab::testing::random_image(203, 157, 42);  // sizes not divisible by K
  for (EdgeMode edge : {EdgeMode::Crop, EdgeMode::Pad})
    for (float tau : {0.01f, 1.0f, 100.0f})
      for (PosMode pos : {PosMode::None, PosMode::Concat}) {
        Settings s{.patch = 8, .edge = edge, .temperature = tau, .pos = {.mode = pos, .sincos = pos == PosMode::Concat}};
        HandMadeGpuEngine engine(img, s);
        const Reference ref(img, s);
        const std::string what = "tau " + std::to_string(tau) + " " + std::string(edge_mode_name(edge));
        for (int query : {0, 77, ref.N() - 1}) compare_rows(engine, ref, query, what);
      }
}

TEST_F(Gpu, FullMatrixMatchesTheReference) {
  Settings s;
  s.patch = 25;  // N = 400
  s.mask.kind = MaskKind::Window;
  s.mask.radius = 4;
  HandMadeGpuEngine engine(safari(), s);
  const Reference ref(safari(), s);
  for (int h : {0, 2, 4}) {
    const Matrix A = engine.matrix(h), expect = ref.matrix(h);
    for (Eigen::Index n = 0; n < A.size(); ++n)
      ASSERT_LE(std::abs(A.data()[n] - expect.data()[n]), kRel * std::abs(expect.data()[n]) + kAbs) << "entry " << n;
  }
}

// attend_matrix.comp, one loop per mask kind and q width: every kind, m' = 3 and m' > 4
// (concat), tiles of 7 rows so N = 400 ends in a partial tile of one row. Masked weights are
// exactly 0, a row with no key left (strict mask, query 0) is all zeros, every other row sums
// to 1, and each entry is within the GPU tolerance of the reference.
TEST_F(Gpu, FullMatrixMatchesTheReferenceForEveryMaskInSmallTiles) {
  Settings s;
  s.patch = 25;  // N = 400 = 57 × 7 + 1
  HandMadeGpuEngine engine(safari(), s);
  engine.set_matrix_tile_rows(7);
  const int N = engine.N();
  ASSERT_EQ(N % 7, 1);
  for (PosMode pos : {PosMode::None, PosMode::Concat})
    for (const MaskSpec& mask : every_mask(N)) {
      s.pos.mode = pos;
      s.mask = mask;
      engine.set_settings(s);
      const Reference ref(safari(), s);
      const std::string what = std::string(pos_mode_name(pos)) + "/" + std::string(mask_kind_name(mask.kind));
      for (int h : {0, 3}) {
        if (pos == PosMode::Concat) {
          ASSERT_GT(engine.head_m(h), 4) << "the wide loop is not exercised";
        }
        const Matrix A = engine.matrix(h), expect = ref.matrix(h);
        EXPECT_EQ(engine.last_matrix_timings().tiles, (N + 6) / 7) << what;
        ASSERT_EQ(A.rows(), N);
        ASSERT_EQ(A.cols(), N);
        for (int i = 0; i < N; ++i) {
          bool any = false;
          for (int j = 0; j < N; ++j) {
            const double e = expect(i, j);
            ASSERT_LE(std::abs(A(i, j) - e), kRel * std::abs(e) + kAbs)
                << what << " head " << h << " a_" << i << "," << j << ": gpu " << A(i, j) << " reference " << e;
            if (!ref.setup().mask.allowed(i, j)) ASSERT_EQ(A(i, j), 0.0f) << what << " masked a_" << i << "," << j;
            else any = true;
          }
          if (any) ASSERT_NEAR(A.row(i).cast<double>().sum(), 1.0, 1e-5) << what << " row " << i;
          else ASSERT_EQ(A.row(i).cwiseAbs().maxCoeff(), 0.0f) << what << " row " << i << " has no key left";
        }
      }
    }
}

TEST_F(Gpu, FullMatrixHasAnAllZeroRowWhereNoKeyIsLeft) {
  Settings s;
  s.patch = 25;
  s.mask.kind = MaskKind::Strict;  // query 0 may see no key
  HandMadeGpuEngine engine(safari(), s);
  engine.set_matrix_tile_rows(3);
  const Matrix A = engine.matrix(0);
  EXPECT_EQ(A.row(0).cwiseAbs().maxCoeff(), 0.0f);
  EXPECT_FALSE(A.row(0).array().isNaN().any());
  EXPECT_FLOAT_EQ(A(1, 0), 1.0f);  // query 1 sees key 0 only
  EXPECT_NEAR(A.row(engine.N() - 1).sum(), 1.0f, 1e-5f);
}

TEST_F(Gpu, FullMatrixReportsItsStageTimings) {
  Settings s;
  s.patch = 25;
  HandMadeGpuEngine engine(safari(), s);
  EXPECT_EQ(engine.last_matrix_timings().tiles, 0);
  EXPECT_THROW(engine.set_matrix_tile_rows(-1), Error);
  engine.set_matrix_tile_rows(100);
  engine.matrix(1);
  const MatrixTimings& t = engine.last_matrix_timings();
  EXPECT_EQ(t.tiles, 4);  // 400 rows
  EXPECT_GT(t.kernel_wall_ms, 0.0);
  EXPECT_GT(t.readback_ms, 0.0);
  EXPECT_GE(t.cpu_ms, 0.0);
  EXPECT_GE(t.total_ms, t.kernel_wall_ms + t.readback_ms);
  if (gl::TimerQuery::supported()) {
    EXPECT_GE(t.kernel_ms, 0.0);
  } else {
    EXPECT_TRUE(std::isnan(t.kernel_ms));
  }
  engine.set_matrix_tile_rows(0);  // back to one storage buffer's worth: a single tile
  engine.matrix(1);
  EXPECT_EQ(engine.last_matrix_timings().tiles, 1);
}

TEST_F(Gpu, OutputsAndMergeMatchTheReference) {
  Settings s{.patch = 25, .pos = {.mode = PosMode::Concat}};
  HandMadeGpuEngine engine(safari(), s);
  const Reference ref(safari(), s);
  for (int h = 0; h < kHeadCount; ++h) EXPECT_LT((engine.output(h) - ref.output(h)).cwiseAbs().maxCoeff(), 1e-5) << h;
  EXPECT_LT((engine.merged_output() - ref.merged_output()).cwiseAbs().maxCoeff(), 1e-5);
}

TEST_F(Gpu, HeatmapMatchesTheCpuColormap) {
  Settings s{.patch = 20, .mask = {.kind = MaskKind::Causal}};
  HandMadeGpuEngine engine(safari(), s);
  const int query = engine.grid().index(12, 8);
  const Reference ref(safari(), s);
  for (int c = 0; c < kColormapCount; ++c)
    for (int n = 0; n < kNormalizationCount; ++n) {
      const HeatmapStyle style{static_cast<Colormap>(c), static_cast<Normalization>(n)};
      const auto gpu = engine.heatmap_pixels(query, 0, style);
      const auto row = ref.row(0, query);
      std::vector<std::uint8_t> keep(static_cast<size_t>(ref.N()));
      for (int j = 0; j < ref.N(); ++j) keep[j] = ref.setup().mask.allowed(query, j);
      const auto cpu = apply_colormap(std::span<const float>(row.weights.data(), keep.size()), keep, style.colormap,
                                      style.normalization);
      ASSERT_EQ(gpu.size(), cpu.size());
      int worst = 0;
      for (size_t k = 0; k < gpu.size(); ++k) worst = std::max(worst, std::abs(int(gpu[k]) - int(cpu[k])));
      // Neighbouring table entries differ by a few levels; float rounding may pick the next one.
      EXPECT_LE(worst, 8) << colormap_name(style.colormap) << "/" << normalization_name(style.normalization);
      EXPECT_EQ(gpu[3], 255);                                   // the first key is allowed
      EXPECT_EQ(gpu[(static_cast<size_t>(ref.N()) - 1) * 4 + 3], 0);  // the last is masked: transparent
    }
}

// Issue 40: a video's next frame (an image of the same size, the same settings) keeps the
// engine's setup; its tokens, rows and heat map are the new image's, as a fresh engine gives them.
TEST_F(Gpu, ANewImageOfTheSameSizeGivesItsOwnTokensRowsAndMap) {
  const Settings s{.patch = 20};
  const Image next = attnlab::testing::random_image(safari().width, safari().height, 9);
  HandMadeGpuEngine engine(safari(), s);
  const int query = engine.grid().index(12, 8);
  const HeatmapStyle style{};
  const auto first = engine.heatmap_pixels(query, 0, style);
  engine.set_image(next);
  HandMadeGpuEngine fresh(next, s);
  EXPECT_LT((engine.tokens() - fresh.tokens()).cwiseAbs().maxCoeff(), 1e-6);
  EXPECT_EQ(engine.rows(query).weights, fresh.rows(query).weights);
  const auto again = engine.heatmap_pixels(query, 0, style);
  EXPECT_EQ(again, fresh.heatmap_pixels(query, 0, style));
  EXPECT_NE(again, first) << "the heat map is still the first image's";
}

TEST_F(Gpu, OnlyWhatAChangeInvalidatesIsRecomputed) {
  Settings s;
  s.patch = 20;
  HandMadeGpuEngine engine(safari(), s);
  engine.rows(0);
  const PassCounts start = engine.counts();
  EXPECT_EQ(start.tokenize, 1);
  EXPECT_EQ(start.project, 1);
  engine.rows(100);
  EXPECT_EQ(engine.counts().tokenize, 1);
  EXPECT_EQ(engine.counts().project, 1);
  EXPECT_EQ(engine.counts().row, start.row + 1);
  engine.rows(100);  // nothing changed: nothing runs
  EXPECT_EQ(engine.counts().row, start.row + 1);
  EXPECT_EQ(engine.rows(0).query, 0);  // another query: the row pass again, for it
  EXPECT_EQ(engine.counts().row, start.row + 2);
  s.temperature = 0.5f;
  engine.set_settings(s);
  engine.rows(0);
  EXPECT_EQ(engine.counts().project, 1);
  s.custom.W_k[0] = 2.0f;  // the custom head: projections again, not tokens
  engine.set_settings(s);
  engine.rows(0);
  EXPECT_EQ(engine.counts().tokenize, 1);
  EXPECT_EQ(engine.counts().project, 2);
  s.patch = 25;
  engine.set_settings(s);
  engine.rows(0);
  EXPECT_EQ(engine.counts().tokenize, 2);
  EXPECT_EQ(engine.N(), 400);
}

TEST_F(Gpu, BadChangesKeepThePreviousState) {
  Settings s;
  s.patch = 20;
  HandMadeGpuEngine engine(safari(), s);
  const std::vector<float> before = engine.rows(208).weights;
  Settings bad = s;
  bad.patch = 600;  // larger than the image
  EXPECT_THROW(engine.set_settings(bad), Error);
  bad = s;
  bad.temperature = -1;
  EXPECT_THROW(engine.set_settings(bad), Error);
  EXPECT_THROW(engine.rows(625), Error);
  EXPECT_THROW(engine.rows(-1), Error);
  EXPECT_THROW(engine.dispatch_rows(625), Error);
  EXPECT_THROW(engine.heatmap(625, 0, HeatmapStyle{}), Error);
  EXPECT_THROW(engine.set_image(Image{}), Error);
  EXPECT_EQ(engine.settings().patch, 20);
  EXPECT_EQ(engine.rows(208).weights, before);
}

TEST_F(Gpu, BrokenShaderReportsItsNameAndTheDriverLog) {
  try {
    gl::compile_compute("broken.comp", "layout(local_size_x = 1) in;\nvoid main() { float x = no_such_variable; }\n");
    FAIL() << "a broken shader compiled";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("broken.comp"), std::string::npos) << msg;
    EXPECT_NE(msg.find("no_such_variable"), std::string::npos) << "the driver's log is missing: " << msg;
  }
  EXPECT_THROW(gl::compile_embedded("missing.comp"), Error);
}

TEST_F(Gpu, LargeGridRowPassNeverAllocatesNxN) {
  // N = 16 384 tokens (a 512 × 512 image, K = 4): A would be N² floats = 1 GiB. The row path
  // (tokens, Q, K, V, one row per head) is held to an eighth of that, 128 MiB, both in GL
  // storage asked for and in the process's peak resident memory (llvmpipe keeps GL buffers in
  // host memory, so this also sees what the driver allocated and touched).
  const Image img = attnlab::testing::random_image(512, 512, 5);
  Settings s;
  s.patch = 4;
  constexpr std::size_t N = 16384, nxn_bytes = N * N * sizeof(float), cap = nxn_bytes / 8;
  HandMadeGpuEngine engine;
  engine.set_settings(s);
  // A first pass at a quarter of N: llvmpipe compiles the shaders at their first dispatch, and
  // with a cold shader cache that compile (with what ASan keeps of the memory it frees) grew
  // the sanitized run by over 300 MiB. The pass measured still allocates all its storage anew.
  engine.set_image(attnlab::testing::random_image(256, 256, 6));
  (void)engine.rows(0);
  gl::reset_memory_peak();
  const std::size_t gl_before = gl::memory_use().live;
  reset_peak_resident();
  const std::size_t resident_before = resident_bytes();
  engine.set_image(img);
  ASSERT_EQ(engine.N(), static_cast<int>(N));
  ASSERT_EQ(engine.rows(8191).N, static_cast<int>(N));
  const std::size_t gl_peak = gl::memory_use().peak - gl_before;
  const std::size_t resident_growth = peak_resident_bytes() - resident_before;
  std::printf("row path at N=%zu: GL storage peak %zu KiB, resident growth %zu KiB (cap %zu KiB)\n", N, gl_peak >> 10,
              resident_growth >> 10, cap >> 10);
  EXPECT_LT(gl_peak, cap);
  EXPECT_LT(resident_growth, cap);

  // Both probes do see an N × N/4 allocation when one is made (so the checks above can fail).
  reset_peak_resident();
  const std::size_t before = resident_bytes();
  {
    std::vector<float> quarter(N * N / 4, 1.0f);
    gl::Buffer buffer(nxn_bytes / 4);
    EXPECT_GE(gl::memory_use().peak - gl_before, nxn_bytes / 4);
    EXPECT_GE(peak_resident_bytes() - before, nxn_bytes / 4) << quarter[N];
  }

  const Reference ref(img, s);
  compare_rows(engine, ref, 8191, "N=16384");
}

TEST_F(Gpu, QuestionTokenRowMatchesTheReference) {
  // An external query (figs. 26.7–26.8): a pure green "question" for the colour head, and the
  // same token through the concat head of colour+position (its code part is 0: no position).
  for (PosMode pos : {PosMode::None, PosMode::Concat}) {
    Settings s{.patch = 20, .pos = {.mode = pos}};
    HandMadeGpuEngine engine(safari(), s);
    const Reference ref(safari(), s);
    RowVector x = RowVector::Zero(ref.X().cols());
    x[TokenLayout::kColour + 1] = 0.8f;     // c = (0, 0.8, 0)
    x[TokenLayout::kUnitColour + 1] = 1.0f;  // ĉ = (0, 1, 0)
    for (int h : {0, 2}) {
      const auto [w, l] = engine.row_for_token(h, x);
      // q' = [W_q x; λ p] with p taken from x's code part (0 here)
      const Matrix Wq = query_key_weights(ref.heads()[h].W_q, s.pos, static_cast<int>(ref.P().cols()));
      const RowVector q = x * Wq.transpose();
      const RowResult expect = attention_row_for(q, ref.qkv(h).K, s.temperature);
      double sum = 0;
      for (int j = 0; j < ref.N(); ++j) {
        ASSERT_NEAR(w[static_cast<size_t>(j)], expect.weights[j], kRel * expect.weights[j] + kAbs) << "head " << h << " key " << j;
        sum += w[static_cast<size_t>(j)];
      }
      EXPECT_NEAR(sum, 1.0, 1e-5);
      EXPECT_EQ(engine.head_m(h), ref.qkv(h).m());
    }
  }
}

TEST_F(Gpu, OutputsAreComputedOncePerChange) {
  Settings s;
  s.patch = 50;
  HandMadeGpuEngine engine(safari(), s);
  const Matrix first = engine.output(2);
  EXPECT_EQ(engine.counts().output, 1);
  engine.rows(5);  // the query does not change T_out
  engine.merged_output();
  EXPECT_EQ(engine.counts().output, kHeadCount);  // the five others, not head 2 again
  EXPECT_EQ(engine.output(2), first);
  s.temperature = 0.25f;
  engine.set_settings(s);
  const Reference ref(safari(), s);
  EXPECT_LT((engine.output(2) - ref.output(2)).cwiseAbs().maxCoeff(), 1e-5);  // recomputed for the new τ
  EXPECT_EQ(engine.counts().output, kHeadCount + 1);
}

TEST(GpuContext, TheDebugCallbackReportsAGlError) {
  // What makes GpuTest fail on GL errors: a real error (a texture target where a buffer
  // target belongs) reaches take_gl_errors(), once.
  HeadlessContext context(HeadlessOptions{.debug = true});
  take_gl_errors();
  glBindBuffer(GL_TEXTURE_2D, 0);
  const auto errors = take_gl_errors();
  ASSERT_EQ(errors.size(), 1u);
  // Drivers word it their own way: Mesa "GL_INVALID_ENUM in glBindBufferARB(target
  // GL_TEXTURE_2D)", NVIDIA "GL_INVALID_ENUM error generated. Invalid buffer target enum." (seen
  // on an H100 through the EGL device platform); both name the error.
  EXPECT_NE(errors[0].find("GL_INVALID_ENUM"), std::string::npos) << errors[0];
  EXPECT_TRUE(take_gl_errors().empty());
  glFinish();
  EXPECT_TRUE(take_gl_errors().empty());
}

TEST(GpuContext, WithoutComputeShadersTheMessageSaysWhatWasFound) {
  // Mesa reports OpenGL 3.3 only (as an old driver would): no compute shaders. Other drivers
  // ignore the variable (an NVIDIA GPU through the EGL device platform gave 4.6 with it set):
  // there a context is made, and the test is skipped, naming the driver. (Asked only after the
  // context is made: Mesa reads the variable once per display, which the sanitized runs keep.)
  ::setenv("MESA_GL_VERSION_OVERRIDE", "3.3", 1);
  try {
    HeadlessContext context;
    const std::string vendor = reinterpret_cast<const char*>(glGetString(GL_VENDOR));
    const std::string version = reinterpret_cast<const char*>(glGetString(GL_VERSION));
    ::unsetenv("MESA_GL_VERSION_OVERRIDE");
    if (vendor.find("Mesa") == std::string::npos && version.find("Mesa") == std::string::npos)
      GTEST_SKIP() << "MESA_GL_VERSION_OVERRIDE is Mesa's; this driver is " << vendor << ", " << version;
    FAIL() << "a 3.3 context was accepted (" << vendor << ", " << version << ")";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("OpenGL 4.3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("3.3"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  ::unsetenv("MESA_GL_VERSION_OVERRIDE");
}
