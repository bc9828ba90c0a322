// libFuzzer target: the whole checkpoint loader on arbitrary bytes: the safetensors reader
// (core/safetensors.hpp, all at once and header first then one pass) and the ViT built from
// its tensors (vit_from_tensors, core/vit.hpp, what load_vit does after opening the file). A
// file is either read with the reader's promises kept or refused with one attnlab::Error of
// one line naming the file; anything else (a crash, a sanitizer report, another exception, a
// broken promise) is a finding. Seeds: tests/fuzz/corpus/safetensors (made by
// make_safetensors_seeds.py); findings are kept in tests/fuzz/regressions/safetensors and
// replayed by the fuzz_safetensors_replay test.
#include "core/error.hpp"
#include "core/safetensors.hpp"
#include "core/vit.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

namespace {

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz_safetensors: %s\n", what.c_str());
  std::abort();
}

// One line, naming the file.
void check_error(const attnlab::Error& e) {
  const std::string message = e.what();
  if (message.empty() || message.find('\n') != std::string::npos) broken("an error that is not one line: " + message);
  if (message.rfind("fuzz.safetensors", 0) != 0) broken("an error that does not name the file: " + message);
}

// The ViT loader on the same bytes: the header first, every check, then the weights in one
// pass. heads = 1 divides every D, so the loader gets past the head count to the weights;
// without a config.json the loader's other paths are the same.
void load_vit_from(std::span<const std::uint8_t> bytes) {
  try {
    attnlab::SafetensorsFile file = attnlab::index_safetensors(bytes, "fuzz.safetensors");
    const attnlab::VitModel model = attnlab::vit_from_tensors(std::move(file), "", "", attnlab::VitLoadOptions{.heads = 1, .eps = std::nullopt},
                                                             "fuzz.safetensors");
    if (model.sha256.size() != 64) broken("a ViT loaded without the file's SHA-256");
    if (model.W_patch.rows() != model.arch.D || model.blocks.size() != static_cast<std::size_t>(model.arch.depth))
      broken("a ViT whose weights do not match its architecture");
  } catch (const attnlab::Error& e) {
    check_error(e);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  load_vit_from(bytes);
  attnlab::SafetensorsFile file;
  try {
    file = attnlab::parse_safetensors(bytes, "fuzz.safetensors");
  } catch (const attnlab::Error& e) {
    check_error(e);
    return 0;
  }
  if (file.source) broken("parse_safetensors kept a reference to the input");
  // Every tensor's bytes lie in the data part, without overlap: the values fit in the input.
  std::size_t total = 0;
  for (const auto& [name, tensor] : file.tensors) {
    for (const std::int64_t d : tensor.shape)
      if (d < 0) broken("a negative dimension was accepted in " + name);
    const std::int64_t n = tensor.numel();
    if (n < 0 || tensor.values.size() != static_cast<std::size_t>(n)) broken("values.size() != numel() for " + name);
    const std::size_t element = tensor.dtype == attnlab::TensorDType::F32 ? 4 : 2;
    total += tensor.values.size() * element;
    if (total > size) broken("the tensors hold more bytes than the input");
  }
  if (file.metadata.size() + file.tensors.size() > size) broken("more entries than bytes");
  return 0;
}
