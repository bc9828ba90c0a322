#include "core/vit/faithfulness.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/vit/vit_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace attnlab {

std::vector<int> relevance_order(std::span<const float> map) {
  std::vector<int> order(map.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return map[static_cast<std::size_t>(a)] > map[static_cast<std::size_t>(b)]; });
  return order;
}

std::vector<int> random_patch_order(int N, std::uint64_t seed) {
  std::vector<int> order(static_cast<std::size_t>(std::max(0, N)));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 gen(seed);
  for (int i = N - 1; i > 0; --i) {  // Fisher–Yates, j uniform in [0, i] by rejection (no modulo bias)
    const std::uint64_t range = static_cast<std::uint64_t>(i) + 1, limit = std::mt19937_64::max() - std::mt19937_64::max() % range;
    std::uint64_t r = gen();
    while (r >= limit) r = gen();
    std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(r % range)]);
  }
  return order;
}

double curve_area(const std::array<double, kFaithfulnessSteps>& curve) {
  double area = 0.0;
  for (int s = 1; s < kFaithfulnessSteps; ++s)
    area += 0.5 * (curve[static_cast<std::size_t>(s - 1)] + curve[static_cast<std::size_t>(s)]);
  return area / (kFaithfulnessSteps - 1);
}

int faithfulness_patches(int step, int N) { return static_cast<int>(static_cast<std::int64_t>(step) * N / (kFaithfulnessSteps - 1)); }

FaithfulnessCurves faithfulness_curves(const VitModel& model, const VitInput& input, int klass, std::span<const int> order,
                                       std::int64_t budget, int threads, const std::atomic<bool>* stop) {
  const int N = input.N(), P2 = model.arch.patch * model.arch.patch;
  if (static_cast<int>(order.size()) != N) throw Error(_("internal: a faithfulness order must list every patch"));
  if (klass < 0 || klass >= model.arch.classes) throw Error(text_format(_("class %d is outside the classifier"), klass));
  // The image's mean colour, per channel of the input tensor.
  RowVector blank(input.patches.cols());
  for (int c = 0; c < 3; ++c) blank.segment(c * P2, P2).setConstant(input.patches.middleCols(c * P2, P2).mean());
  VitCpuRunner runner(threads);
  auto probability = [&](const VitInput& x) {  // softmax(y)_klass
    const std::vector<float> z = runner.run(model, x, budget, stop).logits;
    const double top = *std::max_element(z.begin(), z.end());
    double sum = 0.0;
    for (const float v : z) sum += std::exp(static_cast<double>(v) - top);
    return std::exp(static_cast<double>(z[static_cast<std::size_t>(klass)]) - top) / sum;
  };
  FaithfulnessCurves out;
  VitInput deleted = input, inserted = input;
  inserted.patches.rowwise() = blank;
  for (int s = 0; s < kFaithfulnessSteps; ++s) {
    for (int i = s == 0 ? 0 : faithfulness_patches(s - 1, N); i < faithfulness_patches(s, N); ++i) {
      const int p = order[static_cast<std::size_t>(i)];
      deleted.patches.row(p) = blank;
      inserted.patches.row(p) = input.patches.row(p);
    }
    out.deletion[static_cast<std::size_t>(s)] = probability(deleted);
    out.insertion[static_cast<std::size_t>(s)] = probability(inserted);
  }
  out.deletion_auc = curve_area(out.deletion);
  out.insertion_auc = curve_area(out.insertion);
  return out;
}

std::vector<FaithfulnessRow> faithfulness_table(const VitModel& model, int count, const std::function<VitInput(int)>& image,
                                                std::span<const RelevanceMethod> methods, std::int64_t budget,
                                                const std::function<void(int, int)>& progress, const std::atomic<bool>* stop) {
  std::vector<FaithfulnessRow> rows;
  for (const RelevanceMethod m : methods) rows.push_back({relevance_method_name(m), 0.0, 0.0, 0});
  rows.push_back({"random", 0.0, 0.0, 0});
  for (int i = 0; i < count; ++i) {
    const VitInput input = image(i);
    const VitGradients g = vit_gradients(model, input, VitGradientTarget::class_logit(VitGradientTarget::kTopClass), budget, stop);
    auto add = [&](FaithfulnessRow& row, const std::vector<int>& order) {
      const FaithfulnessCurves c = faithfulness_curves(model, input, g.klass, order, budget, 1, stop);
      row.deletion_auc += c.deletion_auc;
      row.insertion_auc += c.insertion_auc;
      ++row.images;
    };
    for (std::size_t m = 0; m < methods.size(); ++m) add(rows[m], relevance_order(relevance_map(g, methods[m])));
    add(rows.back(), random_patch_order(input.N(), static_cast<std::uint64_t>(i)));
    if (progress) progress(i + 1, count);
  }
  for (FaithfulnessRow& r : rows)
    if (r.images > 0) {
      r.deletion_auc /= r.images;
      r.insertion_auc /= r.images;
    }
  return rows;
}

}  // namespace attnlab
