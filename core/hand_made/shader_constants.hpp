#pragma once
// The constants that C++ and the compute shaders share, written once, here. The shaders get
// them as `#define NAME value` lines generated from this list (shader_constant_defines(), put
// before every shader by core/gpu/gl.cpp), C++ as constexpr ints in attnlab::shader; so an
// enum that gains a value cannot drift from its GLSL copy. Kernel modes and flags are listed
// here too, beside the settings' enums, so every number a shader branches on has one source.
#include "core/base/colormap.hpp"
#include "core/base/settings.hpp"
#include "core/hand_made/structure.hpp"
#include "core/hand_made/tokens.hpp"
#include "core/vit/vit.hpp"

#include <string>

// X(NAME, value): the list itself.
#define ATTNLAB_SHADER_CONSTANTS(X)                                                      \
  /* Mask kinds (section 26.10), in the order of MaskKind. */                            \
  X(MASK_NONE, MaskKind::None)                                                           \
  X(MASK_CAUSAL, MaskKind::Causal)                                                       \
  X(MASK_STRICT, MaskKind::Strict)                                                       \
  X(MASK_WINDOW, MaskKind::Window)                                                       \
  X(MASK_RANDOM, MaskKind::Random)                                                       \
  X(MASK_PAINTED, MaskKind::Painted)                                                     \
  /* Heat-map normalizations, in the order of Normalization (colormap.comp). */          \
  X(NORM_MINMAX, Normalization::MinMax)                                                  \
  X(NORM_ABSOLUTE, Normalization::Absolute)                                              \
  X(NORM_LOG, Normalization::Log)                                                        \
  /* The token layout of TokenLayout (tokenize.comp). */                                 \
  X(TOKEN_D, TokenLayout::d)                                                             \
  X(RANDOM_DIMS, TokenLayout::kRandomDims)                                               \
  /* What attend.comp and attend_rows.comp compute (core/gpu/hand_made_gpu_engine.cpp). */             \
  X(MODE_ROW, 0)                                                                         \
  X(MODE_OUTPUT, 2)                                                                      \
  X(MODE_EXTERNAL, 3)                                                                    \
  /* vit_gemm.comp's epilogue flags, and vit_pool.comp's pooling (VitPooling order). */ \
  X(FLAG_BIAS, 1)                                                                        \
  X(FLAG_GELU, 2)                                                                        \
  X(FLAG_RESIDUAL, 4)                                                                    \
  X(POOL_TOKEN, VitPooling::Token)                                                                       \
  X(POOL_AVERAGE, VitPooling::Average)                                                  \
  /* pool_matrix.comp: its three passes, and the Pooling of a block (Pooling order). */    \
  X(POOL_PASS_PARTIAL, 0)                                                                \
  X(POOL_PASS_ROWS, 1)                                                                   \
  X(POOL_PASS_IMAGE, 2)                                                                  \
  X(POOLING_MEAN, Pooling::Mean)                                                         \
  X(POOLING_MAX, Pooling::Max)

namespace attnlab::shader {

#define ATTNLAB_SHADER_CONSTANT(name, value) inline constexpr int name = static_cast<int>(value);
ATTNLAB_SHADER_CONSTANTS(ATTNLAB_SHADER_CONSTANT)
#undef ATTNLAB_SHADER_CONSTANT

// Every enum value is listed, and in order.
static_assert(MASK_PAINTED + 1 == kMaskKindCount, "a MaskKind is missing from ATTNLAB_SHADER_CONSTANTS");
static_assert(NORM_LOG + 1 == kNormalizationCount, "a Normalization is missing from ATTNLAB_SHADER_CONSTANTS");
static_assert(POOLING_MAX + 1 == kPoolingCount, "a Pooling is missing from ATTNLAB_SHADER_CONSTANTS");

/// "#define NAME value\n" for every constant of the list, for the shaders.
std::string shader_constant_defines();

}  // namespace attnlab::shader
