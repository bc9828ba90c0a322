// Issue 50's speed (a ResNet beside the ViT, SPEC §14): the CPU forward of ResNet-18 and -50 at
// 224 × 224 (to set beside PyTorch's in one sitting: tests/bench/bench_pytorch_resnet.py), a
// Grad-CAM pass (forward keeping every activation, and the backward), and the CKA of ViT-S/16 ×
// ResNet-50 over 500 images with its time split (both models' passes, the Grams and CKA). Random
// weights of the real shapes, through the loaders.
#include "test_support.hpp"

#include "core/cnn/model_cka.hpp"
#include "core/cnn/resnet.hpp"

#include <benchmark/benchmark.h>

#include <map>

namespace attnlab {
namespace {

const ResnetModel& resnet(const std::string& name) {
  static std::map<std::string, ResnetModel> models;
  auto it = models.find(name);
  if (it == models.end()) {
    const bool r50 = name == "R50";
    it = models.emplace(name, testing::random_resnet(r50, r50 ? std::array<int, 4>{3, 4, 6, 3} : std::array<int, 4>{2, 2, 2, 2}, 64, 1000))
             .first;
  }
  return it->second;
}

void cnn_forward_cpu(benchmark::State& state, const std::string& name) {
  try {
    const ResnetModel& model = resnet(name);
    const CnnInput input = cnn_input(model.arch, testing::random_image(224, 224, 99));
    const std::int64_t budget = vit_memory_budget();
    for (auto _ : state) benchmark::DoNotOptimize(resnet_forward(model, input, budget).logits.data());
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void cnn_grad_cam_cpu(benchmark::State& state, const std::string& name) {
  try {
    const ResnetModel& model = resnet(name);
    const CnnInput input = cnn_input(model.arch, testing::random_image(224, 224, 99));
    const std::int64_t budget = vit_memory_budget();
    for (auto _ : state) {
      const CnnGradients g = resnet_gradients(model, input, CnnGradientTarget::class_logit(CnnGradientTarget::kTopClass), budget);
      benchmark::DoNotOptimize(resnet_grad_cam(g, static_cast<int>(model.blocks.size()) - 1).data());
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// ViT-S/16 (no classifier) × ResNet-50 over `count` random 224 × 224 images in minibatches of 100
// (the exact CKA of 500 images would hold 12 GiB of features), once.
void cross_cka_vit_resnet(benchmark::State& state, int count) {
  try {
    const VitModel vit = testing::random_vit(384, 6, 12, 16, 0);
    const std::int64_t budget = vit_memory_budget();
    const CkaModel a = vit_cka_model(vit, budget), b = resnet_cka_model(resnet("R50"), budget);
    auto image = [](int i) { return testing::random_image(224, 224, 1000u + static_cast<unsigned>(i)); };
    CrossCka m;
    for (auto _ : state) m = cross_cka(a, b, count, image, 100, budget);
    state.counters["forward_s"] = m.forward_seconds;
    state.counters["gram_and_cka_s"] = m.gram_seconds;
    state.counters["images"] = m.images;
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

const bool registered = [] {
  for (const std::string name : {"R18", "R50"}) {
    benchmark::RegisterBenchmark(("CnnForward/Cpu/" + name + "_224").c_str(), cnn_forward_cpu, name)->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark(("CnnGradCam/Cpu/" + name + "_224").c_str(), cnn_grad_cam_cpu, name)->Unit(benchmark::kMillisecond)->UseRealTime();
  }
  benchmark::RegisterBenchmark("CrossCka/VitS16xR50/500", cross_cka_vit_resnet, 500)
      ->Unit(benchmark::kSecond)
      ->UseRealTime()
      ->Iterations(1);
  return true;
}();

}  // namespace
}  // namespace attnlab
