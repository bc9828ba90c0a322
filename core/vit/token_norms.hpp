#pragma once
// High-norm tokens (Darcet et al. 2023, "Vision Transformers Need Registers", fig. 3; SPEC §12):
// a trained ViT without registers grows a few patch tokens whose residual stream
// ‖z_l[t]‖₂ (after block l, before the final LayerNorm: VitPass::token_norms) is many times the
// others'; the paper's histogram of the norms has two modes. Here a patch is high-norm when its
// norm exceeds a ratio, set by the user, times the median patch norm of the layer: a threshold
// that means the same on models whose norms differ by orders of magnitude.
#include <cstdint>
#include <span>
#include <vector>

namespace attnlab {

/// The patches over the threshold in one layer.
struct HighNormTokens {
  float median = 0;     ///< the median of the patch norms (the mean of the middle two for an even count)
  float threshold = 0;  ///< ratio × median; a patch is marked when its norm is strictly above it
  std::vector<std::uint8_t> marked;  ///< 1 per patch over the threshold, in the norms' (raster) order
  int count = 0;        ///< how many are marked
  /// The marked patches' indices (raster order, ascending), as sidecars list them.
  std::vector<int> indices() const;
};

/// `patch_norms`: ‖z_l[t]‖₂ of the patch tokens only (prefix left out), N ≥ 1 values ≥ 0;
/// `ratio` > 0. Throws Error on an empty span or a ratio ≤ 0 (or not finite).
HighNormTokens high_norm_tokens(std::span<const float> patch_norms, float ratio);

/// Counts of `values` in `bins` equal bins over [lo, hi]: bin b holds lo + b·w ≤ v < lo + (b+1)·w
/// with w = (hi − lo)/bins, the last bin also hi; values outside [lo, hi] count in the end bins,
/// and all go in bin 0 when hi ≤ lo. bins ≥ 1, else Error.
struct NormHistogram {
  float lo = 0, hi = 0;
  std::vector<int> counts;
};
NormHistogram norm_histogram(std::span<const float> values, float lo, float hi, int bins);

}  // namespace attnlab
