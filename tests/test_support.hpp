#pragma once
// Helpers shared by the test binaries: where the assets are, temporary folders, small images.
#include "core/image.hpp"
#include "core/settings.hpp"
#include "core/types.hpp"

#include <filesystem>
#include <string>

namespace attnlab::testing {

/// assets/ of the source tree (ATTNLAB_SOURCE_DIR is set by tests/CMakeLists.txt).
inline std::filesystem::path asset(const std::string& name) {
  return std::filesystem::path(ATTNLAB_SOURCE_DIR) / "assets" / name;
}

/// The safari photo, loaded once per test program.
const Image& safari();

/// One mask of every kind for a grid of N tokens: none, causal, strict, window (radius 2),
/// random (30 % of the keys, seed 5) and painted (every third key).
std::vector<MaskSpec> every_mask(int N);

/// A fresh, empty folder under the system's temp dir, named after the running test.
std::filesystem::path temp_dir();

/// Writes bytes to a file (creating or replacing it).
void write_file(const std::filesystem::path& p, const std::string& bytes);
std::string read_file(const std::filesystem::path& p);

/// A W×H image of uniformly random colours (seeded), values in [0,1].
Image random_image(int width, int height, unsigned seed);

/// The image with its K×K patches rearranged: output patch n = input patch perm[n]
/// (grid of W/K × H/K, raster order).
Image shuffle_patches(const Image& img, int K, const std::vector<int>& perm);

/// Largest |a-b| / max(|b|, floor) over all entries: relative error with a floor for tiny values.
double max_rel_error(const Matrix& a, const Matrix& b, double floor);

}  // namespace attnlab::testing
