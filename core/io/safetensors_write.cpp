#include "core/io/safetensors_write.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/io/files.hpp"

#include <nlohmann/json.hpp>

#include <bit>
#include <cerrno>
#include <cstring>

namespace attnlab {

std::vector<std::uint8_t> safetensors_bytes(const SafetensorsFile& file) {
  static_assert(std::endian::native == std::endian::little, "safetensors is little-endian");
  nlohmann::ordered_json header;
  if (!file.metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto& [k, v] : file.metadata) meta[k] = v;
    header["__metadata__"] = meta;
  }
  std::uint64_t offset = 0;
  for (const auto& [name, t] : file.tensors) {
    // TRANSLATORS: %s is a tensor's name.
    if (!t.has_values()) throw Error(text_format(_("tensor '%s' holds no values to write"), one_line(name).c_str()));
    const std::uint64_t bytes = static_cast<std::uint64_t>(t.numel()) * 4;
    header[name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::vector<std::uint8_t> out(8 + text.size() + offset);
  const std::uint64_t n = text.size();
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, text.data(), text.size());
  std::uint8_t* p = out.data() + 8 + text.size();
  for (const auto& [name, t] : file.tensors) {
    std::memcpy(p, t.values.data(), t.values.size() * 4);
    p += t.values.size() * 4;
  }
  return out;
}

void write_safetensors(const std::filesystem::path& path, const SafetensorsFile& file) {
  const std::vector<std::uint8_t> bytes = safetensors_bytes(file);
  write_file_safely(path, std::span<const char>(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                    /*overwrite=*/true);
}

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  write_file_safely(path, text, /*overwrite=*/true);
}

}  // namespace attnlab
