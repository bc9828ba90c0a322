// libFuzzer target: the PyTorch checkpoint reader (core/pytorch_checkpoint.hpp: libzip's zip,
// our restricted unpickler, the storages' checks) on arbitrary bytes, and the ViT built from
// what it reads (vit_from_tensors, core/vit.hpp, what load_vit does after opening the file). A
// file is either read with the reader's promises kept or refused with one attnlab::Error of one
// line naming the file; anything else (a crash, a sanitizer report, another exception, a broken
// promise) is a finding. Seeds: tests/vit/data/pth (made by tests/vit/make_pth_fixtures.py:
// real torch.save files and hostile ones); findings are kept in tests/fuzz/regressions/pytorch
// and replayed by the fuzz_pytorch_replay test.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "core/error.hpp"
#include "core/pytorch_checkpoint.hpp"
#include "core/vit.hpp"

namespace {

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz_pytorch: %s\n", what.c_str());
  std::abort();
}

// One line, naming the file.
void check_error(const attnlab::Error& e) {
  const std::string message = e.what();
  if (message.empty() || message.find('\n') != std::string::npos) broken("an error that is not one line: " + message);
  if (message.rfind("fuzz.pth: ", 0) != 0) broken("an error that does not name the file: " + message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  attnlab::SafetensorsFile file;
  try {
    file = attnlab::index_pytorch(bytes, "fuzz.pth");
  } catch (const attnlab::Error& e) {
    check_error(e);
    return 0;
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
  return 0;
}
