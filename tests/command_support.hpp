#pragma once
// Helpers shared by the tests that run the attnlab command (tests/cli, tests/video): the JSON
// files it writes and the one-line errors it prints.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

namespace attnlab::testing {

/// A JSON file, parsed.
inline nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
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
