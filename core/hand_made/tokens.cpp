#include "core/hand_made/tokens.hpp"

#include "core/base/budget.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <cstdio>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>

namespace attnlab {

PatchGrid make_grid(int width, int height, int K, EdgeMode edge) {
  // TRANSLATORS: K is the patch size in pixels.
  if (K < 1) throw Error(text_format(_("patch size K must be at least 1 pixel, got %d"), K));
  if (width < 1 || height < 1) throw Error(_("the image is empty"));
  if (K > kMaxPatch)
    throw Error(text_format(_("patch size K=%d is more than the largest accepted, %d (a token's 3·K² values are counted in 32 "
                              "bits on the GPU)"),
                            K, kMaxPatch));
  PatchGrid g;
  g.K = K;
  g.image_width = width;
  g.image_height = height;
  g.edge = edge;
  if (edge == EdgeMode::Crop) {
    if (K > width || K > height)
      throw Error(
          text_format(_("patch size K=%d is larger than the image (%dx%d pixels): no whole patch fits"), K, width, height));
    g.cols = width / K;
    g.rows = height / K;
  } else {
    g.cols = (width + K - 1) / K;
    g.rows = (height + K - 1) / K;
  }
  if (static_cast<long long>(g.cols) * g.rows > kMaxTokens)
    throw Error(text_format(_("patch size K=%d gives %lld tokens, more than the limit of %d; choose a larger K"), K,
                            static_cast<long long>(g.cols) * g.rows, kMaxTokens));
  return g;
}

int token_at(const PatchGrid& grid, int col, int row) {
  if (!grid.contains(col, row))
    throw Error(text_format(_("patch (%d,%d) is outside the %dx%d grid (columns 0..%d, rows 0..%d)"), col, row, grid.cols,
                            grid.rows, grid.cols - 1, grid.rows - 1));
  return grid.index(col, row);
}

std::size_t hand_made_bytes(const PatchGrid& grid) {
  const std::size_t K = static_cast<std::size_t>(std::max(grid.K, 0)),
                    N = static_cast<std::size_t>(std::max(grid.N(), 0));
  const std::size_t raw = checked_product({3, K, K});  // 3K² values per raw token
  std::size_t floats = 0;
  // W_tokenize (R × 3K²): the matrix, the copy staged for the GPU, the GPU's buffer.
  floats = checked_sum(floats, checked_product({3, TokenLayout::kRandomDims, raw}));
  floats = checked_sum(floats, checked_product({N, raw}));  // the raw tokens, N × 3K² (CPU reference)
  // The padded picture: cols·K × rows·K RGB (the padding included).
  floats = checked_sum(floats, checked_product({static_cast<std::size_t>(std::max(grid.cols, 0)), K,
                                                static_cast<std::size_t>(std::max(grid.rows, 0)), K, 3}));
  floats = checked_sum(floats, checked_product({N, 256}));  // tokens, codes, every head's q, k, v, rows, outputs
  return checked_product({floats, sizeof(float)});
}

void check_hand_made_budget(const PatchGrid& grid, std::uint64_t budget) {
  budget = std::max<std::uint64_t>(budget, kAlwaysAllowedBytes);
  const bool ceiling = budget > kHandMadeLimitBytes;  // the pipeline's own limit is the tighter one
  budget = std::min(budget, kHandMadeLimitBytes);
  const std::size_t need = hand_made_bytes(grid);
  if (need <= budget) return;
  // The largest K (same image, same edge mode) that fits: the need grows with K but for the
  // grid's steps, so a bisection, then down to one that fits.
  auto bytes_at = [&](int k) {
    PatchGrid g = grid;
    g.K = k;
    g.cols = grid.edge == EdgeMode::Crop ? grid.image_width / k : (grid.image_width + k - 1) / k;
    g.rows = grid.edge == EdgeMode::Crop ? grid.image_height / k : (grid.image_height + k - 1) / k;
    return static_cast<long long>(g.cols) * g.rows > kMaxTokens ? std::numeric_limits<std::size_t>::max()
                                                                : hand_made_bytes(g);
  };
  int lo = 0, hi = grid.K;  // bytes_at(hi) is over the budget
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (bytes_at(mid) <= budget ? lo : hi) = mid;
  }
  while (lo > 0 && bytes_at(lo) > budget) --lo;
  const std::string what = text_format(grid.edge == EdgeMode::Pad
                                           // TRANSLATORS: the start of a sentence that goes on "... would need 600 MiB,
                                           // over ..."; %s is a size in MiB.
                                           ? _("patch size K=%d (padded) gives %d token(s) of %s each, which")
                                           : _("patch size K=%d gives %d token(s) of %s each, which"),
                                       grid.K, grid.N(),
                                       mib_text(checked_product({3, static_cast<std::size_t>(grid.K),
                                                                 static_cast<std::size_t>(grid.K), 4})).c_str());
  const std::string hint = lo > 0 ? text_format(_("choose K up to %d"), lo) : std::string(_("no patch size fits"));
  if (ceiling)
    throw Error(text_format(_("%s would need %s, over the hand-made pipeline's limit of %s; %s"), what.c_str(),
                            mib_text(need).c_str(), mib_text(kHandMadeLimitBytes).c_str(), hint.c_str()));
  check_memory(need, budget, what, hint);
}

Matrix raw_tokens(const Image& img, const PatchGrid& grid) {
  const int K = grid.K;
  Matrix R = Matrix::Zero(grid.N(), 3 * Eigen::Index{K} * K);
  for (int i = 0; i < grid.N(); ++i) {
    const int x0 = grid.col_of(i) * K, y0 = grid.row_of(i) * K;
    for (int py = 0; py < K; ++py)
      for (int px = 0; px < K; ++px) {
        const int x = x0 + px, y = y0 + py;
        if (x >= img.width || y >= img.height) continue;  // padding stays 0
        for (int c = 0; c < 3; ++c) R(i, (Eigen::Index{py} * K + px) * 3 + c) = img.at(x, y, c);
      }
  }
  return R;
}

Matrix mean_colours(const Image& img, const PatchGrid& grid) {
  const int K = grid.K;
  Matrix C = Matrix::Zero(grid.N(), 3);
  for (int i = 0; i < grid.N(); ++i) {
    const int x0 = grid.col_of(i) * K, y0 = grid.row_of(i) * K;
    double sum[3] = {0, 0, 0};
    int count = 0;
    for (int y = y0; y < std::min(y0 + K, img.height); ++y)
      for (int x = x0; x < std::min(x0 + K, img.width); ++x, ++count)
        for (int c = 0; c < 3; ++c) sum[c] += img.at(x, y, c);
    for (int c = 0; c < 3; ++c) C(i, c) = count ? static_cast<float>(sum[c] / count) : 0.0f;
  }
  return C;
}

Matrix unit_rows(const Matrix& mean) {
  Matrix U(mean.rows(), mean.cols());
  for (Eigen::Index i = 0; i < mean.rows(); ++i) {
    const double n = mean.row(i).cast<double>().norm();
    if (n < 1e-12)
      U.row(i).setConstant(static_cast<float>(1.0 / std::sqrt(static_cast<double>(mean.cols()))));
    else
      U.row(i) = (mean.row(i).cast<double>() / n).cast<float>();
  }
  return U;
}

Matrix texture_features(const Image& img, const PatchGrid& grid) {
  const int K = grid.K;
  Matrix G = Matrix::Zero(grid.N(), 3);
  auto lum = [&](int x, int y) { return (img.at(x, y, 0) + img.at(x, y, 1) + img.at(x, y, 2)) / 3.0; };
  for (int i = 0; i < grid.N(); ++i) {
    const int x0 = grid.col_of(i) * K, y0 = grid.row_of(i) * K;
    const int x1 = std::min(x0 + K, img.width) - 1, y1 = std::min(y0 + K, img.height) - 1;  // last pixel inside
    double jxx = 0, jyy = 0, jxy = 0;
    int count = 0;
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x, ++count) {
        const double gx = lum(x + 1, y) - lum(x, y), gy = lum(x, y + 1) - lum(x, y);
        jxx += gx * gx;
        jyy += gy * gy;
        jxy += gx * gy;
      }
    if (count == 0) continue;
    jxx /= count;
    jyy /= count;
    jxy /= count;
    const double tr = jxx + jyy, eps = 1e-6;
    G(i, 0) = static_cast<float>(std::sqrt(tr));
    G(i, 1) = static_cast<float>((jxx - jyy) / (tr + eps));
    G(i, 2) = static_cast<float>(2 * jxy / (tr + eps));
  }
  return G;
}

Matrix seeded_gaussian(Eigen::Index rows, Eigen::Index cols, std::uint32_t seed, float scale) {
  std::mt19937 gen(seed);
  auto uniform = [&] { return (static_cast<double>(gen()) + 0.5) / 4294967296.0; };  // (0,1)
  Matrix W(rows, cols);
  for (Eigen::Index n = 0; n < W.size(); ++n) {
    const double u1 = uniform(), u2 = uniform();
    W.data()[n] = static_cast<float>(scale * std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2));
  }
  return W;
}

Matrix tokenize_projection(int K, int R, std::uint32_t seed) {
  const Eigen::Index in = 3 * Eigen::Index{K} * K;
  return seeded_gaussian(R, in, seed, static_cast<float>(1.0 / std::sqrt(static_cast<double>(in))));
}

Matrix make_tokens(const Image& img, const PatchGrid& grid, std::uint32_t seed) {
  using L = TokenLayout;
  Matrix T(grid.N(), L::d);
  const Matrix c = mean_colours(img, grid);
  T.middleCols(L::kColour, 3) = c;
  T.middleCols(L::kUnitColour, 3) = unit_rows(c);
  T.middleCols(L::kTexture, 3) = texture_features(img, grid);
  const Matrix W_tok = tokenize_projection(grid.K, L::kRandomDims, seed);
  T.middleCols(L::kRandom, L::kRandomDims) = raw_tokens(img, grid) * W_tok.transpose();  // eq. 26.32 as a matmul
  return T;
}

std::string grid_csv(std::span<const float> values, const PatchGrid& grid) {
  std::string out;
  char buf[32];
  for (int r = 0; r < grid.rows; ++r) {
    for (int c = 0; c < grid.cols; ++c) {
      std::snprintf(buf, sizeof buf, "%s%.9g", c ? "," : "", static_cast<double>(values[static_cast<size_t>(grid.index(c, r))]));
      out += buf;
    }
    out += '\n';
  }
  return out;
}

} // namespace attnlab
