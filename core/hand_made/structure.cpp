#include "core/hand_made/structure.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/base/splitmix.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace attnlab {
namespace {

void check_kernel_size(int k) {
  if (k < 1 || k % 2 == 0) throw Error(text_format(_("the convolution kernel size k must be odd and >= 1, got %d"), k));
}

// splitmix64's first number from state x: a fixed, platform-independent mixing of 64 bits.
std::uint64_t mix(std::uint64_t x) { return splitmix64(x); }

// [0.35, 1] from the top 24 bits of a hash.
float weight_from_hash(std::uint64_t h) {
  return 0.35f + 0.65f * static_cast<float>(h >> 40) / static_cast<float>(1u << 24);
}

// The fc stand-in weights: a cheap 32-bit hash of (i, j, seed) (cheap enough for N² = 2.4e8
// entries at N = 15625, and the loop over j vectorizes); its top 24 bits give the weight.
constexpr float kFcLow = 0.35f, kFcSpan = 0.65f;
inline std::uint32_t fc_bits(std::uint32_t i, std::uint32_t j, std::uint32_t seed) {
  std::uint32_t h = (i * 0x9E3779B1u) ^ ((j + seed * 0x632BE5ABu) * 0x85EBCA77u);
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  h *= 0x297A2D39u;
  h ^= h >> 15;
  return h >> 8;
}

// Sums and "any kept cell" flags per block, turned into a BlockImage.
struct BlockSums {
  int N, b, S;
  std::vector<double> sum;
  std::vector<std::uint8_t> kept;
  BlockSums(int n, int max_side) : N(n), b(block_size(n, max_side)), S((n + b - 1) / b) {
    sum.assign(static_cast<size_t>(S) * S, 0.0);
    kept.assign(sum.size(), 0);
  }
  BlockImage finish() const {
    BlockImage img;
    img.N = N;
    img.block = b;
    img.side = S;
    img.values.resize(sum.size());
    img.all_zero.resize(sum.size());
    for (int r = 0; r < S; ++r)
      for (int c = 0; c < S; ++c) {
        const size_t at = static_cast<size_t>(r) * S + c;
        const double cells = static_cast<double>(img.last(r) - img.first(r)) * (img.last(c) - img.first(c));
        img.values[at] = static_cast<float>(sum[at] / cells);
        img.all_zero[at] = kept[at] ? 0 : 1;
      }
    return img;
  }
};

}  // namespace

int block_size(int N, int max_side) {
  // TRANSLATORS: N is the number of tokens.
  if (N < 1) throw Error(text_format(_("a matrix image needs at least one token, got N = %d"), N));
  if (max_side < 1) throw Error(text_format(_("a matrix image needs at least one pixel per side, got %d"), max_side));
  return (N + max_side - 1) / max_side;
}

const char* pooling_name(Pooling pooling) { return pooling == Pooling::Max ? "max" : "mean"; }

BlockImage empty_block_image(int N, int max_side) {
  BlockImage img;
  img.N = N;
  img.block = block_size(N, max_side);
  img.side = (N + img.block - 1) / img.block;
  img.values.assign(static_cast<size_t>(img.side) * static_cast<size_t>(img.side), 0.0f);
  img.all_zero.assign(img.values.size(), 1);
  return img;
}

void pool_block_row(BlockImage& img, int r, std::span<const float> rows, const Mask* mask, Pooling pooling) {
  if (r < 0 || r >= img.side)
    throw Error(text_format(_("pool_block_row: image row %d is outside [0,%d)"), r, img.side));
  const int N = img.N, i0 = img.first(r), i1 = img.last(r);
  if (rows.size() != static_cast<size_t>(i1 - i0) * static_cast<size_t>(N))
    throw Error(text_format(_("pool_block_row: got %zu values for rows %d..%d of N = %d"), rows.size(), i0, i1 - 1, N));
  const size_t S = static_cast<size_t>(img.side), at0 = static_cast<size_t>(r) * S;
  for (int c = 0; c < img.side; ++c) {
    const int j0 = img.first(c), j1 = img.last(c);
    double sum = 0;
    float big = 0.0f;  // a_ij >= 0; masked cells are 0
    bool kept = false;
    for (int i = i0; i < i1; ++i) {
      const float* a = rows.data() + static_cast<size_t>(i - i0) * static_cast<size_t>(N);
      double part = 0;
      for (int j = j0; j < j1; ++j) {
        part += a[j];
        big = std::max(big, a[j]);
      }
      sum += part;
      if (kept) continue;  // one kept cell is enough
      if (!mask) {
        kept = true;
        continue;
      }
      for (int j = j0; j < j1 && !kept; ++j) kept = mask->allowed(i, j);
    }
    const double cells = static_cast<double>(i1 - i0) * (j1 - j0);
    img.values[at0 + static_cast<size_t>(c)] = pooling == Pooling::Max ? big : static_cast<float>(sum / cells);
    img.all_zero[at0 + static_cast<size_t>(c)] = kept ? 0 : 1;
  }
}

BlockImage downsample_matrix(std::span<const float> A, int N, int max_side, const Mask* mask, Pooling pooling) {
  if (N < 1 || A.size() != static_cast<size_t>(N) * static_cast<size_t>(N))
    throw Error(text_format(_("downsample_matrix: A has %zu values, expected N² for N = %d"), A.size(), N));
  BlockImage img = empty_block_image(N, max_side);
  for (int r = 0; r < img.side; ++r) {
    const size_t from = static_cast<size_t>(img.first(r)) * static_cast<size_t>(N);
    pool_block_row(img, r, A.subspan(from, static_cast<size_t>(img.last(r) - img.first(r)) * static_cast<size_t>(N)), mask,
                   pooling);
  }
  return img;
}

int conv_tap(const PatchGrid& grid, int k, int i, int j) {
  check_kernel_size(k);
  const int r = (k - 1) / 2;
  const int dr = grid.row_of(j) - grid.row_of(i), dc = grid.col_of(j) - grid.col_of(i);
  if (dr < -r || dr > r || dc < -r || dc > r) return -1;
  return (dr + r) * k + (dc + r);
}

Matrix conv_matrix(const PatchGrid& grid, int k, std::span<const float> kernel) {
  check_kernel_size(k);
  if (kernel.size() != static_cast<size_t>(k) * static_cast<size_t>(k))
    throw Error(text_format(_("a %dx%d kernel needs %d weights, got %zu"), k, k, k * k, kernel.size()));
  const int N = grid.N();
  if (N < 1 || N > 4096) throw Error(text_format(_("conv_matrix is for grids of 1 to 4096 tokens, got %d"), N));
  Matrix W = Matrix::Zero(N, N);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      const int tap = conv_tap(grid, k, i, j);
      if (tap >= 0) W(i, j) = kernel[static_cast<size_t>(tap)];
    }
  return W;
}

long long conv_nonzeros(const PatchGrid& grid, int k) {
  check_kernel_size(k);
  const int r = (k - 1) / 2;
  auto in_window = [r](int n, int at) { return static_cast<long long>(std::min(at + r, n - 1) - std::max(at - r, 0) + 1); };
  long long sc = 0, sr = 0;
  for (int c = 0; c < grid.cols; ++c) sc += in_window(grid.cols, c);
  for (int row = 0; row < grid.rows; ++row) sr += in_window(grid.rows, row);
  return sc * sr;
}

bool is_block_toeplitz(const Matrix& M, int cols) {
  if (M.rows() != M.cols()) throw Error(_("is_block_toeplitz: the matrix is not square"));
  if (cols < 1 || M.rows() % cols != 0)
    throw Error(text_format(_("is_block_toeplitz: size %lld is not a multiple of %d columns"), static_cast<long long>(M.rows()),
                            cols));
  const int N = static_cast<int>(M.rows()), rows = N / cols;
  // One value per offset (row_j − row_i, col_j − col_i): the first one seen must repeat.
  const int span_c = 2 * cols - 1;
  std::vector<float> first(static_cast<size_t>(2 * rows - 1) * span_c, 0.0f);
  std::vector<std::uint8_t> seen(first.size(), 0);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      const int dr = j / cols - i / cols, dc = j % cols - i % cols;
      const size_t at = static_cast<size_t>(dr + rows - 1) * span_c + static_cast<size_t>(dc + cols - 1);
      if (!seen[at]) {
        seen[at] = 1;
        first[at] = M(i, j);
      } else if (!(first[at] == M(i, j))) {
        return false;
      }
    }
  return true;
}

std::vector<float> demo_kernel(int k, std::uint32_t seed) {
  check_kernel_size(k);
  std::vector<float> w(static_cast<size_t>(k) * static_cast<size_t>(k));
  for (size_t t = 0; t < w.size(); ++t) w[t] = weight_from_hash(mix((std::uint64_t{seed} << 32) ^ (0xC0FFEEull + t)));
  return w;
}

float fc_weight(int i, int j, std::uint32_t seed) {
  const std::uint32_t bits = fc_bits(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j), seed);
  return kFcLow + kFcSpan * static_cast<float>(bits) / static_cast<float>(1u << 24);
}

BlockImage conv_structure_image(const PatchGrid& grid, int k, std::span<const float> kernel, int max_side) {
  check_kernel_size(k);
  if (kernel.size() != static_cast<size_t>(k) * static_cast<size_t>(k))
    throw Error(text_format(_("a %dx%d kernel needs %d weights"), k, k, k * k));
  const int N = grid.N(), r = (k - 1) / 2;
  BlockSums s(N, max_side);
  for (int i = 0; i < N; ++i) {
    const int ri = grid.row_of(i), ci = grid.col_of(i);
    const size_t row = static_cast<size_t>(i / s.b) * static_cast<size_t>(s.S);
    for (int dr = -r; dr <= r; ++dr)
      for (int dc = -r; dc <= r; ++dc) {
        if (!grid.contains(ci + dc, ri + dr)) continue;  // zero padding: no weight
        const int j = grid.index(ci + dc, ri + dr);
        const size_t at = row + static_cast<size_t>(j / s.b);
        s.sum[at] += kernel[static_cast<size_t>((dr + r) * k + (dc + r))];
        s.kept[at] = 1;
      }
  }
  return s.finish();
}

BlockImage fc_structure_image(int N, int max_side, std::uint32_t seed) {
  BlockSums s(N, max_side);
  for (int i = 0; i < N; ++i) {
    const size_t row = static_cast<size_t>(i / s.b) * static_cast<size_t>(s.S);
    const auto ui = static_cast<std::uint32_t>(i);
    for (int c = 0; c < s.S; ++c) {
      // The block's share of row i, summed exactly as integers, then mapped like fc_weight().
      const int j0 = c * s.b, j1 = std::min(j0 + s.b, N);
      std::uint64_t bits = 0;
      for (int j = j0; j < j1; ++j) bits += fc_bits(ui, static_cast<std::uint32_t>(j), seed);
      s.sum[row + static_cast<size_t>(c)] +=
          static_cast<double>(kFcLow) * (j1 - j0) + static_cast<double>(kFcSpan) * static_cast<double>(bits) / static_cast<double>(1u << 24);
      s.kept[row + static_cast<size_t>(c)] = 1;
    }
  }
  return s.finish();
}

std::vector<std::uint8_t> block_image_rgb8(const BlockImage& img, Colormap c, Normalization n, BlockRange range,
                                           float t_min) {
  const float lift = std::clamp(t_min, 0.0f, 1.0f);
  const size_t S = static_cast<size_t>(img.side);
  std::vector<std::uint8_t> keep(img.all_zero.size());
  for (size_t a = 0; a < keep.size(); ++a) keep[a] = img.all_zero[a] ? 0 : 1;
  std::vector<std::uint8_t> px(S * S * 3, 0);
  const ValueRange whole = normalization_range(img.values, keep, n);
  for (size_t r = 0; r < S; ++r) {
    const std::span<const float> vals(img.values.data() + r * S, S);
    const std::span<const std::uint8_t> kr(keep.data() + r * S, S);
    const ValueRange vr = range == BlockRange::EachRow ? normalization_range(vals, kr, n) : whole;
    for (size_t col = 0; col < S; ++col) {
      if (!kr[col]) continue;  // every cell masked / zero: black
      // All kept values equal (e.g. a causal row 0 with a_00 = 1): each is its own maximum.
      const float t = vr.hi > vr.lo ? normalize_value(vals[col], vr, n) : 1.0f;
      const auto rgb = colormap_rgb8(c, lift + (1.0f - lift) * t);
      std::copy(rgb.begin(), rgb.end(), px.begin() + static_cast<std::ptrdiff_t>((r * S + col) * 3));
    }
  }
  return px;
}

std::vector<std::uint8_t> colours_rgb8(const Matrix& M, int first_col) {
  if (first_col < 0 || M.cols() < first_col + 3)
    throw Error(text_format(_("colours_rgb8: needs columns %d..%d, the matrix has %lld"), first_col, first_col + 2,
                            static_cast<long long>(M.cols())));
  std::vector<std::uint8_t> px(static_cast<size_t>(M.rows()) * 3);
  for (Eigen::Index i = 0; i < M.rows(); ++i)
    for (int ch = 0; ch < 3; ++ch) {
      const float v = M(i, first_col + ch);
      const float c = std::isfinite(v) ? std::clamp(v, 0.0f, 1.0f) : 0.0f;
      px[static_cast<size_t>(i) * 3 + static_cast<size_t>(ch)] = static_cast<std::uint8_t>(std::lround(c * 255.0f));
    }
  return px;
}

}  // namespace attnlab
