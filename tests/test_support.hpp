#pragma once
// Helpers shared by the test binaries: where the assets are, temporary folders, small images.
#include "core/io/image.hpp"
#include "core/hand_made/reference.hpp"
#include "core/base/settings.hpp"
#include "core/base/types.hpp"
#include "core/cnn/resnet.hpp"
#include "core/vit/vit.hpp"

#include <filesystem>
#include <functional>
#include <string>

namespace attnlab::testing {

/// This build's paths, from one file that tests/CMakeLists.txt generates (test_paths.cpp in the
/// build folder): the repository's root and the attnlab program this tree builds. No other test
/// file's compile command holds an absolute path, so a clone elsewhere (a CI run) finds every test
/// file in the compiler cache (docs/ROBUSTNESS.md, "CI time").
const char* source_dir();
const char* attnlab_binary();

}  // namespace attnlab::testing

#define ATTNLAB_SOURCE_DIR (::attnlab::testing::source_dir())
#define ATTNLAB_BINARY (::attnlab::testing::attnlab_binary())
#define ATTNLAB_HUB_TEST_DIR (std::string(::attnlab::testing::source_dir()) + "/tests/hub")

namespace attnlab::testing {

/// assets/ of the source tree.
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

/// Mean |a − b| over all channels, in grey levels (0…255); infinite when the sizes differ.
double mean_grey_difference(const Image& a, const Image& b);

/// A W×H image of uniformly random colours (seeded), values in [0,1].
Image random_image(int width, int height, unsigned seed);

/// The image with its K×K patches rearranged: output patch n = input patch perm[n]
/// (grid of W/K × H/K, raster order).
Image shuffle_patches(const Image& img, int K, const std::vector<int>& perm);

/// How far a drawn map is from the reference: `shot` shows head 0's row `query` as an opaque
/// grey (Colormap::Gray, min–max) map over the patch grid, image pixel (0,0) at screen (x, y),
/// `scale` screen pixels per image pixel. Each patch's centre is read, mapped back through the
/// grey table, and compared with the row normalized min–max; returns the largest difference in
/// [0,1]. The query's own patch is skipped (its outline covers it).
double drawn_grey_map_error(const Image& shot, float x, float y, float scale, const Reference& ref, int query);

/// The process's resident memory now (VmRSS) and its high-water mark (VmHWM), in bytes, from
/// /proc/self/status; reset_peak_resident() lowers the mark to what is resident now (Linux:
/// "5" written to /proc/self/clear_refs). Together they bound what a piece of code allocated
/// and touched, wherever it was allocated (our code, Eigen, Mesa, llvmpipe's GL buffers).
std::size_t resident_bytes();
std::size_t peak_resident_bytes();
/// The resident memory (VmRSS) of another process, in bytes, from /proc/<pid>/status.
std::size_t resident_bytes(int pid);
void reset_peak_resident();

/// CPU time of the whole process so far (every thread, user and system: Mesa's llvmpipe threads
/// run the shaders, OpenBLAS its own), in ms, from clock_gettime(CLOCK_PROCESS_CPUTIME_ID).
double process_cpu_ms();

/// Largest |a-b| / max(|b|, floor) over all entries: relative error with a floor for tiny values.
double max_rel_error(const Matrix& a, const Matrix& b, double floor);

/// A timm-named ViT with random weights (seeded), built through vit_from_tensors like a loaded
/// checkpoint: width D, `heads` heads, `depth` blocks, MLP 4D, patch P, position embedding for
/// a 224-pixel grid (224/P per side, resampled for other inputs), `classes` outputs (0: no
/// classifier). Weights N(0, 1/√fan-in) for the products, so activations stay O(1) and
/// attention is clearly non-uniform.
VitModel random_vit(int D, int heads, int depth, int patch, int classes, unsigned seed = 42);
/// random_vit()'s tensors (timm's names), for a checkpoint written to disk.
SafetensorsFile random_vit_tensors(int D, int heads, int depth, int patch, int classes, unsigned seed = 42);
/// random_vit() as a checkpoint folder the app opens: `dir`/model.safetensors and a config.json
/// naming the heads (created if need be). Returns `dir`.
std::filesystem::path write_random_vit(const std::filesystem::path& dir, int D, int heads, int depth, int patch, int classes,
                                       unsigned seed = 42);

/// random_resnet_tensors() (core/cnn/resnet.hpp) loaded (no config.json: ImageNet's mean and std, input size 224).
ResnetModel random_resnet(bool bottleneck, std::array<int, 4> stage_blocks, int width, int classes, unsigned seed = 42);
/// random_resnet_tensors() written to dir/model.safetensors; returns `dir`.
std::filesystem::path write_random_resnet(const std::filesystem::path& dir, bool bottleneck, std::array<int, 4> stage_blocks, int width,
                                          int classes, unsigned seed = 42);

/// Runs `f` and expects it to throw attnlab::Error whose message contains `part` (gtest
/// failures otherwise, naming the message or the missing error).
void expect_error_containing(const std::function<void()>& f, const std::string& part);

}  // namespace attnlab::testing

// ATTNLAB_ASAN: 1 in the sanitized build. AddressSanitizer's shadow memory, redzones and
// quarantine grow the resident memory, so tests of peak memory leave that check to the plain build.
#if defined(__SANITIZE_ADDRESS__)
#define ATTNLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNLAB_ASAN 1
#endif
#endif
#ifndef ATTNLAB_ASAN
#define ATTNLAB_ASAN 0
#endif
