#pragma once
// Writing export files safely: never over an existing file unless asked, never half-written.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace attnlab {

/// The text of a model's small side file (config.json, preprocessor_config.json): "" when there
/// is no such regular file. Throws Error with one line for a file over 64 MiB or one that
/// cannot be read.
std::string read_config_file(const std::filesystem::path& path);

/// Writes `bytes` to `path` through a temporary file in the same folder, then links it into
/// place: an existing file is never replaced unless `overwrite`, and a failure (missing or
/// read-only folder, full disk) leaves nothing behind. Throws Error naming the path and reason.
/// The file gets mode 0666 less the umask and is synced to the disk before it is moved in.
void write_file_safely(const std::filesystem::path& path, std::span<const char> bytes, bool overwrite = false);

/// One file of a set written together by write_files_together().
struct FileToWrite {
  std::filesystem::path path;
  std::span<const char> bytes;
};

/// Writes every file of `files` (e.g. a PNG and its JSON sidecar) together or not at all: every
/// check first (a name taken without `overwrite`, a folder or other non-file of that name, a
/// missing folder); then each file's bytes to a temporary beside it, written and synced (mode
/// 0666 less the umask); then each moved into place in one step (a rename over the old file
/// with `overwrite`, a link that fails on a taken name without); if a move fails, the files
/// moved so far are removed and the files they replaced put back. Throws Error naming the path
/// and the reason; the old files are then as they were.
void write_files_together(std::span<const FileToWrite> files, bool overwrite = false);

inline void write_file_safely(const std::filesystem::path& path, const std::string& text, bool overwrite = false) {
  write_file_safely(path, std::span<const char>(text.data(), text.size()), overwrite);
}

/// Makes the folder `dir`, which must not exist, holding `files` (their paths relative to it,
/// plain names) in one step: a temporary folder beside it, each file written and synced into
/// it, then the folder renamed to `dir`. A failure leaves nothing (and a retry can succeed);
/// a `dir` that appeared meanwhile is not touched. Throws Error naming `dir` and the reason.
void write_new_folder(const std::filesystem::path& dir, std::span<const FileToWrite> files);

/// A new empty temporary file beside `path` (same folder, hidden name `.NAME.XXXXXX`), for a
/// writer that cannot hand write_file_safely() its bytes at once (a video encoder): write it,
/// then publish_file(). Checks first that the folder exists and, unless `overwrite`, that `path`
/// does not. Throws Error naming `path` and the reason.
std::filesystem::path temp_file_beside(const std::filesystem::path& path, bool overwrite = false);

/// Moves a finished temporary (temp_file_beside()) into place whole: link() when `path` must not
/// be replaced (a file that appeared meanwhile is never overwritten), rename() with `overwrite`.
/// The temporary is removed either way. Throws Error naming `path` and the reason.
void publish_file(const std::filesystem::path& temp, const std::filesystem::path& path, bool overwrite = false);

/// The sidecar JSON of an output file (a PNG, a CSV, a video): the same path with the extension
/// ".json" ("map.png" → "map.json"), as every export, render and recording names it.
std::filesystem::path sidecar_of(const std::filesystem::path& output);

/// Writes `json` as the sidecar of `output`, a picture or video written just before, through
/// write_file_safely(). If that fails, `output` is removed, so that nothing is left without its
/// settings, and the Error goes on.
void write_sidecar_or_remove(const std::filesystem::path& output, const std::string& json, bool overwrite = false);

/// The first of `stem.ext`, `stem-2.ext`, `stem-3.ext`… in `dir` for which no file with any of
/// `extensions` exists yet (so a PNG and its JSON sidecar share a name). Returns the path
/// without extension.
std::filesystem::path next_free_stem(const std::filesystem::path& dir, const std::string& stem,
                                     std::initializer_list<const char*> extensions);

/// The SHA-256 of a file's contents as 64 lowercase hex digits (nettle), read in chunks.
/// Throws Error naming the path when it cannot be read.
std::string file_sha256(const std::filesystem::path& path);

/// The SHA-256 of `bytes` as 64 lowercase hex digits (nettle), as file_sha256() of a file holding them.
std::string bytes_sha256(std::span<const std::uint8_t> bytes);

}  // namespace attnlab
