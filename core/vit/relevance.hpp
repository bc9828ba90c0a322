#pragma once
// Why a ViT decided: class-relevance maps over the patch grid and effective receptive fields
// (SPEC §13), read from one gradient pass (core/vit/vit_gradients.hpp). An attention map says
// where a token reads from, not what the decision depended on (Jain & Wallace 2019; Chefer, Gur,
// Wolf 2021): these maps put the methods side by side. Checked against PyTorch autograd
// (tests/vit/make_relevance_golden.py).
#include "core/vit/vit_gradients.hpp"

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab {

/// How a class-relevance map is made (SPEC §13 gives each formula).
enum class RelevanceMethod {
  Attention,      ///< mean_h A_{L−1}[0, patches]: the last layer's class-token row
  Rollout,        ///< Abnar & Zuidema 2020: Π_l ½(mean_h A_l + I), rows renormalised
  GradRollout,    ///< rollout of mean_h((∂y_c/∂A_l ⊙ A_l)⁺), each gradient with its own layer (vit-explain's idea, its two bugs fixed)
  Chefer,         ///< Chefer, Gur, Wolf ICCV 2021 eqs. 5–6: R ← R + mean_h((∂y_c/∂A_l ⊙ A_l)⁺)·R from R = I
  InputGradient,  ///< Σ_colour |∂y_c/∂x| summed over each patch's pixels
};

/// Every method, in the order tables and menus list them.
inline constexpr std::array<RelevanceMethod, 5> kRelevanceMethods = {RelevanceMethod::Attention, RelevanceMethod::Rollout,
                                                                     RelevanceMethod::GradRollout, RelevanceMethod::Chefer,
                                                                     RelevanceMethod::InputGradient};

/// "attention", "rollout", "grad-rollout", "chefer", "input-gradient".
const char* relevance_method_name(RelevanceMethod method);
/// The method named `name` (as relevance_method_name()); nullopt for any other text.
std::optional<RelevanceMethod> parse_relevance_method(std::string_view name);
/// The names joined by ", " (for errors and usage).
std::string relevance_method_list();

/// Whether `method` needs a backward pass (∂y_c/∂A or ∂y_c/∂x); attention and rollout read A only.
bool relevance_needs_gradient(RelevanceMethod method);

/// The map of `method` from a gradient pass of y_c (vit_gradients() with a class target): N
/// values over the patches in raster order, raw (not renormalised; SPEC §13). The class token's
/// row is read (row 0); for a model pooled by averaging, the mean of the patch rows instead.
/// Prefix tokens (cls, registers) are left out of the map. Rollout, grad-rollout and chefer
/// multiply T × T matrices in float (T³ per layer), as PyTorch does.
std::vector<float> relevance_map(const VitGradients& g, RelevanceMethod method);

/// One gradient pass of class `klass` and the map of `method` (relevance_map()). Throws what
/// vit_gradients() throws.
std::vector<float> vit_relevance(const VitModel& model, const VitInput& input, int klass, RelevanceMethod method,
                                 std::int64_t budget, const std::atomic<bool>* stop = nullptr);

/// The effective receptive field (Luo et al. 2016; Raghu et al. 2021) of token `token` after
/// block `layer`: Σ_colour |∂(Σ_d z_l[t, d])/∂x| over the model's input tensor, one value per
/// input pixel (the input's height × width after its crop to whole patches), not normalised.
/// Throws what vit_gradients() throws.
Matrix vit_receptive_field(const VitModel& model, const VitInput& input, int layer, int token, std::int64_t budget,
                           const std::atomic<bool>* stop = nullptr);

/// The effective receptive field of the patch at (`col`, `row`) after block `layer`, averaged
/// over `count` images (image(i) gives image i's input): each image is cropped to its top-left
/// `cols` × `rows` patches first (the grid every image must cover: what they share), so the mean
/// is over one input size, (rows·P) × (cols·P) values. Throws Error for an image smaller than
/// that grid (naming it by index), a patch outside the grid, and what vit_gradients() throws.
Matrix vit_mean_receptive_field(const VitModel& model, int count, const std::function<VitInput(int)>& image, int cols, int rows,
                                int layer, int col, int row, std::int64_t budget, const std::function<void(int, int)>& progress = {},
                                const std::atomic<bool>* stop = nullptr);

/// The class `text` names for `arch`: an index ("3"), a label as config.json gives it
/// (case-insensitive: "zebra"), or "top": VitGradientTarget::kTopClass, the likeliest class,
/// known once the forward has run. Throws Error with one line for a model without a classifier
/// and for any other text (naming the indices' range).
int vit_class_named(const VitArchitecture& arch, const std::string& text);

/// The same for any classifier with these class names (a ResNet's): −2 (kTopClass of
/// VitGradientTarget and CnnGradientTarget) for "top".
int class_named(const std::vector<std::string>& labels, const std::string& text);

}  // namespace attnlab
