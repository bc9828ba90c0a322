// The GPU plumbing of issue 15: every kernel's numbers come from one std140 parameter block
// checked against its C++ struct, the constants C++ and GLSL share are generated from one list
// (core/hand_made/shader_constants.hpp), and the mask rule is one text (shaders/mask_rule.glsl) that the
// GPU and the CPU reference both compile.
#include "core/base/error.hpp"
#include "core/gpu/hand_made_gpu_engine.hpp"
#include "core/gpu/gl.hpp"
#include "core/hand_made/mask.hpp"
#include "core/hand_made/shader_constants.hpp"
#include "gpu_fixture.hpp"
#include "test_support.hpp"

#include <epoxy/gl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

using namespace attnlab;
using namespace attnlab::testing;

namespace {

class GlPlumbing : public GpuTest {};

gl::Program compile(const std::string& body) { return gl::compile_compute("test.comp", gl::shader_prelude() + body); }

TEST_F(GlPlumbing, TheSharedConstantsReachTheShadersWithTheirCppValues) {
  // The shader writes what it sees for each generated name; C++ compares with the enums.
  const gl::Program p = compile(R"(
layout(local_size_x = 1) in;
layout(std430, binding = 0) writeonly buffer Out { int v[]; };
void main() {
  v[0] = MASK_NONE; v[1] = MASK_CAUSAL; v[2] = MASK_STRICT; v[3] = MASK_WINDOW; v[4] = MASK_RANDOM; v[5] = MASK_PAINTED;
  v[6] = NORM_MINMAX; v[7] = NORM_ABSOLUTE; v[8] = NORM_LOG; v[9] = TOKEN_D; v[10] = RANDOM_DIMS;
  v[11] = POOL_TOKEN; v[12] = POOL_AVERAGE;
}
)");
  gl::BindingGuard guard;
  gl::Buffer out(13 * 4);
  gl::bind(0, out);
  gl::dispatch(p, 1);
  std::vector<std::int32_t> v(13);
  out.download(v.data(), v.size() * 4);
  const std::vector<std::int32_t> want = {
      static_cast<int>(MaskKind::None),       static_cast<int>(MaskKind::Causal),       static_cast<int>(MaskKind::Strict),
      static_cast<int>(MaskKind::Window),     static_cast<int>(MaskKind::Random),       static_cast<int>(MaskKind::Painted),
      static_cast<int>(Normalization::MinMax), static_cast<int>(Normalization::Absolute), static_cast<int>(Normalization::Log),
      TokenLayout::d,                         TokenLayout::kRandomDims,                 static_cast<int>(VitPooling::Token),
      static_cast<int>(VitPooling::Average)};
  EXPECT_EQ(v, want);
}

TEST_F(GlPlumbing, TheMaskRuleAgreesOnTheGpuAndTheCpuForEveryKind) {
  // One shader runs mask_allowed for every (kind, i, j) of a 5 × 4 grid, with the keep flags of
  // a random and a painted mask; the CPU's Mask::allowed must give the same answers.
  const PatchGrid grid{.K = 10, .cols = 5, .rows = 4};
  const int N = grid.N();
  std::vector<MaskSpec> specs;
  for (int k = 0; k < kMaskKindCount; ++k) {
    MaskSpec s;
    s.kind = static_cast<MaskKind>(k);
    s.radius = 1;
    s.ratio = 0.4f;
    s.seed = 3;
    s.painted = {0, 6, 7, 19};
    specs.push_back(s);
  }
  std::vector<std::uint32_t> keep;  // per kind, N flags
  std::vector<Mask> masks;
  for (const MaskSpec& s : specs) {
    masks.emplace_back(s, grid);
    for (std::uint8_t k : masks.back().key_keep()) keep.push_back(k);
  }
  const gl::Program p = compile(R"(
layout(local_size_x = 1) in;
layout(std140, binding = 0) uniform Params { int N, cols, radius; };
layout(std430, binding = 1) readonly buffer Keep { uint keep[]; };
layout(std430, binding = 2) writeonly buffer Out { uint allowed[]; };
void main() {
  int kind = int(gl_WorkGroupID.z), i = int(gl_WorkGroupID.y), j = int(gl_WorkGroupID.x);
  allowed[(kind * N + i) * N + j] = mask_allowed(kind, radius, cols, i, j, keep[kind * N + j]) ? 1u : 0u;
}
)");
  struct Params {
    std::int32_t N, cols, radius;
  };
  gl::BindingGuard guard;
  gl::ParamBlock params;
  params.set(p, Params{N, grid.cols, 1});
  gl::Buffer keep_buf(keep.size() * 4, keep.data()), out(static_cast<std::size_t>(kMaskKindCount) * N * N * 4);
  gl::bind(1, keep_buf);
  gl::bind(2, out);
  glUseProgram(p.id());
  glDispatchCompute(static_cast<GLuint>(N), static_cast<GLuint>(N), kMaskKindCount);
  glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
  std::vector<std::uint32_t> gpu(static_cast<std::size_t>(kMaskKindCount) * N * N);
  out.download(gpu.data(), gpu.size() * 4);
  int differ = 0, allowed = 0, refused = 0;
  for (int k = 0; k < kMaskKindCount; ++k)
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) {
        const bool cpu = masks[static_cast<std::size_t>(k)].allowed(i, j);
        const bool g = gpu[(static_cast<std::size_t>(k) * N + i) * N + j] != 0;
        if (cpu != g && ++differ <= 5) ADD_FAILURE() << "kind " << k << ", query " << i << ", key " << j << ": CPU " << cpu << ", GPU " << g;
        (cpu ? allowed : refused) += 1;
      }
  EXPECT_EQ(differ, 0);
  EXPECT_GT(refused, 0);  // the masks do refuse keys: the comparison is not all "allowed"
  // Worked by hand: causal lets query 7 see keys 0..7; the window of radius 1 around (2,1) is 3 × 3.
  EXPECT_TRUE(masks[1].allowed(7, 7));
  EXPECT_FALSE(masks[1].allowed(7, 8));
  EXPECT_FALSE(masks[2].allowed(7, 7));
  int window = 0;
  for (int j = 0; j < N; ++j) window += masks[3].allowed(7, j) ? 1 : 0;
  EXPECT_EQ(window, 9);
}

TEST_F(GlPlumbing, ALooseUniformIsRefusedWhenTheShaderIsCompiled) {
  try {
    compile("layout(local_size_x = 1) in;\nuniform int u_count;\n"
            "layout(std430, binding = 0) writeonly buffer Out { int v[]; };\nvoid main() { v[0] = u_count; }\n");
    FAIL() << "a shader with a uniform outside its parameter block compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("u_count"), std::string::npos) << e.what();
  }
}

TEST_F(GlPlumbing, AParameterStructThatDoesNotMatchTheBlockIsRefused) {
  const gl::Program p = compile(R"(
layout(local_size_x = 1) in;
layout(std140, binding = 0) uniform Params { int a, b; float c; };
layout(std430, binding = 0) writeonly buffer Out { float v[]; };
void main() { v[0] = float(a + b) * c; }
)");
  EXPECT_EQ(p.param_bytes(), 12u);
  struct Right {
    std::int32_t a, b;
    float c;
  };
  struct Short {  // the last member forgotten
    std::int32_t a, b;
  };
  struct Long {  // a member the shader does not have
    std::int32_t a, b;
    float c;
    std::int32_t d;
  };
  gl::BindingGuard guard;
  gl::ParamBlock params;
  EXPECT_THROW(params.set(p, Short{1, 2}), Error);
  EXPECT_THROW(params.set(p, Long{1, 2, 0.5f, 4}), Error);
  params.set(p, Right{3, 4, 0.5f});
  gl::Buffer out(4);
  gl::bind(0, out);
  gl::dispatch(p, 1);
  float v = 0;
  out.download(&v, 4);
  EXPECT_EQ(v, 3.5f);  // the block's values arrived: (3 + 4) · 0.5
}

TEST_F(GlPlumbing, TransfersAreCountedAndARepeatedQueryMovesNothing) {
  HandMadeGpuEngine engine;
  Settings s;
  s.patch = 25;  // N = 400
  engine.set_settings(s);
  engine.set_image(safari());
  engine.rows(120);  // tokens, Q, K, V and the first row pass
  auto since = [](const gl::TransferCounts& before) { return gl::transfer_counts() - before; };
  gl::TransferCounts t0 = gl::transfer_counts();
  engine.rows(120);  // the same query: nothing moves
  gl::TransferCounts d = since(t0);
  EXPECT_EQ(d.readbacks, 0u);
  EXPECT_EQ(d.uploads, 0u);

  t0 = gl::transfer_counts();
  engine.rows(121);  // a new query: the rows and their logits come back, two read-backs
  d = since(t0);
  EXPECT_EQ(d.readbacks, 2u);
  EXPECT_EQ(d.readback_bytes, (6u * 400 + 6u * 400 + 6u) * 4);
  EXPECT_EQ(d.uploads, 1u);  // the row pass's parameter block
  EXPECT_EQ(d.upload_bytes, 36u);

  t0 = gl::transfer_counts();
  engine.heatmap(121, 0, HeatmapStyle{});  // coloured on the GPU into a texture: no read-back
  engine.heatmap(121, 0, HeatmapStyle{});  // the same again: nothing at all
  d = since(t0);
  EXPECT_EQ(d.readbacks, 0u);
  EXPECT_EQ(d.uploads, 1u);

  t0 = gl::transfer_counts();
  engine.heatmap_pixels(121, 0, HeatmapStyle{});  // asking for the pixels is a read-back, and counted
  d = since(t0);
  EXPECT_EQ(d.readbacks, 1u);
  EXPECT_EQ(d.readback_bytes, 400u * 4);
}

// Issue 19: a new query's map is coloured where its row is (no read-back); the row comes to the
// CPU after its fence has signalled, so that copy waits for nothing, and it is the same row a
// waiting read gives.
TEST_F(GlPlumbing, ANewQueryIsColouredWithoutAReadBackAndItsRowFollowsItsFence) {
  Settings s;
  s.patch = 25;  // N = 400
  s.mask.kind = MaskKind::Window;
  s.mask.radius = 3;
  HandMadeGpuEngine engine, waiting;
  for (HandMadeGpuEngine* e : {&engine, &waiting}) {
    e->set_settings(s);
    e->set_image(safari());
    e->rows(50);
  }
  EXPECT_TRUE(engine.rows_ready(50));  // read already

  gl::TransferCounts t0 = gl::transfer_counts();
  EXPECT_FALSE(engine.rows_ready(233));  // nothing dispatched for this query yet
  const gl::Texture& map = engine.heatmap(233, 2, HeatmapStyle{});
  gl::TransferCounts d = gl::transfer_counts() - t0;
  EXPECT_EQ(d.readbacks, 0u) << "colouring a new query's map read something back";
  EXPECT_EQ(map.width(), 20);

  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!engine.rows_ready(233) && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(engine.rows_ready(233)) << "the row pass's fence never signalled";
  EXPECT_FALSE(engine.rows_ready(50)) << "the row buffer holds query 233 now";
  t0 = gl::transfer_counts();
  const RowSet got = engine.rows(233);
  d = gl::transfer_counts() - t0;
  EXPECT_EQ(d.readbacks, 2u);
  EXPECT_EQ(d.fenced, 2u);
  EXPECT_EQ(d.waited(), 0u);

  const RowSet& want = waiting.rows(233);  // dispatched and read at once
  ASSERT_EQ(got.query, 233);
  EXPECT_EQ(got.weights, want.weights);
  EXPECT_EQ(got.logits, want.logits);
  EXPECT_EQ(got.empty, want.empty);
  // The same rows again: nothing moves.
  t0 = gl::transfer_counts();
  engine.rows(233);
  EXPECT_EQ((gl::transfer_counts() - t0).readbacks, 0u);
}

// Issue 19: a pinned query's map is made on the GPU beside the main one: the same pixels the
// main map has for that query, its row copied on the GPU, nothing read back, and the engine's
// row buffer left as it was.
TEST_F(GlPlumbing, APinnedQuerysMapIsMadeOnTheGpuAndLeavesTheMainRowAlone) {
  Settings s;
  s.patch = 25;  // N = 400, a 20 × 20 grid
  s.mask.kind = MaskKind::Causal;
  HandMadeGpuEngine engine(safari(), s);
  const RowSet main = engine.rows(77);
  const HeatmapStyle style{Colormap::Fire, Normalization::Log};
  const auto counts = engine.counts();

  gl::Texture map;
  gl::Buffer row;
  const gl::TransferCounts t0 = gl::transfer_counts();
  engine.heatmap_into(301, 4, style, map, row);
  const gl::TransferCounts d = gl::transfer_counts() - t0;
  EXPECT_EQ(d.readbacks, 0u) << "a pinned map read something back";
  EXPECT_EQ(engine.counts().row, counts.row + 1);
  EXPECT_TRUE(engine.rows_ready(77));
  EXPECT_EQ(engine.rows(77).weights, main.weights) << "the main row changed";

  std::vector<std::uint8_t> got(20 * 20 * 4);
  map.download_rgba8(got);
  std::vector<float> weights(400);
  row.download(weights.data(), weights.size() * 4);
  const RowSet& want = engine.rows(301);
  EXPECT_EQ(got, engine.heatmap_pixels(301, 4, style));
  const auto w = want.head(4);
  EXPECT_EQ(weights, std::vector<float>(w.begin(), w.end()));
  EXPECT_THROW(engine.heatmap_into(400, 0, style, map, row), Error);
  EXPECT_THROW(engine.heatmap_into(0, kHeadCount, style, map, row), Error);
}

TEST_F(GlPlumbing, ATimerQueryTimesADispatchOrSaysItCannot) {
  const gl::Program p = compile(R"(
layout(local_size_x = 64) in;
layout(std430, binding = 0) writeonly buffer Out { float v[]; };
void main() { v[gl_GlobalInvocationID.x] = float(gl_GlobalInvocationID.x); }
)");
  gl::BindingGuard guard;
  gl::Buffer out(64 * 16 * 4);
  gl::bind(0, out);
  gl::TimerQuery never_run;
  EXPECT_FALSE(never_run.milliseconds().has_value());  // no answer before begin/end
  EXPECT_THROW(never_run.end(), Error);
  gl::TimerQuery timer;
  timer.begin();
  EXPECT_THROW(timer.begin(), Error);  // one at a time
  gl::dispatch(p, 16);
  timer.end();
  const auto ms = timer.milliseconds();
  EXPECT_EQ(ms.has_value(), gl::TimerQuery::supported());
  if (ms) {
    EXPECT_GE(*ms, 0.0);
  }
  gl::TimerQuery moved = std::move(timer);  // the query moves with its answer
  EXPECT_EQ(moved.milliseconds().has_value(), gl::TimerQuery::supported());
  std::printf("timer queries %s; a 1024-invocation dispatch: %.4f ms\n", gl::TimerQuery::supported() ? "supported" : "unsupported",
              ms.value_or(-1.0));
}

TEST_F(GlPlumbing, AMappedReadSeesTheDispatchAndIsCountedOnce) {
  const gl::Program p = compile(R"(
layout(local_size_x = 64) in;
layout(std430, binding = 0) writeonly buffer Out { float v[]; };
void main() { v[gl_GlobalInvocationID.x] = 2.0 * float(gl_GlobalInvocationID.x); }
)");
  gl::BindingGuard guard;
  gl::Buffer out(128 * 4);
  gl::bind(0, out);
  gl::dispatch(p, 2);
  const gl::TransferCounts before = gl::transfer_counts();
  std::vector<float> got;
  out.read_mapped(8 * 4, 100 * 4, [&](const void* data) {
    const float* f = static_cast<const float*>(data);
    got.assign(f, f + 8);
  });
  const gl::TransferCounts d = gl::transfer_counts() - before;
  EXPECT_EQ(d.readbacks, 1u);
  EXPECT_EQ(d.readback_bytes, 32u);
  ASSERT_EQ(got.size(), 8u);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(got[static_cast<size_t>(k)], 2.0f * static_cast<float>(100 + k));
  EXPECT_THROW(out.read_mapped(8, 128 * 4 - 4, [](const void*) {}), Error);  // past the end
  // The buffer is unmapped again, also after a throwing reader: a second read works.
  EXPECT_THROW(out.read_mapped(4, 0, [](const void*) { throw Error("reader failed"); }), Error);
  float first = -1;
  out.read_mapped(4, 4, [&](const void* data) { first = *static_cast<const float*>(data); });
  EXPECT_EQ(first, 2.0f);
}

}  // namespace
