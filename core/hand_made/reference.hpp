#pragma once
// The whole CPU reference pipeline for one image and one set of settings: image → grid →
// tokens T (+ positional codes P) → heads' Q, K, V → rows of A, A, T_out, merged output.
// It is what the tests, the GPU engine's checks and the app's CPU fallback rely on.
#include "core/hand_made/attention.hpp"
#include "core/base/error.hpp"
#include "core/hand_made/heads.hpp"
#include "core/io/image.hpp"
#include "core/hand_made/mask.hpp"
#include "core/hand_made/positional.hpp"
#include "core/base/settings.hpp"
#include "core/hand_made/tokens.hpp"

#include <vector>

namespace attnlab {

/// Checks every setting (K >= 1, τ > 0 and finite, positional B/P/λ, mask radius/ratio) and
/// throws Error naming the first bad one.
void validate(const Settings& settings);

/// Everything that does not depend on the image's pixels: the grid, the positional codes,
/// the heads' weights, the add-mode projection and the resolved mask. The GPU engine uploads
/// exactly these, so both paths use the same numbers.
struct ModelSetup {
  PatchGrid grid;
  Matrix P;                 ///< N × code_length, eqs. 26.38–26.40
  std::vector<Head> heads;  ///< make_heads()
  Matrix W_tokenize;        ///< R × 3K², see tokenize_projection()
  Matrix W_pos;             ///< d × code_length (Add mode), see add_mode_projection()
  Mask mask;
  Matrix W_MSA;             ///< merge_weights(kHeadCount, 3)
};
ModelSetup make_setup(int image_width, int image_height, const Settings& settings);

class Reference {
 public:
  /// Throws Error for bad settings (validate()) or a K that does not fit the image.
  Reference(const Image& image, const Settings& settings);

  const Settings& settings() const { return settings_; }
  const ModelSetup& setup() const { return setup_; }
  const PatchGrid& grid() const { return setup_.grid; }
  int N() const { return setup_.grid.N(); }
  /// Feature tokens N × d (TokenLayout), with P W_posᵀ added in Add mode.
  const Matrix& T() const { return T_; }
  const Matrix& P() const { return setup_.P; }
  /// Head input X = [T | P], N × (d + code_length).
  const Matrix& X() const { return X_; }
  const std::vector<Head>& heads() const { return setup_.heads; }
  const HeadQKV& qkv(int head) const { return qkv_.at(static_cast<size_t>(head)); }

  /// Row i of A for a head (eq. 26.20 with τ and the mask).
  RowResult row(int head, int i) const;
  /// The full N × N A of a head; `empty_rows` lists fully masked rows.
  Matrix matrix(int head, std::vector<int>* empty_rows = nullptr) const;
  /// T_out = A V for a head (eq. 26.21), N × 3, computed row by row (never N × N).
  Matrix output(int head) const;
  /// The heads' outputs concatenated and merged by W_MSA (eqs. 26.27–26.28), N × 3.
  Matrix merged_output() const;

 private:
  Settings settings_;
  ModelSetup setup_;
  Matrix T_, X_;
  std::vector<HeadQKV> qkv_;
};

} // namespace attnlab
