#pragma once
// Is a relevance map faithful to the model? The deletion and insertion curves of RISE (Petsiuk
// et al. 2018) as Chefer, Gur and Wolf (2021) evaluate relevance with them (SPEC §13): remove the
// patches most relevant first and watch the class's probability fall (a faithful map makes it
// fall fast: a small area under the curve), or restore them from a blank image and watch it rise
// (a large area). A fixed-seed random order is the baseline every method must beat.
#include "core/vit/relevance.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace attnlab {

/// Points on each curve: 0, 10, …, 100 % of the patches removed (deletion) or restored
/// (insertion).
inline constexpr int kFaithfulnessSteps = 11;

/// One image's two curves: softmax(y)_c at each step, and their areas (trapezoid rule over [0, 1]).
struct FaithfulnessCurves {
  std::array<double, kFaithfulnessSteps> deletion{}, insertion{};
  double deletion_auc = 0.0, insertion_auc = 0.0;
};

/// The patches in order of `map`, largest first, ties broken by patch index (N indices).
std::vector<int> relevance_order(std::span<const float> map);

/// A random order of N patches from a fixed seed (a Fisher–Yates shuffle drawn from
/// std::mt19937_64(seed), the same on every platform).
std::vector<int> random_patch_order(int N, std::uint64_t seed);

/// The area under a curve sampled at kFaithfulnessSteps equal steps over [0, 1], by the
/// trapezoid rule.
double curve_area(const std::array<double, kFaithfulnessSteps>& curve);

/// The patches step s removes or restores: ⌊s·N/10⌋ of them, the first of `order`.
int faithfulness_patches(int step, int N);

/// Both curves for class `klass` on `input`, patches taken in `order` (N indices): deletion
/// replaces the first ⌊s·N/10⌋ patches by the image's mean colour (the mean of each channel of
/// the model's input tensor), insertion starts from the image filled with its mean colour and
/// restores them; each point is a forward pass of `model` on the CPU path (`threads` threads),
/// softmax(y)_klass. Throws what the forward throws ("cancelled" when `stop` is set).
FaithfulnessCurves faithfulness_curves(const VitModel& model, const VitInput& input, int klass, std::span<const int> order,
                                       std::int64_t budget, int threads = 1, const std::atomic<bool>* stop = nullptr);

/// One row of the faithfulness table: a method (or "random") and its mean areas over the images.
struct FaithfulnessRow {
  std::string method;
  double deletion_auc = 0.0;   ///< mean over the images; lower is more faithful
  double insertion_auc = 0.0;  ///< mean over the images; higher is more faithful
  int images = 0;
};

/// The faithfulness table over `count` images (image(i) gives image i, already the size the
/// model is run at): for each image the class the model decides (its likeliest), one gradient
/// pass, each method's map and curves, and the random order's (seed: the image's index). Rows in
/// the order of `methods`, then "random". `progress(done, count)` is called after each image.
/// Throws Error for an image the model cannot take, and "cancelled" when `stop` is set.
std::vector<FaithfulnessRow> faithfulness_table(const VitModel& model, int count, const std::function<VitInput(int)>& image,
                                                std::span<const RelevanceMethod> methods, std::int64_t budget,
                                                const std::function<void(int, int)>& progress = {},
                                                const std::atomic<bool>* stop = nullptr);

}  // namespace attnlab
