#include "core/hand_made/positional.hpp"

#include "core/base/error.hpp"
#include "core/base/parse.hpp"
#include "core/base/translate.hpp"

#include <cmath>

namespace attnlab {

void validate(const PosSpec& spec) {
  if (!(spec.B > 0.0f) || !std::isfinite(spec.B))
    // TRANSLATORS: B is the base of the positional code's frequencies (B^k).
    throw Error(text_format(_("positional code base B must be > 0, got %s"), format_float(spec.B).c_str()));
  // TRANSLATORS: P is the highest power k of the positional code's frequencies (B^k).
  if (spec.P < 0 || spec.P > 30) throw Error(text_format(_("positional code power P must be between 0 and 30, got %d"), spec.P));
  if (!std::isfinite(spec.lambda)) throw Error(_("positional code weight lambda must be a finite number"));
}

int code_length(const PosSpec& spec) { return (spec.sincos ? 4 : 2) * (spec.P + 1); }

Vector positional_code(float x, float y, const PosSpec& spec) {
  validate(spec);
  const int per_axis = code_length(spec) / 2;
  Vector p(2 * per_axis);
  const float coords[2] = {x, y};
  for (int axis = 0; axis < 2; ++axis) {
    int n = axis * per_axis;
    for (int k = 0; k <= spec.P; ++k) {
      const double arg = coords[axis] / std::pow(static_cast<double>(spec.B), k);
      p[n++] = static_cast<float>(std::sin(arg));
      if (spec.sincos) p[n++] = static_cast<float>(std::cos(arg));
    }
  }
  return p;
}

Matrix positional_codes(const PatchGrid& grid, const PosSpec& spec) {
  Matrix P(grid.N(), code_length(spec));
  for (int i = 0; i < grid.N(); ++i)
    P.row(i) = positional_code(static_cast<float>(grid.col_of(i)), static_cast<float>(grid.row_of(i)), spec).transpose();
  return P;
}

Matrix add_mode_projection(int d, const PosSpec& spec, std::uint32_t seed) {
  const int np = code_length(spec);
  return seeded_gaussian(d, np, seed ^ 0x9e3779b9u, static_cast<float>(1.0 / std::sqrt(static_cast<double>(np))));
}

} // namespace attnlab
