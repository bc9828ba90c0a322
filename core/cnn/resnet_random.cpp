// A ResNet with random weights (core/cnn/resnet.hpp, random_resnet_tensors()): the window's
// "random ResNet-18" (what a CNN computes before any training), the tests' and the benchmarks'.
#include "core/cnn/resnet.hpp"

#include <cmath>
#include <random>

namespace attnlab {

SafetensorsFile random_resnet_tensors(bool bottleneck, std::array<int, 4> stage_blocks, int width, int classes, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.5f, 1.5f);
  SafetensorsFile file;
  auto add = [&](const std::string& name, std::vector<std::int64_t> dims, float sd, float mean = 0.0f) {
    Tensor t;
    t.shape = std::move(dims);
    t.values.resize(static_cast<std::size_t>(t.numel()));
    for (float& v : t.values) v = mean + sd * normal(gen);
    file.tensors[name] = std::move(t);
  };
  // He initialisation (std √(2 / fan-in)), a batch norm of random statistics after each.
  auto conv = [&](const std::string& name, const std::string& norm, std::int64_t out, std::int64_t in, std::int64_t k, float gain = 1.0f) {
    add(name + ".weight", {out, in, k, k}, gain * std::sqrt(2.0f / static_cast<float>(in * k * k)));
    add(norm + ".weight", {out}, 0.1f, 1.0f), add(norm + ".bias", {out}, 0.1f), add(norm + ".running_mean", {out}, 0.1f);
    Tensor var;
    var.shape = {out};
    for (std::int64_t i = 0; i < out; ++i) var.values.push_back(uniform(gen));
    file.tensors[norm + ".running_var"] = std::move(var);
  };
  conv("conv1", "bn1", width, 3, 7);
  std::int64_t channels = width;
  const int expansion = bottleneck ? 4 : 1;
  for (int s = 0; s < 4; ++s) {
    const std::int64_t planes = static_cast<std::int64_t>(width) << s, out = planes * expansion;
    for (int i = 0; i < stage_blocks[static_cast<std::size_t>(s)]; ++i) {
      const std::string b = "layer" + std::to_string(s + 1) + "." + std::to_string(i) + ".";
      if (bottleneck) {
        conv(b + "conv1", b + "bn1", planes, channels, 1), conv(b + "conv2", b + "bn2", planes, planes, 3);
        conv(b + "conv3", b + "bn3", out, planes, 1, 0.3f);
      } else {
        conv(b + "conv1", b + "bn1", planes, channels, 3), conv(b + "conv2", b + "bn2", out, planes, 3, 0.3f);
      }
      if (i == 0 && (s > 0 || channels != out)) conv(b + "downsample.0", b + "downsample.1", out, channels, 1);
      channels = out;
    }
  }
  if (classes > 0) add("fc.weight", {classes, channels}, 1.0f / std::sqrt(static_cast<float>(channels))), add("fc.bias", {classes}, 0.1f);
  return file;
}

}  // namespace attnlab
