#include "core/base/platform.hpp"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string_view>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#ifdef _WIN32
#include <windows.h>
#include <knownfolders.h>
#include <shellapi.h>
#include <shlobj.h>
#include <fcntl.h>
#include <io.h>
#include <sys/stat.h>
#else
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
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

std::filesystem::path xdg_user_dir_in(const std::string& text, const std::string& name, const std::filesystem::path& home) {
  const std::string key = "XDG_" + name + "_DIR";
  std::filesystem::path found;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + at, end - at);
    at = end + 1;
    // XDG_NAME_DIR="value": blanks allowed around the name and the '=', as GLib reads it.
    const auto skip_blanks = [&line] {
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    };
    skip_blanks();
    if (!line.starts_with(key)) continue;
    line.remove_prefix(key.size());
    skip_blanks();
    if (!line.starts_with('=')) continue;
    line.remove_prefix(1);
    skip_blanks();
    if (!line.starts_with('"')) continue;
    line.remove_prefix(1);
    std::string value;
    bool closed = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) {
        value += line[++i];
      } else if (line[i] == '"') {
        closed = true;
        break;
      } else {
        value += line[i];
      }
    }
    if (!closed) continue;
    if (value == "$HOME" || value.starts_with("$HOME/")) {
      if (home.empty()) continue;
      const std::string rest = value.substr(5);
      found = rest.size() > 1 ? home / path_from_utf8(rest.substr(1)) : home;
    } else if (value.starts_with('/')) {
      found = path_from_utf8(value);
    }
    // Other forms (a relative path, another variable) are not the format's: ignored. The last
    // line naming it wins, as when the shell sources the file.
  }
  return found;
}

std::filesystem::path pictures_folder() {
#ifdef _WIN32
  PWSTR known = nullptr;
  std::filesystem::path out;
  if (SUCCEEDED(SHGetKnownFolderPath(FOLDERID_Pictures, 0, nullptr, &known)) && known && *known) out = known;
  CoTaskMemFree(known);
  if (!out.empty()) return out;
  const auto home = home_folder();
  return home.empty() ? home : home / "Pictures";
#else
  if (const char* e = std::getenv("XDG_PICTURES_DIR"); e && *e == '/') return e;
  const auto home = home_folder();
  std::filesystem::path config;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x == '/') config = x;
  else if (!home.empty()) config = home / ".config";
  if (!config.empty()) {
    std::ifstream in(config / "user-dirs.dirs");
    if (in) {
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (auto dir = xdg_user_dir_in(text, "PICTURES", home); !dir.empty()) return dir;
    }
  }
  return home.empty() ? home : home / "Pictures";
#endif
}

void open_in_file_manager(const std::filesystem::path& folder) {
#ifdef _WIN32
  const auto result = reinterpret_cast<INT_PTR>(ShellExecuteW(nullptr, L"open", folder.c_str(), nullptr, nullptr, SW_SHOWNORMAL));
  if (result <= 32)
    // TRANSLATORS: %1$s is a folder; ShellExecute is a Windows function, %2$lld its error number.
    throw Error(text_format(_("cannot open %s in the file manager (ShellExecute error %lld)"), utf8(folder).c_str(),
                            static_cast<long long>(result)));
#else
  // xdg-open found on the PATH before forking: the child could only fail silently.
  std::string opener;
  if (const char* path = std::getenv("PATH")) {
    const std::string dirs = path;
    for (std::size_t at = 0; at <= dirs.size();) {
      std::size_t end = dirs.find(':', at);
      if (end == std::string::npos) end = dirs.size();
      const std::string candidate = (end > at ? dirs.substr(at, end - at) : std::string(".")) + "/xdg-open";
      if (::access(candidate.c_str(), X_OK) == 0) {
        opener = candidate;
        break;
      }
      at = end + 1;
    }
  }
  if (opener.empty())
    // TRANSLATORS: %s is a folder; xdg-open is a program, xdg-utils a Debian package: keep their names.
    throw Error(text_format(_("cannot open %s in the file manager: xdg-open is not installed (Debian's xdg-utils)"),
                            folder.string().c_str()));
  const std::string target = folder.string();
  // Everything the child needs is made before fork: between fork and exec only async-signal-safe
  // calls (a window's process may have threads).
  char* const argv[] = {const_cast<char*>(opener.c_str()), const_cast<char*>(target.c_str()), nullptr};
  const pid_t child = ::fork();
  // TRANSLATORS: fork is a system call; %s is the system's reason.
  if (child < 0) throw Error(text_format(_("cannot open the file manager: fork failed: %s"), std::strerror(errno)));
  if (child == 0) {
    // The child leaves a grandchild to run xdg-open (adopted by init, so never a zombie of ours)
    // and ends at once, so that waitpid below does not wait for the file manager.
    if (::fork() != 0) ::_exit(0);
    ::setsid();  // its own session: not in the app's process group, not killed with it
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, 0);
      ::dup2(null, 1);  // the app's stdout is for its own lines (tests and scripts read them)
    }
    if (::close_range(3, ~0u, 0) != 0)  // no window connection, no file of the app's
      for (int fd = 3; fd < 4096; ++fd) ::close(fd);  // a kernel before 5.9
    ::execv(argv[0], argv);
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
#endif
}

std::filesystem::path roaming_app_data_folder() {
#ifdef _WIN32
  if (const wchar_t* p = _wgetenv(L"APPDATA"); p && *p) return std::filesystem::path(p);
#endif
  return {};
}

std::vector<std::filesystem::path> ui_font_files() {
  std::vector<std::filesystem::path> out;
#ifdef _WIN32
  std::filesystem::path fonts = "C:\\Windows\\Fonts";
  if (const wchar_t* w = _wgetenv(L"WINDIR"); w && *w) fonts = std::filesystem::path(w) / "Fonts";
  for (const char* name : {"segoeui.ttf", "arial.ttf", "tahoma.ttf"}) out.push_back(fonts / name);
#endif
  out.emplace_back("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf");
  return out;
}

std::filesystem::path executable_path() {
#ifdef _WIN32
  std::wstring buffer(32768, L'\0');
  const DWORD n = GetModuleFileNameW(nullptr, buffer.data(), static_cast<DWORD>(buffer.size()));
  if (n == 0 || n >= buffer.size()) return {};
  buffer.resize(n);
  return std::filesystem::path(buffer);
#else
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : exe;
#endif
}

FileLock::FileLock(const std::filesystem::path& path, const std::atomic<bool>* cancel) {
  using namespace std::chrono_literals;
#ifdef _WIN32
  HANDLE h =
      CreateFileW(path.c_str(), GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                  nullptr, OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h == INVALID_HANDLE_VALUE) throw Error(text_format(_("cannot create the lock file '%s'"), path.string().c_str()));
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
  if (fd < 0) {
    const int e = errno;
    throw Error(text_format(_("cannot create the lock file '%s': %s"), path.string().c_str(), std::strerror(e)));
  }
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
      throw Error(text_format(_("cannot lock '%s': %s"), path.string().c_str(), std::strerror(e)));
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


#ifdef _WIN32

namespace {
// GetLastError() in errno's words, for the messages of core/io/files.cpp.
int errno_from_win32(DWORD e) {
  switch (e) {
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS: return EEXIST;
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL: return ENOSPC;
    case ERROR_ACCESS_DENIED:
    case ERROR_SHARING_VIOLATION: return EACCES;
    case ERROR_WRITE_PROTECT: return EROFS;
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND: return ENOENT;
    case ERROR_DIR_NOT_EMPTY: return ENOTEMPTY;
    case ERROR_NOT_SUPPORTED:
    case ERROR_INVALID_FUNCTION:
    case ERROR_NOT_SAME_DEVICE: return EPERM;
    default: return EIO;
  }
}
int last_errno() { return errno_from_win32(GetLastError()); }
}  // namespace

std::string utf8(const std::filesystem::path& path) {
  const std::u8string u = path.u8string();
  return std::string(u.begin(), u.end());
}
std::filesystem::path path_from_utf8(const std::string& text) {
  return std::filesystem::path(std::u8string(text.begin(), text.end()));
}

#else

std::string utf8(const std::filesystem::path& path) { return path.string(); }
std::filesystem::path path_from_utf8(const std::string& text) { return text; }

#endif

#ifdef _WIN32
namespace {
// Six random characters for a new file's name, as mkstemp's XXXXXX.
std::string random_suffix() {
  static thread_local std::mt19937_64 rng{std::random_device{}() ^ static_cast<std::uint64_t>(process_id()) << 32};
  static const char* chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string out(6, 'x');
  for (char& c : out) c = chars[rng() % 62];
  return out;
}
}  // namespace
#endif

int create_unique_file(const std::filesystem::path& folder, const std::string& prefix, std::filesystem::path& path, int& fd) {
#ifdef _WIN32
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::filesystem::path candidate = folder / path_from_utf8(prefix + random_suffix());
    const int f = ::_wopen(candidate.c_str(), _O_WRONLY | _O_CREAT | _O_EXCL | _O_BINARY | _O_NOINHERIT, _S_IREAD | _S_IWRITE);
    if (f >= 0) {
      path = candidate;
      fd = f;
      return 0;
    }
    if (errno != EEXIST) return errno;
  }
  return EEXIST;
#else
  std::string tmp = (folder / (prefix + "XXXXXX")).string();
  const int f = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (f < 0) return errno;
  path = tmp;
  fd = f;
  return 0;
#endif
}

int write_all(int fd, std::span<const char> bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
#ifdef _WIN32
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(bytes.size() - done, 1u << 30));
    const int n = ::_write(fd, bytes.data() + done, chunk);
#else
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
#endif
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

int finish_file(int fd, unsigned mode) {
#ifdef _WIN32
  (void)mode;
  const int synced = ::_commit(fd) == 0 ? 0 : errno;
  const int closed = ::_close(fd) == 0 ? 0 : errno;
  return synced ? synced : closed;
#else
  int err = 0;
  if (::fchmod(fd, static_cast<mode_t>(mode)) != 0) err = errno;
  if (!err && ::fsync(fd) != 0 && errno != EINVAL) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  return err;
#endif
}

int create_unique_folder(const std::filesystem::path& folder, const std::string& prefix, unsigned mode,
                         std::filesystem::path& path) {
#ifdef _WIN32
  (void)mode;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::filesystem::path candidate = folder / path_from_utf8(prefix + random_suffix());
    if (CreateDirectoryW(candidate.c_str(), nullptr)) {
      path = candidate;
      return 0;
    }
    if (GetLastError() != ERROR_ALREADY_EXISTS) return last_errno();
  }
  return EEXIST;
#else
  std::string tmp = (folder / (prefix + "XXXXXX")).string();
  if (!::mkdtemp(tmp.data())) return errno;
  ::chmod(tmp.c_str(), static_cast<mode_t>(mode));
  path = tmp;
  return 0;
#endif
}

#ifndef _WIN32
namespace {
// The process's umask without changing it (umask() sets it, racing other threads):
// /proc/self/status's "Umask:" line (Linux 4.7 on), else 022.
unsigned current_umask() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Umask:", 0) == 0) return static_cast<unsigned>(std::strtoul(line.c_str() + 6, nullptr, 8) & 0777);
  return 022;
}
}  // namespace
unsigned new_file_mode() { return 0666 & ~current_umask(); }
unsigned new_folder_mode() { return 0777 & ~current_umask(); }
#else
unsigned new_file_mode() { return 0; }
unsigned new_folder_mode() { return 0; }
#endif

bool name_is_free(const std::filesystem::path& path) {
#ifdef _WIN32
  return GetFileAttributesW(path.c_str()) == INVALID_FILE_ATTRIBUTES && GetLastError() == ERROR_FILE_NOT_FOUND;
#else
  struct stat st;
  return ::lstat(path.c_str(), &st) != 0 && errno == ENOENT;
#endif
}

int hard_link(const std::filesystem::path& from, const std::filesystem::path& to) {
#ifdef _WIN32
  return CreateHardLinkW(to.c_str(), from.c_str(), nullptr) ? 0 : last_errno();
#else
  return ::link(from.c_str(), to.c_str()) == 0 ? 0 : errno;
#endif
}

int rename_replacing(const std::filesystem::path& from, const std::filesystem::path& to) {
#ifdef _WIN32
  return MoveFileExW(from.c_str(), to.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH) ? 0 : last_errno();
#else
  return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
#endif
}

int rename_if_free(const std::filesystem::path& from, const std::filesystem::path& to) {
#ifdef _WIN32
  return MoveFileExW(from.c_str(), to.c_str(), MOVEFILE_WRITE_THROUGH) ? 0 : last_errno();
#else
  if (::link(from.c_str(), to.c_str()) != 0) return errno;
  ::unlink(from.c_str());
  return 0;
#endif
}

int rename_folder(const std::filesystem::path& from, const std::filesystem::path& to) {
#ifdef _WIN32
  return MoveFileExW(from.c_str(), to.c_str(), 0) ? 0 : last_errno();
#else
  return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
#endif
}

bool folder_is_writable(const std::filesystem::path& folder) {
#ifdef _WIN32
  return ::_waccess(folder.c_str(), 2) == 0;
#else
  return ::access(folder.c_str(), W_OK) == 0;
#endif
}

void remove_file(const std::filesystem::path& path) {
#ifdef _WIN32
  DeleteFileW(path.c_str());
#else
  ::unlink(path.c_str());
#endif
}

void sync_folder(const std::filesystem::path& folder) {
#ifdef _WIN32
  (void)folder;
#else
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
#endif
}

int open_regular_for_reading(const std::filesystem::path& path, int& fd, std::uint64_t& size) {
#ifdef _WIN32
  const int f = ::_wopen(path.c_str(), _O_RDONLY | _O_BINARY | _O_NOINHERIT);
  if (f < 0) return errno;
  struct _stat64 st;
  if (::_fstat64(f, &st) != 0) {
    const int err = errno;
    ::_close(f);
    return err;
  }
  if (!(st.st_mode & _S_IFREG)) {
    ::_close(f);
    return ENOTREG_FILE;
  }
#else
  const int f = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (f < 0) return errno;
  struct stat st;
  if (::fstat(f, &st) != 0) {
    const int err = errno;
    ::close(f);
    return err;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(f);
    return ENOTREG_FILE;
  }
  ::posix_fadvise(f, 0, 0, POSIX_FADV_SEQUENTIAL);  // read front to back: more read-ahead
#endif
  fd = f;
  size = static_cast<std::uint64_t>(st.st_size);
  return 0;
}

long long read_some(int fd, void* buffer, std::size_t n) {
#ifdef _WIN32
  return ::_read(fd, buffer, static_cast<unsigned>(std::min<std::size_t>(n, 1u << 30)));
#else
  return ::read(fd, buffer, n);
#endif
}

long long read_at(int fd, void* buffer, std::size_t n, std::uint64_t offset) {
#ifdef _WIN32
  OVERLAPPED ov{};
  ov.Offset = static_cast<DWORD>(offset);
  ov.OffsetHigh = static_cast<DWORD>(offset >> 32);
  DWORD got = 0;
  const auto h = reinterpret_cast<HANDLE>(::_get_osfhandle(fd));
  if (!ReadFile(h, buffer, static_cast<DWORD>(std::min<std::size_t>(n, 1u << 30)), &got, &ov)) {
    if (GetLastError() == ERROR_HANDLE_EOF) return 0;
    errno = last_errno();
    return -1;
  }
  return got;
#else
  return ::pread(fd, buffer, n, static_cast<off_t>(offset));
#endif
}

void close_file(int fd) {
#ifdef _WIN32
  ::_close(fd);
#else
  ::close(fd);
#endif
}

int process_id() {
#ifdef _WIN32
  return static_cast<int>(GetCurrentProcessId());
#else
  return static_cast<int>(::getpid());
#endif
}

double process_cpu_ms() {
#ifdef _WIN32
  FILETIME created, exited, kernel, user;
  if (!GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user)) return 0;
  const auto ms = [](const FILETIME& t) {
    return static_cast<double>((static_cast<std::uint64_t>(t.dwHighDateTime) << 32) | t.dwLowDateTime) * 1e-4;
  };
  return ms(kernel) + ms(user);
#else
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const auto ms = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) * 1e-3; };
  return ms(u.ru_utime) + ms(u.ru_stime);
#endif
}

void lower_this_thread_priority() {
#ifdef _WIN32
  SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_LOWEST);
#else
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);
#endif
}

std::uint64_t physical_memory() {
#ifdef _WIN32
  MEMORYSTATUSEX m{};
  m.dwLength = sizeof m;
  return GlobalMemoryStatusEx(&m) ? m.ullTotalPhys : 0;
#else
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
#endif
}

std::tm local_time(std::time_t t) {
  std::tm tm{};
#ifdef _WIN32
  localtime_s(&tm, &t);
#else
  localtime_r(&t, &tm);
#endif
  return tm;
}

std::tm utc_time(std::time_t t) {
  std::tm tm{};
#ifdef _WIN32
  gmtime_s(&tm, &t);
#else
  gmtime_r(&t, &tm);
#endif
  return tm;
}

void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
#endif
}

}  // namespace attnlab::platform
