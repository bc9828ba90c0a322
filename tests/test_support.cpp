#include "test_support.hpp"

#include "core/base/colormap.hpp"
#include "core/base/error.hpp"
#include "core/io/safetensors_write.hpp"

#include <ctime>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

namespace attnlab::testing {

const Image& safari() {
  static const Image img = load_image(asset("safari.jpg"));
  return img;
}

std::vector<MaskSpec> every_mask(int N) {
  std::vector<MaskSpec> masks(6);
  masks[1].kind = MaskKind::Causal;
  masks[2].kind = MaskKind::Strict;
  masks[3].kind = MaskKind::Window;
  masks[3].radius = 2;
  masks[4].kind = MaskKind::Random;
  masks[4].ratio = 0.3f;
  masks[4].seed = 5;
  masks[5].kind = MaskKind::Painted;
  for (int j = 0; j < N; j += 3) masks[5].painted.push_back(j);
  return masks;
}

std::filesystem::path temp_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "attnlab";
  for (auto& ch : name)
    if (ch == '/') ch = '_';
  auto dir = std::filesystem::temp_directory_path() / ("attnlab-test-" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void write_file(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

double mean_grey_difference(const Image& a, const Image& b) {
  if (a.width != b.width || a.height != b.height) return INFINITY;
  double sum = 0;
  for (std::size_t i = 0; i < a.rgb.size(); ++i) sum += std::abs(a.rgb[i] - b.rgb[i]);
  return 255.0 * sum / static_cast<double>(a.rgb.size());
}

Image random_image(int width, int height, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  Image img{width, height, std::vector<float>(static_cast<size_t>(width) * height * 3)};
  for (auto& v : img.rgb) v = u(gen);
  return img;
}

Image shuffle_patches(const Image& img, int K, const std::vector<int>& perm) {
  const int cols = img.width / K;
  Image out = img;
  for (size_t n = 0; n < perm.size(); ++n) {
    const int src = perm[n], dst = static_cast<int>(n);
    for (int y = 0; y < K; ++y)
      for (int x = 0; x < K; ++x)
        for (int c = 0; c < 3; ++c)
          out.at(dst % cols * K + x, dst / cols * K + y, c) = img.at(src % cols * K + x, src / cols * K + y, c);
  }
  return out;
}

double drawn_grey_map_error(const Image& shot, float x, float y, float scale, const Reference& ref, int query) {
  const auto row = ref.row(0, query);
  const std::span<const float> w(row.weights.data(), static_cast<size_t>(ref.N()));
  const ValueRange range = normalization_range(w, {}, Normalization::MinMax);
  const auto table = colormap_table(Colormap::Gray);
  const auto& g = ref.grid();
  const float half = static_cast<float>(g.K) * 0.5f;
  double worst = 0;
  for (int j = 0; j < ref.N(); ++j) {
    if (j == query) continue;
    const float v = shot.at(static_cast<int>(x + (static_cast<float>(g.col_of(j) * g.K) + half) * scale),
                            static_cast<int>(y + (static_cast<float>(g.row_of(j) * g.K) + half) * scale), 1);
    int best = 0;  // nearest table entry
    for (int k = 1; k < 256; ++k)
      if (std::abs(table[k * 3 + 1] - v) < std::abs(table[best * 3 + 1] - v)) best = k;
    const double expect = normalize_value(w[static_cast<size_t>(j)], range, Normalization::MinMax);
    worst = std::max(worst, std::abs(best / 255.0 - expect));
  }
  return worst;
}

double max_rel_error(const Matrix& a, const Matrix& b, double floor) {
  double worst = 0;
  for (Eigen::Index n = 0; n < a.size(); ++n) {
    const double d = std::abs(static_cast<double>(a.data()[n]) - b.data()[n]);
    worst = std::max(worst, d / std::max(std::abs(static_cast<double>(b.data()[n])), floor));
  }
  return worst;
}

namespace {

std::size_t proc_status_kib(const char* field, const std::string& process = "self") {
  const std::string path = "/proc/" + process + "/status";
  std::ifstream in(path);
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::stoull(line.substr(key.size())) * 1024;
  throw std::runtime_error(std::string("no ") + field + " in " + path);
}

}  // namespace

std::size_t resident_bytes() { return proc_status_kib("VmRSS"); }

std::size_t peak_resident_bytes() { return proc_status_kib("VmHWM"); }

double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

std::size_t resident_bytes(int pid) { return proc_status_kib("VmRSS", std::to_string(pid)); }

void reset_peak_resident() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5\n";
  out.flush();
  if (!out) throw std::runtime_error("cannot reset the peak resident memory (/proc/self/clear_refs)");
}

SafetensorsFile random_vit_tensors(int D, int /*heads: in the config, not the tensors*/, int depth, int patch, int classes,
                                   unsigned seed) {

  const int P = patch, grid = 224 / P;
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  SafetensorsFile file;
  auto add = [&](const std::string& name, std::vector<std::int64_t> dims, float sd, float mean = 0.0f) {
    Tensor t;
    t.shape = std::move(dims);
    t.values.resize(static_cast<std::size_t>(t.numel()));
    for (float& v : t.values) v = mean + sd * normal(gen);
    file.tensors[name] = std::move(t);
  };
  const std::int64_t d = D, hidden = 4 * d;
  const float w = 1.0f / std::sqrt(static_cast<float>(D));
  add("patch_embed.proj.weight", {d, 3, P, P}, 1.0f / std::sqrt(3.0f * static_cast<float>(P * P)));
  add("patch_embed.proj.bias", {d}, 0.02f);
  add("cls_token", {1, 1, d}, 0.5f);
  add("pos_embed", {1, 1 + grid * grid, d}, 0.5f);
  for (int i = 0; i < depth; ++i) {
    const std::string b = "blocks." + std::to_string(i) + ".";
    add(b + "norm1.weight", {d}, 0.1f, 1.0f), add(b + "norm1.bias", {d}, 0.1f);
    add(b + "attn.qkv.weight", {3 * d, d}, w), add(b + "attn.qkv.bias", {3 * d}, 0.1f);
    add(b + "attn.proj.weight", {d, d}, w), add(b + "attn.proj.bias", {d}, 0.1f);
    add(b + "norm2.weight", {d}, 0.1f, 1.0f), add(b + "norm2.bias", {d}, 0.1f);
    add(b + "mlp.fc1.weight", {hidden, d}, w), add(b + "mlp.fc1.bias", {hidden}, 0.1f);
    add(b + "mlp.fc2.weight", {d, hidden}, 1.0f / std::sqrt(static_cast<float>(hidden))), add(b + "mlp.fc2.bias", {d}, 0.1f);
  }
  add("norm.weight", {d}, 0.1f, 1.0f), add("norm.bias", {d}, 0.1f);
  if (classes > 0) add("head.weight", {classes, d}, w), add("head.bias", {classes}, 0.1f);
  return file;
}

namespace {
std::string random_vit_config(int heads) { return "{\"model_args\": {\"num_heads\": " + std::to_string(heads) + "}}"; }
}  // namespace

VitModel random_vit(int D, int heads, int depth, int patch, int classes, unsigned seed) {
  return vit_from_tensors(random_vit_tensors(D, heads, depth, patch, classes, seed), random_vit_config(heads), "", {}, "random ViT");
}

std::filesystem::path write_random_vit(const std::filesystem::path& dir, int D, int heads, int depth, int patch, int classes,
                                       unsigned seed) {
  std::filesystem::create_directories(dir);
  write_safetensors(dir / "model.safetensors", random_vit_tensors(D, heads, depth, patch, classes, seed));
  write_file(dir / "config.json", random_vit_config(heads) + "\n");
  return dir;
}

ResnetModel random_resnet(bool bottleneck, std::array<int, 4> stage_blocks, int width, int classes, unsigned seed) {
  return resnet_from_tensors(random_resnet_tensors(bottleneck, stage_blocks, width, classes, seed), "", "random ResNet");
}

std::filesystem::path write_random_resnet(const std::filesystem::path& dir, bool bottleneck, std::array<int, 4> stage_blocks, int width,
                                          int classes, unsigned seed) {
  std::filesystem::create_directories(dir);
  write_safetensors(dir / "model.safetensors", random_resnet_tensors(bottleneck, stage_blocks, width, classes, seed));
  return dir;
}

void expect_error_containing(const std::function<void()>& f, const std::string& part) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    return;
  }
  ADD_FAILURE() << "no error; expected one saying '" << part << "'";
}

}  // namespace attnlab::testing
