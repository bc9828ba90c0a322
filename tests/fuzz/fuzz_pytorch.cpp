// libFuzzer target: the PyTorch checkpoint reader (core/io/pytorch_checkpoint.hpp: libzip's zip,
// our restricted unpickler, the storages' checks) on arbitrary bytes, and the ViT built from
// what it reads (vit_from_tensors, core/vit/vit.hpp, what load_vit does after opening the file). A
// file is either read with the reader's promises kept or refused with one attnlab::Error of one
// line naming the file; anything else (a crash, a sanitizer report, another exception, a broken
// promise) is a finding. Seeds: tests/vit/data/pth (made by tests/vit/make_pth_fixtures.py:
// real torch.save files and hostile ones) and tests/fuzz/corpus/pytorch (their data.pkl, by
// the same script); findings are kept in tests/fuzz/regressions/pytorch
// and replayed by the fuzz_pytorch_replay test.
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tests/fuzz/fuzz_support.hpp"
#include "core/base/error.hpp"
#include "core/io/pytorch_checkpoint.hpp"
#include "core/vit/vit.hpp"

namespace {

[[noreturn]] void broken(const std::string& what) { attnlab::fuzz::report_finding("fuzz_pytorch", what); }

// One line, naming the file.
void check_error(const attnlab::Error& e) {
  const std::string message = e.what();
  if (message.empty() || message.find('\n') != std::string::npos) broken("an error that is not one line: " + message);
  if (message.rfind("fuzz.pth: ", 0) != 0) broken("an error that does not name the file: " + message);
}

// A stored (uncompressed) zip archive of `entries` (name, bytes), as torch.save lays it out,
// with the right CRCs: so that mutations of a pickle reach the unpickler, not libzip's CRC check.
std::vector<std::uint8_t> stored_zip(const std::vector<std::pair<std::string, std::vector<std::uint8_t>>>& entries) {
  std::vector<std::uint8_t> out, central;
  auto put = [](std::vector<std::uint8_t>& v, std::uint32_t x, int n) {
    for (int k = 0; k < n; ++k) v.push_back(static_cast<std::uint8_t>(x >> (8 * k)));
  };
  for (const auto& [name, data] : entries) {
    const auto crc = static_cast<std::uint32_t>(crc32(0, data.data(), static_cast<uInt>(data.size())));
    const auto size = static_cast<std::uint32_t>(data.size());
    const auto offset = static_cast<std::uint32_t>(out.size());
    put(out, 0x04034b50, 4);  // local file header
    put(out, 20, 2), put(out, 0, 2), put(out, 0, 2), put(out, 0, 2), put(out, 0x21, 2);
    put(out, crc, 4), put(out, size, 4), put(out, size, 4), put(out, static_cast<std::uint32_t>(name.size()), 2),
        put(out, 0, 2);
    out.insert(out.end(), name.begin(), name.end());
    out.insert(out.end(), data.begin(), data.end());
    put(central, 0x02014b50, 4);  // its central directory entry
    put(central, 20, 2), put(central, 20, 2), put(central, 0, 2), put(central, 0, 2), put(central, 0, 2),
        put(central, 0x21, 2);
    put(central, crc, 4), put(central, size, 4), put(central, size, 4);
    put(central, static_cast<std::uint32_t>(name.size()), 2), put(central, 0, 2), put(central, 0, 2),
        put(central, 0, 2);
    put(central, 0, 2), put(central, 0, 4), put(central, offset, 4);
    central.insert(central.end(), name.begin(), name.end());
  }
  const auto cd_offset = static_cast<std::uint32_t>(out.size());
  out.insert(out.end(), central.begin(), central.end());
  put(out, 0x06054b50, 4);  // end of central directory
  put(out, 0, 2), put(out, 0, 2), put(out, static_cast<std::uint32_t>(entries.size()), 2);
  put(out, static_cast<std::uint32_t>(entries.size()), 2), put(out, static_cast<std::uint32_t>(central.size()), 4);
  put(out, cd_offset, 4), put(out, 0, 2);
  return out;
}

void check_file(std::span<const std::uint8_t> bytes);

}  // namespace

// Inputs that start like a zip archive are read as they are; any other input is the pickle
// (data.pkl) of an archive that also holds storages "0" (64 bytes) and "1" (4 bytes), so that
// the unpickler is fuzzed past the archive's CRCs (seeds: tests/fuzz/corpus/pytorch, the
// fixtures' data.pkl files).
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  if (size >= 2 && data[0] == 'P' && data[1] == 'K') {
    check_file(bytes);
    return 0;
  }
  std::vector<std::uint8_t> storage0(64), storage1(4);
  for (std::size_t k = 0; k < storage0.size(); ++k) storage0[k] = static_cast<std::uint8_t>(k * 37);
  const std::vector<std::uint8_t> archive =
      stored_zip({{"archive/data.pkl", std::vector<std::uint8_t>(data, data + size)},
                  {"archive/data/0", storage0},
                  {"archive/data/1", storage1}});
  check_file(archive);
  return 0;
}

namespace {

void check_file(std::span<const std::uint8_t> bytes) {
  const std::size_t size = bytes.size();
  attnlab::SafetensorsFile file;
  try {
    file = attnlab::index_pytorch(bytes, "fuzz.pth");
  } catch (const attnlab::Error& e) {
    check_error(e);
    return;
  }
  // Every tensor holds its values (numel() floats, dims not negative), bounded by the input.
  std::uint64_t total = 0;
  for (const auto& [name, tensor] : file.tensors) {
    for (const std::int64_t d : tensor.shape)
      if (d < 0) broken("a negative dimension was accepted in " + name);
    if (!tensor.has_values()) broken("a tensor without its values: " + name);
    total += tensor.values.size();
  }
  if (total > size) broken("the tensors hold more floats than the input has bytes");
  if (!file.source) broken("no source to hash the file");
  // The ViT loader on it: heads = 1 divides every D.
  try {
    const attnlab::VitModel model = attnlab::vit_from_tensors(
        std::move(file), "", "", attnlab::VitLoadOptions{.heads = 1, .eps = std::nullopt}, "fuzz.pth");
    if (model.sha256.size() != 64) broken("a ViT loaded without the file's SHA-256");
    if (model.W_patch.rows() != model.arch.D || model.blocks.size() != static_cast<std::size_t>(model.arch.depth))
      broken("a ViT whose weights do not match its architecture");
  } catch (const attnlab::Error& e) {
    check_error(e);
  }
}

}  // namespace
