#include "core/vit/token_norms.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace attnlab {

HighNormTokens high_norm_tokens(std::span<const float> patch_norms, float ratio) {
  if (patch_norms.empty()) throw Error(_("no patch norms to threshold"));
  if (!(ratio > 0) || !std::isfinite(ratio))
    throw Error(text_format(_("the high-norm ratio must be > 0, got %f"), static_cast<double>(ratio)));
  std::vector<float> sorted(patch_norms.begin(), patch_norms.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  HighNormTokens out;
  out.median = n % 2 ? sorted[n / 2] : 0.5f * (sorted[n / 2 - 1] + sorted[n / 2]);
  out.threshold = ratio * out.median;
  out.marked.resize(n);
  for (std::size_t t = 0; t < n; ++t) {
    out.marked[t] = patch_norms[t] > out.threshold;
    out.count += out.marked[t];
  }
  return out;
}

std::vector<int> HighNormTokens::indices() const {
  std::vector<int> out;
  for (std::size_t t = 0; t < marked.size(); ++t)
    if (marked[t]) out.push_back(static_cast<int>(t));
  return out;
}

NormHistogram norm_histogram(std::span<const float> values, float lo, float hi, int bins) {
  if (bins < 1) throw Error(text_format(_("a histogram needs at least one bin, got %d"), bins));
  NormHistogram h{lo, hi, std::vector<int>(static_cast<std::size_t>(bins), 0)};
  const float width = (hi - lo) / static_cast<float>(bins);
  for (const float v : values) {
    const int b = width > 0 ? static_cast<int>(std::floor((v - lo) / width)) : 0;
    ++h.counts[static_cast<std::size_t>(std::clamp(b, 0, bins - 1))];
  }
  return h;
}

}  // namespace attnlab
