// The local hub as a process the test owns (fake_hub_process.hpp).
#include "fake_hub_process.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "test_support.hpp"

namespace attnlab::testing {

FakeHubProcess::FakeHubProcess(const std::filesystem::path& root, const std::filesystem::path& log)
    : root_(root), log_(log) {
  std::filesystem::create_directories(root_);
  int in[2], out[2];
  if (::pipe(in) != 0 || ::pipe(out) != 0) throw std::runtime_error("pipe failed");
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::close(in[1]);
    ::close(out[0]);
    const std::string script = (std::filesystem::path(ATTNLAB_HUB_TEST_DIR) / "fake_hub.py").string();
    ::execlp("python3", "python3", script.c_str(), "--root", root_.c_str(), "--log", log_.c_str(), "--lifetime", "280",
             static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  stdin_ = in[1];
  std::string line;
  char ch;
  while (::read(out[0], &ch, 1) == 1 && ch != '\n') line += ch;
  ::close(out[0]);
  std::istringstream(line) >> hub_port_ >> cdn_port_;
  if (hub_port_ <= 0) throw std::runtime_error("the fake hub did not start: '" + line + "'");
}

FakeHubProcess::~FakeHubProcess() {
  if (stdin_ >= 0) ::close(stdin_);  // the server stops when its stdin closes
  if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
}

void FakeHubProcess::add_repo(const std::string& repo_id, const std::filesystem::path& source,
                              const nlohmann::json& behaviour) {
  const std::filesystem::path d = root_ / repo_id;
  std::filesystem::create_directories(d);
  for (const auto& e : std::filesystem::directory_iterator(source))
    if (e.is_regular_file())
      std::filesystem::copy_file(e.path(), d / e.path().filename(), std::filesystem::copy_options::overwrite_existing);
  set_behaviour(repo_id, behaviour);
}

void FakeHubProcess::set_behaviour(const std::string& repo_id, const nlohmann::json& behaviour) {
  write_file(root_ / repo_id / ".behaviour.json", behaviour.dump());
}

std::vector<nlohmann::json> FakeHubProcess::requests() const {
  std::vector<nlohmann::json> out;
  std::ifstream f(log_);
  for (std::string line; std::getline(f, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace attnlab::testing
