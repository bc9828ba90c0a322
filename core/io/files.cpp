#include "core/io/files.hpp"

#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/base/translate.hpp"

#include <nettle/sha2.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace attnlab {

std::string read_config_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return {};
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size > 64ull * 1024 * 1024) throw Error(path.string() + ": " + _("cannot be read as a config file"));
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in && !in.eof()) throw Error(path.string() + ": " + _("cannot be read"));
  return s.str();
}

namespace {

// Why a write failed, in words a teacher can act on; nothing was written either way.
std::string write_failure(int err) {
  switch (err) {
    case ENOSPC:
#ifdef EDQUOT
    case EDQUOT:
#endif
      return _("the disk is full (nothing was written)");
    case EFBIG: return _("the file would be larger than this system allows (nothing was written)");
    case EACCES:
    case EPERM: return _("permission denied: the folder is read-only or not yours (nothing was written)");
    case EROFS: return _("the disk is read-only (nothing was written)");
    case EEXIST: return _("the file exists");
    // TRANSLATORS: %s is the system's reason a write failed.
    default: return text_format(_("%s (nothing was written)"), std::strerror(err));
  }
}

}  // namespace

namespace {

std::filesystem::path folder_of(const std::filesystem::path& path) {
  auto parent = path.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

[[noreturn]] void fail_write(const std::filesystem::path& path, int err) {
  // TRANSLATORS: a file's name, then the reason ("the disk is full (nothing was written)").
  throw Error(text_format(_("cannot write '%s': %s"), platform::utf8(path).c_str(), write_failure(err).c_str()));
}

// One file of a set being written: its temporary (written, synced), and how it was moved in.
struct Pending {
  std::filesystem::path path;
  std::filesystem::path tmp;     // the temporary beside it (empty once moved or removed)
  std::filesystem::path backup;  // a link to the file it replaced (empty when it replaced none)
  bool backup_moved = false;  // the backup is the old file itself, moved aside (no hard links here)
  bool moved = false;
};

// Writes `bytes` to a new temporary beside `path` (mode 0666 less the umask, as a file made by
// open() would be), synced to the disk. Returns its name; throws (nothing left) on failure.
std::filesystem::path write_temporary(const std::filesystem::path& path, std::span<const char> bytes) {
  std::filesystem::path tmp;
  int fd = -1;
  if (const int err = platform::create_unique_file(folder_of(path), "." + platform::utf8(path.filename()) + ".", tmp, fd))
    fail_write(path, err);
  int err = platform::write_all(fd, bytes);
  const int finished = platform::finish_file(fd, platform::new_file_mode());
  if (!err) err = finished;
  if (err) {
    platform::remove_file(tmp);
    fail_write(path, err);
  }
  return tmp;
}

// A free name beside `path` for a link to the file it replaces.
std::filesystem::path backup_name(const std::filesystem::path& path) {
  for (int n = 0;; ++n) {
    const std::filesystem::path name =
        folder_of(path) / platform::path_from_utf8("." + platform::utf8(path.filename()) + ".old" +
                                                   std::to_string(platform::process_id()) + "-" + std::to_string(n));
    if (platform::name_is_free(name)) return name;
  }
}

// Puts back what the moves so far changed: each file moved in removed, the file it replaced
// restored (newest first); the temporaries not yet moved removed.
void roll_back(std::vector<Pending>& files) {
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    if (it->moved) {
      if (!it->backup.empty())
        platform::rename_replacing(it->backup, it->path);
      else
        platform::remove_file(it->path);
      it->backup.clear();
    }
    if (!it->tmp.empty()) platform::remove_file(it->tmp);
    if (!it->backup.empty()) {
      if (it->backup_moved)
        platform::rename_replacing(it->backup, it->path);  // the old file back in place
      else
        platform::remove_file(it->backup);
    }
  }
}

}  // namespace

void write_files_together(std::span<const FileToWrite> files, bool overwrite) {
  // Every check first: nothing is written when one of the files cannot be. A name that is a
  // symbolic link is written where it points (the link stays).
  std::vector<FileToWrite> targets(files.begin(), files.end());
  for (FileToWrite& f : targets) {
    std::error_code ec;
    if (std::filesystem::is_symlink(std::filesystem::symlink_status(f.path, ec))) {
      const auto resolved = std::filesystem::weakly_canonical(f.path, ec);
      if (!ec) f.path = resolved;
    }
  }
  for (const FileToWrite& f : targets) {
    const std::string where = platform::utf8(f.path);
    std::error_code ec;
    const auto st = std::filesystem::symlink_status(f.path, ec);
    if (std::filesystem::exists(st)) {
      if (!overwrite)
        // TRANSLATORS: %s is a file's name.
        throw Error(text_format(_("cannot write '%s': the file exists (choose another name; nothing was overwritten)"),
                                where.c_str()));
      if (std::filesystem::is_directory(st))
        // TRANSLATORS: %s is a file's name.
        throw Error(text_format(_("cannot write '%s': a folder has that name (nothing was written)"), where.c_str()));
      if (!std::filesystem::is_regular_file(st))
        // TRANSLATORS: %s is a file's name.
        throw Error(text_format(_("cannot write '%s': something that is not a plain file has that name (nothing was written)"),
                                where.c_str()));
    }
    if (!std::filesystem::is_directory(folder_of(f.path), ec))
      // TRANSLATORS: a file's name, then its folder's.
      throw Error(text_format(_("cannot write '%s': the folder '%s' does not exist"), where.c_str(),
                              platform::utf8(folder_of(f.path)).c_str()));
  }
  std::vector<Pending> pending;
  pending.reserve(files.size());
  try {
    for (const FileToWrite& f : targets) {
      pending.push_back({f.path, "", "", false, false});
      pending.back().tmp = write_temporary(f.path, f.bytes);
    }
  } catch (...) {
    roll_back(pending);
    throw;
  }
  // Then the moves, each one atomic; a failed one puts the earlier ones back.
  for (Pending& p : pending) {
    int err = 0;
    if (overwrite) {
      // A second name for the file being replaced, so that it can be put back.
      if (!platform::name_is_free(p.path)) {
        const std::filesystem::path backup = backup_name(p.path);
        const int linked = platform::hard_link(p.path, backup);
        if (linked == 0) {
          p.backup = backup;
        } else if (linked == EPERM || linked == EOPNOTSUPP || linked == EMLINK || linked == ENOSYS) {
          // A file system without hard links (FAT on a USB stick): the old file moved aside.
          err = platform::rename_replacing(p.path, backup);
          if (!err) {
            p.backup = backup;
            p.backup_moved = true;
          }
        } else {
          err = linked;
        }
      }
      if (!err) err = platform::rename_replacing(p.tmp, p.path);
      if (!err) p.tmp.clear();
    } else if ((err = platform::rename_if_free(p.tmp, p.path)) == 0) {  // fails if the name was taken meanwhile
      p.tmp.clear();
    }
    if (err) {
      roll_back(pending);
      fail_write(p.path, err);
    }
    p.moved = true;
  }
  for (Pending& p : pending)
    if (!p.backup.empty()) platform::remove_file(p.backup);
  std::vector<std::filesystem::path> folders;
  for (const Pending& p : pending)
    if (std::find(folders.begin(), folders.end(), folder_of(p.path)) == folders.end())
      folders.push_back(folder_of(p.path));
  for (const auto& dir : folders) platform::sync_folder(dir);
}

void write_file_safely(const std::filesystem::path& path, std::span<const char> bytes, bool overwrite) {
  const FileToWrite one{path, bytes};
  write_files_together(std::span<const FileToWrite>(&one, 1), overwrite);
}

void write_new_folder(const std::filesystem::path& given, std::span<const FileToWrite> files) {
  namespace fs = std::filesystem;
  const fs::path dir = given.has_filename() ? given : given.parent_path();  // "runs/a/" is "runs/a"
  const std::string where = platform::utf8(dir);
  std::error_code ec;
  if (fs::exists(fs::symlink_status(dir, ec)))
    // TRANSLATORS: %s is a folder's name.
    throw Error(text_format(_("cannot write '%s': it exists (choose another folder; nothing was overwritten)"), where.c_str()));
  const fs::path parent = folder_of(dir);
  if (!fs::is_directory(parent, ec))
    // TRANSLATORS: a folder's name, then the folder it should be in.
    throw Error(text_format(_("cannot write '%s': the folder '%s' does not exist"), where.c_str(),
                            platform::utf8(parent).c_str()));
  fs::path tmp;
  // 0777 less the umask, as mkdir() would make it (mkdtemp makes 0700).
  if (const int err = platform::create_unique_folder(parent, "." + platform::utf8(dir.filename()) + ".",
                                                     platform::new_folder_mode(), tmp))
    throw Error(text_format(_("cannot write '%s': %s"), where.c_str(), write_failure(err).c_str()));
  try {
    std::vector<FileToWrite> inside;
    for (const FileToWrite& f : files) {
      if (f.path.has_parent_path() || f.path.empty())
        // TRANSLATORS: a folder's name, then the name of a file to go into it.
        throw Error(text_format(_("cannot write '%s': '%s' is not a plain file name"), where.c_str(),
                                platform::utf8(f.path).c_str()));
      inside.push_back({tmp / f.path, f.bytes});
    }
    write_files_together(inside);
    platform::sync_folder(tmp);
    if (const int err = platform::rename_folder(tmp, dir)) {
      if (err == ENOTEMPTY || err == EEXIST)
        // TRANSLATORS: %s is a folder's name.
        throw Error(text_format(_("cannot write '%s': it appeared meanwhile (nothing was overwritten)"), where.c_str()));
      throw Error(text_format(_("cannot write '%s': %s"), where.c_str(), write_failure(err).c_str()));
    }
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  platform::sync_folder(parent);
}

std::filesystem::path sidecar_of(const std::filesystem::path& output) {
  auto json = output;
  json.replace_extension(".json");
  return json;
}

void write_sidecar_or_remove(const std::filesystem::path& output, const std::string& json, bool overwrite) {
  try {
    write_file_safely(sidecar_of(output), json, overwrite);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(output, ec);
    throw;
  }
}

std::filesystem::path temp_file_beside(const std::filesystem::path& path, bool overwrite) {
  const std::string where = platform::utf8(path);
  std::error_code ec;
  if (!overwrite && std::filesystem::exists(path, ec))
    throw Error(text_format(_("cannot write '%s': the file exists (choose another name; nothing was overwritten)"),
                            where.c_str()));
  auto parent = path.parent_path();
  if (parent.empty()) parent = ".";
  if (!std::filesystem::is_directory(parent, ec))
    throw Error(text_format(_("cannot write '%s': the folder '%s' does not exist"), where.c_str(),
                            platform::utf8(parent).c_str()));
  std::filesystem::path tmp;
  int fd = -1;
  if (const int err = platform::create_unique_file(parent, "." + platform::utf8(path.filename()) + ".", tmp, fd))
    throw Error(text_format(_("cannot write '%s': %s"), where.c_str(), write_failure(err).c_str()));
  platform::finish_file(fd, 0644);
  return tmp;
}

void publish_file(const std::filesystem::path& temp, const std::filesystem::path& path, bool overwrite) {
  const int err = overwrite ? platform::rename_replacing(temp, path) : platform::rename_if_free(temp, path);
  platform::remove_file(temp);
  if (err) throw Error(text_format(_("cannot write '%s': %s"), platform::utf8(path).c_str(), write_failure(err).c_str()));
}


std::filesystem::path next_free_stem(const std::filesystem::path& dir, const std::string& stem,
                                     std::initializer_list<const char*> extensions) {
  for (int n = 1;; ++n) {
    const auto candidate = dir / (n == 1 ? stem : stem + "-" + std::to_string(n));
    bool taken = false;
    std::error_code ec;
    for (const char* ext : extensions) {
      std::filesystem::path with = candidate;
      with += ext;
      taken = taken || std::filesystem::exists(with, ec);
    }
    if (!taken) return candidate;
  }
}

namespace {

// The digest of `ctx` as 64 lowercase hex digits.
std::string sha256_hex(sha256_ctx& ctx) {
  std::uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx, SHA256_DIGEST_SIZE, digest);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (const std::uint8_t b : digest) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

}  // namespace

std::string file_sha256(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  // TRANSLATORS: %s is a file's name.
  if (!in) throw Error(text_format(_("cannot read %s to hash it"), platform::utf8(path).c_str()));
  sha256_ctx ctx;
  sha256_init(&ctx);
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = in.gcount();
    if (got > 0) sha256_update(&ctx, static_cast<std::size_t>(got), reinterpret_cast<const std::uint8_t*>(buffer.data()));
  }
  if (in.bad()) throw Error(text_format(_("cannot read %s to hash it"), platform::utf8(path).c_str()));
  return sha256_hex(ctx);
}

std::string bytes_sha256(std::span<const std::uint8_t> bytes) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, bytes.size(), bytes.data());
  return sha256_hex(ctx);
}

}  // namespace attnlab
