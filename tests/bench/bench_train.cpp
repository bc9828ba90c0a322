// attnlab-bench, issue 29: one training step of the ViT trainer (core/vit/vit_train.hpp):
// forward over the batch, backward, AdamW update.
//
//   TrainStep/<model>/<batch>/<threads>  <model> names the shape: D96_L4_H4_P7 is `attnlab
//                              train`'s default (D 96, depth 4, 4 heads, patch 7 on 28² images:
//                              T = 17 tokens, MLP 192, cls token, learned positions);
//                              D64_L6_H4_P4 the bundled model's (T = 50, MLP 256); random
//                              images (the data's cost is not part of it). Counters: images_per_s
//                              (wall) and process_cpu_ms per step (CPU time of every thread: less
//                              disturbed by other work on the machine than wall time).
// tests/bench/bench_pytorch_train.py times PyTorch CPU's step on the same model and batch.
#include "test_support.hpp"
#include "core/vit/vit_train.hpp"

#include <benchmark/benchmark.h>

#include <ctime>
#include <random>

namespace attnlab {
namespace {

struct TrainCase {
  const char* name;
  int D, depth, heads, patch, mlp;
};

void train_step(benchmark::State& state, TrainCase c, int batch, int threads) {
  const VitTrainShape shape{.patch = c.patch, .D = c.D, .depth = c.depth, .heads = c.heads, .mlp_hidden = c.mlp};
  VitTrainSettings settings;
  settings.warmup_steps = 10;
  settings.total_steps = 1000000;
  VitTrainer trainer(shape, settings, 1, threads);
  std::mt19937 gen(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> images(static_cast<std::size_t>(batch) * 3 * 28 * 28);
  for (float& v : images) v = normal(gen);
  std::vector<int> labels(static_cast<std::size_t>(batch));
  for (int i = 0; i < batch; ++i) labels[static_cast<std::size_t>(i)] = i % 10;
  trainer.train_step(images, labels);  // buffers allocated
  const double cpu0 = testing::process_cpu_ms();
  for (auto _ : state) benchmark::DoNotOptimize(trainer.train_step(images, labels).loss);
  const double steps = static_cast<double>(state.iterations());
  state.counters["process_cpu_ms"] = (testing::process_cpu_ms() - cpu0) / steps;
  state.counters["images_per_s"] = benchmark::Counter(steps * batch, benchmark::Counter::kIsRate);
}

const bool registered = [] {
  for (const TrainCase c : {TrainCase{"D96_L4_H4_P7", 96, 4, 4, 7, 192}, TrainCase{"D64_L6_H4_P4", 64, 6, 4, 4, 256},
                            TrainCase{"D64_L4_H4_P4", 64, 4, 4, 4, 128}})
    for (const int threads : {1, 2})
      benchmark::RegisterBenchmark(("TrainStep/" + std::string(c.name) + "/128/" + std::to_string(threads)).c_str(), train_step, c, 128,
                                   threads)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
  return true;
}();

}  // namespace
}  // namespace attnlab
