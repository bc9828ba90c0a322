#pragma once
// The ViT test checkpoints and golden files that tests/vit/make_golden.py wrote with PyTorch
// (see tests/vit/data/README.md), read for the reference, GPU and command-line tests.
#include "core/vit.hpp"

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

/// Every golden file, sorted by name (24: six models × four images).
std::vector<VitGolden> vit_goldens();

/// |a − b| ≤ 2e-4 + 1e-3·|b| for every entry (the tolerance on attention weights);
/// returns the largest excess over the bound's |b| part as a description for failures, or "".
std::string compare_within(const Matrix& got, const Matrix& want, double abs_tol, double rel_tol);

/// A safetensors file of F32 tensors (the inverse of read_safetensors for F32), for
/// checkpoints the tests make or cut down.
std::string safetensors_f32_bytes(const std::map<std::string, Tensor>& tensors);

}  // namespace attnlab::testing
