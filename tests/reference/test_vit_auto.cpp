// Issue 37: `--backend auto` picks the path by measuring. With injected runners and a fake clock
// (each fake pass advances it by its path's cost), auto keeps the faster path, remembers the
// choice per (renderer, CPU, model shape) and reuses it without measuring again; without a GPU
// to time it is the CPU path. The CPU's name comes from /proc/cpuinfo's "model name".
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/vit/vit_auto.hpp"
#include "test_support.hpp"

using namespace attnlab;
using attnlab::testing::temp_dir;

namespace {

// A runner that costs `ms` on the fake clock and counts its passes.
class FakeRunner final : public VitRunner {
 public:
  FakeRunner(const char* path, double ms, double& clock, int& passes)
      : path_(path), ms_(ms), clock_(clock), passes_(passes) {}
  const char* path() const override { return path_; }
  VitPass run(const VitModel&, const VitInput& input, std::int64_t, const std::atomic<bool>*) override {
    clock_ += ms_;
    ++passes_;
    VitPass pass;
    pass.T = 1 + input.N();
    pass.path = path_;
    return pass;
  }

 private:
  const char* path_;
  double ms_;
  double& clock_;
  int& passes_;
};

struct Bench {
  double clock = 0;
  int cpu_passes = 0, gpu_passes = 0;
  VitModel model;
  VitInput input;
  std::filesystem::path store = temp_dir() / "vit_backend.json";
  Bench() {
    model.arch.depth = 12;
    model.arch.D = 384;
    model.arch.heads = 6;
    model.arch.mlp_hidden = 1536;
    model.arch.patch = 16;
    input.cols = input.rows = 14;
  }
  int gpu_runners = 0;  // GPU runners made (each would compile its shaders)
  VitAutoRunner runner(double cpu_ms, double gpu_ms, const std::string& renderer = "Fake GPU 1000") {
    auto make_gpu = [this, gpu_ms] {
      ++gpu_runners;
      return std::unique_ptr<VitRunner>(std::make_unique<FakeRunner>("gpu", gpu_ms, clock, gpu_passes));
    };
    return VitAutoRunner(std::make_unique<FakeRunner>("cpu", cpu_ms, clock, cpu_passes), make_gpu, renderer, "",
                         "Fake CPU @ 3 GHz", VitAutoStore(store), [this] { return clock; });
  }
};

}  // namespace

TEST(VitAuto, ASlowCpuPathMakesAutoChooseTheGpuAndTheChoiceIsRemembered) {
  Bench b;
  {
    VitAutoRunner auto_runner = b.runner(/*cpu_ms=*/300, /*gpu_ms=*/40);
    const VitPass pass = auto_runner.run(b.model, b.input, 1 << 30);
    EXPECT_EQ(pass.path, "gpu");
    EXPECT_STREQ(auto_runner.path(), "gpu");
    EXPECT_EQ(auto_runner.measurements(), 1);
    EXPECT_EQ(b.cpu_passes, 1);
    EXPECT_EQ(b.gpu_passes, 1);
    const VitAutoTiming& t = auto_runner.timing();
    EXPECT_DOUBLE_EQ(t.cpu_ms, 300);
    EXPECT_DOUBLE_EQ(t.gpu_ms, 40);
    EXPECT_FALSE(t.remembered);
    EXPECT_EQ(vit_auto_summary(t), "auto: cpu 300 ms, gpu 40 ms \u2192 gpu");
    // A second pass of the same runner (another image of the same size) measures nothing.
    EXPECT_EQ(auto_runner.run(b.model, b.input, 1 << 30).path, "gpu");
    EXPECT_EQ(auto_runner.measurements(), 1);
    EXPECT_EQ(b.cpu_passes, 1);
    EXPECT_EQ(b.gpu_passes, 2);
  }
  ASSERT_TRUE(std::filesystem::exists(b.store));
  // The next run (a new process's runner): the remembered choice, no CPU pass at all.
  VitAutoRunner again = b.runner(300, 40);
  EXPECT_EQ(again.run(b.model, b.input, 1 << 30).path, "gpu");
  EXPECT_EQ(again.measurements(), 0);
  EXPECT_EQ(b.cpu_passes, 1);
  EXPECT_TRUE(again.timing().remembered);
  const std::string line = vit_auto_summary(again.timing());
  EXPECT_EQ(line.rfind("auto: remembered gpu (cpu 300 ms, gpu 40 ms, measured 20", 0), 0u) << line;
}

TEST(VitAuto, AFastCpuPathIsKeptAndEachRendererAndShapeIsMeasuredOnce) {
  Bench b;
  VitAutoRunner first = b.runner(/*cpu_ms=*/71, /*gpu_ms=*/286);
  EXPECT_EQ(first.run(b.model, b.input, 1 << 30).path, "cpu");
  EXPECT_EQ(vit_auto_summary(first.timing()), "auto: cpu 71 ms, gpu 286 ms \u2192 cpu");
  EXPECT_EQ(b.gpu_runners, 1);
  // Remembered as the CPU's: the next run makes no GPU runner at all (no shaders compiled).
  VitAutoRunner remembered = b.runner(71, 286);
  EXPECT_EQ(remembered.run(b.model, b.input, 1 << 30).path, "cpu");
  EXPECT_EQ(remembered.measurements(), 0);
  EXPECT_EQ(b.gpu_runners, 1);
  // Another input size (another T) is another shape: measured again.
  VitInput larger = b.input;
  larger.cols = larger.rows = 28;
  VitAutoRunner second = b.runner(71, 286);
  EXPECT_EQ(second.run(b.model, larger, 1 << 30).path, "cpu");
  EXPECT_EQ(second.measurements(), 1);
  // Another renderer (another GPU in the same machine): measured again, and there the GPU wins.
  VitAutoRunner other_gpu = b.runner(71, 20, "Faster GPU 2000");
  EXPECT_EQ(other_gpu.run(b.model, b.input, 1 << 30).path, "gpu");
  EXPECT_EQ(other_gpu.measurements(), 1);
  // Each is remembered under its own key.
  VitAutoStore store(b.store);
  const auto cpu_key = vit_auto_key("Fake GPU 1000", "Fake CPU @ 3 GHz", b.model.arch, 197);
  EXPECT_EQ(cpu_key, "Fake GPU 1000 | Fake CPU @ 3 GHz | L12 D384 H6 MLP1536 P16 T197");
  ASSERT_TRUE(store.find(cpu_key).has_value());
  EXPECT_EQ(store.find(cpu_key)->choice, "cpu");
  ASSERT_TRUE(store.find(vit_auto_key("Faster GPU 2000", "Fake CPU @ 3 GHz", b.model.arch, 197)).has_value());
  EXPECT_EQ(store.find(vit_auto_key("Faster GPU 2000", "Fake CPU @ 3 GHz", b.model.arch, 197))->choice, "gpu");
  EXPECT_FALSE(store.find(vit_auto_key("Fake GPU 1000", "Another CPU", b.model.arch, 197)).has_value());
}

TEST(VitAuto, WithoutAGpuToTimeItIsTheCpuPathAndNothingIsRemembered) {
  Bench b;
  VitAutoRunner runner(std::make_unique<FakeRunner>("cpu", 71, b.clock, b.cpu_passes), VitAutoRunner::MakeRunner(), "",
                       "llvmpipe (LLVM 15.0.6, 256 bits) is a software rasterizer", "Fake CPU", VitAutoStore(b.store),
                       [&b] { return b.clock; });
  EXPECT_EQ(runner.run(b.model, b.input, 1 << 30).path, "cpu");
  EXPECT_EQ(vit_auto_summary(runner.timing()),
            "auto: cpu 71 ms, gpu not timed (llvmpipe (LLVM 15.0.6, 256 bits) is a software rasterizer) \u2192 cpu");
  EXPECT_EQ(runner.measurements(), 0);
  EXPECT_FALSE(std::filesystem::exists(b.store));
}

TEST(VitAuto, AStoreThatCannotBeReadRemembersNothing) {
  Bench b;
  std::ofstream(b.store) << "{ not json";
  VitAutoRunner runner = b.runner(300, 40);
  EXPECT_EQ(runner.run(b.model, b.input, 1 << 30).path, "gpu");
  EXPECT_EQ(runner.measurements(), 1);  // measured, and the file rewritten whole
  EXPECT_TRUE(
      VitAutoStore(b.store).find(vit_auto_key("Fake GPU 1000", "Fake CPU @ 3 GHz", b.model.arch, 197)).has_value());
}

TEST(VitAuto, TheCpuNameIsProcCpuinfosModelName) {
  std::istringstream info(
      "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13 64-Core Processor\n"
      "processor\t: 1\nmodel name\t: AMD EPYC 7B13 64-Core Processor\n");
  EXPECT_EQ(cpu_model_name_from(info), "AMD EPYC 7B13 64-Core Processor");
  std::istringstream arm("processor\t: 0\nBogoMIPS\t: 48.00\n");
  EXPECT_EQ(cpu_model_name_from(arm), "unknown CPU");
  EXPECT_FALSE(cpu_model_name().empty());
}
