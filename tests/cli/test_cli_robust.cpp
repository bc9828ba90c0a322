// Issue 38, as a new user would meet it: hostile sizes refused in one line within a memory
// budget (measured on the real binary: its peak resident memory from wait4()), and export pairs
// replaced together or not at all.
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace attnlab;
using namespace attnlab::testing;

namespace {

struct CliResult {
  int code = -1;
  std::string out, err;
  std::size_t peak_bytes = 0;  // the process's peak resident memory (ru_maxrss)
  double seconds = 0;
};

// The binary under test: ATTNLAB_TEST_BINARY when set (to run these tests against another
// build, e.g. the one before a fix), else this tree's.
std::string binary() {
  const char* other = std::getenv("ATTNLAB_TEST_BINARY");
  return other && *other ? other : ATTNLAB_BINARY;
}

std::string shell_quoted(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

// Runs attnlab with `args` (shell-quoted) after the shell statements `setup` (e.g.
// "export ATTNLAB_MEMORY_BUDGET_MB=512"), no DISPLAY, as one process (the shell execs it) whose
// peak resident memory wait4() reports.
CliResult run_attnlab(const std::string& args, const std::string& setup = "", const std::string& wrapper = "") {
  const auto dir = std::filesystem::temp_directory_path() / ("attnlab-robust-run-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto out = dir / "stdout", err = dir / "stderr";
  const std::string cmd = "unset DISPLAY; export EGL_LOG_LEVEL=fatal; " + (setup.empty() ? ":" : setup) + "; exec " +
                          wrapper + " " + shell_quoted(binary()) + " " + args + " >" + shell_quoted(out) + " 2>" +
                          shell_quoted(err);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  CliResult r;
  int status = 0;
  struct rusage usage {};
  if (pid > 0 && ::wait4(pid, &status, 0, &usage) == pid) {
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.peak_bytes = static_cast<std::size_t>(usage.ru_maxrss) * 1024;
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.out = read_file(out);
  r.err = read_file(err);
  std::filesystem::remove_all(dir);
  return r;
}

void expect_one_line_error(const CliResult& r, const std::string& part) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(part), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "not one line: " << r.err;
}

constexpr std::size_t kMiB = std::size_t{1} << 20;

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNLAB_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ATTNLAB_TEST_ASAN 1
#endif

// The peak resident memory a refusal may reach: issue 38's 64 MB for the program as it ships.
// Under AddressSanitizer (the sanitized suite runs these tests too) the runtime and its shadow
// pages alone take some 80 MB, so there the bound is the same 64 MiB over what this binary
// reaches refusing a missing checkpoint at once (measured in the same run).
std::size_t refusal_peak_limit() {
#ifdef ATTNLAB_TEST_ASAN
  static const std::size_t baseline = run_attnlab("vit --info --model /nonexistent/model.safetensors").peak_bytes;
  return baseline + 64 * kMiB;
#else
  return 64 * kMiB;
#endif
}

// Sets every "key" entry of a JSON document (at any depth) to `value`; how many it set.
int set_everywhere(nlohmann::json& j, const std::string& key, const nlohmann::json& value) {
  int n = 0;
  if (j.is_object()) {
    for (auto& [k, v] : j.items()) {
      if (k == key) {
        v = value;
        ++n;
      } else {
        n += set_everywhere(v, key, value);
      }
    }
  } else if (j.is_array()) {
    for (auto& v : j) n += set_everywhere(v, key, value);
  }
  return n;
}

// A safetensors file: `header` (a JSON object) and `data_bytes` zero bytes.
void write_safetensors(const std::filesystem::path& path, const nlohmann::json& header, std::size_t data_bytes) {
  const std::string h = header.dump();
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<char>((h.size() >> (8 * i)) & 0xff);
  bytes += h;
  bytes.append(data_bytes, '\0');
  write_file(path, bytes);
}

}  // namespace

// K = 3000 with padding on the 500 × 500 safari photo: one token of 3·3000² values, and
// W_tokenize of 16 of them (three copies): 5 GiB resident and nearly a minute before issue 38.
// Now refused before anything is made, naming the budget and the largest K that fits.
TEST(CliBudget, AHugePaddedPatchIsRefusedInOneLineWithinTheBudget) {
  const std::string safari = shell_quoted(asset("safari.jpg"));
  const CliResult r = run_attnlab("row --image " + safari + " --patch 3000 --edge pad --query 0,0",
                                  "export ATTNLAB_MEMORY_BUDGET_MB=256");
  expect_one_line_error(r, "memory budget");
  EXPECT_NE(r.err.find("choose K up to "), std::string::npos) << r.err;
  EXPECT_LT(r.peak_bytes, 256 * kMiB);
  EXPECT_LT(r.seconds, 20.0);
  // The K it names fits (the message's number, run as a user would next).
  const auto at = r.err.find("choose K up to ");
  ASSERT_NE(at, std::string::npos);
  const int fits = std::atoi(r.err.c_str() + at + 15);
  ASSERT_GT(fits, 16);
  ASSERT_LT(fits, 3000);
  // K so large that 3·K·K overflows an int (K ≥ 26 755), even under a budget that would hold it.
  for (const char* K : {"26755", "1048576"}) {
    const CliResult big = run_attnlab("row --image " + safari + " --patch " + K + " --edge pad --query 0,0",
                                      "export ATTNLAB_MEMORY_BUDGET_MB=1000000000");
    expect_one_line_error(big, "the largest accepted, 26754");
    EXPECT_LT(big.peak_bytes, 256 * kMiB);
  }
  expect_one_line_error(run_attnlab("row --image " + safari + " --patch 20000 --edge pad --query 0,0"),
                        "choose K up to");
}

// The same K under the default budget (a quarter of RAM: 6 GiB on a 24 GiB machine, which held
// K = 3000's 5.3 GB for 50 s until the pipeline got its own 512 MiB ceiling), and under a budget
// set far above it: refused in one line, and the K it names runs.
TEST(CliBudget, AHugePaddedPatchIsRefusedUnderTheDefaultBudget) {
  const std::string safari = shell_quoted(asset("safari.jpg"));
  for (const std::string setup : {"unset ATTNLAB_MEMORY_BUDGET_MB", "export ATTNLAB_MEMORY_BUDGET_MB=100000"}) {
    const CliResult r = run_attnlab("row --image " + safari + " --patch 3000 --edge pad --query 0,0", setup);
    expect_one_line_error(r, "choose K up to ");
    EXPECT_NE(r.err.find("hand-made pipeline's limit of 512 MiB"), std::string::npos) << setup << ": " << r.err;
    EXPECT_LT(r.peak_bytes, 256 * kMiB) << setup;
    EXPECT_LT(r.seconds, 20.0) << setup;
    const auto at = r.err.find("choose K up to ");
    ASSERT_NE(at, std::string::npos);
    const int fits = std::atoi(r.err.c_str() + at + 15);
    ASSERT_GT(fits, 500) << r.err;  // every K up to the photo's side runs
    ASSERT_LT(fits, 3000) << r.err;
    if (setup.starts_with("unset")) {  // once: it makes 0.5 GiB of W_tokenize
      const CliResult ok = run_attnlab("row --image " + safari + " --patch " + std::to_string(fits) + " --edge pad --query 0,0", setup);
      EXPECT_EQ(ok.code, 0) << ok.err;
      EXPECT_LT(ok.peak_bytes, 768 * kMiB) << "K=" << fits;
    }
  }
}

// The same K from a sidecar (render --from): refused the same way, nothing written.
TEST(CliBudget, AHugePaddedPatchFromASidecarIsRefused) {
  const auto dir = temp_dir();
  const auto png = dir / "small.png";
  const CliResult made = run_attnlab("render --image " + shell_quoted(asset("safari.jpg")) +
                                     " --patch 50 --query 1,1 --size 320x240 --out " + shell_quoted(png));
  ASSERT_EQ(made.code, 0) << made.err;
  std::ifstream in(dir / "small.json");
  nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_GE(set_everywhere(j, "patch", 3000), 1);
  ASSERT_GE(set_everywhere(j, "edge", "pad"), 1);
  write_file(dir / "hostile.json", j.dump(2));
  const CliResult r =
      run_attnlab("render --from " + shell_quoted(dir / "hostile.json") + " --out " + shell_quoted(dir / "out.png"),
                  "export ATTNLAB_MEMORY_BUDGET_MB=256");
  expect_one_line_error(r, "memory budget");
  EXPECT_LT(r.peak_bytes, 256 * kMiB);
  EXPECT_FALSE(std::filesystem::exists(dir / "out.png"));
  EXPECT_FALSE(std::filesystem::exists(dir / "out.json"));
  std::filesystem::remove_all(dir);
}

// 393 KB: a [65536, 3, 1, 1] F16 patch embedding and one zero-length 'blocks.999.norm1.weight'.
// Before issue 38 the depth came from the largest block number (1000 blocks) and every missing
// bias and scale was allocated before check_complete: 3.9 GB resident. Now refused with the
// process's peak under 64 MB.
TEST(CliBudget, AHostileCheckpointIsRefusedBeforeAnythingIsAllocated) {
  const auto dir = temp_dir();
  const auto file = dir / "hostile.safetensors";
  const std::size_t patch_bytes = 65536ull * 3 * 2;
  nlohmann::json h;
  h["patch_embed.proj.weight"] = {{"dtype", "F16"}, {"shape", {65536, 3, 1, 1}}, {"data_offsets", {0, patch_bytes}}};
  h["blocks.999.norm1.weight"] = {{"dtype", "F16"}, {"shape", {0}}, {"data_offsets", {patch_bytes, patch_bytes}}};
  write_safetensors(file, h, patch_bytes);
  EXPECT_LT(std::filesystem::file_size(file), 400u * 1000);
  const CliResult r = run_attnlab("vit --info --model " + shell_quoted(file));
  expect_one_line_error(r, "block 0 is missing");
  EXPECT_LT(r.peak_bytes, refusal_peak_limit());

  // Blocks 0 … 999 all there by name, each a zero-length norm1 only: its shape is named before
  // anything is allocated (before: 1 000 blocks' biases and scales of 65 536 floats each).
  nlohmann::json all = {{"patch_embed.proj.weight", h["patch_embed.proj.weight"]}};
  for (int i = 0; i < 1000; ++i)
    all["blocks." + std::to_string(i) + ".norm1.weight"] = {
        {"dtype", "F16"}, {"shape", {0}}, {"data_offsets", {patch_bytes, patch_bytes}}};
  write_safetensors(file, all, patch_bytes);
  const CliResult r2 = run_attnlab("vit --info --model " + shell_quoted(file));
  expect_one_line_error(r2, "'blocks.0.norm1.weight' has shape [0], expected [65536]");
  EXPECT_LT(r2.peak_bytes, refusal_peak_limit());
  std::filesystem::remove_all(dir);
}

// A 6 MB header whose one tensor has 3 million dimensions of 1: parsed, it would take some
// 100 MB (a JSON value per number, then the shape); refused from its length first.
TEST(CliBudget, AHugeHeaderIsRefusedBeforeItIsParsed) {
  const auto dir = temp_dir();
  std::string shape = "[";
  for (int i = 0; i < 3'000'000; ++i) shape += i ? ",1" : "1";
  shape += "]";
  const std::string h = R"({"patch_embed.proj.weight":{"dtype":"F32","shape":)" + shape + R"(,"data_offsets":[0,4]}})";
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<char>((h.size() >> (8 * i)) & 0xff);
  write_file(dir / "wide.safetensors", bytes + h + std::string(4, '\0'));
  const CliResult r =
      run_attnlab("vit --info --model " + shell_quoted(dir / "wide.safetensors"), "export ATTNLAB_MEMORY_BUDGET_MB=1");
  expect_one_line_error(r, "memory budget");
  EXPECT_LT(r.peak_bytes, refusal_peak_limit());
  std::filesystem::remove_all(dir);
}

// A real (tiny) model within a tiny budget still loads: the budget has a floor for small work.
TEST(CliBudget, ASmallModelLoadsUnderATinyBudget) {
  const CliResult r = run_attnlab(
      "vit --info --model " + shell_quoted(std::filesystem::path(ATTNLAB_SOURCE_DIR) / "tests/vit/data/timm_f32"),
      "export ATTNLAB_MEMORY_BUDGET_MB=1");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("depth: "), std::string::npos) << r.out;
}

// render --out slide.png --force when slide.json cannot be written (a folder of that name):
// before issue 38 the old slide.png was deleted; now the pair is replaced together or not at all.
// Training a model far over the budget (D 4096, depth 64, MLP 16384: 13 billion parameters, 400 GiB
// with AdamW's moments) or a batch over it: one line before the data are read or the folder made,
// naming the batch that fits.
TEST(CliBudget, TrainingOverTheBudgetIsRefusedBeforeAnythingIsMade) {
  const auto dir = temp_dir();
  const auto out = dir / "run";
  const CliResult huge = run_attnlab("train --dim 4096 --mlp 16384 --depth 64 --heads 4 --steps 1 --out " + shell_quoted(out));
  expect_one_line_error(huge, "no batch fits");
  EXPECT_LT(huge.peak_bytes, refusal_peak_limit());
  const CliResult batch = run_attnlab("train --dim 512 --depth 12 --heads 8 --batch 4096 --steps 1 --out " + shell_quoted(out),
                                      "export ATTNLAB_MEMORY_BUDGET_MB=8192");
  expect_one_line_error(batch, "a batch of up to ");
  EXPECT_LT(batch.peak_bytes, refusal_peak_limit());
  EXPECT_FALSE(std::filesystem::exists(out));
  std::filesystem::remove_all(dir);
}

TEST(CliExport, ForceWithAnUnwritableSidecarKeepsTheOldPair) {
  const auto dir = temp_dir();
  const auto png = dir / "slide.png", json = dir / "slide.json";
  const std::string render = "render --image " + shell_quoted(asset("safari.jpg")) +
                             " --patch 50 --query 1,1 --size 320x240 --out " + shell_quoted(png);
  ASSERT_EQ(run_attnlab(render).code, 0);
  const std::string old_png = read_file(png);
  ASSERT_FALSE(old_png.empty());
  std::filesystem::remove(json);
  std::filesystem::create_directory(json);
  write_file(json / "notes.txt", "mine");
  const CliResult r = run_attnlab(render + " --query 2,2 --force");
  expect_one_line_error(r, "slide.json");
  EXPECT_EQ(read_file(png), old_png) << "the old PNG was replaced or removed";
  EXPECT_EQ(read_file(json / "notes.txt"), "mine");
  // No temporaries left beside them.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.path().filename().string()[0] == '.';
  EXPECT_EQ(files, 0);

  // Both files there and --force: both replaced, with the umask's mode (here 027: 0640).
  std::filesystem::remove_all(json);
  ASSERT_EQ(run_attnlab(render + " --force").code, 0);
  const std::string old_json = read_file(json);
  const CliResult again = run_attnlab(render + " --query 3,3 --force", "umask 027");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_NE(read_file(json), old_json);
  struct stat st {};
  ASSERT_EQ(::stat(png.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  std::filesystem::remove_all(dir);
}

// The second move of a pair fails after the first succeeded: the first is put back. Set up in a
// sticky folder (as /tmp is) where the unprivileged user 'nobody' owns slide.png but not
// slide.json: replacing slide.png works, moving root's slide.json aside is refused. Needs root
// (to hand the files to 'nobody').
TEST(CliExport, WhenTheSecondMoveFailsTheFirstIsPutBack) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the files to 'nobody'";
  const auto dir = temp_dir() / "sticky";
  std::filesystem::create_directories(dir);
  const auto png = dir / "slide.png", json = dir / "slide.json";
  const std::string render = "render --image " + shell_quoted(asset("safari.jpg")) +
                             " --patch 50 --query 1,1 --size 320x240 --out " + shell_quoted(png);
  ASSERT_EQ(run_attnlab(render).code, 0);
  const std::string old_png = read_file(png), old_json = read_file(json);
  ASSERT_EQ(::chmod(dir.c_str(), 01777), 0);
  ASSERT_EQ(::chown(png.c_str(), 65534, 65534), 0);
  const CliResult r =
      run_attnlab(render + " --query 2,2 --force", "", "setpriv --reuid=65534 --regid=65534 --clear-groups");
  expect_one_line_error(r, "slide.json");
  EXPECT_EQ(read_file(png), old_png) << "the first file was not put back";
  EXPECT_EQ(read_file(json), old_json);
  int hidden = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) hidden += e.path().filename().string()[0] == '.';
  EXPECT_EQ(hidden, 0) << "a temporary or a backup was left";
  std::filesystem::remove_all(dir);
}
