// libFuzzer target: the whole checkpoint loader on arbitrary bytes, as `attnlab vit --info`
// and the app load a checkpoint. The input is up to three files separated by the line
// "\n--next-file--\n": config.json, preprocessor_config.json, model.safetensors (fewer parts:
// the last one is the safetensors file, the ones before it the config files in that order; no
// separator: the safetensors file alone, no config files). They are written into a folder of
// the process's own and load_vit(folder) reads them: the config files (heads, ε, mean/std,
// labels, pooling: never forced here), the header read from the file, every check, then the
// weights in one pass with pread() (core/base/platform read_at). The safetensors bytes are also read
// in memory (parse_safetensors, all at once) and the reader's promises checked. A file is either
// read with those promises kept or refused with one attnlab::Error of one line; anything else (a
// crash, a sanitizer report, another exception, a broken promise) is a finding. Seeds:
// tests/fuzz/corpus/safetensors (made by make_safetensors_seeds.py), dictionary
// tests/fuzz/safetensors.dict; findings are kept in tests/fuzz/regressions/safetensors and
// replayed by the fuzz_safetensors_replay test.
#include "tests/fuzz/fuzz_support.hpp"
#include "core/base/error.hpp"
#include "core/io/safetensors.hpp"
#include "core/vit/vit.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;

using attnlab::fuzz::kFileSeparator;

[[noreturn]] void broken(const std::string& what) { attnlab::fuzz::report_finding("fuzz_safetensors", what); }

// One line; `name` (the file or what stands for it) at its start.
void check_error(const attnlab::Error& e, const std::string& name) {
  const std::string message = e.what();
  if (message.empty() || message.find('\n') != std::string::npos) broken("an error that is not one line: " + message);
  if (message.find(name) == std::string::npos) broken("an error that does not name the checkpoint: " + message);
}

const fs::path& folder() { return attnlab::fuzz::temp_folder("safetensors"); }

void write_file(const fs::path& path, std::span<const std::uint8_t> bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) broken("cannot write " + path.string());
}

// The ViT loader as the app calls it, on a folder holding the files.
void load_vit_from(const std::vector<std::span<const std::uint8_t>>& parts) {
  const fs::path dir = folder();
  std::error_code ec;
  fs::remove(dir / "config.json", ec);
  fs::remove(dir / "preprocessor_config.json", ec);
  const std::span<const std::uint8_t> tensors = parts.back();
  if (parts.size() >= 2) write_file(dir / "config.json", parts[0]);
  if (parts.size() >= 3) write_file(dir / "preprocessor_config.json", parts[1]);
  write_file(dir / "model.safetensors", tensors);
  try {
    const attnlab::VitModel model = attnlab::load_vit(dir);
    if (model.sha256.size() != 64) broken("a ViT loaded without the file's SHA-256");
    if (model.arch.heads < 1 || model.arch.D % model.arch.heads != 0) broken("a ViT whose heads do not divide D");
    if (model.W_patch.rows() != model.arch.D || model.blocks.size() != static_cast<std::size_t>(model.arch.depth))
      broken("a ViT whose weights do not match its architecture");
  } catch (const attnlab::Error& e) {
    check_error(e, dir.string());
  }
}

}  // namespace

// A small memory budget: a header or config that asks for a large model is refused by the
// budget check (at least core's kAlwaysAllowedBytes are allowed) rather than allocated.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("ATTNLAB_MEMORY_BUDGET_MB", "256", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Up to three parts: [config.json, [preprocessor_config.json,]] model.safetensors.
  std::vector<std::span<const std::uint8_t>> parts;
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  std::size_t begin = 0;
  while (parts.size() < 2) {
    const std::size_t at = all.find(kFileSeparator, begin);
    if (at == std::string_view::npos) break;
    parts.emplace_back(data + begin, at - begin);
    begin = at + kFileSeparator.size();
  }
  parts.emplace_back(data + begin, size - begin);
  load_vit_from(parts);

  const std::span<const std::uint8_t> bytes = parts.back();
  attnlab::SafetensorsFile file;
  try {
    file = attnlab::parse_safetensors(bytes, "fuzz.safetensors");
  } catch (const attnlab::Error& e) {
    check_error(e, "fuzz.safetensors");
    if (e.what()[0] != 'f') broken(std::string("an error that does not start with the file's name: ") + e.what());
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
    if (total > bytes.size()) broken("the tensors hold more bytes than the input");
  }
  if (file.metadata.size() + file.tensors.size() > bytes.size()) broken("more entries than bytes");
  return 0;
}
