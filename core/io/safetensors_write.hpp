#pragma once
// Writing the safetensors format (see safetensors.hpp for the layout): F32 only, the header's
// tensors in name order after "__metadata__", padded with spaces to a multiple of 8 bytes, as
// PyTorch's safetensors writes it, so that timm and read_safetensors() read the file.
#include "core/io/safetensors.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace attnlab {

/// The file's bytes: every tensor of `file` (holding its values) as F32, its metadata as
/// "__metadata__". Throws Error when a tensor does not hold its values.
std::vector<std::uint8_t> safetensors_bytes(const SafetensorsFile& file);

/// Writes safetensors_bytes(file) to `path` through write_file_safely() (overwrite): a new
/// temporary beside it (never a fixed name a link could redirect), synced, renamed over `path`
/// once complete (a reader never sees half a file). Throws Error with one line naming the path
/// when it cannot be written.
void write_safetensors(const std::filesystem::path& path, const SafetensorsFile& file);

/// Writes `text` to `path` the same way (new temporary, synced, then rename). Throws Error naming the path.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace attnlab
