#pragma once
// What the libFuzzer targets share: the temporary folder of this fuzzing process, made on first
// use and removed at exit (the targets that run commands or the loaders on files write there),
// the line between the files of one input, and how a finding ends the run.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include <signal.h>
#include <unistd.h>

namespace attnlab::fuzz {

/// <temp>/attnlab-fuzz-<name>-<pid>: made on the first call, removed with what it holds at exit.
/// libFuzzer ends most runs with _Exit (atexit handlers never run), so the first call also removes
/// the folders of this target whose process is gone. `name` must be the same on every call.
inline const std::filesystem::path& temp_folder(const char* name) {
  // A pointer, never freed: the atexit handler below runs after the destructors of statics made
  // after it is registered, so a path object here was freed before it was read (ASan, at the end
  // of a bounded fuzzing run that had used the folder).
  static const std::filesystem::path* const dir = [name] {
    const std::filesystem::path tmp = std::filesystem::temp_directory_path();
    const std::string prefix = "attnlab-fuzz-" + std::string(name) + "-";
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(tmp, ec)) {
      const std::string file = e.path().filename().string();
      if (file.rfind(prefix, 0) != 0 || file.size() == prefix.size()) continue;
      const std::string pid = file.substr(prefix.size());
      if (pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9) continue;
      if (::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH) std::filesystem::remove_all(e.path(), ec);
    }
    const auto* d = new std::filesystem::path(tmp / (prefix + std::to_string(::getpid())));
    std::filesystem::create_directories(*d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(*dir, ec);
    });
    return d;
  }();
  return *dir;
}

/// Between the files of one input of the targets that fuzz several files at once (fuzz_idx,
/// fuzz_safetensors): their seeds and dictionaries use the same line.
inline constexpr std::string_view kFileSeparator = "\n--next-file--\n";

/// A finding: "<target>: <what>" on stderr, then abort, so that libFuzzer keeps the input.
[[noreturn]] inline void report_finding(const char* target, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", target, what.c_str());
  std::abort();
}

}  // namespace attnlab::fuzz
