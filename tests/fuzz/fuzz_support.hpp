#pragma once
// What the libFuzzer targets share: the temporary folder of this fuzzing process, made on first
// use and removed at exit (the targets that run commands or the loaders on files write there).
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include <unistd.h>

namespace attnlab::fuzz {

/// <temp>/attnlab-fuzz-<name>-<pid>: made on the first call, removed with what it holds at exit.
/// `name` must be the same on every call of a process.
inline const std::filesystem::path& temp_folder(const char* name) {
  static const std::filesystem::path dir = [name] {
    const std::filesystem::path d =
        std::filesystem::temp_directory_path() / ("attnlab-fuzz-" + std::string(name) + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    });
    return d;
  }();
  return dir;
}

}  // namespace attnlab::fuzz
