#include "core/hand_made/reference.hpp"

#include "core/base/budget.hpp"
#include "core/base/error.hpp"
#include "core/base/parse.hpp"
#include "core/base/translate.hpp"

#include <cmath>

namespace attnlab {

void validate(const Settings& s) {
  // TRANSLATORS: K is the patch size in pixels.
  if (s.patch < 1) throw Error(text_format(_("patch size K must be at least 1 pixel, got %d"), s.patch));
  if (!(s.temperature > 0.0f) || !std::isfinite(s.temperature))
    throw Error(text_format(_("temperature must be a number > 0, got %s"), format_float(s.temperature).c_str()));
  validate(s.pos);
  if (s.mask.kind == MaskKind::Window && s.mask.radius < 0) throw Error(_("window mask radius must be >= 0"));
  if (s.mask.kind == MaskKind::Random && !(s.mask.ratio >= 0.0f && s.mask.ratio <= 1.0f))
    throw Error(_("random mask ratio must be between 0 and 1"));
  for (float w : s.custom.W_q)
    if (!std::isfinite(w)) throw Error(_("custom head W_q has a value that is not a finite number"));
  for (float w : s.custom.W_k)
    if (!std::isfinite(w)) throw Error(_("custom head W_k has a value that is not a finite number"));
}

ModelSetup make_setup(int image_width, int image_height, const Settings& s) {
  validate(s);
  PatchGrid grid = make_grid(image_width, image_height, s.patch, s.edge);
  check_hand_made_budget(grid, memory_budget());  // before W_tokenize (16 × 3K²) is made
  Matrix P = positional_codes(grid, s.pos);
  Mask mask(s.mask, grid);
  return ModelSetup{grid,
                    std::move(P),
                    make_heads(code_length(s.pos), s),
                    tokenize_projection(s.patch, TokenLayout::kRandomDims, s.seed),
                    add_mode_projection(TokenLayout::d, s.pos, s.seed),
                    std::move(mask),
                    merge_weights(kHeadCount, 3)};
}

Reference::Reference(const Image& image, const Settings& settings)
    : settings_(settings), setup_(make_setup(image.width, image.height, settings)) {
  const auto& g = setup_.grid;
  T_ = make_tokens(image, g, settings_.seed);
  if (settings_.pos.mode == PosMode::Add) T_ += setup_.P * setup_.W_pos.transpose();  // ViT: t ← t + W_pos p
  X_.resize(T_.rows(), T_.cols() + setup_.P.cols());
  X_ << T_, setup_.P;
  for (const auto& h : setup_.heads) qkv_.push_back(project(h, X_, setup_.P, settings_.pos));
}

RowResult Reference::row(int head, int i) const {
  const auto& h = qkv(head);
  return attention_row(h.Q, h.K, i, settings_.temperature, setup_.mask);
}

Matrix Reference::matrix(int head, std::vector<int>* empty_rows) const {
  const auto& h = qkv(head);
  return attention_matrix(h.Q, h.K, settings_.temperature, setup_.mask, empty_rows);
}

Matrix Reference::output(int head) const {
  const auto& h = qkv(head);
  Matrix out(N(), h.V.cols());
  for (int i = 0; i < N(); ++i) out.row(i) = row(head, i).weights * h.V;  // t_out_i = Σ_j a_ij v_j
  return out;
}

Matrix Reference::merged_output() const {
  std::vector<Matrix> outs;
  for (int h = 0; h < kHeadCount; ++h) outs.push_back(output(h));
  return merge_heads(outs, setup_.W_MSA);
}

} // namespace attnlab
