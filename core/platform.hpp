#pragma once
// What the operating system does differently, in one place (ARCHITECTURE.md: a platform layer keeps
// #ifdef _WIN32 out of the rest): the user's home folder, an exclusive lock on a file.
#include <atomic>
#include <cstdint>
#include <filesystem>

namespace attnlab::platform {

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

}  // namespace attnlab::platform
