#pragma once
// The ViT test checkpoints and golden files that tests/vit/make_golden.py wrote with PyTorch
// (see tests/vit/data/README.md), read for the reference, GPU and command-line tests.
#include "core/vit/vit.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace attnlab::testing {

/// tests/vit/data.
std::filesystem::path vit_data_dir();

/// One golden file: a model (folder under vit_data_dir()) on one image.
struct VitGolden {
  std::string name;                  ///< "<model>__<image stem>"
  std::filesystem::path model_dir, image;
  std::vector<std::string> args;     ///< extra `attnlab vit` arguments (e.g. --heads 4)
  nlohmann::json json;               ///< the whole file
  VitLoadOptions load_options() const;
  /// attention[layer][head] as T × T.
  Matrix attention(int layer, int head) const;
  Matrix rollout(const std::string& fusion, int layer) const;
};

/// Every golden file, sorted by name (24: six models × four images). Throws when the folder
/// holds another number of them: a loop over the list cannot pass by checking nothing.
std::vector<VitGolden> vit_goldens();
inline constexpr std::size_t kVitGoldens = 24;

/// tests/vit/data/real: the real-size checkpoints of tests/vit/make_golden_real.py.
std::filesystem::path vit_real_data_dir();

/// Every real-size golden file (real/golden/*.json), sorted by name (2: timm patch 16 at
/// T = 197, DINOv2 patch 8 with four registers at T = 789; head width 64). They hold selected
/// rows, not whole matrices (see tests/vit/data/real/README.md); `attention()` and `rollout()`
/// do not apply to them. Throws, like vit_goldens(), when there are not kVitRealGoldens.
std::vector<VitGolden> vit_real_goldens();
inline constexpr std::size_t kVitRealGoldens = 2;

/// Checks a forward pass of a real-size golden case against the file, with gtest EXPECTs
/// (failures name the case, layer, head and query): the architecture and grid, every stored row
/// of every layer and head (vit_attention_rows) and that it sums to 1, the last layer's fused
/// patch rows (vit_patch_row), the rollout rows (vit_rollout_row), the mean attention distance
/// (the pass's and vit_attention_distance's), the token norms, and the logits and probabilities.
/// Tolerances: weights and rollout 2e-4 + 1e-3·|want|; distance 1e-2 px; token norms
/// 1e-4·|want|; logits 1e-4 + 1e-3·|want|; probabilities 1e-4.
void expect_real_size_pass_matches(const VitGolden& g, const VitModel& model, const VitInput& input, const VitPass& pass);

/// |a − b| ≤ 2e-4 + 1e-3·|b| for every entry (the tolerance on attention weights);
/// returns the largest excess over the bound's |b| part as a description for failures, or "".
std::string compare_within(const Matrix& got, const Matrix& want, double abs_tol, double rel_tol);

/// A safetensors file of F32 tensors (the inverse of read_safetensors for F32), for
/// checkpoints the tests make or cut down.
std::string safetensors_f32_bytes(const std::map<std::string, Tensor>& tensors);

}  // namespace attnlab::testing
