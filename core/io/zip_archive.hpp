#pragma once
// Zip archives read and written through libzip (Debian's libzip-dev), with the checks a file from
// elsewhere needs before any byte of it is trusted: PyTorch checkpoints (torch.save writes a zip,
// core/io/pytorch_checkpoint.hpp) and lesson files (.attnlab, core/io/lesson.hpp) share it.
// Every problem is an Error of one line "<what>: <the problem>", `what` naming the file.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace attnlab {

/// One entry of a zip archive as its central directory declares it.
struct ZipEntry {
  std::uint64_t index = 0;      ///< its place in the central directory, from 0
  std::string name;             ///< its name, raw bytes as stored (no encoding applied)
  std::uint64_t size = 0;       ///< declared uncompressed size, bytes
  std::uint64_t comp_size = 0;  ///< declared compressed size, bytes
  bool stored = false;          ///< stored without compression (ZIP_CM_STORE)
  bool encrypted = false;
};

/// A zip archive open for reading (libzip, ZIP_RDONLY | ZIP_CHECKCONS: the local headers must
/// agree with the central directory). Move-only.
class ZipArchive {
 public:
  /// Opens the archive at `path`. `max_entries` bounds the central directory's entry count (a
  /// hostile archive may declare billions). Throws Error "<what>: not a complete zip archive (…)"
  /// for a file libzip cannot open, "<what>: a zip archive of N entries, more than M" over the bound.
  static ZipArchive open_file(const std::filesystem::path& path, const std::string& what,
                              std::uint64_t max_entries = UINT64_MAX);
  /// The same for an archive held in `bytes`, which must outlive the ZipArchive.
  static ZipArchive open_memory(std::span<const std::uint8_t> bytes, const std::string& what,
                                std::uint64_t max_entries = UINT64_MAX);

  ZipArchive(ZipArchive&&) noexcept;
  ZipArchive& operator=(ZipArchive&&) noexcept;
  ~ZipArchive();

  /// The number of entries of the central directory.
  std::uint64_t entry_count() const;
  /// The archive's size in bytes (the file's, or the buffer's).
  std::uint64_t archive_size() const { return size_; }
  /// The entry at `index` (< entry_count()).
  ZipEntry entry(std::uint64_t index) const;
  /// The entry named `name` exactly (raw bytes), or nullopt.
  std::optional<ZipEntry> find(const std::string& name) const;
  /// All bytes of `e`: its declared size, checked first against `max_bytes` (nothing is
  /// allocated for a size over it) and against the archive's size for a stored entry; then read,
  /// and libzip's CRC check at its end. Throws Error for a size over the bound, an encrypted
  /// entry, data shorter or longer than declared, or a bad CRC.
  std::vector<std::uint8_t> read(const ZipEntry& e, std::uint64_t max_bytes) const;

  /// Throws Error "<what>: <problem>".
  [[noreturn]] void fail(const std::string& problem) const;
  const std::string& what() const { return what_; }

 private:
  struct Handle;
  ZipArchive(std::unique_ptr<Handle> handle, std::uint64_t size, std::string what, std::uint64_t max_entries);
  std::unique_ptr<Handle> zip_;
  std::uint64_t size_ = 0;
  std::string what_;
};

/// One file to put into a new archive: its name and its bytes, stored (`compress` false) or
/// deflated.
struct ZipFileToAdd {
  std::string name;
  std::span<const std::uint8_t> bytes;
  bool compress = true;
};

/// A new zip archive of `files`, in that order, as bytes (libzip writing into memory; no
/// timestamps beyond libzip's defaults). Throws Error naming `what` when libzip fails.
std::vector<std::uint8_t> zip_bytes(std::span<const ZipFileToAdd> files, const std::string& what);

/// Whether `first` (a file's first bytes) starts like a zip archive ("PK\x03\x04").
bool is_zip_magic(std::span<const std::uint8_t> first);

}  // namespace attnlab
