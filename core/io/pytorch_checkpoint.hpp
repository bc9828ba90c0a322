#pragma once
// Reading PyTorch checkpoints (.pth, .pt, pytorch_model.bin) without Python: the zip format
// torch.save writes by default since torch 1.6 (torch/serialization.py, _save and _load):
//   ARCHIVE/data.pkl     a pickle (protocol 2) of the saved object, tensors in it rebuilt by
//                        torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride,
//                        requires_grad, backward_hooks[, metadata]) from storages named by
//                        persistent ids ('storage', torch.FloatStorage, KEY, LOCATION, NUMEL);
//   ARCHIVE/data/KEY     each storage's bytes, NUMEL elements, little-endian, stored
//                        uncompressed;
//   ARCHIVE/byteorder    "little" (absent in files of older torch: little too);
//   ARCHIVE/version, ... ignored.
// The zip is read by libzip; the pickle by a restricted unpickler of our own that accepts what
// torch.load(weights_only=True) accepts (torch/_weights_only_unpickler.py: dicts, OrderedDicts,
// lists, tuples, ints, floats, strings, bools, None, tensors, parameters) and refuses every
// other global (os.system, builtins.eval, ...) by name, running no code.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "core/io/safetensors.hpp"
#include "core/io/zip_archive.hpp"  // is_zip_magic

namespace attnlab {

/// The PyTorch checkpoint's part of the tensor names (each model family's own are in its file
/// of core/vit/families/, core/vit/model_family.hpp; these come first, before any family is
/// known, and serve them all): the keys a state dict may be wrapped in, tried in this order
/// (DINO's release files hold {"teacher", "student", …}: the teacher is the network evaluated),
/// and the name prefixes dropped: kPytorchModulePrefix (DistributedDataParallel's) when every
/// name has it, then kPytorchBackbonePrefix, whose names alone are kept, without it.
inline constexpr const char* kPytorchStateDictWrappers[] = {"teacher", "model", "state_dict", "student"};
inline constexpr std::string_view kPytorchModulePrefix = "module.";
inline constexpr std::string_view kPytorchBackbonePrefix = "backbone.";

/// Whether `first` starts like a PyTorch file of the legacy format (before torch 1.6: a raw
/// pickle stream, "\x80" + protocol, or a tar archive).
bool is_legacy_torch_magic(std::span<const std::uint8_t> first);

/// Limits of the unpickler (data.pkl is a few kB for a ViT's state dict).
inline constexpr std::uint64_t kMaxPickleBytes = 64ull << 20;  ///< data.pkl's size
inline constexpr std::size_t kMaxPickleStack = 1u << 20;       ///< objects on the stack
inline constexpr std::size_t kMaxPickleMarks = 256;            ///< MARKs open at once
inline constexpr int kMaxPickleNesting = 64;                   ///< containers within containers
inline constexpr std::size_t kMaxTensorDims = 16;              ///< a tensor's dimensions

/// Reads a PyTorch zip checkpoint held in memory into the same SafetensorsFile the safetensors
/// reader gives, so that vit_from_tensors() reads it like any checkpoint. `what` names it in
/// errors (a path). The object saved picks the state dict: a dict of tensors is one; a dict
/// with `teacher` (DINO's release files: the teacher is the network evaluated), `model`,
/// `state_dict` or `student` holding a dict (that order) gives that dict. Then a `module.`
/// prefix on every name is dropped (DistributedDataParallel's), and where names start with
/// `backbone.` only those are kept, without it (DINO: the projection head `head.*` beside the
/// backbone is no classifier). Every tensor is converted to float32 into its `values` (F16 and
/// BF16 exactly; shape = the tensor's size; its storage offset and strides followed, so views
/// that are not contiguous and tensors sharing one storage read right); `dtype` is the
/// storage's. The result's source refers to `bytes` (which must outlive its read() calls) for
/// the SHA-256 of the whole file that SafetensorsFile::read() returns.
///
/// Throws attnlab::Error with one line "<what>: <the problem>" for: bytes that are no zip
/// archive (a legacy torch file is told to be re-saved with torch >= 1.6), a corrupt or
/// truncated zip, no ARCHIVE/data.pkl, a compressed or encrypted entry, a big-endian file, a
/// pickle that is truncated, uses an opcode outside protocol 2's subset torch writes (named in
/// hex), names a global other than torch._utils._rebuild_tensor_v2, _rebuild_parameter,
/// collections.OrderedDict and torch.<T>Storage (named, e.g. "os.system"), calls or builds
/// anything else, underflows its stack or a MARK, passes kMaxPickleStack / kMaxPickleMarks /
/// kMaxPickleNesting, gets or puts a memo index past what its size can hold or one never put;
/// a persistent id other than a storage's; a storage entry that is missing or whose size is
/// not NUMEL × the element size; a storage of another dtype than F32, F16, BF16 used by the
/// state dict (named: "I64 (torch.LongStorage)"); a negative size, stride or offset, a shape
/// whose element count overflows 64 bits, elements outside the storage; tensors whose float32
/// values would take more than 4 × the file's size (views repeating one storage); no state dict
/// of tensors. Never reads outside `bytes`, never allocates more than a small multiple of them.
SafetensorsFile index_pytorch(std::span<const std::uint8_t> bytes, const std::string& what);

/// The same for the file at `path` (read by libzip; its source reopened for the hash, so
/// model.sha256 is the SHA-256 of the file's bytes). Throws as index_pytorch() and, with one
/// line, for a missing path, a directory or a file that cannot be read. `stop` (may be null) is
/// looked at before each storage is read: when set, throws Error("cancelled").
SafetensorsFile open_pytorch(const std::filesystem::path& path, const std::atomic<bool>* stop = nullptr);

/// A checkpoint file of either kind, told by its first bytes: a PyTorch checkpoint (a zip
/// archive, or a legacy torch file, which open_pytorch() refuses with its own message; and a
/// file of neither kind named .pth, .pt or .bin, told what it is not) read by open_pytorch(),
/// everything else by open_safetensors() (its header only). Throws as those two.
SafetensorsFile open_checkpoint(const std::filesystem::path& file, const std::atomic<bool>* stop = nullptr);

}  // namespace attnlab
