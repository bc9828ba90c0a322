#pragma once
// Reading the safetensors format (the weight files of timm, Hugging Face and DINO checkpoints):
//   8 bytes: N, the header's length, unsigned little-endian;
//   N bytes: a JSON object { "NAME": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
//            ..., optional "__metadata__": {string: string} };
//   the rest: the tensors' bytes, offsets relative to the start of this part, little-endian,
//   row-major (C order).
// Every tensor is converted to float32 on load (F16 and BF16 exactly, F32 as is).
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace attnlab {

/// The element types read (the others are refused, naming them).
enum class TensorDType { F32, F16, BF16 };

/// "F32", "F16" or "BF16".
const char* dtype_name(TensorDType dtype);

/// One tensor, converted to float32. `shape` as stored (e.g. {384, 3, 16, 16} for a patch
/// embedding's conv weight, out × in × kh × kw); `values` row-major, product(shape) floats
/// (1 for a scalar, shape {}).
struct Tensor {
  TensorDType dtype = TensorDType::F32;  ///< the dtype it was stored in
  std::vector<std::int64_t> shape;
  std::vector<float> values;
  std::int64_t numel() const;
};

/// The contents of one safetensors file.
struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;              ///< by name, e.g. "blocks.0.attn.qkv.weight"
  std::map<std::string, std::string> metadata;        ///< "__metadata__" (empty when absent)
};

/// Largest JSON header accepted, in bytes.
inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100ull * 1000 * 1000;

/// Parses a safetensors file held in memory; `what` names it in error messages (a path).
/// Throws attnlab::Error with one line naming `what` and the problem for: fewer than 8 bytes,
/// a header length past the end of the data or over kMaxSafetensorsHeaderBytes, a header that
/// is not a JSON object or not valid UTF-8 JSON, an entry without dtype/shape/data_offsets or
/// with the wrong JSON types, a negative dimension or a shape whose element count or byte count
/// overflows 64 bits, an unsupported dtype (named, e.g. "I64"), data offsets outside the data
/// part, reversed or overlapping another tensor's, a byte length other than
/// product(shape) × the dtype's size, a name given twice, and a non-string metadata value.
/// Numbers in the header must be JSON integers that fit (dimensions in int64, offsets in
/// uint64): -1, 1.5 or 1e46 are refused. The message reads "<what>: <the problem>", names
/// the tensor (e.g. "model.safetensors: tensor 'blocks.0.attn.qkv.weight' has dtype I64, which
/// is not supported (F32, F16, BF16 are)") and quotes at most 80 characters of any name.
/// Tensors of no elements (a zero dimension, begin == end) hold no bytes and overlap nothing;
/// bytes of the data part that no tensor uses are allowed. Never reads outside `bytes`.
SafetensorsFile parse_safetensors(std::span<const std::uint8_t> bytes, const std::string& what);

/// Reads and parses the file at `path` (read once into memory). Throws attnlab::Error with one
/// line for a missing path, a directory, an unreadable file, and everything parse_safetensors()
/// refuses.
SafetensorsFile read_safetensors(const std::filesystem::path& path);

}  // namespace attnlab
