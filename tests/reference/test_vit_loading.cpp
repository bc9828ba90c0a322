// Loading a checkpoint at disk speed (issue 27, item 4): the header first, then the weights in
// one pass over the file that converts them into the model and hashes the file; a file that
// is truncated before or during the load is one Error line, never a crash (SIGBUS); the memory
// a load needs is the model's, not two or three copies of the file.
#include "core/base/error.hpp"
#include "core/io/files.hpp"
#include "core/io/safetensors.hpp"
#include "core/vit/vit.hpp"
#include "test_support.hpp"
#include "vit/vit_golden.hpp"

#include <gtest/gtest.h>
#include <malloc.h>

#include <bit>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

using namespace attnlab;

namespace {

// `call` must throw one attnlab::Error of one line that names `path` and contains `part`.
template <class F>
void expect_one_line_error(F&& call, const std::filesystem::path& path, const std::string& part) {
  try {
    call();
    ADD_FAILURE() << "no error; expected one containing '" << part << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
    EXPECT_NE(msg.find(path.string()), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

// A copy of a test checkpoint's folder in a fresh temp folder; returns the copy's folder.
std::filesystem::path copy_checkpoint(const std::string& name) {
  const auto dir = attnlab::testing::temp_dir() / name;
  std::filesystem::create_directories(dir);
  for (const auto& entry : std::filesystem::directory_iterator(attnlab::testing::vit_data_dir() / name))
    std::filesystem::copy_file(entry.path(), dir / entry.path().filename());
  return dir;
}

std::string le_bytes(std::uint64_t v, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += static_cast<char>(v >> (8 * i));
  return out;
}

}  // namespace

// The SHA-256 that the load computes while reading is the file's, for every dtype and naming
// (F32, F16, BF16; timm, DINOv2, HF, whose query/key/value go into parts of W_qkv).
TEST(VitLoading, HashFromTheLoadIsTheFilesSha256) {
  for (const std::string name : {"timm_f32", "timm_reg_ls_f16", "timm_reg_bf16", "hf_model_bf16", "hf_cls_f32", "dinov2_reg_f32"}) {
    const auto dir = attnlab::testing::vit_data_dir() / name;
    const VitModel model = load_vit(dir, VitLoadOptions{.heads = 4, .eps = std::nullopt});
    EXPECT_EQ(model.sha256.size(), 64u) << name;
    EXPECT_EQ(model.sha256, file_sha256(dir / "model.safetensors")) << name;
  }
}

// The weights read in one pass equal those read tensor by tensor (read_safetensors), for HF's
// query/key/value placed in the rows of W_qkv too.
TEST(VitLoading, OnePassLoadEqualsTheTensorsRead) {
  const auto dir = attnlab::testing::vit_data_dir() / "hf_model_bf16";
  const VitModel model = load_vit(dir, VitLoadOptions{.heads = 4, .eps = std::nullopt});
  const SafetensorsFile file = read_safetensors(dir / "model.safetensors");
  const std::int64_t D = model.arch.D;
  ASSERT_GT(D, 0);
  std::string prefix;
  for (const auto& [name, t] : file.tensors)
    if (name.find("encoder.layer.1.attention.attention.key.weight") != std::string::npos) prefix = name.substr(0, name.find("encoder."));
  const auto& key = file.tensors.at(prefix + "encoder.layer.1.attention.attention.key.weight").values;
  const auto& value_bias = file.tensors.at(prefix + "encoder.layer.1.attention.attention.value.bias").values;
  const VitBlock& b = model.blocks.at(1);
  for (std::int64_t i = 0; i < D * D; ++i) ASSERT_EQ(b.W_qkv.data()[D * D + i], key[static_cast<std::size_t>(i)]) << i;
  for (std::int64_t i = 0; i < D; ++i) ASSERT_EQ(b.b_qkv[2 * D + i], value_bias[static_cast<std::size_t>(i)]) << i;
}

// Pieces: tensors larger than the 1 MiB the reader converts at a time, at odd offsets (a
// header of odd length), with bytes no tensor uses between them, one tensor read into two
// places; every value exact, and the hash of the whole file.
TEST(VitLoading, ReadsLargeTensorsAtOddOffsetsInPiecesExactly) {
  const std::size_t nf = 700001, nb = 1500001;  // 2.8 MB of F32, 3 MB of BF16
  std::string data;
  for (std::size_t i = 0; i < nf; ++i) data += le_bytes(std::bit_cast<std::uint32_t>(static_cast<float>(i) * 0.5f - 7.0f), 4);
  const std::size_t gap = 3;
  data += std::string(gap, '\x55');
  for (std::size_t i = 0; i < nb; ++i) data += le_bytes(i % 65536, 2);
  const std::size_t bf_begin = 4 * nf + gap, bf_end = bf_begin + 2 * nb;
  data += std::string(5, '\x7f');
  const std::string header = "{\"a\":{\"dtype\":\"F32\",\"shape\":[" + std::to_string(nf) + "],\"data_offsets\":[0," +
                             std::to_string(4 * nf) + "]},\"b\":{\"dtype\":\"BF16\",\"shape\":[" + std::to_string(nb) +
                             "],\"data_offsets\":[" + std::to_string(bf_begin) + "," + std::to_string(bf_end) + "]}}";
  ASSERT_EQ(header.size() % 2, 1u);
  const auto path = attnlab::testing::temp_dir() / "pieces.safetensors";
  attnlab::testing::write_file(path, le_bytes(header.size(), 8) + header + data);

  const SafetensorsFile opened = open_safetensors(path);
  ASSERT_TRUE(opened.source);
  EXPECT_TRUE(opened.tensors.at("a").values.empty()) << "opening read the tensors";
  std::vector<float> a(nf), b1(nb), b2(nb);
  const std::vector<TensorRead> reads{{&opened.tensors.at("b"), b1.data()}, {&opened.tensors.at("a"), a.data()},
                                      {&opened.tensors.at("b"), b2.data()}};
  EXPECT_EQ(opened.read(reads), file_sha256(path));
  for (std::size_t i = 0; i < nf; ++i) ASSERT_EQ(a[i], static_cast<float>(i) * 0.5f - 7.0f) << i;
  for (std::size_t i = 0; i < nb; ++i) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(b1[i]), static_cast<std::uint32_t>(i % 65536) << 16) << i;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(b2[i]), std::bit_cast<std::uint32_t>(b1[i])) << i;
  }
  // read_safetensors gives the same values, and keeps no file open.
  const SafetensorsFile all = read_safetensors(path);
  EXPECT_FALSE(all.source);
  EXPECT_EQ(all.tensors.at("a").values, a);
  EXPECT_EQ(all.tensors.at("b").values.size(), nb);
}

// A real test checkpoint cut in the middle of a tensor: refused from its header, naming the
// tensor whose bytes are missing, before any weight is read.
TEST(VitLoading, CheckpointTruncatedMidTensorIsOneErrorLine) {
  const auto dir = copy_checkpoint("timm_f32");
  const auto path = dir / "model.safetensors";
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size / 2 + 1);
  expect_one_line_error([&] { load_vit(dir); }, path, "past the end of the data");
  expect_one_line_error([&] { load_vit(dir); }, path, "truncated");
}

// The file truncated after its header was read and checked but before the weights were read
// (what a memory mapping would turn into SIGBUS): one Error line, whatever is cut.
TEST(VitLoading, FileTruncatedWhileLoadingIsAnErrorNotACrash) {
  const auto dir = copy_checkpoint("timm_f32");
  const auto path = dir / "model.safetensors";
  const std::string config = attnlab::testing::read_file(dir / "config.json");
  const auto size = std::filesystem::file_size(path);
  const std::string original = attnlab::testing::read_file(path);
  const std::uint64_t header_end = 8 + std::uint64_t{static_cast<unsigned char>(original[0])} +
                                   (std::uint64_t{static_cast<unsigned char>(original[1])} << 8) +
                                   (std::uint64_t{static_cast<unsigned char>(original[2])} << 16);
  for (const std::uint64_t cut : {std::uint64_t{0}, header_end, header_end + 4097, size / 2, size - 1}) {
    attnlab::testing::write_file(path, original);
    SafetensorsFile file = open_safetensors(path);
    std::filesystem::resize_file(path, cut);
    expect_one_line_error([&] { vit_from_tensors(std::move(file), config, "", {}, path.string()); }, path,
                          "truncated or replaced meanwhile");
  }
  // The same file whole again loads, and its hash is the file's.
  attnlab::testing::write_file(path, original);
  EXPECT_EQ(load_vit(dir).sha256, file_sha256(path));
}

// The memory a load needs: the model's float32 weights (the file's size for an F32 file) and
// little more, not a copy of the file beside them (the loader read the whole file into memory,
// then converted every tensor into a second copy, then into the model: 3× before issue 27).
TEST(VitLoading, PeakMemoryOfALoadIsAboutTheModel) {
  const auto dir = attnlab::testing::temp_dir();
  const auto path = dir / "model.safetensors";
  {
    constexpr std::int64_t D = 256, H = 1024, P = 16, depth = 8;
    std::map<std::string, Tensor> tensors;
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape) {
      Tensor t;
      t.shape = std::move(shape);
      t.values.assign(static_cast<std::size_t>(t.numel()), 0.01f);
      tensors[name] = std::move(t);
    };
    add("patch_embed.proj.weight", {D, 3, P, P}), add("patch_embed.proj.bias", {D});
    add("cls_token", {1, 1, D}), add("pos_embed", {1, 197, D});
    for (int i = 0; i < depth; ++i) {
      const std::string b = "blocks." + std::to_string(i) + ".";
      add(b + "norm1.weight", {D}), add(b + "norm1.bias", {D}), add(b + "norm2.weight", {D}), add(b + "norm2.bias", {D});
      add(b + "attn.qkv.weight", {3 * D, D}), add(b + "attn.qkv.bias", {3 * D});
      add(b + "attn.proj.weight", {D, D}), add(b + "attn.proj.bias", {D});
      add(b + "mlp.fc1.weight", {H, D}), add(b + "mlp.fc1.bias", {H});
      add(b + "mlp.fc2.weight", {D, H}), add(b + "mlp.fc2.bias", {D});
    }
    add("norm.weight", {D}), add("norm.bias", {D});
    attnlab::testing::write_file(path, attnlab::testing::safetensors_f32_bytes(tensors));
  }
  const auto size = static_cast<double>(std::filesystem::file_size(path));
  ASSERT_GT(size, 20e6);
  ::malloc_trim(0);  // the memory that made the file, freed but resident in the heap, given back
  attnlab::testing::reset_peak_resident();
  const auto before = static_cast<double>(attnlab::testing::resident_bytes());
  const VitModel model = load_vit(path, VitLoadOptions{.heads = 4, .eps = std::nullopt});
  const double growth = static_cast<double>(attnlab::testing::peak_resident_bytes()) - before;
  if (ATTNLAB_ASAN) GTEST_SKIP() << "AddressSanitizer's own memory: the peak is checked in the plain build";
  EXPECT_LE(growth, 1.15 * size) << "the load's peak resident memory grew by " << growth / 1e6 << " MB for a file of "
                                 << size / 1e6 << " MB";
  EXPECT_GE(growth, 0.9 * size) << "the model's weights are not all resident?";
}
