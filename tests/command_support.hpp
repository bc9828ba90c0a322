#pragma once
// Helpers shared by the tests that run the attnlab command (tests/cli, tests/video): the JSON
// files it writes and the one-line errors it prints.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace attnlab::testing {

/// A JSON file, parsed.
inline nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

/// A finished run of the attnlab program: its exit status and what it printed.
struct CommandRun {
  int code;
  std::string out, err;
};

/// Runs `prefix binary args` through the shell (no display, Mesa's EGL quiet), capturing stdout
/// and stderr in files named by `tag` and the process id, removed after.
inline CommandRun run_attnlab_binary(const std::string& binary, const std::string& args, const std::string& tag,
                                 const std::string& prefix = "") {
  const auto dir = std::filesystem::temp_directory_path();
  const auto out = dir / ("attnlab-" + tag + "-out-" + std::to_string(::getpid()));
  const auto err = dir / ("attnlab-" + tag + "-err-" + std::to_string(::getpid()));
  const std::string cmd = prefix + "env -u DISPLAY EGL_LOG_LEVEL=fatal '" + binary + "' " + args + " >'" + out.string() + "' 2>'" +
                          err.string() + "'";
  const int status = std::system(cmd.c_str());
  auto slurp = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  };
  CommandRun r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

/// A finished run (its `code` and standard error `err`) refused as a usage error: exit status 2
/// and one line of error that names `part`.
template <class Run>
void expect_one_line_error(const Run& r, const std::string& part) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(part), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "not one line: " << r.err;
}

}  // namespace attnlab::testing
