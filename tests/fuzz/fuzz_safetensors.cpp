// libFuzzer target: the safetensors reader (core/safetensors.hpp) on arbitrary bytes.
// A file is either read with the reader's promises kept or refused with one attnlab::Error of
// one line naming the file; anything else (a crash, a sanitizer report, another exception, a
// broken promise) is a finding. Seeds: tests/fuzz/corpus/safetensors (made by
// make_safetensors_seeds.py); findings are kept in tests/fuzz/regressions/safetensors and
// replayed by the fuzz_safetensors_replay test.
#include "core/error.hpp"
#include "core/safetensors.hpp"

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  attnlab::SafetensorsFile file;
  try {
    file = attnlab::parse_safetensors(std::span<const std::uint8_t>(data, size), "fuzz.safetensors");
  } catch (const attnlab::Error& e) {
    const std::string message = e.what();
    if (message.empty() || message.find('\n') != std::string::npos) broken("an error that is not one line: " + message);
    if (message.rfind("fuzz.safetensors: ", 0) != 0) broken("an error that does not name the file: " + message);
    return 0;
  }
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
