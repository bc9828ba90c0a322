#pragma once
// What the operating system does differently, in one place (ARCHITECTURE.md: a platform layer keeps
// #ifdef _WIN32 out of the rest): the user's home folder, an exclusive lock on a file, the file
// primitives that atomic saves are made of (core/io/files.cpp), memory and time facts.
#include <atomic>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace attnlab::platform {

/// Asks the C library to keep freed blocks of up to 64 MiB in the process for reuse instead of
/// handing each back to the system (glibc: mallopt(M_MMAP_THRESHOLD, 64 MiB); nothing elsewhere).
/// A ResNet-50 pass makes and drops maps of a few MiB at every convolution; with glibc's default
/// each one was a fresh mmap whose pages faulted in again, which on this project's VM made half
/// of the pass (docs/SPEED.md: CnnForward/Cpu/R50_224 169 ms against 76 ms). PyTorch's CPU
/// allocator keeps its blocks likewise. Called once at the start of main(): the app's and the
/// benchmark program's.
void keep_freed_memory_for_reuse();

/// The user's home folder: $HOME on POSIX (the password database when unset), %USERPROFILE% on
/// Windows, as Python's os.path.expanduser("~") finds it. Empty when none is known.
std::filesystem::path home_folder();

/// An exclusive advisory lock on a file (created when missing), held while the object lives:
/// flock(LOCK_EX) on POSIX, LockFileEx on Windows — what huggingface_hub's filelock.FileLock takes.
/// Another process (or another object in this one) waiting for the same file blocks until it is
/// released; a process that dies releases its locks.
class FileLock {
 public:
  /// Waits for the lock, polling `cancel` (when given) every 100 ms; throws attnlab::Error when the
  /// lock file cannot be created, and stops waiting (returns unlocked, locked() false) on cancel.
  explicit FileLock(const std::filesystem::path& path, const std::atomic<bool>* cancel = nullptr);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool locked() const { return locked_; }

 private:
  intptr_t handle_ = -1;
  bool locked_ = false;
};

/// The user's Pictures folder, where a desktop keeps screenshots; not created here.
/// Linux: $XDG_PICTURES_DIR when it is an absolute path, else the XDG_PICTURES_DIR line of
/// $XDG_CONFIG_HOME/user-dirs.dirs (~/.config/user-dirs.dirs), which xdg-user-dirs writes as
/// XDG_PICTURES_DIR="$HOME/Pictures" or an absolute path in quotes (`$HOME` the home folder,
/// `\` escaping the next character; other lines and forms ignored), else <home>/Pictures.
/// Windows: the Pictures known folder (SHGetKnownFolderPath(FOLDERID_Pictures)), else
/// %USERPROFILE%\Pictures. Empty when no home folder is known either.
std::filesystem::path pictures_folder();

/// The value xdg-user-dirs gives `name` ("PICTURES", "DESKTOP"…) in the text of a user-dirs.dirs
/// file, `$HOME` replaced by `home`; empty when no line names it in a form the format allows.
/// (pictures_folder()'s parser, apart for its tests.)
std::filesystem::path xdg_user_dir_in(const std::string& user_dirs_text, const std::string& name,
                                      const std::filesystem::path& home);

/// Opens `folder` in the desktop's file manager and returns at once: xdg-open in a process of its
/// own on Linux (started through a second fork, so that it is never left a zombie, with only the
/// standard descriptors: no window or file of this process is inherited; its output to
/// /dev/null), ShellExecuteW("open") on Windows. Throws attnlab::Error with one line when it
/// cannot be started: no xdg-open on the PATH (Debian's xdg-utils), fork failing, Windows
/// refusing.
void open_in_file_manager(const std::filesystem::path& folder);

/// Where per-user settings live: %APPDATA% on Windows (empty elsewhere: the XDG rules apply
/// there, core/io/user_config.cpp).
std::filesystem::path roaming_app_data_folder();

/// TrueType fonts for the user interface, the first existing one used: DejaVu Sans on Linux
/// (Debian's fonts-dejavu-core); Segoe UI, then Arial, Tahoma in %WINDIR%\Fonts on Windows,
/// then DejaVu Sans (a Wine prefix on Linux sees the host's).
std::vector<std::filesystem::path> ui_font_files();

/// The running program's own file (/proc/self/exe; GetModuleFileNameW); empty when unknown.
std::filesystem::path executable_path();

/// Text (UTF-8, as the program keeps all text) for a path, and a path from UTF-8 text. POSIX
/// paths are bytes already; on Windows the conversion goes through UTF-16 explicitly, because
/// path::string() and path(std::string) there use the C library's code page, not UTF-8.
std::string utf8(const std::filesystem::path& path);
std::filesystem::path path_from_utf8(const std::string& text);

// File primitives. Each returns 0 or an errno value (EEXIST, ENOSPC, EACCES, EROFS, ENOENT, EPERM…):
// the POSIX calls on Linux, the wide-character Win32 calls on Windows with their errors mapped.

/// Creates a new file `folder`/`prefix`XXXXXX (six random characters), readable and writable by
/// this user only; `fd` is open for writing. (mkostemp with O_CLOEXEC; _wsopen with _O_EXCL.)
int create_unique_file(const std::filesystem::path& folder, const std::string& prefix, std::filesystem::path& path, int& fd);
/// Writes every byte (retrying short writes).
int write_all(int fd, std::span<const char> bytes);
/// Sets `mode` (POSIX permission bits; ignored on Windows), syncs to the disk, closes `fd` (always).
int finish_file(int fd, unsigned mode);
/// Creates a new folder `folder`/`prefix`XXXXXX with `mode` (mkdtemp, then chmod).
int create_unique_folder(const std::filesystem::path& folder, const std::string& prefix, unsigned mode,
                         std::filesystem::path& path);
/// Permission bits a new file (0666) or folder (0777) gets from this process: less the umask,
/// read without changing it (/proc/self/status on Linux); 0 on Windows (unused there).
unsigned new_file_mode();
unsigned new_folder_mode();
/// True when nothing, not even a dangling symbolic link, has that name.
bool name_is_free(const std::filesystem::path& path);
/// A second name for a file (link(); CreateHardLinkW). EPERM where the file system has none.
int hard_link(const std::filesystem::path& from, const std::filesystem::path& to);
/// Moves `from` onto `to`, replacing a file there, atomically (rename(); MoveFileExW with
/// MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH).
int rename_replacing(const std::filesystem::path& from, const std::filesystem::path& to);
/// Moves `from` to `to` only when `to` is free, atomically: EEXIST when it is taken (link() and
/// unlink() of `from`; MoveFileExW without MOVEFILE_REPLACE_EXISTING).
int rename_if_free(const std::filesystem::path& from, const std::filesystem::path& to);
/// Moves a folder to a free name (rename(); MoveFileExW): ENOTEMPTY or EEXIST when taken.
int rename_folder(const std::filesystem::path& from, const std::filesystem::path& to);
/// True when this user may create files in `folder` (access(W_OK); _waccess).
bool folder_is_writable(const std::filesystem::path& folder);
/// Removes a file; errors ignored (used to clean up).
void remove_file(const std::filesystem::path& path);
/// Makes a folder's entries durable (fsync of the folder on POSIX; nothing to do on Windows).
void sync_folder(const std::filesystem::path& folder);
/// Opens a file for reading without blocking (a FIFO would wait for a writer), then checks on
/// the open file that it is a regular file and reads its size; on Linux the kernel is told it
/// will be read front to back (posix_fadvise SEQUENTIAL, as checkpoints and images are). Returns 0, an errno value, or
/// ENOTREG_FILE when it is not a regular file (a pipe, a device, a socket; `fd` closed then).
constexpr int ENOTREG_FILE = -1;
int open_regular_for_reading(const std::filesystem::path& path, int& fd, std::uint64_t& size);
/// Reads up to `n` bytes (at `offset`: pread; ReadFile with an offset). Returns the count read
/// (0 at the end) or -1 with errno set; EINTR is the caller's to retry.
long long read_some(int fd, void* buffer, std::size_t n);
long long read_at(int fd, void* buffer, std::size_t n, std::uint64_t offset);
/// Closes a file opened by open_regular_for_reading().
void close_file(int fd);
/// This process's id.
int process_id();

/// CPU time the whole process has used so far, all threads, in milliseconds (getrusage;
/// GetProcessTimes).
double process_cpu_ms();
/// Lowers the calling thread to the lowest priority (its nice value 19 on Linux;
/// THREAD_PRIORITY_LOWEST on Windows). Refused (a sandbox), it stays as it was.
void lower_this_thread_priority();

/// Physical memory in bytes (sysconf; GlobalMemoryStatusEx); 0 when unknown.
std::uint64_t physical_memory();
/// Calendar time as local time and as UTC (localtime_r/gmtime_r; localtime_s/gmtime_s).
std::tm local_time(std::time_t t);
std::tm utc_time(std::time_t t);

}  // namespace attnlab::platform
