// PyTorch checkpoints without Python (issue 36, item 4): torch.save's zip files read by our
// restricted unpickler (core/io/pytorch_checkpoint.hpp) give the same tensors, bit for bit, as
// their safetensors twins, and load_vit opens them (files and a folder with pytorch_model.bin,
// DINO's release format); hostile files are refused with one line naming the file. Fixtures:
// tests/vit/data/pth, made by tests/vit/make_pth_fixtures.py.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "core/io/pytorch_checkpoint.hpp"
#include "core/io/safetensors.hpp"
#include "core/vit/vit.hpp"
#include "test_support.hpp"
#include "vit/vit_golden.hpp"

using namespace attnlab;

namespace {

std::filesystem::path pth_dir() { return attnlab::testing::vit_data_dir() / "pth"; }

// Every tensor of `a` equals b's of the same name: shape, dtype and each float's bits.
void expect_same_tensors(const SafetensorsFile& a, const SafetensorsFile& b) {
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (const auto& [name, t] : b.tensors) {
    SCOPED_TRACE(name);
    const auto it = a.tensors.find(name);
    ASSERT_NE(it, a.tensors.end());
    EXPECT_EQ(it->second.shape, t.shape);
    EXPECT_EQ(it->second.dtype, t.dtype);
    ASSERT_EQ(it->second.values.size(), t.values.size());
    for (std::size_t k = 0; k < t.values.size(); ++k)
      ASSERT_EQ(std::bit_cast<std::uint32_t>(it->second.values[k]), std::bit_cast<std::uint32_t>(t.values[k]))
          << "element " << k;
  }
}

void expect_same_model(const VitModel& a, const VitModel& b) {
  EXPECT_EQ(a.arch.D, b.arch.D);
  EXPECT_EQ(a.arch.depth, b.arch.depth);
  EXPECT_EQ(a.arch.naming, b.arch.naming);
  EXPECT_EQ(a.arch.parameters, b.arch.parameters);
  EXPECT_TRUE(a.W_patch == b.W_patch);
  EXPECT_TRUE(a.pos == b.pos);
  EXPECT_TRUE(a.cls == b.cls);
  EXPECT_TRUE(a.registers == b.registers);
  ASSERT_EQ(a.blocks.size(), b.blocks.size());
  EXPECT_TRUE(a.norm_w == b.norm_w);
  EXPECT_TRUE(a.W_head == b.W_head);
}

std::vector<std::uint8_t> bytes_of(const std::filesystem::path& p) {
  const std::string s = attnlab::testing::read_file(p);
  return {s.begin(), s.end()};
}

}  // namespace

// The twins' tensors equal the safetensors files' bit for bit: F32 with views that are not
// contiguous and tensors sharing one storage at an offset, F16 in DINO's format (teacher
// picked, backbone. dropped, the projection head left out), BF16 with HF names.
TEST(PytorchCheckpoint, TwinsEqualTheirSafetensorsFilesBitForBit) {
  const auto data = attnlab::testing::vit_data_dir();
  struct Case {
    std::filesystem::path pth;
    const char* safetensors;
  };
  for (const Case& c : {Case{pth_dir() / "timm_f32" / "timm_f32.pth", "timm_f32"},
                        Case{pth_dir() / "dino_f16" / "checkpoint.pth", "timm_reg_ls_f16"},
                        Case{pth_dir() / "hf_bf16" / "pytorch_model.bin", "hf_model_bf16"}}) {
    SCOPED_TRACE(c.pth.string());
    const SafetensorsFile ref = read_safetensors(data / c.safetensors / "model.safetensors");
    const SafetensorsFile pth = open_pytorch(c.pth);
    expect_same_tensors(pth, ref);
    // From memory too (what the fuzzer reads).
    const std::vector<std::uint8_t> bytes = bytes_of(c.pth);
    expect_same_tensors(index_pytorch(bytes, c.pth.string()), ref);
  }
}

// load_vit opens a .pth file and a folder holding pytorch_model.bin (config.json beside it
// read), as the same model as the safetensors twin; model.sha256 is the .pth file's SHA-256.
TEST(PytorchCheckpoint, LoadVitOpensPthFilesAndFoldersLikeTheirTwins) {
  const auto data = attnlab::testing::vit_data_dir();
  const VitModel timm = load_vit(pth_dir() / "timm_f32" / "timm_f32.pth");
  expect_same_model(timm, load_vit(data / "timm_f32"));
  EXPECT_EQ(timm.arch.heads, 4);  // from the config.json beside it
  EXPECT_EQ(timm.arch.classes, 5);
  // The SHA-256 of the .pth file's bytes: the same as a safetensors source over them gives.
  const std::vector<std::uint8_t> bytes = bytes_of(pth_dir() / "timm_f32" / "timm_f32.pth");
  SafetensorsFile hashed;
  hashed.source = memory_source(bytes, "x");
  EXPECT_EQ(timm.sha256, hashed.read({}));
  EXPECT_EQ(timm.sha256.size(), 64u);

  const VitLoadOptions four{.heads = 4, .eps = std::nullopt};
  expect_same_model(load_vit(pth_dir() / "dino_f16" / "checkpoint.pth", four),
                    load_vit(data / "timm_reg_ls_f16", four));
  const VitModel hf = load_vit(pth_dir() / "hf_bf16");  // the folder: pytorch_model.bin
  EXPECT_EQ(hf.file.filename(), "pytorch_model.bin");
  EXPECT_EQ(hf.arch.naming, VitNaming::HuggingFace);
  expect_same_model(hf, load_vit(data / "hf_model_bf16"));
}

// Each hostile file is refused with one line that names the file and the problem; nothing is
// run (the pickles naming os.system etc. would run a command in Python's own unpickler).
TEST(PytorchCheckpoint, HostileFilesAreRefusedWithOneLine) {
  struct Case {
    const char* file;
    const char* part;
  };
  const Case cases[] = {
      {"os_system", "the global 'os.system'"},
      {"posix_system", "the global 'posix.system'"},
      {"builtins_eval", "the global 'builtins.eval'"},
      {"newobj", "(NEWOBJ)"},
      {"short_storage", "storage '0' holds 32 bytes but its pickle declares 16 elements of 4 bytes"},
      {"overflow_shape", "element count overflows 64 bits"},
      {"outside_storage", "reaches element 23 of storage '0', which holds 16"},
      {"negative_stride", "negative size or stride"},
      {"int64", "has dtype I64 (torch.LongStorage), which is not supported"},
      {"huge_memo", "memo index 4294967280 is past what a pickle of"},
      {"unread_memo", "memo index 5 is read before it was written"},
      {"deep_marks", "more than 256 MARKs open at once"},
      {"deep_lists", "containers nested more than 64 deep"},
      {"unknown_opcode", "opcode 0xff at byte 2 of data.pkl"},
      {"truncated_pickle", "data.pkl is truncated"},
      {"compressed", "is compressed; torch.save stores its entries uncompressed"},
      {"not_a_dict", "holds a list, not a dict of tensors"},
      {"truncated_zip", "not a complete zip archive"},
      {"not_zip", "not a PyTorch checkpoint (no zip archive"},
      {"legacy", "legacy format (before torch 1.6), which is not read: re-save it with torch >= 1.6"},
  };
  for (const Case& c : cases) {
    const auto path = pth_dir() / "hostile" / (std::string(c.file) + ".pth");
    SCOPED_TRACE(path.string());
    for (const bool from_memory : {false, true}) {
      const std::vector<std::uint8_t> bytes = bytes_of(path);
      try {
        if (from_memory)
          index_pytorch(bytes, path.string());
        else
          load_vit(path);  // through the loader: picked by its magic or extension
        ADD_FAILURE() << "no error; expected one containing '" << c.part << "'";
      } catch (const Error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(c.part), std::string::npos) << msg;
        EXPECT_EQ(msg.rfind(path.string() + ": ", 0), 0u) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      }
    }
  }
}

// The same checks on a zip file with the wrong extension: decided by the magic, not the name.
TEST(PytorchCheckpoint, TheFilesFirstBytesDecideNotItsName) {
  const auto copy = attnlab::testing::temp_dir() / "renamed.safetensors";
  std::filesystem::copy_file(pth_dir() / "timm_f32" / "timm_f32.pth", copy,
                             std::filesystem::copy_options::overwrite_existing);
  const VitModel m = load_vit(copy, VitLoadOptions{.heads = 4, .eps = std::nullopt});
  EXPECT_EQ(m.arch.classes, 5);
  const auto empty = attnlab::testing::temp_dir() / "empty_folder";
  std::filesystem::create_directories(empty);
  try {
    load_vit(empty);
    ADD_FAILURE() << "an empty folder loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a folder without model.safetensors or pytorch_model.bin"), std::string::npos)
        << e.what();
  }
}
