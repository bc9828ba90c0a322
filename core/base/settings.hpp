#pragma once
// Every setting of the attention math, and its default.
// Plain data: the app's AppState holds one, the CLI fills one, exports serialize it.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab {

/// What happens to the right/bottom pixels when W or H is not a multiple of K.
enum class EdgeMode { Crop, Pad };

/// Section 26.10, figs. 26.17–26.19. Causal: key j allowed when j <= i (raster order);
/// Strict: j < i; Window: |col_i-col_j| <= radius and |row_i-row_j| <= radius (patches);
/// Random: a seeded fraction `ratio` of the keys is dropped for every query (MAE-style);
/// Painted: the keys the user painted are dropped.
enum class MaskKind { None, Causal, Strict, Window, Random, Painted };
inline constexpr int kMaskKindCount = 6;

struct MaskSpec {
  MaskKind kind = MaskKind::None;
  int radius = 2;          ///< Window radius in patches (Chebyshev distance), >= 0.
  float ratio = 0.5f;      ///< Random: fraction of keys dropped, in [0,1].
  std::uint32_t seed = 1;  ///< Random: which keys.
  std::vector<int> painted;  ///< Painted: token indices of the masked keys.
  bool operator==(const MaskSpec&) const = default;
};

/// Positional codes, eqs. 26.38–26.40. Concat: q' = [q; λp], k' = [k; λp] (the chapter's way);
/// Add: p mapped to the token width by a fixed seeded projection and added to T (ViT's way).
enum class PosMode { None, Concat, Add };

struct PosSpec {
  PosMode mode = PosMode::None;
  float B = 2.0f;        ///< Base of the wavelengths: sin(x / B^k).
  int P = 7;             ///< Highest power k: P+1 frequencies per axis.
  bool sincos = false;   ///< Sine–cosine pairs per frequency instead of sines only.
  float lambda = 1.0f;   ///< Concat mode: weight of the appended code.
  bool operator==(const PosSpec&) const = default;
};

/// The preset heads (multihead self-attention, eqs. 26.27–26.28). Colour is head 0 (fig. 26.12).
enum class HeadKind { Colour, Position, ColourPosition, Texture, Random, Custom };
inline constexpr int kHeadCount = 6;

/// The custom head's editable 3×3 W_q and W_k (row-major), acting on the unit mean colour, so
/// s_ij = t_iᵀ W_qᵀ W_k t_j (eq. 26.24). Identity by default: the custom head starts as colour.
struct CustomHead {
  std::array<float, 9> W_q{1, 0, 0, 0, 1, 0, 0, 0, 1};
  std::array<float, 9> W_k{1, 0, 0, 0, 1, 0, 0, 0, 1};
  bool operator==(const CustomHead&) const = default;
};

struct Settings {
  int patch = 16;                   ///< K, pixels per patch side.
  EdgeMode edge = EdgeMode::Crop;
  float temperature = 1.0f;         ///< τ > 0: softmax(Q Kᵀ / (τ √m)); τ = 1 is eq. 26.20.
  MaskSpec mask;
  PosSpec pos;
  CustomHead custom;
  std::uint32_t seed = 7;           ///< Seeds the random projections (tokens, heads, add mode).
  bool operator==(const Settings&) const = default;
};

// Names used on the command line, in exports and in the UI.
std::string_view head_name(HeadKind kind);
HeadKind parse_head(std::string_view name);          ///< Throws Error listing the valid names.
/// What a head's q and k are, in one line for the UI (make_heads in core/hand_made/heads.hpp has the math).
std::string_view head_summary(HeadKind kind);
std::string_view mask_kind_name(MaskKind kind);
/// "none", "causal", "strict", "window:R", "random:RATIO[:SEED]", "painted:C,R;C,R;…" (the
/// painted cells as patch coordinates need the grid, so they are kept as pairs here).
struct ParsedMask {
  MaskSpec spec;
  std::vector<std::array<int, 2>> painted_cells;  ///< (col,row) for "painted:".
};
ParsedMask parse_mask(std::string_view text);        ///< Throws Error with the accepted forms.
std::string mask_to_string(const MaskSpec& mask, int grid_cols);
std::string_view pos_mode_name(PosMode mode);
PosMode parse_pos_mode(std::string_view name);       ///< Throws Error listing the valid names.
std::string_view edge_mode_name(EdgeMode mode);
EdgeMode parse_edge_mode(std::string_view name);     ///< Throws Error listing the valid names.

} // namespace attnlab
