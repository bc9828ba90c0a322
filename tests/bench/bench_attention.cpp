// attnlab-bench: the GPU engine against the Eigen reference (Google Benchmark).
//
//   RowAllHeads/{Gpu,Eigen}/N  row i of A for all kHeadCount preset heads, N = 1024, 4096, 16384
//                              (K = 8 on a random 256², 512², 1024² image); the query changes every
//                              iteration, so the GPU row pass really runs and is read back.
//   FullMatrix/{Gpu,Eigen}/4096  the full N × N A of the colour head (head 0, m' = 3: counter
//                              `m`); the GPU engine recomputes it on every matrix() call and reads
//                              it back. tests/bench/bench_pytorch_vit.py --only attention times
//                              PyTorch CPU's softmax(Q Kᵀ/√m) on the same shapes. FullMatrix/Gpu's
//                              counters, per matrix() call (HandMadeGpuEngine::last_matrix_timings,
//                              averaged over the iterations):
//                                kernel_ms       GPU time of the dispatches from GL_TIME_ELAPSED
//                                                timer queries (NaN without them; llvmpipe counts
//                                                no compute work in them: about 0.001 ms);
//                                kernel_wall_ms  wall time from each dispatch to its glFinish;
//                                readback_ms     mapping each finished tile and copying it into
//                                                the result with the division by the row sums;
//                                cpu_ms          other CPU work (allocations);
//                                matrix_ms       the whole call, as the engine timed it;
//                                process_cpu_ms  CPU time of the whole process (Mesa's threads
//                                                too): less disturbed by other work on the
//                                                machine than wall time;
//                                tiles, m        tiles (dispatches) per call, and head 0's m'.
//
//   VitForward/{Cpu,Gpu}/S16_224  the forward pass of a ViT-S/16 (D 384, 6 heads, 12 layers,
//                              MLP 1536) with random weights on a 224² image (T = 197), leaving
//                              its VitPass (every layer's q and k, norms, mean attention
//                              distance, logits); B16_224 the same for ViT-B/16 (D 768, 12
//                              heads, MLP 3072); S8_480 a ViT-S/8 on a 480² image (T = 3 601,
//                              DINO's visualize_attention.py size, position embedding resampled
//                              from 28 × 28). Counter pass_mib: the VitPass kept. The GPU case
//                              ends with the pass on the CPU; tests/bench/bench_pytorch_vit.py
//                              times PyTorch CPU on the same shapes.
//
//   Relevance/Cpu/S16_224      why a ViT-S/16 classifier (1000 classes, random weights) decided,
//                              on the same 224² image: one forward pass keeping the activations,
//                              one backward pass of the top class's logit (core/vit/vit_gradients)
//                              and the chefer map (core/vit/relevance); issue 49 asks for at most
//                              3× VitForward/Cpu/S16_224 in the same run. Counters: forward_ms,
//                              backward_ms (as vit_gradients measured them) and map_ms (the L
//                              T × T products in double), averaged over the iterations.
//
//   VitLoad/B16                load_vit on a ViT-B/16 checkpoint with random F32 weights in timm's
//                              names (D 768, 12 heads, 12 blocks, MLP 3072, patch 16, 224²: pos_embed
//                              1 × 197 × 768, head 1000 classes; 86.6 M parameters, 346 MB), written
//                              once to a temporary file (or to $ATTNLAB_VITLOAD_FILE, kept, to time
//                              `attnlab vit --model FILE --info` on the same file). Timed on a warm
//                              page cache: the file was just written. Compare the Time column (wall;
//                              CPU counts this thread only); bytes_per_second is the file's bytes
//                              per second of wall time (the model freed after each load included); counters: file_MB (10⁶ bytes) and
//                              peak_rss_MB, the growth of the peak resident memory of one load
//                              in a forked child whose peak was reset first (/proc/self/clear_refs),
//                              so the parent's own history does not count (NaN where that fails).
//
// Every timed iteration ends with the result on the CPU (a GPU read-back synchronizes), so
// "Time" is the wall time of a whole request. "CPU" is this thread only: on llvmpipe the shader
// work runs on Mesa's own threads, so compare the Time column. items_per_second counts attention
// weights a_ij produced (kHeadCount × N per row request, N × N per full matrix) per second of
// WALL time, measured here: the library's own SetItemsProcessed rate divides by this thread's
// CPU time unless UseRealTime() is set, and that would append "/real_time" to the names.
//
// Not a CTest timed test; `bench_smoke` only checks that the program runs. Exits with 1 if any
// case could not run (e.g. no OpenGL 4.3 context) or no case matches the filter, so the smoke
// test can fail.
#include "core/base/blas.hpp"
#include "core/base/error.hpp"
#include "core/gpu/context.hpp"
#include "core/gpu/hand_made_gpu_engine.hpp"
#include "core/gpu/gl.hpp"
#include "core/gpu/hand_made_gpu.hpp"
#include "core/gpu/vit_engine.hpp"
#include "core/base/platform.hpp"
#include "core/hand_made/reference.hpp"
#include "core/vit/relevance.hpp"
#include "core/vit/vit_cpu.hpp"
#include "test_support.hpp"

#include <benchmark/benchmark.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace attnlab;

constexpr int kPatch = 8;
constexpr int kQueryStep = 97;  // odd, so consecutive queries always differ for N = 2^k

bool g_failed = false;

// A random image whose K = 8 grid has exactly n tokens (n a square of a whole number of patches).
Image random_image(int side, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  Image img{side, side, std::vector<float>(static_cast<size_t>(side) * side * 3)};
  for (auto& v : img.rgb) v = u(gen);
  return img;
}

int side_for(int n) {
  int cols = 1;
  while (cols * cols < n) ++cols;
  if (cols * cols != n) throw Error("benchmark N=" + std::to_string(n) + " is not a square grid");
  return cols * kPatch;
}

Settings bench_settings() {
  Settings s;
  s.patch = kPatch;
  return s;
}

const Image& image_for(int n) {
  static std::map<int, Image> images;
  auto it = images.find(n);
  if (it == images.end()) it = images.emplace(n, random_image(side_for(n), 1234u + static_cast<unsigned>(n))).first;
  return it->second;
}

// One headless context for the whole program and one engine per N, created on first use and
// destroyed (engines first) before main returns.
struct GpuState {
  HeadlessContext context;
  std::map<int, std::unique_ptr<HandMadeGpuEngine>> engines;
  std::map<int, int> next_query;
  std::unique_ptr<VitGpuRunner> vit;
  std::map<int, std::unique_ptr<HandMadeModel>> pooled;  // GpuHandMade per N (PooledMatrix)
};

std::unique_ptr<GpuState>& gpu_state() {
  static std::unique_ptr<GpuState> state;
  return state;
}

HandMadeGpuEngine& engine_for(int n) {
  auto& gs = gpu_state();
  if (!gs) gs = std::make_unique<GpuState>();
  auto& e = gs->engines[n];
  if (!e) {
    auto fresh = std::make_unique<HandMadeGpuEngine>();
    fresh->set_settings(bench_settings());
    fresh->set_image(image_for(n));
    if (fresh->N() != n) throw Error("benchmark grid has " + std::to_string(fresh->N()) + " tokens, wanted " + std::to_string(n));
    fresh->rows(0);  // tokenize and project once, outside the timed loops
    e = std::move(fresh);
  }
  return *e;
}

const Reference& reference_for(int n) {
  static std::map<int, std::unique_ptr<Reference>> refs;
  auto& r = refs[n];
  if (!r) {
    r = std::make_unique<Reference>(image_for(n), bench_settings());
    if (r->N() != n) throw Error("reference grid has " + std::to_string(r->N()) + " tokens, wanted " + std::to_string(n));
  }
  return *r;
}

// Wall time of the timed loop, for items_per_second (see the top of the file).
class WallRate {
 public:
  WallRate() : start_(std::chrono::steady_clock::now()) {}
  void report(benchmark::State& state, std::int64_t items_per_iteration) const {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (state.iterations() > 0 && seconds > 0)
      state.counters["items_per_second"] =
          benchmark::Counter(static_cast<double>(state.iterations() * items_per_iteration) / seconds);
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

void fail(benchmark::State& state, const std::exception& e) {
  g_failed = true;
  state.SkipWithError(e.what());
}

void label_gpu(benchmark::State& state) { state.SetLabel(gpu_state()->context.info().renderer); }

void row_all_heads_gpu(benchmark::State& state, int n) {
  try {
    HandMadeGpuEngine& engine = engine_for(n);
    label_gpu(state);
    int& query = gpu_state()->next_query[n];
    const int rows_before = engine.counts().row;
    const gl::TransferCounts moved_before = gl::transfer_counts();
    const WallRate rate;
    for (auto _ : state) {
      query = (query + kQueryStep) % n;
      const RowSet& rows = engine.rows(query);  // row pass for all heads + read-back
      benchmark::DoNotOptimize(rows.weights.data());
      benchmark::ClobberMemory();
    }
    rate.report(state, std::int64_t{kHeadCount} * n);
    // CPU ← GPU transfers per query change (issue 19 asks for none in a steady hover frame).
    const gl::TransferCounts moved = gl::transfer_counts() - moved_before;
    const double iterations = static_cast<double>(std::max<benchmark::IterationCount>(state.iterations(), 1));
    state.counters["readbacks"] = static_cast<double>(moved.readbacks) / iterations;
    state.counters["readback_KiB"] = static_cast<double>(moved.readback_bytes) / 1024.0 / iterations;
    if (engine.counts().row - rows_before != static_cast<int>(state.iterations()))
      throw Error("the row pass did not run once per iteration");
  } catch (const std::exception& e) {
    fail(state, e);
  }
}

void row_all_heads_eigen(benchmark::State& state, int n) {
  try {
    const Reference& ref = reference_for(n);
    int query = 0;
    const WallRate rate;
    for (auto _ : state) {
      query = (query + kQueryStep) % n;
      for (int h = 0; h < kHeadCount; ++h) {
        RowResult r = ref.row(h, query);
        benchmark::DoNotOptimize(r.weights.data());
        benchmark::ClobberMemory();
      }
    }
    rate.report(state, std::int64_t{kHeadCount} * n);
  } catch (const std::exception& e) {
    fail(state, e);
  }
}

void full_matrix_gpu(benchmark::State& state, int n) {
  try {
    HandMadeGpuEngine& engine = engine_for(n);
    label_gpu(state);
    MatrixTimings sum;
    const double cpu_before = testing::process_cpu_ms();
    const WallRate rate;
    for (auto _ : state) {
      Matrix A = engine.matrix(0);  // recomputed on every call, read back tile by tile
      benchmark::DoNotOptimize(A.data());
      benchmark::ClobberMemory();
      const MatrixTimings& t = engine.last_matrix_timings();
      sum.kernel_ms += t.kernel_ms;
      sum.kernel_wall_ms += t.kernel_wall_ms;
      sum.readback_ms += t.readback_ms;
      sum.cpu_ms += t.cpu_ms;
      sum.total_ms += t.total_ms;
      sum.tiles = t.tiles;
    }
    rate.report(state, std::int64_t{n} * n);
    // Where one matrix() call's time goes (core/gpu/hand_made_gpu_engine.hpp, MatrixTimings), averaged per iteration.
    const double iterations = static_cast<double>(std::max<benchmark::IterationCount>(state.iterations(), 1));
    state.counters["kernel_ms"] = sum.kernel_ms / iterations;
    state.counters["kernel_wall_ms"] = sum.kernel_wall_ms / iterations;
    state.counters["readback_ms"] = sum.readback_ms / iterations;
    state.counters["cpu_ms"] = sum.cpu_ms / iterations;
    state.counters["matrix_ms"] = sum.total_ms / iterations;
    state.counters["tiles"] = sum.tiles;
    state.counters["m"] = engine.head_m(0);
    state.counters["process_cpu_ms"] = (testing::process_cpu_ms() - cpu_before) / iterations;
  } catch (const std::exception& e) {
    fail(state, e);
  }
}

void full_matrix_eigen(benchmark::State& state, int n) {
  try {
    const Reference& ref = reference_for(n);
    const WallRate rate;
    for (auto _ : state) {
      Matrix A = ref.matrix(0);
      benchmark::DoNotOptimize(A.data());
      benchmark::ClobberMemory();
    }
    rate.report(state, std::int64_t{n} * n);
  } catch (const std::exception& e) {
    fail(state, e);
  }
}

// A ViT with random weights of the real shapes, built through the loader from timm's names.
struct VitShape {
  int D, heads, depth, patch, image;  ///< image: the input's side in pixels
};

VitShape vit_shape(const std::string& name) {
  if (name == "S16_224") return {384, 6, 12, 16, 224};
  if (name == "B16_224") return {768, 12, 12, 16, 224};
  return {384, 6, 12, 8, 480};  // S8_480
}

// A ViT of the shape with random weights, through the loader from timm's names, no classifier.
VitModel vit_model_of(const VitShape& shape) { return testing::random_vit(shape.D, shape.heads, shape.depth, shape.patch, 0); }

const VitModel& vit_model(const std::string& name) {
  static std::map<std::string, VitModel> models;
  auto it = models.find(name);
  if (it == models.end()) it = models.emplace(name, vit_model_of(vit_shape(name))).first;
  return it->second;
}

const VitInput& vit_input_for(const std::string& name) {
  static std::map<std::string, VitInput> inputs;
  auto it = inputs.find(name);
  if (it == inputs.end()) it = inputs.emplace(name, vit_input(vit_model(name), random_image(vit_shape(name).image, 99))).first;
  return it->second;
}

void vit_forward_gpu(benchmark::State& state, const std::string& name) {
  try {
    auto& gs = gpu_state();
    if (!gs) gs = std::make_unique<GpuState>();
    if (!gs->vit) gs->vit = std::make_unique<VitGpuRunner>();
    label_gpu(state);
    const VitModel& model = vit_model(name);
    const std::int64_t budget = vit_memory_budget();
    VitPass pass = gs->vit->run(model, vit_input_for(name), budget);  // uploads the weights, outside the timed loop
    for (auto _ : state) {
      pass = gs->vit->run(model, vit_input_for(name), budget);
      benchmark::DoNotOptimize(pass.T);
    }
    state.counters["pass_mib"] = static_cast<double>(pass.bytes()) / (1 << 20);
  } catch (const std::exception& e) {
    fail(state, e);
  }
}

void vit_forward_cpu(benchmark::State& state, const std::string& name) {
  try {
    const VitModel& model = vit_model(name);
    VitCpuRunner cpu;
    const std::int64_t budget = vit_memory_budget();
    VitPass pass;
    for (auto _ : state) {
      pass = VitPass();  // the previous pass is freed first, as the app replaces its source
      pass = cpu.run(model, vit_input_for(name), budget);
      benchmark::DoNotOptimize(pass.T);
    }
    state.counters["pass_mib"] = static_cast<double>(pass.bytes()) / (1 << 20);
    state.counters["threads"] = cpu.threads();
  } catch (const std::exception& e) {
    fail(state, e);
  }
}

// The matrix view's picture of A (issue 19): A of head 0 pooled to at most 512 × 512 pixels
// (block means) by HandMadeModel::pooled_matrix, never N² values; items are the N² weights.
void pooled_matrix(benchmark::State& state, int n, bool gpu) {
  try {
    static std::map<int, std::unique_ptr<HandMadeModel>> cpu_models;
    if (gpu && !gpu_state()) gpu_state() = std::make_unique<GpuState>();
    auto& model = gpu ? gpu_state()->pooled[n] : cpu_models[n];  // GPU ones go before the context
    if (!model) {
      model = gpu ? std::unique_ptr<HandMadeModel>(std::make_unique<GpuHandMade>()) : make_reference_model();
      model->set_image(image_for(n), bench_settings());
      (void)model->rows(0);  // tokenize and project once, outside the timed loop
    }
    if (gpu) label_gpu(state);
    const WallRate rate;
    for (auto _ : state) {
      BlockImage img = model->pooled_matrix(0, 512, Pooling::Mean);
      benchmark::DoNotOptimize(img.values.data());
      benchmark::ClobberMemory();
    }
    rate.report(state, std::int64_t{n} * n);
  } catch (const std::exception& e) {
    fail(state, e);
  }
}

// What the matrix view does per frame: `rows` image rows of that picture (one call of
// pool_matrix_rows, rows 256.. of 512), at N = 16 384 (b = 32).
void pooled_band_gpu(benchmark::State& state, int rows) {
  try {
    HandMadeGpuEngine& engine = engine_for(16384);
    label_gpu(state);
    BlockImage img = empty_block_image(16384, 512);
    const WallRate rate;
    for (auto _ : state) {
      engine.pool_matrix_rows(0, Pooling::Mean, 256, rows, img);
      benchmark::DoNotOptimize(img.values.data());
      benchmark::ClobberMemory();
    }
    rate.report(state, std::int64_t{rows} * 32 * 16384);
  } catch (const std::exception& e) {
    fail(state, e);
  }
}

// A safetensors writer for F32 tensors of random values, streamed to disk (no copy of the whole
// file in memory): the 8-byte little-endian header length, the JSON header, the tensors' bytes in
// the order given. Values are uniform in [−0.05, 0.05) from a fixed seed.
struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;
};

std::uint64_t write_random_safetensors(const std::filesystem::path& path, const std::vector<TensorSpec>& tensors) {
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  std::uint64_t offset = 0;
  for (const TensorSpec& t : tensors) {
    std::uint64_t numel = 1;
    std::string shape;
    for (const std::int64_t d : t.shape) {
      numel *= static_cast<std::uint64_t>(d);
      shape += (shape.empty() ? "" : ",") + std::to_string(d);
    }
    header += ",\"" + t.name + "\":{\"dtype\":\"F32\",\"shape\":[" + shape + "],\"data_offsets\":[" + std::to_string(offset) +
              "," + std::to_string(offset + 4 * numel) + "]}";
    offset += 4 * numel;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');  // the data part 8-byte aligned, as safetensors writes it
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("cannot write " + path.string());
  char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<char>(static_cast<std::uint64_t>(header.size()) >> (8 * i));
  out.write(length, 8);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  std::vector<char> chunk;
  for (const TensorSpec& t : tensors) {
    std::uint64_t left = 1;
    for (const std::int64_t d : t.shape) left *= static_cast<std::uint64_t>(d);
    while (left > 0) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, 1 << 16));
      chunk.resize(4 * n);
      for (std::size_t i = 0; i < n; ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;  // Knuth's MMIX LCG
        const float v = (static_cast<float>(state >> 40) / 16777216.0f - 0.5f) * 0.1f;
        std::uint32_t u;
        std::memcpy(&u, &v, 4);
        for (int b = 0; b < 4; ++b) chunk[4 * i + b] = static_cast<char>(u >> (8 * b));
      }
      out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      left -= n;
    }
  }
  out.close();
  if (!out) throw Error("cannot write " + path.string() + " (disk full?)");
  return 8 + header.size() + offset;
}

// The ViT-B/16 checkpoint of VitLoad/B16, written once per process.
const std::filesystem::path& vit_b16_file() {
  struct File {
    std::filesystem::path path;
    bool keep = false;
    ~File() {
      std::error_code ec;
      if (!keep && !path.empty()) std::filesystem::remove(path, ec);
    }
  };
  static File file;
  if (file.path.empty()) {
    const char* keep = std::getenv("ATTNLAB_VITLOAD_FILE");
    file.keep = keep && *keep;
    const auto path = file.keep ? std::filesystem::path(keep)
                                : std::filesystem::temp_directory_path() /
                                      ("attnlab-bench-vit-b16-" + std::to_string(::getpid()) + ".safetensors");
    constexpr std::int64_t D = 768, H = 3072, P = 16, grid = 14, classes = 1000;
    std::vector<TensorSpec> t{{"cls_token", {1, 1, D}}, {"pos_embed", {1, 1 + grid * grid, D}},
                              {"patch_embed.proj.weight", {D, 3, P, P}}, {"patch_embed.proj.bias", {D}}};
    for (int i = 0; i < 12; ++i) {
      const std::string b = "blocks." + std::to_string(i) + ".";
      for (const TensorSpec& s : std::vector<TensorSpec>{
               {b + "norm1.weight", {D}}, {b + "norm1.bias", {D}}, {b + "attn.qkv.weight", {3 * D, D}},
               {b + "attn.qkv.bias", {3 * D}}, {b + "attn.proj.weight", {D, D}}, {b + "attn.proj.bias", {D}},
               {b + "norm2.weight", {D}}, {b + "norm2.bias", {D}}, {b + "mlp.fc1.weight", {H, D}},
               {b + "mlp.fc1.bias", {H}}, {b + "mlp.fc2.weight", {D, H}}, {b + "mlp.fc2.bias", {D}}})
        t.push_back(s);
    }
    for (const TensorSpec& s : std::vector<TensorSpec>{
             {"norm.weight", {D}}, {"norm.bias", {D}}, {"head.weight", {classes, D}}, {"head.bias", {classes}}})
      t.push_back(s);
    write_random_safetensors(path, t);
    file.path = path;
  }
  return file.path;
}

// VmRSS or VmHWM of this process from /proc/self/status, in bytes (-1 when unreadable).
double proc_status_bytes(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::atof(line.c_str() + std::strlen(key)) * 1024.0;
  return -1.0;
}

// The growth of the peak resident memory of one load_vit in a forked child, in bytes (NaN when
// the peak cannot be reset or read).
double load_peak_rss_growth(const std::filesystem::path& path) {
  int fds[2];
  if (::pipe(fds) != 0) return std::nan("");
  const pid_t pid = ::fork();
  if (pid < 0) return std::nan("");
  if (pid == 0) {
    ::close(fds[0]);
    double growth = std::nan("");
    {
      std::ofstream clear("/proc/self/clear_refs");
      clear << "5";  // resets VmHWM to the current VmRSS (Linux 4.0+)
    }
    const double before = proc_status_bytes("VmRSS:");
    try {
      const VitModel model = load_vit(path);
      benchmark::DoNotOptimize(model.W_patch.data());
      const double peak = proc_status_bytes("VmHWM:");
      if (before >= 0 && peak >= 0) growth = peak - before;
    } catch (...) {
    }
    [[maybe_unused]] const auto written = ::write(fds[1], &growth, sizeof growth);
    ::_exit(0);
  }
  ::close(fds[1]);
  double growth = std::nan("");
  if (::read(fds[0], &growth, sizeof growth) != static_cast<ssize_t>(sizeof growth)) growth = std::nan("");
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return growth;
}

void vit_load(benchmark::State& state) {
  try {
    const auto& path = vit_b16_file();
    const auto bytes = static_cast<std::int64_t>(std::filesystem::file_size(path));
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) {
      const VitModel model = load_vit(path);
      benchmark::DoNotOptimize(model.blocks.back().W_fc2.data());
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds > 0) state.counters["bytes_per_second"] = static_cast<double>(state.iterations() * bytes) / seconds;
    state.counters["file_MB"] = static_cast<double>(bytes) / 1e6;
    state.counters["peak_rss_MB"] = load_peak_rss_growth(path) / 1e6;
  } catch (const std::exception& e) {
    fail(state, e);
  }
}

void relevance_cpu(benchmark::State& state, const std::string& name) {
  try {
    static const VitModel model = [&] {
      const VitShape shape = vit_shape(name);
      return testing::random_vit(shape.D, shape.heads, shape.depth, shape.patch, 1000);
    }();
    const VitInput& input = vit_input_for(name);
    const std::int64_t budget = vit_memory_budget();
    double forward = 0, backward = 0, map = 0;
    for (auto _ : state) {
      const VitGradients g = vit_gradients(model, input, VitGradientTarget::class_logit(VitGradientTarget::kTopClass), budget);
      const auto start = std::chrono::steady_clock::now();
      const std::vector<float> r = relevance_map(g, RelevanceMethod::Chefer);
      map += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      forward += g.forward_ms;
      backward += g.backward_ms;
      benchmark::DoNotOptimize(r.data());
    }
    const double n = static_cast<double>(std::max<benchmark::IterationCount>(1, state.iterations()));
    state.counters["forward_ms"] = forward / n;
    state.counters["backward_ms"] = backward / n;
    state.counters["map_ms"] = map / n;
  } catch (const std::exception& e) {
    fail(state, e);
  }
}

void register_all() {
  // Explicit names, no Args(): the names come out exactly as "RowAllHeads/Gpu/1024".
  for (int n : {1024, 4096, 16384}) {
    const std::string size = std::to_string(n);
    benchmark::RegisterBenchmark(("RowAllHeads/Gpu/" + size).c_str(), row_all_heads_gpu, n)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("RowAllHeads/Eigen/" + size).c_str(), row_all_heads_eigen, n)->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("FullMatrix/Gpu/4096", full_matrix_gpu, 4096)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("FullMatrix/Eigen/4096", full_matrix_eigen, 4096)->Unit(benchmark::kMillisecond);
  for (const std::string name : {"S16_224", "B16_224", "S8_480"}) {
    benchmark::RegisterBenchmark(("VitForward/Cpu/" + name).c_str(), vit_forward_cpu, name)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("VitForward/Gpu/" + name).c_str(), vit_forward_gpu, name)->Unit(benchmark::kMillisecond);
  }
  for (int n : {4096, 16384}) {
    const std::string size = std::to_string(n);
    benchmark::RegisterBenchmark(("PooledMatrix/Gpu/" + size).c_str(), pooled_matrix, n, true)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("PooledMatrix/Eigen/" + size).c_str(), pooled_matrix, n, false)->Unit(benchmark::kMillisecond);
  }
  for (int rows : {1, 4, 16})
    benchmark::RegisterBenchmark(("PooledBand/Gpu/16384/" + std::to_string(rows)).c_str(), pooled_band_gpu, rows)
        ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("Relevance/Cpu/S16_224", relevance_cpu, "S16_224")->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("VitLoad/B16", vit_load)->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  attnlab::platform::keep_freed_memory_for_reuse();  // as the app's main() does
  register_all();
  benchmark::Initialize(&argc, argv);
  // Which kernels OpenBLAS took (OPENBLAS_CORETYPE changes them; docs/SPEED.md).
  benchmark::AddCustomContext("blas", std::string(attnlab::blas::library_name()) + " " + attnlab::blas::kernel_name());
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const size_t matched = benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  gpu_state().reset();  // engines, then the context, while EGL is still up
  if (g_failed) std::fprintf(stderr, "attnlab-bench: some cases could not run (see the error above)\n");
  if (matched == 0) std::fprintf(stderr, "attnlab-bench: no case matches the filter\n");
  return g_failed || matched == 0 ? 1 : 0;
}
