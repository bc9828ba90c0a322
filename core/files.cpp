#include "core/files.hpp"

#include "core/error.hpp"

#include <nettle/sha2.h>

#include <fstream>
#include <vector>

#include <cerrno>
#include <cstdio>
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

void write_file_safely(const std::filesystem::path& path, std::span<const char> bytes, bool overwrite) {
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
  auto fail = [&](int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw Error("cannot write " + where + ": " + write_failure(err));
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
  if (::fsync(fd) != 0 && errno != EINVAL) fail(errno);
  ::fchmod(fd, 0644);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error("cannot write " + where + ": " + write_failure(err));
  }
  if (overwrite) {
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      const int err = errno;
      ::unlink(tmp.c_str());
      throw Error("cannot write " + where + ": " + write_failure(err));
    }
    return;
  }
  // link() fails if the target exists, so a file that appeared meanwhile is never replaced.
  if (::link(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error("cannot write " + where + ": " + write_failure(err));
  }
  ::unlink(tmp.c_str());
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
