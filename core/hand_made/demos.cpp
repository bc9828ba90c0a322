#include "core/hand_made/demos.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "core/base/error.hpp"
#include "core/base/parse.hpp"
#include "core/base/translate.hpp"
#include "core/hand_made/positional.hpp"

namespace attnlab {

// ---------------------------------------------------------------- positional codes

std::vector<float> code_similarity(const Matrix& P, int i) {
  if (P.rows() == 0 || P.cols() == 0) throw Error(_("code similarity needs at least one token and one code dimension"));
  if (i < 0 || i >= P.rows())
    throw Error(text_format(_("token %d is outside the %lld codes"), i, static_cast<long long>(P.rows())));
  const Eigen::VectorXf s = P * P.row(i).transpose();  // s_j = p_jᵀ p_i
  return {s.data(), s.data() + s.size()};
}

std::string code_dimension_label(const PosSpec& spec, int n) {
  const int length = code_length(spec);
  if (n < 0 || n >= length)
    throw Error(text_format(_("code dimension %d is outside [0,%d)"), n, length));
  const int per_axis = length / 2;
  const char axis = n < per_axis ? 'x' : 'y';
  const int within = n % per_axis;
  const int k = spec.sincos ? within / 2 : within;
  const bool cosine = spec.sincos && within % 2 == 1;
  std::string arg(1, axis);
  if (k == 1) arg += "/" + format_float(spec.B);
  if (k >= 2) arg += "/" + format_float(spec.B) + "^" + std::to_string(k);
  return std::string(cosine ? "cos(" : "sin(") + arg + ")";
}

LambdaSweep::LambdaSweep(const Head& head, const Matrix& X, const ModelSetup& setup, const Settings& settings)
    : mask_(setup.mask), temperature_(settings.temperature) {
  const Eigen::Index L = setup.P.cols(), D = TokenLayout::d + L;
  if (X.rows() != setup.grid.N() || X.cols() != D || head.W_q.cols() != D || head.W_k.cols() != D)
    throw Error(text_format(_("the head input has %lld x %lld values where the setup needs %d x %lld"),
                            static_cast<long long>(X.rows()), static_cast<long long>(X.cols()), setup.grid.N(),
                            static_cast<long long>(D)));
  if (!(temperature_ > 0.0f) || !std::isfinite(temperature_)) throw Error(_("temperature must be a number > 0"));
  P_ = X.rightCols(L);
  Matrix plain = X;
  if (settings.pos.mode == PosMode::Add) plain.leftCols(TokenLayout::d) -= P_ * setup.W_pos.transpose();
  Q_ = plain * head.W_q.transpose();  // eq. 26.17
  K_ = plain * head.W_k.transpose();  // eq. 26.18
}

RowResult LambdaSweep::row(int i, float lambda) const {
  if (i < 0 || i >= N()) throw Error(text_format(_("query token %d is outside the grid"), i));
  if (!std::isfinite(lambda)) throw Error(_("lambda must be a finite number"));
  const int n = N();
  const float scale = 1.0f / (temperature_ * std::sqrt(static_cast<float>(m_concat())));
  RowResult r;
  // s'_ij = q_iᵀk_j + λ² p_iᵀp_j: the dot product of [q_i; λp_i] with [k_j; λp_j].
  r.logits = (Q_.row(i) * K_.transpose() + (lambda * lambda) * (P_.row(i) * P_.transpose())) * scale;
  r.weights = RowVector::Zero(n);
  auto keep = std::make_unique<bool[]>(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) keep[static_cast<size_t>(j)] = mask_.allowed(i, j);
  r.empty = !masked_softmax(std::span<const float>(r.logits.data(), static_cast<size_t>(n)),
                            std::span<const bool>(keep.get(), static_cast<size_t>(n)),
                            std::span<float>(r.weights.data(), static_cast<size_t>(n)));
  return r;
}

// ---------------------------------------------------------------- permutation

namespace {

// Uniform integer in [0, bound] from mt19937 by rejection (no modulo bias), bound < 2^32.
std::uint32_t draw_at_most(std::mt19937& gen, std::uint32_t bound) {
  if (bound == 0xffffffffu) return static_cast<std::uint32_t>(gen());
  const std::uint64_t range = static_cast<std::uint64_t>(bound) + 1;
  const std::uint64_t limit = (std::uint64_t{1} << 32) - ((std::uint64_t{1} << 32) % range);  // multiple of range
  for (;;) {
    const std::uint64_t v = gen();
    if (v < limit) return static_cast<std::uint32_t>(v % range);
  }
}

void check_permutation(std::span<const int> perm) {
  std::vector<char> seen(perm.size(), 0);
  for (int v : perm) {
    if (v < 0 || static_cast<size_t>(v) >= perm.size() || seen[static_cast<size_t>(v)])
      throw Error(text_format(_("the shuffle is not a permutation of %zu tokens"), perm.size()));
    seen[static_cast<size_t>(v)] = 1;
  }
}

void check_pair(const Reference& original, const Reference& shuffled, std::span<const int> perm, int head) {
  if (original.N() != shuffled.N() || static_cast<size_t>(original.N()) != perm.size())
    throw Error(text_format(_("the original and shuffled images must have the same grid as the shuffle (%d, %d and %zu tokens)"),
                            original.N(), shuffled.N(), perm.size()));
  if (head < 0 || head >= kHeadCount) throw Error(text_format(_("head %d does not exist"), head));
}

}  // namespace

std::vector<int> seeded_permutation(int n, std::uint32_t seed) {
  if (n < 0) throw Error(text_format(_("a permutation needs n >= 0 elements, got %d"), n));
  std::vector<int> perm(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) perm[static_cast<size_t>(k)] = k;
  std::mt19937 gen(seed);
  for (int k = n - 1; k > 0; --k) {  // Fisher–Yates: swap k with a uniform pick from [0,k]
    const auto j = draw_at_most(gen, static_cast<std::uint32_t>(k));
    std::swap(perm[static_cast<size_t>(k)], perm[j]);
  }
  return perm;
}

std::vector<int> inverse_permutation(std::span<const int> perm) {
  check_permutation(perm);
  std::vector<int> inv(perm.size());
  for (size_t m = 0; m < perm.size(); ++m) inv[static_cast<size_t>(perm[m])] = static_cast<int>(m);
  return inv;
}

Image permute_patches(const Image& image, const PatchGrid& grid, std::span<const int> perm) {
  if (grid.image_width != image.width || grid.image_height != image.height || grid.K < 1)
    throw Error(text_format(_("the patch grid was made for a %dx%d image, not %dx%d"), grid.image_width, grid.image_height,
                            image.width, image.height));
  const int K = grid.K;
  if (grid.cols * K > image.width || grid.rows * K > image.height)
    // TRANSLATORS: K is the patch size in pixels; %dx%d is the image's width x height; "crop" is the edge mode that drops
    // partial patches.
    throw Error(text_format(_("the patches cannot be shuffled: with padding the last column or row of patches is partial "
                              "(K=%d does not divide %dx%d); use crop or a patch size that divides the image"),
                            K, image.width, image.height));
  if (perm.size() != static_cast<size_t>(grid.N()))
    throw Error(text_format(_("the shuffle has %zu entries for %d patches"), perm.size(), grid.N()));
  check_permutation(perm);
  Image out = image;
  const size_t row_floats = static_cast<size_t>(K) * 3;
  for (int m = 0; m < grid.N(); ++m) {
    const int src = perm[static_cast<size_t>(m)];
    const int sx = grid.col_of(src) * K, sy = grid.row_of(src) * K;
    const int dx = grid.col_of(m) * K, dy = grid.row_of(m) * K;
    for (int y = 0; y < K; ++y) {
      const size_t from =
          (static_cast<size_t>(sy + y) * static_cast<size_t>(image.width) + static_cast<size_t>(sx)) * 3;
      const size_t to = (static_cast<size_t>(dy + y) * static_cast<size_t>(image.width) + static_cast<size_t>(dx)) * 3;
      std::copy_n(image.rgb.begin() + static_cast<std::ptrdiff_t>(from), row_floats,
                  out.rgb.begin() + static_cast<std::ptrdiff_t>(to));
    }
  }
  return out;
}

std::vector<float> undo_permutation(std::span<const float> values, std::span<const int> perm) {
  if (values.size() != perm.size())
    throw Error(text_format(_("cannot undo a shuffle of %zu tokens on %zu values"), perm.size(), values.size()));
  check_permutation(perm);
  std::vector<float> out(values.size());
  for (size_t m = 0; m < perm.size(); ++m) out[static_cast<size_t>(perm[m])] = values[m];
  return out;
}

float row_difference(const Reference& original, const Reference& shuffled, std::span<const int> perm, int head,
                     int query) {
  check_pair(original, shuffled, perm, head);
  if (query < 0 || query >= original.N()) throw Error(text_format(_("query token %d is outside the grid"), query));
  const std::vector<int> inv = inverse_permutation(perm);
  const RowResult a = original.row(head, query);
  const RowResult b = shuffled.row(head, inv[static_cast<size_t>(query)]);
  const auto back =
      undo_permutation(std::span<const float>(b.weights.data(), static_cast<size_t>(b.weights.size())), perm);
  float worst = 0;
  for (int j = 0; j < original.N(); ++j) worst = std::max(worst, std::abs(a.weights[j] - back[static_cast<size_t>(j)]));
  return worst;
}

std::optional<float> output_difference(const Reference& original, const Reference& shuffled, std::span<const int> perm,
                                       int head, const std::atomic<bool>* cancel) {
  check_pair(original, shuffled, perm, head);
  const std::vector<int> inv = inverse_permutation(perm);
  const Matrix& V = original.qkv(head).V;
  const Matrix& Vs = shuffled.qkv(head).V;
  float worst = 0;
  for (int n = 0; n < original.N(); ++n) {
    if (cancel && cancel->load(std::memory_order_relaxed)) return std::nullopt;
    const RowVector t = original.row(head, n).weights * V;  // t_out_n = Σ_j a_nj v_j
    const RowVector ts = shuffled.row(head, inv[static_cast<size_t>(n)]).weights * Vs;
    worst = std::max(worst, (t - ts).cwiseAbs().maxCoeff());
  }
  return worst;
}

PermutationReadout permutation_readout(const Image& image, const Settings& settings, int head, int query,
                                       std::uint32_t seed) {
  const Reference original(image, settings);
  if (query < 0 || query >= original.N()) throw Error(text_format(_("query token %d is outside the grid"), query));
  PermutationReadout r;
  r.perm = seeded_permutation(original.N(), seed);
  const Reference shuffled(permute_patches(image, original.grid(), r.perm), settings);
  r.moved_query = inverse_permutation(r.perm)[static_cast<size_t>(query)];
  r.row_difference = row_difference(original, shuffled, r.perm, head, query);
  r.output_difference = *output_difference(original, shuffled, r.perm, head);
  return r;
}

// ---------------------------------------------------------------- question token

RowVector question_token(const std::array<float, 3>& colour, int D) {
  if (D < TokenLayout::d)
    throw Error(text_format(_("a question token needs at least %d values, got %d"), TokenLayout::d, D));
  for (float c : colour)
    if (!std::isfinite(c)) throw Error(_("the question colour has a channel that is not a finite number"));
  RowVector x = RowVector::Zero(D);
  double len2 = 0;
  for (int c = 0; c < 3; ++c) {
    x[TokenLayout::kColour + c] = colour[static_cast<size_t>(c)];
    len2 += static_cast<double>(colour[static_cast<size_t>(c)]) * colour[static_cast<size_t>(c)];
  }
  const double len = std::sqrt(len2);
  for (int c = 0; c < 3; ++c)
    x[TokenLayout::kUnitColour + c] = len < 1e-12 ? static_cast<float>(1.0 / std::sqrt(3.0))
                                                  : static_cast<float>(colour[static_cast<size_t>(c)] / len);
  return x;
}

RowResult question_row(const Reference& ref, int head, const RowVector& x) {
  if (head < 0 || head >= kHeadCount) throw Error(text_format(_("head %d does not exist"), head));
  const Matrix Wq = query_key_weights(ref.heads()[static_cast<size_t>(head)].W_q, ref.settings().pos,
                                      static_cast<int>(ref.P().cols()));
  if (x.size() != Wq.cols())
    throw Error(text_format(_("a question token needs %lld values, got %lld"), static_cast<long long>(Wq.cols()),
                            static_cast<long long>(x.size())));
  const RowVector q = x * Wq.transpose();  // eq. 26.11 (with λ·0 appended in concat mode)
  return attention_row_for(q, ref.qkv(head).K, ref.settings().temperature);
}

QuestionAnswer output_with_count(std::span<const float> weights, const Matrix& V) {
  if (V.cols() != 3)
    throw Error(text_format(_("values must have 3 columns (a colour), got %lld"), static_cast<long long>(V.cols())));
  if (static_cast<Eigen::Index>(weights.size()) != V.rows())
    throw Error(text_format(_("%zu weights for %lld values"), weights.size(), static_cast<long long>(V.rows())));
  double sum[3] = {0, 0, 0}, count = 0;
  for (size_t j = 0; j < weights.size(); ++j) {
    const double a = weights[j];
    for (int c = 0; c < 3; ++c) sum[c] += a * V(static_cast<Eigen::Index>(j), c);
    count += a * 1.0;  // the appended constant dimension
  }
  QuestionAnswer out;
  for (int c = 0; c < 3; ++c) out.colour[static_cast<size_t>(c)] = static_cast<float>(sum[c]);
  out.count = static_cast<float>(count);
  return out;
}

std::vector<float> match_weights(std::span<const float> scores, float threshold) {
  std::vector<float> w(scores.size(), 0.0f);
  for (size_t j = 0; j < scores.size(); ++j)
    if (scores[j] >= threshold) w[j] = 1.0f;
  return w;
}

}  // namespace attnlab
