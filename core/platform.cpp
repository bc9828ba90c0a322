#include "core/platform.hpp"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "core/error.hpp"

#ifdef _WIN32
#include <windows.h>
#else
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#endif

namespace attnlab::platform {

std::filesystem::path home_folder() {
#ifdef _WIN32
  if (const wchar_t* p = _wgetenv(L"USERPROFILE"); p && *p) return std::filesystem::path(p);
  return {};
#else
  if (const char* h = std::getenv("HOME"); h && *h) return h;
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) return pw->pw_dir;
  return {};
#endif
}

FileLock::FileLock(const std::filesystem::path& path, const std::atomic<bool>* cancel) {
  using namespace std::chrono_literals;
#ifdef _WIN32
  HANDLE h =
      CreateFileW(path.c_str(), GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                  nullptr, OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h == INVALID_HANDLE_VALUE) throw Error("cannot create the lock file '" + path.string() + "'");
  handle_ = reinterpret_cast<intptr_t>(h);
  for (;;) {
    OVERLAPPED ov{};
    if (LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, MAXDWORD, MAXDWORD, &ov)) {
      locked_ = true;
      return;
    }
    if (cancel && cancel->load()) return;
    std::this_thread::sleep_for(100ms);
  }
#else
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0664);
  if (fd < 0) throw Error("cannot create the lock file '" + path.string() + "': " + std::strerror(errno));
  handle_ = fd;
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      locked_ = true;
      return;
    }
    if (errno != EWOULDBLOCK && errno != EINTR) {
      const int e = errno;
      ::close(fd);
      handle_ = -1;
      throw Error("cannot lock '" + path.string() + "': " + std::strerror(e));
    }
    if (cancel && cancel->load()) return;
    std::this_thread::sleep_for(100ms);
  }
#endif
}

FileLock::~FileLock() {
  if (handle_ == -1) return;
#ifdef _WIN32
  HANDLE h = reinterpret_cast<HANDLE>(handle_);
  if (locked_) {
    OVERLAPPED ov{};
    UnlockFileEx(h, 0, MAXDWORD, MAXDWORD, &ov);
  }
  CloseHandle(h);
#else
  if (locked_) ::flock(static_cast<int>(handle_), LOCK_UN);
  ::close(static_cast<int>(handle_));
#endif
}

}  // namespace attnlab::platform
