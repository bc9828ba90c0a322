#pragma once
// The local hub of the tests (fake_hub.py, Python's standard library on 127.0.0.1) as a process
// a test owns: started in the constructor, stopped (its stdin closed) in the destructor.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attnlab::testing {

class FakeHubProcess {
 public:
  /// Starts tests/hub/fake_hub.py serving the repositories under `root` (ROOT/ORG/NAME/…), logging
  /// every request to `log` as a JSON line. Throws std::runtime_error when it does not start.
  FakeHubProcess(const std::filesystem::path& root, const std::filesystem::path& log);
  ~FakeHubProcess();
  FakeHubProcess(const FakeHubProcess&) = delete;
  FakeHubProcess& operator=(const FakeHubProcess&) = delete;

  /// HF_ENDPOINT for it: "http://127.0.0.1:PORT".
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(hub_port_); }
  int cdn_port() const { return cdn_port_; }

  /// Serves the files of the folder `source` as `repo_id`, misbehaving as `behaviour` says
  /// (fake_hub.py's `.behaviour.json`: per file or "*": "404", "stall", "drop_once", …).
  void add_repo(const std::string& repo_id, const std::filesystem::path& source,
                const nlohmann::json& behaviour = nlohmann::json::object());
  /// Changes how `repo_id` behaves from the next request on.
  void set_behaviour(const std::string& repo_id, const nlohmann::json& behaviour);
  /// The requests it answered so far, one JSON object each (server, method, path, range, auth).
  std::vector<nlohmann::json> requests() const;

 private:
  std::filesystem::path root_, log_;
  int pid_ = -1, stdin_ = -1, hub_port_ = 0, cdn_port_ = 0;
};

}  // namespace attnlab::testing
