#include "core/files.hpp"

#include "core/error.hpp"

#include <nettle/sha2.h>

#include <algorithm>
#include <fstream>
#include <vector>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnlab {

namespace {

// Why a write failed, in words a teacher can act on; nothing was written either way.
std::string write_failure(int err) {
  switch (err) {
    case ENOSPC:
    case EDQUOT: return "the disk is full (nothing was written)";
    case EFBIG: return "the file would be larger than this system allows (nothing was written)";
    case EACCES:
    case EPERM: return "permission denied: the folder is read-only or not yours (nothing was written)";
    case EROFS: return "the disk is read-only (nothing was written)";
    case EEXIST: return "the file exists";
    default: return std::string(std::strerror(err)) + " (nothing was written)";
  }
}

}  // namespace

namespace {

// The process's umask without changing it (umask() sets it, racing other threads):
// /proc/self/status's "Umask:" line (Linux 4.7 on), else 022.
mode_t current_umask() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8) & 0777);
  return 022;
}

std::filesystem::path folder_of(const std::filesystem::path& path) {
  auto parent = path.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

[[noreturn]] void fail_write(const std::filesystem::path& path, int err) {
  throw Error("cannot write '" + path.string() + "': " + write_failure(err));
}

// One file of a set being written: its temporary (written, synced), and how it was moved in.
struct Pending {
  std::filesystem::path path;
  std::string tmp;            // the temporary beside it ("" once moved or removed)
  std::string backup;         // a link to the file it replaced ("" when it replaced none)
  bool backup_moved = false;  // the backup is the old file itself, moved aside (no hard links here)
  bool moved = false;
};

// Writes `bytes` to a new temporary beside `path` (mode 0666 less the umask, as a file made by
// open() would be), synced to the disk. Returns its name; throws (nothing left) on failure.
std::string write_temporary(const std::filesystem::path& path, std::span<const char> bytes) {
  std::string tmp = (folder_of(path) / ("." + path.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) fail_write(path, errno);
  auto fail = [&](int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    fail_write(path, err);
  };
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(errno);
    }
    done += static_cast<size_t>(n);
  }
  if (::fchmod(fd, 0666 & ~current_umask()) != 0) fail(errno);
  if (::fsync(fd) != 0 && errno != EINVAL) fail(errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail_write(path, err);
  }
  return tmp;
}

// A free name beside `path` for a link to the file it replaces.
std::string backup_name(const std::filesystem::path& path) {
  for (int n = 0;; ++n) {
    const std::string name = (folder_of(path) / ("." + path.filename().string() + ".old" + std::to_string(::getpid()) +
                                                 "-" + std::to_string(n)))
                                 .string();
    struct stat st;
    if (::lstat(name.c_str(), &st) != 0 && errno == ENOENT) return name;
  }
}

void sync_folder(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// Puts back what the moves so far changed: each file moved in removed, the file it replaced
// restored (newest first); the temporaries not yet moved removed.
void roll_back(std::vector<Pending>& files) {
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    if (it->moved) {
      if (!it->backup.empty())
        ::rename(it->backup.c_str(), it->path.c_str());
      else
        ::unlink(it->path.c_str());
      it->backup.clear();
    }
    if (!it->tmp.empty()) ::unlink(it->tmp.c_str());
    if (!it->backup.empty()) {
      if (it->backup_moved)
        ::rename(it->backup.c_str(), it->path.c_str());  // the old file back in place
      else
        ::unlink(it->backup.c_str());
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
    const std::string where = "'" + f.path.string() + "'";
    std::error_code ec;
    const auto st = std::filesystem::symlink_status(f.path, ec);
    if (std::filesystem::exists(st)) {
      if (!overwrite)
        throw Error("cannot write " + where + ": the file exists (choose another name; nothing was overwritten)");
      if (!std::filesystem::is_regular_file(st))
        throw Error("cannot write " + where + ": " +
                    (std::filesystem::is_directory(st) ? "a folder" : "something that is not a plain file") +
                    " has that name (nothing was written)");
    }
    if (!std::filesystem::is_directory(folder_of(f.path), ec))
      throw Error("cannot write " + where + ": the folder '" + folder_of(f.path).string() + "' does not exist");
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
      struct stat st;
      if (::lstat(p.path.c_str(), &st) == 0) {
        const std::string backup = backup_name(p.path);
        if (::link(p.path.c_str(), backup.c_str()) == 0) {
          p.backup = backup;
        } else if (errno == EPERM || errno == EOPNOTSUPP || errno == EMLINK || errno == ENOSYS) {
          // A file system without hard links (FAT on a USB stick): the old file moved aside.
          if (::rename(p.path.c_str(), backup.c_str()) == 0) {
            p.backup = backup;
            p.backup_moved = true;
          } else {
            err = errno;
          }
        } else {
          err = errno;
        }
      }
      if (!err && ::rename(p.tmp.c_str(), p.path.c_str()) != 0) err = errno;
      if (!err) p.tmp.clear();
    } else if (::link(p.tmp.c_str(), p.path.c_str()) == 0) {  // fails if the name was taken meanwhile
      ::unlink(p.tmp.c_str());
      p.tmp.clear();
    } else {
      err = errno;
    }
    if (err) {
      roll_back(pending);
      fail_write(p.path, err);
    }
    p.moved = true;
  }
  for (Pending& p : pending)
    if (!p.backup.empty()) ::unlink(p.backup.c_str());
  std::vector<std::filesystem::path> folders;
  for (const Pending& p : pending)
    if (std::find(folders.begin(), folders.end(), folder_of(p.path)) == folders.end())
      folders.push_back(folder_of(p.path));
  for (const auto& dir : folders) sync_folder(dir);
}

void write_file_safely(const std::filesystem::path& path, std::span<const char> bytes, bool overwrite) {
  const FileToWrite one{path, bytes};
  write_files_together(std::span<const FileToWrite>(&one, 1), overwrite);
}

void write_new_folder(const std::filesystem::path& given, std::span<const FileToWrite> files) {
  namespace fs = std::filesystem;
  const fs::path dir = given.has_filename() ? given : given.parent_path();  // "runs/a/" is "runs/a"
  const std::string where = "'" + dir.string() + "'";
  std::error_code ec;
  if (fs::exists(fs::symlink_status(dir, ec)))
    throw Error("cannot write " + where + ": it exists (choose another folder; nothing was overwritten)");
  const fs::path parent = folder_of(dir);
  if (!fs::is_directory(parent, ec))
    throw Error("cannot write " + where + ": the folder '" + parent.string() + "' does not exist");
  std::string tmp = (parent / ("." + dir.filename().string() + ".XXXXXX")).string();
  if (!::mkdtemp(tmp.data())) throw Error("cannot write " + where + ": " + write_failure(errno));
  // 0777 less the umask, as mkdir() would make it (mkdtemp makes 0700).
  ::chmod(tmp.c_str(), 0777 & ~current_umask());
  try {
    std::vector<FileToWrite> inside;
    for (const FileToWrite& f : files) {
      if (f.path.has_parent_path() || f.path.empty())
        throw Error("cannot write " + where + ": '" + f.path.string() + "' is not a plain file name");
      inside.push_back({fs::path(tmp) / f.path, f.bytes});
    }
    write_files_together(inside);
    sync_folder(tmp);
    if (::rename(tmp.c_str(), dir.c_str()) != 0) {
      const int err = errno;
      throw Error("cannot write " + where + ": " +
                  (err == ENOTEMPTY || err == EEXIST ? std::string("it appeared meanwhile (nothing was overwritten)")
                                                     : write_failure(err)));
    }
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  sync_folder(parent);
}

std::filesystem::path temp_file_beside(const std::filesystem::path& path, bool overwrite) {
  const std::string where = "'" + path.string() + "'";
  std::error_code ec;
  if (!overwrite && std::filesystem::exists(path, ec))
    throw Error("cannot write " + where + ": the file exists (choose another name; nothing was overwritten)");
  auto parent = path.parent_path();
  if (parent.empty()) parent = ".";
  if (!std::filesystem::is_directory(parent, ec))
    throw Error("cannot write " + where + ": the folder '" + parent.string() + "' does not exist");
  std::string tmp = (parent / ("." + path.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw Error("cannot write " + where + ": " + write_failure(errno));
  ::fchmod(fd, 0644);
  ::close(fd);
  return tmp;
}

void publish_file(const std::filesystem::path& temp, const std::filesystem::path& path, bool overwrite) {
  const std::string where = "'" + path.string() + "'";
  const int rc = overwrite ? ::rename(temp.c_str(), path.c_str()) : ::link(temp.c_str(), path.c_str());
  const int err = errno;
  ::unlink(temp.c_str());
  if (rc != 0) throw Error("cannot write " + where + ": " + write_failure(err));
}

std::string grid_csv(std::span<const float> values, const PatchGrid& grid) {
  std::string out;
  char buf[32];
  for (int r = 0; r < grid.rows; ++r) {
    for (int c = 0; c < grid.cols; ++c) {
      std::snprintf(buf, sizeof buf, "%s%.9g", c ? "," : "", static_cast<double>(values[static_cast<size_t>(grid.index(c, r))]));
      out += buf;
    }
    out += '\n';
  }
  return out;
}

std::filesystem::path next_free_stem(const std::filesystem::path& dir, const std::string& stem,
                                     std::initializer_list<const char*> extensions) {
  for (int n = 1;; ++n) {
    const auto candidate = dir / (n == 1 ? stem : stem + "-" + std::to_string(n));
    bool taken = false;
    std::error_code ec;
    for (const char* ext : extensions) taken = taken || std::filesystem::exists(candidate.string() + ext, ec);
    if (!taken) return candidate;
  }
}

std::string file_sha256(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path.string() + " to hash it");
  sha256_ctx ctx;
  sha256_init(&ctx);
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = in.gcount();
    if (got > 0) sha256_update(&ctx, static_cast<std::size_t>(got), reinterpret_cast<const std::uint8_t*>(buffer.data()));
  }
  if (in.bad()) throw Error("cannot read " + path.string() + " to hash it");
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

}  // namespace attnlab
