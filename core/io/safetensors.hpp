#pragma once
// Reading the safetensors format (the weight files of timm, Hugging Face and DINO checkpoints):
//   8 bytes: N, the header's length, unsigned little-endian;
//   N bytes: a JSON object { "NAME": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
//            ..., optional "__metadata__": {string: string} };
//   the rest: the tensors' bytes, offsets relative to the start of this part, little-endian,
//   row-major (C order).
// Every tensor is converted to float32 on load (F16 and BF16 exactly, F32 as is), either all at
// once (parse_safetensors, read_safetensors) or, after the header alone was read and checked
// (open_safetensors), straight into the caller's memory in one pass over the file that also
// hashes it (SafetensorsFile::read: what load_vit does).
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace attnlab {

/// The element types read (the others are refused, naming them).
enum class TensorDType { F32, F16, BF16 };

/// "F32", "F16" or "BF16".
const char* dtype_name(TensorDType dtype);

/// A tensor's shape as the loaders' errors write it: "[384, 3, 16, 16]".
std::string shape_text(const std::vector<std::int64_t>& shape);

/// One tensor. `shape` as stored (e.g. {384, 3, 16, 16} for a patch embedding's conv weight,
/// out × in × kh × kw). `values`: float32, row-major, product(shape) floats (1 for a scalar,
/// shape {}) once read; empty in a file opened by open_safetensors() or index_safetensors(),
/// whose tensors are read by SafetensorsFile::read() from `offset`.
struct Tensor {
  TensorDType dtype = TensorDType::F32;  ///< the dtype it was stored in
  std::vector<std::int64_t> shape;
  std::vector<float> values;
  std::uint64_t offset = 0;  ///< its first byte, counted from the start of the file (opened files only)
  std::int64_t numel() const;
  /// Whether `values` holds the tensor (always for a tensor of no elements).
  bool has_values() const { return values.size() == static_cast<std::size_t>(numel()); }
};

class SafetensorsSource;  // where an opened file's bytes come from (a file descriptor or memory)

/// One tensor to read into memory the caller owns: tensor->numel() floats at `out`.
struct TensorRead {
  const Tensor* tensor = nullptr;  ///< one of the file's tensors
  float* out = nullptr;
};

/// The contents of one safetensors file: every tensor's values (parse_safetensors(),
/// read_safetensors(), or filled in by hand), or, for a file opened by open_safetensors() or
/// index_safetensors(), the checked header only, the tensors' bytes read later by read().
struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;              ///< by name, e.g. "blocks.0.attn.qkv.weight"
  std::map<std::string, std::string> metadata;        ///< "__metadata__" (empty when absent)
  /// The opened file's bytes (null when every tensor holds its values). Shared by copies.
  std::shared_ptr<SafetensorsSource> source;

  /// Converts the tensors of `reads` to float32 at their `out` (F16 and BF16 exactly, F32 as
  /// is), tensors holding values copied. With a source, in one pass over all its bytes in
  /// order (the header and bytes no tensor uses too, nothing read twice, in pieces of at most
  /// 1 MiB beside the output) that also hashes them, and returns that SHA-256 as 64 lowercase
  /// hex digits: the hash of exactly the bytes converted, even if the file changes meanwhile.
  /// Without a source returns "". A tensor may be read more than once (several outputs).
  /// Throws attnlab::Error with one line naming the file when it is shorter than when it was
  /// opened (truncated meanwhile: "…ended after N of M bytes…") or cannot be read; the outputs
  /// are then partly written. `stop` (may be null) is looked at before each 1 MiB piece: when
  /// set, throws Error("cancelled") (closing the window during a 350 MB ViT-B load, issue 38).
  std::string read(std::span<const TensorRead> reads, const std::atomic<bool>* stop = nullptr) const;
};

/// Largest JSON header accepted, in bytes.
inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100ull * 1000 * 1000;

/// Checks a safetensors file held in memory and lists its tensors without converting them;
/// `what` names it in error messages (a path). The result's source refers to `bytes`, which
/// must outlive its read() calls. Throws attnlab::Error with one line naming `what` and the
/// problem for: fewer than 8 bytes, a header length past the end of the data or over
/// kMaxSafetensorsHeaderBytes, a header that is not a JSON object or not valid UTF-8 JSON, an
/// entry without dtype/shape/data_offsets or with the wrong JSON types, a negative dimension or
/// a shape whose element count or byte count overflows 64 bits, an unsupported dtype (named,
/// e.g. "I64"), data offsets outside the data part, reversed or overlapping another tensor's,
/// a byte length other than product(shape) × the dtype's size, a name given twice, and a
/// non-string metadata value. Numbers in the header must be JSON integers that fit (dimensions
/// in int64, offsets in uint64): -1, 1.5 or 1e46 are refused. The message reads "<what>: <the
/// problem>", names the tensor (e.g. "model.safetensors: tensor 'blocks.0.attn.qkv.weight' has
/// dtype I64, which is not supported (F32, F16, BF16 are)") and quotes at most 80 characters of
/// any name. Tensors of no elements (a zero dimension, begin == end) hold no bytes and overlap
/// nothing; bytes of the data part that no tensor uses are allowed. Never reads outside `bytes`.
SafetensorsFile index_safetensors(std::span<const std::uint8_t> bytes, const std::string& what);

/// index_safetensors() and every tensor converted to float32 (F16 and BF16 exactly, F32 as
/// is) into its values; the result keeps no reference to `bytes` (source is null). Throws as
/// index_safetensors().
SafetensorsFile parse_safetensors(std::span<const std::uint8_t> bytes, const std::string& what);

/// Opens the file at `path` and reads and checks its header only (as index_safetensors(),
/// against the file's size now); the tensors' bytes are read by SafetensorsFile::read(), from
/// the file kept open by the result's source (with pread(), never memory-mapped, so a file
/// truncated meanwhile gives an Error, not SIGBUS). Throws attnlab::Error with one line for a
/// missing path, a directory, a file that is not regular or cannot be opened or read, and
/// everything index_safetensors() refuses.
SafetensorsFile open_safetensors(const std::filesystem::path& path);

/// open_safetensors() and every tensor read into its values (one pass over the file); the
/// result keeps the file closed (source is null). Throws as open_safetensors() and read().
SafetensorsFile read_safetensors(const std::filesystem::path& path);

/// The bytes of the file at `path` as a source for SafetensorsFile::source (kept open, read
/// with pread()), for other readers of checkpoints whose tensors hold their values and whose
/// file is only hashed by read() (core/io/pytorch_checkpoint.hpp). Throws attnlab::Error with one
/// line as open_safetensors() does for a missing path, a directory, a file that is not regular
/// or cannot be opened.
std::shared_ptr<SafetensorsSource> open_file_source(const std::filesystem::path& path);

/// `bytes` (which must outlive the source) as a source, named `what` in errors.
std::shared_ptr<SafetensorsSource> memory_source(std::span<const std::uint8_t> bytes, const std::string& what);

/// `count` little-endian elements of `dtype` at `p` converted to float32 at `out` (F16 and BF16
/// exactly, F32 as is).
void convert_to_float(TensorDType dtype, const std::uint8_t* p, std::size_t count, float* out);

}  // namespace attnlab
