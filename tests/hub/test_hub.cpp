// Downloads from the Hugging Face Hub (core/io/hub.hpp, `attnlab models`), against a local server that
// speaks the hub's protocol (tests/hub/fake_hub.py) and can misbehave in every way of issue 36's
// item 5; the cache checked by an independent implementation of its layout (hf_cache_check.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/io/files.hpp"
#include "core/io/hub.hpp"
#include "fake_hub_process.hpp"
#include "test_support.hpp"

using namespace attnlab;
using namespace attnlab::testing;
namespace fs = std::filesystem;

namespace {

const fs::path kHubDir = ATTNLAB_HUB_TEST_DIR;  // tests/hub
const fs::path kVitData = fs::path(ATTNLAB_SOURCE_DIR) / "tests" / "vit" / "data";
const std::string kDino = "timm/vit_small_patch16_224.dino";

std::string quote(const std::string& s) { return "'" + s + "'"; }

struct CliRun {
  int code;
  std::string out, err;
};

// The local hub: two ports on 127.0.0.1 (the hub, and a "CDN" for LFS files), a folder of
// repositories, the cache the app writes, and the server's request log.
class FakeHub : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir();
    root_ = dir_ / "repos";
    cache_ = dir_ / "cache";
    hub_ = std::make_unique<FakeHubProcess>(root_, dir_ / "requests.jsonl");
  }
  void TearDown() override { hub_.reset(); }

  std::string endpoint() const { return hub_->endpoint(); }

  hub::HubConfig config() const {
    hub::HubConfig c;
    c.endpoint = endpoint();
    c.cache_dir = cache_;
    c.stall_seconds = 3;
    c.connect_seconds = 5;
    return c;
  }

  // A repository served from `source` (a folder of files), misbehaving as `behaviour` says.
  void add_repo(const std::string& repo_id, const fs::path& source,
                const nlohmann::json& behaviour = nlohmann::json::object()) {
    hub_->add_repo(repo_id, source, behaviour);
  }
  void set_behaviour(const std::string& repo_id, const nlohmann::json& behaviour) {
    hub_->set_behaviour(repo_id, behaviour);
  }
  std::vector<nlohmann::json> requests() const { return hub_->requests(); }
  int count(const std::string& server, const std::string& method) const {
    int n = 0;
    for (const auto& r : requests())
      if (r["server"] == server && r["method"] == method) ++n;
    return n;
  }

  std::string env(const std::string& extra = "") const {
    return "env -u DISPLAY -u HF_TOKEN -u HF_HUB_OFFLINE EGL_LOG_LEVEL=fatal HF_HOME=" +
           quote((dir_ / "hf_home").string()) + " HF_ENDPOINT=" + endpoint() +
           " HF_HUB_CACHE=" + quote(cache_.string()) + " ATTNLAB_HUB_STALL_SECONDS=3 " + extra + " ";
  }

  CliRun run(const std::string& args, const std::string& extra_env = "", const std::string& setup = "") const {
    const fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const std::string cmd = (setup.empty() ? "" : setup + "; ") + env(extra_env) + quote(ATTNLAB_BINARY) + " " + args +
                            " >" + quote(out.string()) + " 2>" + quote(err.string());
    const int status = std::system(("bash -c " + quote(cmd)).c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(out), read_file(err)};
  }

  CliRun python(const std::string& args) const {
    const fs::path out = dir_ / "py.txt";
    const int status = std::system(("python3 " + quote((kHubDir / "hf_cache_check.py").string()) + " " + args + " >" +
                                    quote(out.string()) + " 2>&1")
                                       .c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(out), ""};
  }

  fs::path repo_dir(const std::string& repo_id) const {
    std::string name = "models--" + repo_id;
    name.replace(name.find('/'), 1, "--");
    return cache_ / name;
  }

  // Every file of the repository's cache that a reader could take for a complete one: blobs
  // without ".incomplete" and snapshot entries.
  std::vector<std::string> complete_looking(const std::string& repo_id, const std::string& file) const {
    std::vector<std::string> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(repo_dir(repo_id) / "snapshots", ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->path().filename() == file) out.push_back(it->path().string());
    const std::string sha = file_sha256(root_ / repo_id / file);
    for (const auto& e : fs::directory_iterator(repo_dir(repo_id) / "blobs", ec))
      if (e.path().filename() == sha) out.push_back(e.path().string());
    return out;
  }

  fs::path dir_, root_, cache_;
  std::unique_ptr<FakeHubProcess> hub_;
};

// Exit code 2 and one error line, the last on stderr (the progress lines of the files fetched
// before the failure may precede it).
void expect_one_line_error(const CliRun& r, const std::string& part) {
  EXPECT_EQ(r.code, 2) << r.err;
  std::vector<std::string> errors;
  std::istringstream lines(r.err);
  std::string last;
  for (std::string line; std::getline(lines, line); last = line)
    if (line.starts_with("attnlab: ")) errors.push_back(line);
  ASSERT_EQ(errors.size(), 1u) << "not one error line: " << r.err;
  EXPECT_EQ(errors[0], last) << "the error is not the last line: " << r.err;
  EXPECT_NE(errors[0].find(part), std::string::npos) << "expected '" << part << "' in: " << r.err;
  EXPECT_TRUE(r.err.ends_with("\n"));
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

TEST(HubNames, RepositoryNamesAndHfArguments) {
  const hub::RepoRef r = hub::parse_repo_ref("timm/vit_small_patch16_224.dino@v1.0");
  EXPECT_EQ(r.repo_id, "timm/vit_small_patch16_224.dino");
  EXPECT_EQ(r.revision, "v1.0");
  EXPECT_EQ(hub::parse_repo_ref("facebook/dinov2-small").revision, "main");
  EXPECT_FALSE(hub::parse_hf_model("models/dino").has_value());
  EXPECT_EQ(hub::parse_hf_model("hf:facebook/dinov2-small@refs/pr/1")->revision, "refs/pr/1");
  for (const char* bad :
       {"", "a/b/c", "../x", "a/..", "a--b/c", "a/b@", "a/b@../../x", "-a/b", "a/b.", "a b/c", "hf:x"})
    EXPECT_THROW(hub::parse_repo_ref(bad), Error) << bad;
}

TEST(HubNames, GalleryHasTheModelsThatTeach) {
  const auto g = hub::gallery();
  ASSERT_EQ(g.size(), 9u);
  EXPECT_EQ(std::count_if(g.begin(), g.end(), [](const auto& e) { return e.resnet; }), 2);  // set beside the ViT (issue 50)
  for (const auto& e : g) {
    EXPECT_NO_THROW(hub::parse_repo_ref(e.repo_id)) << e.repo_id;
    EXPECT_FALSE(e.licence.empty());
    EXPECT_FALSE(e.shows.empty());
    EXPECT_GT(e.approx_bytes, 10'000'000u);
  }
  EXPECT_EQ(hub::format_bytes(86'700'000), "86.7 MB");
}

TEST(HubEnvironment, FollowsHuggingfaceHubsVariables) {
  const fs::path d = temp_dir();
  write_file(d / "tokenfile", "  from-file\n");
  ::setenv("HF_HOME", (d / "home").c_str(), 1);
  ::unsetenv("HF_HUB_CACHE");
  ::unsetenv("HF_TOKEN");
  ::setenv("HF_TOKEN_PATH", (d / "tokenfile").c_str(), 1);
  ::setenv("HF_HUB_OFFLINE", "yes", 1);
  ::setenv("HF_ENDPOINT", "http://example.test/", 1);
  hub::HubConfig c = hub::HubConfig::from_environment();
  EXPECT_EQ(c.cache_dir, d / "home" / "hub");
  EXPECT_EQ(c.token.value_or(""), "from-file");
  EXPECT_TRUE(c.offline);
  EXPECT_EQ(c.endpoint, "http://example.test");
  ::setenv("HF_TOKEN", "from-env", 1);
  ::setenv("HF_HUB_CACHE", (d / "c").c_str(), 1);
  ::setenv("HF_HUB_OFFLINE", "0", 1);
  c = hub::HubConfig::from_environment();
  EXPECT_EQ(c.token.value_or(""), "from-env");
  EXPECT_EQ(c.cache_dir, d / "c");
  EXPECT_FALSE(c.offline);
  for (const char* v : {"HF_HOME", "HF_TOKEN_PATH", "HF_HUB_OFFLINE", "HF_ENDPOINT", "HF_TOKEN", "HF_HUB_CACHE"})
    ::unsetenv(v);
}

// The acceptance: pull, then `vit --model hf:…` gives the rows of the file opened by path; the
// second pull fetches nothing; the token goes to the hub and not to the CDN.
TEST_F(FakeHub, PullThenHfModelGivesTheRowsOfThePath) {
  add_repo(kDino, kVitData / "timm_f32", {{"token", "secret"}});
  const CliRun pull = run("models pull " + kDino, "HF_TOKEN=secret");
  ASSERT_EQ(pull.code, 0) << pull.err;
  const fs::path snapshot = first_line(pull.out);
  EXPECT_EQ(snapshot.parent_path().parent_path(), repo_dir(kDino));
  EXPECT_TRUE(fs::is_symlink(snapshot / "model.safetensors"));
  EXPECT_EQ(fs::read_symlink(snapshot / "model.safetensors").string(),
            "../../blobs/" + file_sha256(kVitData / "timm_f32/model.safetensors"));
  EXPECT_EQ(read_file(repo_dir(kDino) / "refs" / "main"), snapshot.filename().string());
  EXPECT_NE(pull.err.find("model.safetensors"), std::string::npos) << "no progress line: " << pull.err;
  for (const auto& r : requests()) {
    if (r["server"] == "hub")
      EXPECT_EQ(r["auth"], "Bearer secret") << r.dump();
    else
      EXPECT_TRUE(r["auth"].is_null()) << "the token went to another host: " << r.dump();
  }
  EXPECT_EQ(count("cdn", "GET"), 1);

  const std::string image = quote((kVitData / "safari_48x48.png").string());
  const CliRun by_hf =
      run("vit --model hf:" + kDino + " --image " + image + " --backend cpu --layer 1 --head 0", "HF_TOKEN=secret");
  const CliRun by_path = run("vit --model " + quote((kVitData / "timm_f32").string()) + " --image " + image +
                             " --backend cpu --layer 1 --head 0");
  ASSERT_EQ(by_hf.code, 0) << by_hf.err;
  ASSERT_EQ(by_path.code, 0) << by_path.err;
  EXPECT_EQ(by_hf.out, by_path.out);

  const int gets = count("hub", "GET") + count("cdn", "GET");
  const CliRun again = run("models pull " + kDino, "HF_TOKEN=secret");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(first_line(again.out), snapshot.string());
  EXPECT_EQ(count("hub", "GET") + count("cdn", "GET"), gets) << "the second pull downloaded again";

  const CliRun path = run("models path " + kDino, "HF_HUB_OFFLINE=1");
  EXPECT_EQ(path.code, 0) << path.err;
  EXPECT_EQ(first_line(path.out), snapshot.string());
  const CliRun list = run("models", "HF_HUB_OFFLINE=1");
  EXPECT_NE(list.out.find("[in the cache] DINO ViT-S/16"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("  " + kDino + "  "), std::string::npos) << list.out;
}

TEST_F(FakeHub, GatedRepositoryWithoutTokenSaysSetHfToken) {
  add_repo(kDino, kVitData / "timm_f32", {{"token", "secret"}});
  expect_one_line_error(run("models pull " + kDino), "HF_TOKEN");
  expect_one_line_error(run("models pull " + kDino, "HF_TOKEN=wrong"), "HF_TOKEN");
}

// The cache the app wrote, read by an independent implementation of huggingface_hub's layout.
TEST_F(FakeHub, AppsCacheIsReadByAnIndependentImplementation) {
  add_repo(kDino, kVitData / "hf_cls_f32");
  ASSERT_EQ(run("models pull " + kDino).code, 0);
  const CliRun verify = python("verify " + quote(cache_.string()));
  EXPECT_EQ(verify.code, 0) << verify.out;
  const auto report = nlohmann::json::parse(verify.out);
  ASSERT_EQ(report["repos"].size(), 1u);
  EXPECT_EQ(report["repos"][0]["repo_id"], kDino);
  EXPECT_EQ(report["repos"][0]["revisions"][0]["files"].size(), 3u);  // with preprocessor_config.json
  const CliRun find = python("find " + quote(cache_.string()) + " " + kDino + " model.safetensors");
  EXPECT_EQ(find.code, 0) << find.out;
  EXPECT_EQ(file_sha256(first_line(find.out)), file_sha256(kVitData / "hf_cls_f32/model.safetensors"));
}

// A cache written the way huggingface_hub writes it is found by the app with no network.
TEST_F(FakeHub, PythonsCacheIsFoundOffline) {
  const std::string commit = "0123456789abcdef0123456789abcdef01234567";
  const fs::path src = kVitData / "timm_f32";
  const CliRun w = python("write " + quote(cache_.string()) + " " + kDino + " main " + commit +
                          " config.json=" + quote((src / "config.json").string()) +
                          " model.safetensors=" + quote((src / "model.safetensors").string()));
  ASSERT_EQ(w.code, 0) << w.out;
  const CliRun path = run("models path " + kDino, "HF_HUB_OFFLINE=1");
  ASSERT_EQ(path.code, 0) << path.err;
  EXPECT_EQ(first_line(path.out), (repo_dir(kDino) / "snapshots" / commit).string());
  const CliRun info =
      run("vit --model hf:" + kDino + " --image " + quote((kVitData / "safari_48x48.png").string()) + " --info",
          "HF_HUB_OFFLINE=1");
  EXPECT_EQ(info.code, 0) << info.err;
  const CliRun render =
      run("render --model hf:" + kDino + " --image " + quote((kVitData / "safari_48x48.png").string()) + " --out " +
              quote((dir_ / "render.png").string()),
          "HF_HUB_OFFLINE=1");
  EXPECT_EQ(render.code, 0) << render.err;
  EXPECT_TRUE(fs::exists(dir_ / "render.png"));
  EXPECT_TRUE(requests().empty()) << "offline, yet the server was asked";
  // Offline and not cached: one line, no request.
  expect_one_line_error(run("vit --model hf:timm/not_here --image " + quote((kVitData / "safari_48x48.png").string()),
                            "HF_HUB_OFFLINE=1"),
                        "not in the cache");
  expect_one_line_error(run("models pull timm/not_here", "HF_HUB_OFFLINE=1"), "HF_HUB_OFFLINE");
  EXPECT_TRUE(requests().empty());
}

// An older repository with only pytorch_model.bin (a Hugging Face ViT in BF16, written by
// torch.save): the pull falls back to it, and `vit --model hf:` reads it through the PyTorch
// checkpoint reader with the rows of its safetensors twin.
TEST_F(FakeHub, PytorchOnlyRepositoryFallsBackToPytorchModelBin) {
  add_repo("org/old", kVitData / "pth" / "hf_bf16");
  const CliRun pull = run("models pull org/old");
  ASSERT_EQ(pull.code, 0) << pull.err;
  EXPECT_TRUE(fs::exists(fs::path(first_line(pull.out)) / "pytorch_model.bin"));
  EXPECT_TRUE(fs::exists(repo_dir("org/old") / ".no_exist"));  // model.safetensors remembered as absent
  const std::string image = quote((kVitData / "safari_61x45.png").string());
  const CliRun by_hub = run("vit --model hf:org/old --image " + image + " --backend cpu --layer 0 --head 1");
  const CliRun twin = run("vit --model " + quote((kVitData / "hf_model_bf16").string()) + " --image " + image +
                          " --backend cpu --layer 0 --head 1");
  ASSERT_EQ(by_hub.code, 0) << by_hub.err;
  ASSERT_EQ(twin.code, 0) << twin.err;
  EXPECT_EQ(by_hub.out, twin.out);
  EXPECT_NE(by_hub.out.find(','), std::string::npos) << by_hub.out;
}

TEST_F(FakeHub, PullAtACommitAndARenamedRepository) {
  add_repo(kDino, kVitData / "timm_f32");
  add_repo("timm/old_name", kVitData / "timm_f32", {{"renamed_to", kDino}});
  const CliRun renamed = run("models pull timm/old_name");
  ASSERT_EQ(renamed.code, 0) << renamed.err;  // a relative redirect, followed as huggingface_hub does
  const std::string commit = fs::path(first_line(renamed.out)).filename().string();
  const CliRun at = run("models pull " + kDino + "@" + commit + " --file config.json");
  ASSERT_EQ(at.code, 0) << at.err;
  EXPECT_FALSE(fs::exists(repo_dir(kDino) / "refs")) << "refs/<commit> written for a commit";
  expect_one_line_error(run("models pull " + kDino + "@nope"), "no revision 'nope'");
}

// A connection dropped mid-file is resumed with a Range request, and the file is whole.
TEST_F(FakeHub, DroppedConnectionResumesWithRange) {
  add_repo(kDino, kVitData / "timm_f32", {{"model.safetensors", "drop_once"}});
  const CliRun pull = run("models pull " + kDino);
  ASSERT_EQ(pull.code, 0) << pull.err;
  bool ranged = false;
  for (const auto& r : requests())
    if (r["server"] == "cdn" && r["range"].is_string() && r["range"].get<std::string>().starts_with("bytes="))
      ranged = true;
  EXPECT_TRUE(ranged) << "no Range request after the drop";
  EXPECT_EQ(file_sha256(fs::path(first_line(pull.out)) / "model.safetensors"),
            file_sha256(kVitData / "timm_f32/model.safetensors"));
}

// Ctrl-C during a stalled download: exit 130, only the .incomplete part stays; the next pull resumes.
TEST_F(FakeHub, InterruptLeavesOnlyTheIncompletePartAndThePullResumes) {
  add_repo(kDino, kVitData / "timm_f32", {{"model.safetensors", "stall"}});
  const fs::path err = dir_ / "interrupted.txt";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string cmd = "exec " + env("ATTNLAB_HUB_STALL_SECONDS=60") + quote(ATTNLAB_BINARY) + " models pull " +
                            kDino + " >/dev/null 2>" + quote(err.string());
    ::execlp("bash", "bash", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const std::string sha = file_sha256(kVitData / "timm_f32/model.safetensors");
  const fs::path incomplete = repo_dir(kDino) / "blobs" / (sha + ".incomplete");
  std::error_code ec;
  for (int i = 0; i < 200 && !(fs::exists(incomplete, ec) && fs::file_size(incomplete, ec) > 0); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (!fs::exists(incomplete)) ::kill(pid, SIGKILL);
  ASSERT_TRUE(fs::exists(incomplete)) << read_file(err);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5)) << "cancel took too long during the stall";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << status << " " << read_file(err);
  EXPECT_NE(read_file(err).find("cancelled"), std::string::npos) << read_file(err);
  EXPECT_TRUE(complete_looking(kDino, "model.safetensors").empty());
  const auto part = fs::file_size(incomplete);
  EXPECT_GT(part, 0u);

  set_behaviour(kDino, nlohmann::json::object());
  const CliRun resume = run("models pull " + kDino);
  ASSERT_EQ(resume.code, 0) << resume.err;
  bool resumed = false;
  for (const auto& r : requests())
    if (r["server"] == "cdn" && r["range"] == "bytes=" + std::to_string(part) + "-") resumed = true;
  EXPECT_TRUE(resumed) << "no GET with Range: bytes=" << part << "-";
  EXPECT_EQ(file_sha256(fs::path(first_line(resume.out)) / "model.safetensors"), sha);
  EXPECT_FALSE(fs::exists(incomplete));
}

// Every hostile answer: one line saying why, and nothing complete-looking left in the cache.
TEST_F(FakeHub, HostileServerLeavesNothingThatLooksComplete) {
  struct Case {
    nlohmann::json behaviour;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {{{"*", "404"}}, "has no file 'config.json'"},
      {{{"model.safetensors", "404"}}, "neither model.safetensors nor pytorch_model.bin"},
      {{{"*", "401"}}, "not found, or is private"},
      {{{"*", "403"}}, "gated or private"},
      {{{"model.safetensors", "500"}}, "HTTP 500"},
      {{{"model.safetensors", "short"}}, "announced"},
      {{{"model.safetensors", "long"}}, "more than the"},
      {{{"model.safetensors", "badhash"}}, "SHA-256"},
      {{{"model.safetensors", "loop"}}, "redirect loop"},
      {{{"model.safetensors", "stall"}}, "stalled"},
  };
  int n = 0;
  for (const Case& c : cases) {
    const std::string repo = "org/hostile" + std::to_string(n++);
    add_repo(repo, kVitData / "timm_f32", c.behaviour);
    SCOPED_TRACE(repo + " " + c.behaviour.dump());
    expect_one_line_error(run("models pull " + repo, "ATTNLAB_HUB_STALL_SECONDS=2"), c.expect);
    EXPECT_TRUE(complete_looking(repo, "model.safetensors").empty());
    EXPECT_NE(run("models path " + repo).code, 0);
    // Nothing the independent reader would take for the model either.
    EXPECT_NE(python("find " + quote(cache_.string()) + " " + repo + " model.safetensors").code, 0);
  }
}

// A full disk (simulated with a file-size limit: SIGXFSZ ignored, so write() fails with EFBIG).
TEST_F(FakeHub, FullDiskLeavesNothingThatLooksComplete) {
  add_repo(kDino, kVitData / "timm_f32");
  expect_one_line_error(run("models pull " + kDino, "", "trap \"\" XFSZ; ulimit -f 100"), "cannot write");
  EXPECT_TRUE(complete_looking(kDino, "model.safetensors").empty());
  const CliRun after = run("models pull " + kDino);  // room again: it resumes and completes
  EXPECT_EQ(after.code, 0) << after.err;
}

// Core: cancel works while the server stalls; progress says bytes, total and rate.
TEST_F(FakeHub, CancelDuringAStallAndProgress) {
  add_repo(kDino, kVitData / "timm_f32", {{"model.safetensors", "stall"}});
  hub::HubConfig c = config();
  c.stall_seconds = 60;
  hub::Transfer transfer;
  hub::PullOptions options;
  options.transfer = &transfer;
  std::thread canceller([&] {
    for (int i = 0; i < 100 && transfer.status().bytes_done == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    transfer.cancel();
  });
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(hub::pull_model(hub::RepoRef{kDino}, c, options), hub::Cancelled);
  canceller.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  const hub::TransferStatus s = transfer.status();
  EXPECT_EQ(s.file, "model.safetensors");
  EXPECT_GT(s.bytes_done, 0u);
  EXPECT_EQ(s.bytes_total, fs::file_size(kVitData / "timm_f32/model.safetensors"));
  EXPECT_TRUE(s.finished);

  set_behaviour(kDino, nlohmann::json::object());
  std::vector<hub::TransferStatus> seen;
  options.on_progress = [&](const hub::TransferStatus& st) { seen.push_back(st); };
  hub::Transfer second;
  options.transfer = &second;
  const fs::path snapshot = hub::pull_model(hub::RepoRef{kDino}, c, options);
  EXPECT_TRUE(hub::cached_model(hub::RepoRef{kDino}, c).has_value());
  EXPECT_EQ(*hub::cached_model(hub::RepoRef{kDino}, c), snapshot);
  ASSERT_FALSE(seen.empty());
  bool model_done = false;
  for (const auto& st : seen)
    if (st.file == "model.safetensors" && st.bytes_done == st.bytes_total && st.resumed_from > 0) model_done = true;
  EXPECT_TRUE(model_done) << "no final progress of the resumed model.safetensors";
  EXPECT_FALSE(hub::format_status(seen.back()).empty());
}

// Two pulls of one file at once: the lock makes the second wait, then find the blob (one GET).
TEST_F(FakeHub, TwoPullsAtOnceDoNotCollide) {
  add_repo(kDino, kVitData / "timm_f32");
  const hub::HubConfig c = config();
  std::vector<fs::path> got(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&, i] {
      try {
        got[static_cast<std::size_t>(i)] = hub::pull_model(hub::RepoRef{kDino}, c);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(i)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  EXPECT_EQ(got[0], got[1]);
  EXPECT_EQ(count("cdn", "GET"), 1);
  EXPECT_EQ(file_sha256(got[0] / "model.safetensors"), file_sha256(kVitData / "timm_f32/model.safetensors"));
}
