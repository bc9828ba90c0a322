// The command line as a user runs it, without a display: `attnlab row`, `render`, `figure`.
#include "core/base/colormap.hpp"
#include "core/io/image.hpp"
#include "core/hand_made/reference.hpp"
#include "core/io/safetensors.hpp"
#include "core/io/fashion_mnist.hpp"
#include "core/vit/relevance.hpp"
#include "core/vit/vit_cpu.hpp"
#include "core/vit/vit_run.hpp"
#include "command_support.hpp"
#include "test_support.hpp"
#include "vit/vit_golden.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>

using namespace attnlab;
using namespace attnlab::testing;

namespace {

struct CliRun {
  int code;
  std::string out, err;
};

// Runs attnlab with `args` (already shell-quoted) and no DISPLAY; captures stdout and stderr.
// `setup` runs first in the same shell (e.g. limits), `wrapper` goes before the program.
CliRun run_attnlab(const std::string& args, const std::string& setup = "", const std::string& wrapper = "") {
  const auto dir = std::filesystem::temp_directory_path();
  const auto out = dir / ("attnlab-cli-out-" + std::to_string(::getpid()));
  const auto err = dir / ("attnlab-cli-err-" + std::to_string(::getpid()));
  const std::string cmd = (setup.empty() ? "" : setup + "; ") + "env -u DISPLAY EGL_LOG_LEVEL=fatal " + wrapper + " '" +
                          std::string(ATTNLAB_BINARY) + "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  CliRun r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(out), read_file(err)};
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  // Debug builds print every GL error the driver reports (core/gpu/debug.hpp): each fails the test.
  EXPECT_EQ(r.err.find("attnlab: GL error:"), std::string::npos) << r.err;
  return r;
}

std::string safari_arg() { return "'" + asset("safari.jpg").string() + "'"; }

std::vector<std::vector<double>> parse_csv(const std::string& text) {
  std::vector<std::vector<double>> rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::vector<double> row;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) row.push_back(std::stod(cell));
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

TEST(CliRow, SafariColourRowIsTheGridOfTheReferenceRow) {
  const CliRun r = run_attnlab("row --image " + safari_arg() + " --patch 20 --query 12,8");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto rows = parse_csv(r.out);
  ASSERT_EQ(rows.size(), 25u);
  Settings s;
  s.patch = 20;
  const Reference ref(load_image(asset("safari.jpg")), s);
  const auto expect = ref.row(0, ref.grid().index(12, 8));
  double sum = 0;
  for (int row = 0; row < 25; ++row) {
    ASSERT_EQ(rows[row].size(), 25u);
    for (int col = 0; col < 25; ++col) {
      const double e = expect.weights[ref.grid().index(col, row)];
      EXPECT_NEAR(rows[row][col], e, 1e-4 * e) << col << "," << row;
      sum += rows[row][col];
    }
  }
  EXPECT_NEAR(sum, 1.0, 1e-5);
}

TEST(CliRow, OptionsReachTheMath) {
  const CliRun r = run_attnlab("row --image " + safari_arg() + " --patch 50 --query 3,4 --head position --mask causal --pos concat --temperature 0.5");
  ASSERT_EQ(r.code, 0) << r.err;
  Settings s{.patch = 50, .temperature = 0.5f, .mask = {.kind = MaskKind::Causal}, .pos = {.mode = PosMode::Concat}};
  const Reference ref(load_image(asset("safari.jpg")), s);
  const int i = ref.grid().index(3, 4);
  const auto expect = ref.row(static_cast<int>(HeadKind::Position), i);
  const auto rows = parse_csv(r.out);
  ASSERT_EQ(rows.size(), 10u);
  for (int j = 0; j < ref.N(); ++j) {
    const double got = rows[static_cast<size_t>(j / 10)][static_cast<size_t>(j % 10)];
    if (j > i) {
      EXPECT_EQ(got, 0.0) << "masked key " << j;
    }
    EXPECT_NEAR(got, expect.weights[j], 1e-4 * expect.weights[j] + 1e-7) << j;
  }
}

TEST(CliRow, BadArgumentsAreOneLineAndExitTwo) {
  expect_one_line_error(run_attnlab("row --image /no/such.png --patch 20 --query 1,1"), "no such file");
  expect_one_line_error(run_attnlab("row --image " + safari_arg() + " --patch 0 --query 1,1"), "--patch");
  expect_one_line_error(run_attnlab("row --image " + safari_arg() + " --patch 600 --query 0,0"), "larger than the image");
  expect_one_line_error(run_attnlab("row --image " + safari_arg() + " --patch 20 --query 25,0"), "outside");
  expect_one_line_error(run_attnlab("row --image " + safari_arg() + " --patch 20 --query x,1"), "--query");
  expect_one_line_error(run_attnlab("row --image " + safari_arg() + " --patch 20 --query 1,1 --temperature 0"), "--temperature");
  expect_one_line_error(run_attnlab("row --image " + safari_arg() + " --patch 20 --query 1,1 --head colr"), "unknown head");
  expect_one_line_error(run_attnlab("row --image " + safari_arg() + " --patch 20 --query 1,1 --mask diagonal"), "unknown mask");
  expect_one_line_error(run_attnlab("row --image " + safari_arg() + " --patch 20"), "--query");
  expect_one_line_error(run_attnlab("frobnicate --now"), "unknown command");
  // An argument with a line break (found by fuzz_cli_args) is quoted with the break as \n.
  expect_one_line_error(run_attnlab("row --image " + safari_arg() + " --patch 20 --query 1,1 --mask \"$(printf 'diag\\nonal')\""),
                        "diag\\nonal");
  const CliRun help = run_attnlab("--help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("colour+position"), std::string::npos);
  EXPECT_NE(run_attnlab("--version").out.find("attnlab "), std::string::npos);
}

TEST(CliRender, MapViewDrawsTheRowWhereThePatchesAre) {
  const auto dir = temp_dir();
  const auto png = dir / "map.png";
  const CliRun r = run_attnlab("render --image " + safari_arg() + " --patch 20 --query 12,8 --colormap gray --opacity 1 --size 1000x800 --out '" +
                        png.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const Image shot = load_image(png);
  EXPECT_EQ(shot.width, 1000);
  EXPECT_EQ(shot.height, 800);
  const auto j = read_json(dir / "map.json");
  EXPECT_EQ(j.at("render").at("view"), "map");
  EXPECT_EQ(j.at("hand_made").at("cell").at("col"), 12);
  const float x = j.at("image_view").at("x"), y = j.at("image_view").at("y"), scale = j.at("image_view").at("scale");
  // The query outline (cyan) runs along the query patch's border.
  const int ox = static_cast<int>(x + 250.0f * scale), oy = static_cast<int>(y + 160.0f * scale);
  EXPECT_NEAR(shot.at(ox, oy, 0), 0.0f, 0.05f);
  EXPECT_NEAR(shot.at(ox, oy, 1), 1.0f, 0.05f);
  EXPECT_NEAR(shot.at(ox, oy, 2), 1.0f, 0.05f);
  // Every other patch's grey level is its weight, normalized min–max: the brightest patches
  // are the row's largest weights.
  Settings s;
  s.patch = 20;
  const Reference ref(load_image(asset("safari.jpg")), s);
  const int i = ref.grid().index(12, 8);
  EXPECT_LT(drawn_grey_map_error(shot, x, y, scale, ref, i), 0.02);
}

TEST(CliRender, EveryViewRendersAtTheSizeAsked) {
  const auto dir = temp_dir();
  for (const std::string view : {"map", "heads", "tokenization", "question", "step", "output", "permutation", "matrix", "positional", "cost"}) {
    const auto png = dir / (view + ".png");
    const CliRun r = run_attnlab("render --image " + safari_arg() + " --patch 16 --query 9,7 --view " + view + " --size 900x700 --out '" +
                          png.string() + "'");
    ASSERT_EQ(r.code, 0) << view << ": " << r.err;
    const Image shot = load_image(png);
    EXPECT_EQ(shot.width, 900) << view;
    EXPECT_EQ(shot.height, 700) << view;
    EXPECT_EQ(read_json(dir / (view + ".json")).at("render").at("view"), view);
    // Work a view does over several frames or on a worker thread (the permutation view's T_out,
    // the matrix view's fc picture) is finished before the picture is taken.
    EXPECT_TRUE(read_json(dir / (view + ".json")).at("render").at("finished").get<bool>()) << view;
  }
}

TEST(CliRender, MatrixViewAtSixteenThousandTokensNeverHoldsNxN) {
  // Issue 19's acceptance: the matrix view at K = 4 on a 512 × 512 image (N = 16 384, so A has
  // N² floats = 1 GiB) draws its picture, pooled on the GPU a band per frame, and the process's
  // peak resident memory stays under half of that (it was about 150 MiB when written).
  const auto dir = temp_dir();
  const Image img = random_image(512, 512, 3);
  std::vector<std::uint8_t> px(img.rgb.size());
  for (size_t t = 0; t < px.size(); ++t) px[t] = static_cast<std::uint8_t>(img.rgb[t] * 255.0f);
  write_png(dir / "big.png", 512, 512, 3, px);
  // In the sanitized tree, AddressSanitizer keeps up to 256 MiB of freed memory (its quarantine)
  // resident: held to 16 MiB here so that the peak is the program's own (no effect otherwise).
  const CliRun r = run_attnlab("render --image '" + (dir / "big.png").string() + "' --patch 4 --query 60,60 --view matrix --size 1000x800 --out '" +
                                   (dir / "m.png").string() + "'",
                               "export ASAN_OPTIONS=\"${ASAN_OPTIONS}:quarantine_size_mb=16\"");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = read_json(dir / "m.json");
  EXPECT_EQ(j.at("grid").at("N"), 16384);
  EXPECT_TRUE(j.at("render").at("finished").get<bool>());
  // ru_maxrss of the children waited for (the shell, env and attnlab), in KiB: the largest.
  rusage usage{};
  ASSERT_EQ(getrusage(RUSAGE_CHILDREN, &usage), 0);
  const long long peak_mib = usage.ru_maxrss / 1024, nxn_mib = 16384ll * 16384 * 4 >> 20;
  std::printf("render of the matrix view at N = 16384: peak resident %lld MiB (A would be %lld MiB)\n", peak_mib, nxn_mib);
  EXPECT_LT(peak_mib, nxn_mib / 2);
}

TEST(CliRender, FromSidecarGivesTheSamePixels) {
  const auto dir = temp_dir();
  const CliRun first = run_attnlab("render --image " + safari_arg() + " --patch 16 --query 20,18 --head texture --mask window:3 --pos concat --view heads --size 800x600 --out '" +
                            (dir / "a.png").string() + "'");
  ASSERT_EQ(first.code, 0) << first.err;
  const CliRun again = run_attnlab("render --from '" + (dir / "a.json").string() + "' --out '" + (dir / "b.png").string() + "'");
  ASSERT_EQ(again.code, 0) << again.err;
  const Image a = load_image(dir / "a.png"), b = load_image(dir / "b.png");
  ASSERT_EQ(a.width, b.width);
  ASSERT_EQ(a.height, b.height);
  EXPECT_EQ(a.rgb, b.rgb);
  const auto ja = read_json(dir / "a.json"), jb = read_json(dir / "b.json");
  EXPECT_EQ(ja.at("mask"), jb.at("mask"));
  EXPECT_EQ(ja.at("hand_made").at("head"), static_cast<int>(HeadKind::Texture));

  // Edited sidecars with values their fields cannot hold: one line each, nothing written
  // (a seed of 10^46 was a float-to-int overflow in the JSON library, found by fuzz_cli_args).
  const std::vector<std::pair<std::string, nlohmann::json>> bad = {
      {"seed", nlohmann::json::parse("1e46")}, {"patch", 16.5}, {"temperature", "hot"}, {"seed", -1}};
  for (const auto& [key, value] : bad) {
    nlohmann::json edited = ja;
    edited[key] = value;
    write_file(dir / "edited.json", edited.dump());
    expect_one_line_error(run_attnlab("render --from '" + (dir / "edited.json").string() + "' --out '" + (dir / "c.png").string() + "'"),
                          "'" + key + "'");
    EXPECT_FALSE(std::filesystem::exists(dir / "c.png")) << key;
  }
  EXPECT_EQ(jb.at("hand_made").at("head"), static_cast<int>(HeadKind::Texture));
}

TEST(CliRender, NeverOverwritesAndLeavesNothingOnErrors) {
  const auto dir = temp_dir();
  const auto png = dir / "slide.png";
  const std::string base = "render --image " + safari_arg() + " --patch 20 --query 12,8 --size 300x200 --out '" + png.string() + "'";
  ASSERT_EQ(run_attnlab(base).code, 0);
  const std::string before = read_file(png);
  expect_one_line_error(run_attnlab(base + " --view heads"), "exists");
  EXPECT_EQ(read_file(png), before);
  EXPECT_EQ(run_attnlab(base + " --view heads --force").code, 0);
  EXPECT_NE(read_file(png), before);
  expect_one_line_error(run_attnlab("render --image " + safari_arg() + " --patch 20 --query 12,8 --out '" + (dir / "no" / "x.png").string() + "'"),
                        "does not exist");
  expect_one_line_error(run_attnlab("render --image " + safari_arg() + " --patch 20 --query 12,8 --view nothing --out '" + (dir / "v.png").string() + "'"),
                        "unknown view");
  expect_one_line_error(run_attnlab("render --image " + safari_arg() + " --patch 20 --query 12,8 --size 10x10 --out '" + (dir / "s.png").string() + "'"),
                        "--size");
  EXPECT_FALSE(std::filesystem::exists(dir / "v.png"));
  EXPECT_FALSE(std::filesystem::exists(dir / "v.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "no"));
  for (const auto& e : std::filesystem::directory_iterator(dir))  // no temporary left behind
    EXPECT_EQ(e.path().filename().string().find(".png."), std::string::npos) << e.path();
}

TEST(CliRender, AReadOnlyFolderIsRefusedAndLeftAlone) {
  const auto dir = temp_dir() / "ro";
  std::filesystem::create_directories(dir);
  using std::filesystem::perms;
  std::filesystem::permissions(dir, perms::owner_read | perms::owner_exec | perms::group_read | perms::group_exec |
                                        perms::others_read | perms::others_exec);
  // Root writes into read-only folders anyway: run as the unprivileged user 'nobody' then.
  const std::string as_user = ::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups" : "";
  const CliRun r = run_attnlab("render --image " + safari_arg() + " --patch 20 --query 12,8 --out '" + (dir / "x.png").string() + "'",
                               "", as_user);
  expect_one_line_error(r, "read-only");
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(CliRender, AFullDiskLeavesNothingAndKeepsWhatWasThere) {
  // A full disk, simulated: files may grow to 64 KiB only (ulimit -f), and the signal for
  // going over is ignored, so write() fails as it does on a full disk and the file stays small.
  const auto dir = temp_dir();
  const auto png = dir / "slide.png";
  const std::string render = "render --image " + safari_arg() + " --patch 20 --query 12,8 --size 800x600 --out '" + png.string() + "'";
  const std::string full = "trap '' XFSZ; ulimit -f 64";
  expect_one_line_error(run_attnlab(render, full), "nothing was written");
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "a partial file or a temporary was left";

  // Replacing an export (--force) on a full disk keeps the old one whole.
  ASSERT_EQ(run_attnlab(render).code, 0);
  const std::string before_png = read_file(png), before_json = read_file(dir / "slide.json");
  ASSERT_GT(before_png.size(), 64u * 1024);
  expect_one_line_error(run_attnlab(render + " --view heads --force", full), "nothing was written");
  EXPECT_EQ(read_file(png), before_png);
  EXPECT_EQ(read_file(dir / "slide.json"), before_json);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 2);
}

TEST(CliFigure, ThreeQueriesOnTheSafariLikeFig26_12) {
  const auto dir = temp_dir();
  const auto png = dir / "f.png";
  const CliRun r = run_attnlab("figure --image " + safari_arg() + " --patch 20 --queries '12,8;18,16;5,20' --out '" + png.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = read_json(dir / "f.json");
  const int panel = j.at("figure").at("panel"), gap = j.at("figure").at("gap");
  const Image shot = load_image(png);
  EXPECT_EQ(shot.width, 5 * panel + 6 * gap);
  EXPECT_EQ(shot.height, j.at("figure").at("height").get<int>());
  // Each map's query outline is cyan on the top edge of its patch.
  const int queries[3][2] = {{12, 8}, {18, 16}, {5, 20}};
  const float scale = static_cast<float>(panel) / 500.0f;
  for (int k = 0; k < 3; ++k) {
    const int px = gap + (k + 2) * (panel + gap) + static_cast<int>(static_cast<float>(queries[k][0] * 20 + 10) * scale);
    const int py = gap + static_cast<int>(std::lround(static_cast<float>(queries[k][1] * 20) * scale));
    EXPECT_LT(shot.at(px, py, 0), 0.1f) << k;
    EXPECT_GT(shot.at(px, py, 1), 0.9f) << k;
    EXPECT_GT(shot.at(px, py, 2), 0.9f) << k;
  }
  expect_one_line_error(run_attnlab("figure --image " + safari_arg() + " --patch 20 --queries '12,8;30,1' --out '" + (dir / "g.png").string() + "'"),
                        "outside");
  EXPECT_FALSE(std::filesystem::exists(dir / "g.png"));
}

// `attnlab vit` on the test checkpoints of tests/vit/ (PyTorch golden files), GPU and Eigen.
namespace {

std::string quoted(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

// One line of `attnlab vit --top`: "index,label,probability" for class c with probability p.
void expect_top_line(const std::string& line, std::size_t c, const std::string& label, double p, double tolerance) {
  const std::string head = std::to_string(c) + "," + label + ",";
  ASSERT_EQ(line.rfind(head, 0), 0u) << line;
  EXPECT_NEAR(std::stod(line.substr(head.size())), p, tolerance) << line;
}

std::string vit_args(const VitGolden& g) {
  std::string a = "vit --model " + quoted(g.model_dir) + " --image " + quoted(g.image);
  for (const auto& s : g.args) a += " " + s;
  return a;
}

const VitGolden& golden(const std::string& name) {
  static const auto all = vit_goldens();
  for (const auto& g : all)
    if (g.name == name) return g;
  throw std::runtime_error("no golden file " + name);
}

}  // namespace

TEST(CliVit, InfoSaysTheArchitecture) {
  const CliRun r = run_attnlab("vit --model " + quoted(vit_data_dir() / "timm_reg_ls_f16" / "model.safetensors") + " --heads 4 --info");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* line : {"naming: timm\n", "depth: 2\n", "heads: 4 (--heads)\n", "D: 64\n", "patch: 8\n", "prefix tokens: 3\n",
                           "registers: 2\n", "layer scale: yes\n", "qkv bias: no\n", "parameters: 113536\n", "dtype: F16\n",
                           "position grid: 4x4 (patches only)\n"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " in\n" << r.out;
  const CliRun hf = run_attnlab("vit --model " + quoted(vit_data_dir() / "hf_cls_f32") + " --image " +
                                quoted(vit_data_dir() / "safari_61x45.png") + " --info");
  ASSERT_EQ(hf.code, 0) << hf.err;
  for (const char* line : {"naming: hf\n", "heads: 6 (config.json)\n", "classes: 3 (cls token)\n", "mean: 0.5,0.5,0.5\n",
                           "input: 56x40\n", "grid: 7x5\n", "tokens: 36\n"})
    EXPECT_NE(hf.out.find(line), std::string::npos) << line << " in\n" << hf.out;
}

// Issue 36, item 4: a PyTorch checkpoint (.pth, a folder with pytorch_model.bin, DINO's
// release format) gives the same rows as its safetensors twin on the safari photo; a hostile
// one is one line and exit 2, nothing run.
TEST(CliVit, PytorchCheckpointsGiveTheRowsOfTheirSafetensorsTwins) {
  const auto pth = vit_data_dir() / "pth";
  struct Case {
    std::filesystem::path torch_file, twin;
    const char* options;
  };
  for (const Case& c : {Case{pth / "timm_f32" / "timm_f32.pth", vit_data_dir() / "timm_f32", ""},
                        Case{pth / "dino_f16" / "checkpoint.pth", vit_data_dir() / "timm_reg_ls_f16", " --heads 4"},
                        Case{pth / "hf_bf16", vit_data_dir() / "hf_model_bf16", ""}}) {
    SCOPED_TRACE(c.torch_file.string());
    for (const std::string readout : {"", " --layer 0 --head 1 --query 2,3", " --rollout mean", " --distance"}) {
      const std::string args = " --image " + safari_arg() + " --resize 48 --backend cpu" + std::string(c.options) + readout;
      const CliRun a = run_attnlab("vit --model " + quoted(c.torch_file) + args);
      const CliRun b = run_attnlab("vit --model " + quoted(c.twin) + args);
      ASSERT_EQ(a.code, 0) << a.err;
      ASSERT_EQ(b.code, 0) << b.err;
      EXPECT_FALSE(a.out.empty());
      EXPECT_EQ(a.out, b.out) << readout;
    }
  }
  const auto hostile = pth / "hostile" / "os_system.pth";
  const CliRun r = run_attnlab("vit --model " + quoted(hostile) + " --image " + safari_arg());
  expect_one_line_error(r, hostile.string() + ": the pickle names the global 'os.system'");
}

TEST(CliVit, RowsRolloutDistanceAndTopMatchPyTorchOnGpuAndCpu) {
  for (const char* name : {"timm_f32__safari_61x45", "timm_reg_ls_f16__safari_48x48", "hf_cls_f32__safari_48x48",
                           "dinov2_reg_f32__safari_32x32", "hf_model_bf16__safari_61x45", "timm_reg_bf16__safari_61x45"}) {
    const VitGolden& g = golden(name);
    SCOPED_TRACE(name);
    const int cols = g.json.at("grid").at(0), rows = g.json.at("grid").at(1), T = g.json.at("T");
    const int prefix = T - cols * rows, depth = static_cast<int>(g.json.at("attention").size());
    const int heads = static_cast<int>(g.json.at("attention").at(0).size());
    for (const char* backend : {"gpu", "cpu"}) {
      SCOPED_TRACE(backend);
      const std::string base = vit_args(g) + " --backend " + backend;
      // The path asked for is the path that ran (no silent fallback).
      const CliRun info = run_attnlab(base + " --info");
      ASSERT_EQ(info.code, 0) << info.err;
      EXPECT_NE(info.out.find(std::string("\nbackend: ") + backend + " (" + backend + ": asked for"), std::string::npos) << info.out;
      // Default: last layer, the heads' mean, the cls query; then head 1 of layer 0 for patch (2,1).
      const CliRun mean = run_attnlab(base);
      ASSERT_EQ(mean.code, 0) << mean.err;
      const CliRun one = run_attnlab(base + " --layer 0 --head 1 --query 2,1");
      ASSERT_EQ(one.code, 0) << one.err;
      const CliRun roll = run_attnlab(base + " --rollout max --query 1,3");
      ASSERT_EQ(roll.code, 0) << roll.err;
      const auto m = parse_csv(mean.out), o = parse_csv(one.out), r = parse_csv(roll.out);
      ASSERT_EQ(m.size(), static_cast<std::size_t>(rows));
      ASSERT_EQ(o.size(), static_cast<std::size_t>(rows));
      ASSERT_EQ(r.size(), static_cast<std::size_t>(rows));
      const Matrix R = g.rollout("max", depth - 1);
      for (int y = 0; y < rows; ++y) {
        ASSERT_EQ(m[static_cast<std::size_t>(y)].size(), static_cast<std::size_t>(cols));
        for (int x = 0; x < cols; ++x) {
          const int j = prefix + y * cols + x;
          double want = 0;
          for (int h = 0; h < heads; ++h) want += g.attention(depth - 1, h)(0, j);
          want /= heads;
          EXPECT_NEAR(m[static_cast<std::size_t>(y)][static_cast<std::size_t>(x)], want, 2e-4 + 1e-3 * want);
          const double w1 = g.attention(0, 1)(prefix + 1 * cols + 2, j);
          EXPECT_NEAR(o[static_cast<std::size_t>(y)][static_cast<std::size_t>(x)], w1, 2e-4 + 1e-3 * w1);
          const double wr = R(prefix + 3 * cols + 1, j);
          EXPECT_NEAR(r[static_cast<std::size_t>(y)][static_cast<std::size_t>(x)], wr, 2e-4 + 1e-3 * wr);
        }
      }
      const CliRun dist = run_attnlab(base + " --distance");
      ASSERT_EQ(dist.code, 0) << dist.err;
      const auto d = parse_csv(dist.out);
      ASSERT_EQ(d.size(), static_cast<std::size_t>(depth));
      for (int l = 0; l < depth; ++l) {
        ASSERT_EQ(d[static_cast<std::size_t>(l)].size(), static_cast<std::size_t>(heads));
        for (int h = 0; h < heads; ++h)
          EXPECT_NEAR(d[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)],
                      g.json.at("distance").at(static_cast<std::size_t>(l)).at(static_cast<std::size_t>(h)).get<double>(), 1e-2);
      }
      if (!g.json.contains("logits")) {
        expect_one_line_error(run_attnlab(base + " --top 2"), "no classifier");
        continue;
      }
      const CliRun top = run_attnlab(base + " --top 2");
      ASSERT_EQ(top.code, 0) << top.err;
      const auto probs = g.json.at("probabilities").get<std::vector<double>>();
      const auto labels = g.json.at("labels").get<std::vector<std::string>>();
      std::vector<int> order(probs.size());
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](int a, int b) { return probs[static_cast<std::size_t>(a)] > probs[static_cast<std::size_t>(b)]; });
      std::istringstream lines(top.out);
      for (int k = 0; k < 2; ++k) {
        std::string line;
        ASSERT_TRUE(std::getline(lines, line)) << top.out;
        const auto c = static_cast<std::size_t>(order[static_cast<std::size_t>(k)]);
        expect_top_line(line, c, labels[c], probs[c], 1e-4);
      }
    }
  }
}

// Issue 48: `vit --norms [--layer L]` prints ||z_l[t]||_2 of each patch token leaving block L
// (before the final LayerNorm) in the grid's layout, against the independent PyTorch forward's
// norms (tests/vit/make_golden.py), on models without registers and with 1, 2 and 4.
TEST(CliVit, NormsMatchPyTorchWithAndWithoutRegisters) {
  for (const char* name : {"timm_f32__safari_61x45", "hf_cls_f32__safari_44x20", "timm_reg_bf16__safari_61x45",
                           "timm_reg_ls_f16__safari_48x48", "dinov2_reg_f32__safari_32x32"}) {
    const VitGolden& g = golden(name);
    SCOPED_TRACE(name);
    const int cols = g.json.at("grid").at(0), rows = g.json.at("grid").at(1), T = g.json.at("T");
    const int prefix = T - cols * rows, depth = static_cast<int>(g.json.at("norms").size());
    for (const char* backend : {"gpu", "cpu"})
      for (const int layer : {depth - 1, 0}) {
        SCOPED_TRACE(std::string(backend) + " layer " + std::to_string(layer));
        const CliRun run = run_attnlab(vit_args(g) + " --backend " + backend + " --norms" +
                                       (layer == depth - 1 ? std::string() : " --layer " + std::to_string(layer)));
        ASSERT_EQ(run.code, 0) << run.err;
        const auto n = parse_csv(run.out);
        ASSERT_EQ(n.size(), static_cast<std::size_t>(rows)) << run.out;
        const auto& want = g.json.at("norms").at(static_cast<std::size_t>(layer));
        for (int y = 0; y < rows; ++y) {
          ASSERT_EQ(n[static_cast<std::size_t>(y)].size(), static_cast<std::size_t>(cols)) << run.out;
          for (int x = 0; x < cols; ++x) {
            const double w = want.at(static_cast<std::size_t>(prefix + y * cols + x)).get<double>();
            EXPECT_NEAR(n[static_cast<std::size_t>(y)][static_cast<std::size_t>(x)], w, 1e-4 * w) << "patch (" << x << "," << y << ")";
          }
        }
      }
  }
  const VitGolden& g = golden("timm_f32__safari_61x45");
  expect_one_line_error(run_attnlab(vit_args(g) + " --norms --distance"), "one of");
  expect_one_line_error(run_attnlab(vit_args(g) + " --norms --layer 3"), "layer");
}

// Issue 49: `vit --relevance CLASS|top [--method NAME]` prints the class-relevance map in the
// grid's layout and `vit --receptive-field --layer L --query C,R` the effective receptive field,
// one line per row of input pixels, as PyTorch autograd gives them
// (tests/vit/make_relevance_golden.py); the class by index, by label and as top.
TEST(CliVit, RelevanceAndReceptiveFieldMatchPyTorchAutograd) {
  const auto dir = vit_data_dir() / "relevance" / "golden";
  auto expect_csv = [](const std::string& out, const nlohmann::json& want, int cols, int rows) {
    const auto got = parse_csv(out);
    ASSERT_EQ(got.size(), static_cast<std::size_t>(rows)) << out;
    double peak = 0.0;
    for (const auto& w : want) peak = std::max(peak, std::abs(w.get<double>()));
    for (int y = 0; y < rows; ++y) {
      ASSERT_EQ(got[static_cast<std::size_t>(y)].size(), static_cast<std::size_t>(cols)) << out;
      for (int x = 0; x < cols; ++x) {
        const double w = want.at(static_cast<std::size_t>(y * cols + x)).get<double>();
        EXPECT_NEAR(got[static_cast<std::size_t>(y)][static_cast<std::size_t>(x)], w, 1e-4 * peak + 1e-3 * std::abs(w)) << x << "," << y;
      }
    }
  };
  for (const char* name : {"timm_f32__safari_61x45", "hf_cls_f32__safari_32x32", "timm_reg_avg_f32__safari_61x45",
                           "dinov2_reg_f32__safari_61x45"}) {
    SCOPED_TRACE(name);
    const nlohmann::json g = read_json(dir / (std::string(name) + ".json"));
    const std::filesystem::path root = ATTNLAB_SOURCE_DIR;
    std::string base = "vit --model " + quoted(root / g.at("model").get<std::string>()) + " --image " +
                       quoted(root / g.at("image").get<std::string>());
    for (const auto& a : g.at("args")) base += " " + a.get<std::string>();
    const int cols = g.at("grid").at(0), rows = g.at("grid").at(1);
    if (g.contains("relevance")) {
      const int top = g.at("classes").at(0), other = g.at("classes").at(1);
      const CliRun chefer = run_attnlab(base + " --relevance top");  // chefer is the default
      ASSERT_EQ(chefer.code, 0) << chefer.err;
      expect_csv(chefer.out, g.at("relevance").at(std::to_string(top)).at("chefer"), cols, rows);
      for (const char* method : {"attention", "rollout", "grad-rollout", "input-gradient"}) {
        SCOPED_TRACE(method);
        const CliRun r = run_attnlab(base + " --relevance " + std::to_string(other) + " --method " + method);
        ASSERT_EQ(r.code, 0) << r.err;
        expect_csv(r.out, g.at("relevance").at(std::to_string(other)).at(method), cols, rows);
      }
    } else {
      expect_one_line_error(run_attnlab(base + " --relevance top"), "no classifier");
    }
    for (const auto& f : g.at("receptive_field")) {
      const CliRun r = run_attnlab(base + " --receptive-field --layer " + std::to_string(f.at("layer").get<int>()) + " --query " +
                                   std::to_string(f.at("col").get<int>()) + "," + std::to_string(f.at("row").get<int>()));
      ASSERT_EQ(r.code, 0) << r.err;
      expect_csv(r.out, f.at("map"), g.at("input").at(0), g.at("input").at(1));
    }
  }
  // The class by its label (timm_f32's labels: cat, dog, giraffe, zebra, grass), and refusals.
  const VitGolden& g = golden("timm_f32__safari_61x45");
  const CliRun by_index = run_attnlab(vit_args(g) + " --relevance 3 --method grad-rollout");
  const CliRun by_label = run_attnlab(vit_args(g) + " --relevance Zebra --method grad-rollout");
  ASSERT_EQ(by_label.code, 0) << by_label.err;
  EXPECT_EQ(by_label.out, by_index.out);
  expect_one_line_error(run_attnlab(vit_args(g) + " --relevance okapi"), "no class is named 'okapi'");
  expect_one_line_error(run_attnlab(vit_args(g) + " --relevance 5"), "outside 0…4");
  expect_one_line_error(run_attnlab(vit_args(g) + " --relevance top --method gradcam"), "--method must be one of");
  expect_one_line_error(run_attnlab(vit_args(g) + " --method chefer"), "--method goes with --relevance");
  expect_one_line_error(run_attnlab(vit_args(g) + " --relevance top --norms"), "one of");
  expect_one_line_error(run_attnlab(vit_args(g) + " --receptive-field --layer 3"), "layer");
  // The whole photo (2853 tokens): its forward fits 64 MiB, its gradient pass (every layer's A and
  // ∂y/∂A) does not: refused before anything is allocated, naming a size that fits.
  const std::string photo = "vit --model " + quoted(g.model_dir) + " --image " + safari_arg() + " --relevance top";
  expect_one_line_error(run_attnlab(photo, "export ATTNLAB_MEMORY_BUDGET_MB=64"), "the gradient pass would need");
  expect_one_line_error(run_attnlab(photo, "export ATTNLAB_MEMORY_BUDGET_MB=64"), "use --resize");
}

// Issue 49: `render --model M --view vit-relevance [--class C] [--method NAME]` draws the
// relevance view: its map is `vit --relevance`'s, its curves those of the class on this image;
// `--view vit-erf` the receptive field `vit --receptive-field` prints. A model without a
// classifier is refused in one line.
TEST(CliRender, RelevanceAndReceptiveFieldViewsDrawWhatVitPrints) {
  const auto dir = temp_dir();
  const std::filesystem::path root = ATTNLAB_SOURCE_DIR;
  const VitGolden& g = golden("timm_f32__safari_61x45");
  const std::string model = " --model " + quoted(g.model_dir) + " --image " + quoted(g.image) + " --resize 45";
  const auto png = dir / "relevance.png";
  const CliRun r = run_attnlab("render" + model + " --view vit-relevance --class zebra --method grad-rollout --beside chefer --size 900x500 --out " + quoted(png));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json drawn = read_json(std::filesystem::path(png).replace_extension(".json")).at("relevance_drawn");
  EXPECT_EQ(drawn.at("class"), 3);
  EXPECT_EQ(drawn.at("label"), "zebra");
  EXPECT_EQ(drawn.at("method"), "grad-rollout");
  // `attnlab vit --relevance` of the same class and method, in raster order; a drawn map against it.
  auto printed_map = [&](const std::string& flags) {
    const CliRun printed = run_attnlab(vit_args(g) + " --resize 45 " + flags);
    EXPECT_EQ(printed.code, 0) << printed.err;
    std::vector<double> out;
    for (const auto& row : parse_csv(printed.out)) out.insert(out.end(), row.begin(), row.end());
    return out;
  };
  auto expect_map = [](const nlohmann::json& drawn_values, const std::vector<double>& want) {
    const auto got = drawn_values.get<std::vector<double>>();
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6 + 1e-5 * std::abs(want[i])) << i;
  };
  expect_map(drawn.at("map"), printed_map("--relevance 3 --method grad-rollout"));
  const auto map = drawn.at("map").get<std::vector<double>>();
  const auto deletion = drawn.at("deletion").get<std::vector<double>>(), insertion = drawn.at("insertion").get<std::vector<double>>();
  ASSERT_EQ(deletion.size(), 11u);
  EXPECT_NEAR(deletion.front(), insertion.back(), 1e-9);  // both the whole image
  EXPECT_NEAR(deletion.back(), insertion.front(), 1e-9);  // both the mean-colour image
  // The second method beside the first: its own map, as vit prints it, and its own curves.
  const nlohmann::json& beside = drawn.at("beside");
  EXPECT_EQ(beside.at("method"), "chefer");
  const std::vector<double> chefer = printed_map("--relevance zebra --method chefer");
  expect_map(beside.at("map"), chefer);
  EXPECT_NE(beside.at("map").get<std::vector<double>>(), map) << "two methods drew the same map";
  EXPECT_EQ(beside.at("deletion").get<std::vector<double>>().front(), deletion.front());  // the whole image either way
  EXPECT_NE(beside.at("deletion").get<std::vector<double>>(), deletion);
  // The same relevance on the main map (--relevance-on-map), in place of a row of A.
  const auto on_map = dir / "on_map.png";
  const CliRun m = run_attnlab("render" + model + " --view map --class zebra --method chefer --relevance-on-map --out " + quoted(on_map));
  ASSERT_EQ(m.code, 0) << m.err;
  const nlohmann::json main = read_json(std::filesystem::path(on_map).replace_extension(".json")).at("vit_drawn");
  EXPECT_EQ(main.at("shows"), "relevance");
  EXPECT_NE(main.at("legend").get<std::string>().find("relevance of 'zebra' by chefer"), std::string::npos) << main.at("legend");
  expect_map(main.at("values"), chefer);
  // Through Compare: both halves draw their model's relevance (here the same model twice).
  const auto pair = dir / "pair.png";
  const CliRun p = run_attnlab("render" + model + " --compare " + quoted(g.model_dir) +
                               " --view map --class zebra --method chefer --relevance-on-map --out " + quoted(pair));
  ASSERT_EQ(p.code, 0) << p.err;
  const nlohmann::json both = read_json(std::filesystem::path(pair).replace_extension(".json"));
  EXPECT_EQ(both.at("vit_drawn").at("shows"), "relevance");
  EXPECT_EQ(both.at("compare").at("vit_drawn").at("shows"), "relevance");
  EXPECT_EQ(both.at("vit_drawn").at("values"), main.at("values"));
  EXPECT_EQ(both.at("compare").at("vit_drawn").at("values"), main.at("values"));
  // The receptive field of patch (3,2) after layer 1.
  const auto erf = dir / "erf.png";
  const CliRun f = run_attnlab("render" + model + " --view vit-erf --layer 1 --query 3,2 --size 700x500 --out " + quoted(erf));
  ASSERT_EQ(f.code, 0) << f.err;
  const nlohmann::json field = read_json(std::filesystem::path(erf).replace_extension(".json")).at("field_drawn");
  const CliRun field_printed = run_attnlab(vit_args(g) + " --resize 45 --receptive-field --layer 1 --query 3,2");
  ASSERT_EQ(field_printed.code, 0) << field_printed.err;
  double sum = 0.0;
  std::size_t rows = 0, cols = 0;
  for (const auto& row : parse_csv(field_printed.out)) {
    ++rows;
    cols = row.size();
    for (const double v : row) sum += v;
  }
  EXPECT_EQ(field.at("width").get<std::size_t>(), cols);
  EXPECT_EQ(field.at("height").get<std::size_t>(), rows);
  EXPECT_NEAR(field.at("sum").get<double>(), sum, 1e-4 * sum);
  EXPECT_EQ(field.at("layer"), 1);
  // Refusals: no classifier, a class the model does not have, a method that does not exist.
  const std::string dino = " --model " + quoted(vit_data_dir() / "dinov2_reg_f32") + " --image " + quoted(g.image);
  expect_one_line_error(run_attnlab("render" + dino + " --view vit-relevance --out " + quoted(dir / "no.png")), "no classifier");
  expect_one_line_error(run_attnlab("render" + model + " --view vit-relevance --class okapi --out " + quoted(dir / "no.png")),
                        "no class is named 'okapi'");
  expect_one_line_error(run_attnlab("render" + model + " --view vit-relevance --method gradcam --out " + quoted(dir / "no.png")),
                        "unknown relevance method 'gradcam'");
  expect_one_line_error(run_attnlab("render" + model + " --view vit-relevance --beside gradcam --out " + quoted(dir / "no.png")),
                        "unknown relevance method 'gradcam'");
  EXPECT_FALSE(std::filesystem::exists(dir / "no.png"));
}

// Issue 49: `attnlab explain` writes the faithfulness table (method,deletion_auc,insertion_auc,images,
// random last) over Fashion-MNIST or a folder, with a progress line; never over a file without
// --force; refusals in one line.
TEST(CliExplain, WritesTheFaithfulnessTableOverFashionMnistAndAFolder) {
  const auto dir = temp_dir();
  const std::string model = " --model " + quoted(std::filesystem::path(ATTNLAB_SOURCE_DIR) / "assets" / "fashion_vit");
  const auto out = dir / "faith.csv";
  const CliRun r = run_attnlab("explain" + model + " --images fashion --count 12 --methods chefer,attention --out " + quoted(out));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("explain: 12/12 images"), std::string::npos) << r.err;
  std::istringstream lines(read_file(out));
  std::string line;
  ASSERT_TRUE(std::getline(lines, line));
  EXPECT_EQ(line, "method,deletion_auc,insertion_auc,images");
  std::vector<std::string> methods;
  std::map<std::string, std::pair<double, double>> auc;
  while (std::getline(lines, line)) {
    std::istringstream cells(line);
    std::string method, del, ins, images;
    ASSERT_TRUE(std::getline(cells, method, ',') && std::getline(cells, del, ',') && std::getline(cells, ins, ',') &&
                std::getline(cells, images)) << line;
    EXPECT_EQ(images, "12") << line;
    methods.push_back(method);
    auc[method] = {std::stod(del), std::stod(ins)};
  }
  EXPECT_EQ(methods, (std::vector<std::string>{"chefer", "attention", "random"}));
  EXPECT_LT(auc["chefer"].first, auc["random"].first);
  EXPECT_GT(auc["chefer"].second, auc["random"].second);
  // Never over a file without --force (the old table stays), with it replaced.
  const std::string before = read_file(out);
  expect_one_line_error(run_attnlab("explain" + model + " --images fashion --count 2 --out " + quoted(out)), "exists");
  EXPECT_EQ(read_file(out), before);
  ASSERT_EQ(run_attnlab("explain" + model + " --images fashion --count 2 --methods rollout --out " + quoted(out) + " --force").code, 0);
  EXPECT_EQ(read_file(out).substr(0, 48), "method,deletion_auc,insertion_auc,images\nrollout");
  // A folder: its image files by name, the first --count of them.
  const auto photos = dir / "photos";
  std::filesystem::create_directories(photos);
  for (const char* png : {"safari_32x32.png", "safari_61x45.png", "safari_44x20.png"})
    std::filesystem::copy_file(vit_data_dir() / png, photos / png);
  write_file(photos / "notes.txt", "not an image");
  const auto folder_out = dir / "folder.csv";
  const CliRun f = run_attnlab("explain" + model + " --images " + quoted(photos) + " --count 2 --methods input-gradient --out " + quoted(folder_out));
  ASSERT_EQ(f.code, 0) << f.err;
  EXPECT_NE(read_file(folder_out).find("\ninput-gradient,"), std::string::npos);
  EXPECT_NE(read_file(folder_out).find(",2\nrandom,"), std::string::npos) << read_file(folder_out);
  // --receptive-field: the mean field over the images, each cropped to the square its short side
  // covers (Fashion-MNIST: the whole 28 × 28), as core's field of each image averaged here.
  const auto field_out = dir / "field.csv";
  const CliRun field =
      run_attnlab("explain" + model + " --images fashion --count 5 --receptive-field --layer 1 --query 2,3 --out " + quoted(field_out));
  ASSERT_EQ(field.code, 0) << field.err;
  {
    const VitModel fashion = load_vit(std::filesystem::path(ATTNLAB_SOURCE_DIR) / "assets" / "fashion_vit");
    const FashionMnistSplit test = load_fashion_mnist(false);
    Matrix want = Matrix::Zero(28, 28);
    for (int i = 0; i < 5; ++i)
      want += vit_receptive_field(fashion, vit_input(fashion, fashion_mnist_image(test, i)), 1, 1 + 3 * 7 + 2, vit_memory_budget()) / 5.0f;
    const auto got = parse_csv(read_file(field_out));
    ASSERT_EQ(got.size(), 28u);
    for (int y = 0; y < 28; ++y) {
      ASSERT_EQ(got[static_cast<std::size_t>(y)].size(), 28u);
      for (int x = 0; x < 28; ++x)
        EXPECT_NEAR(got[static_cast<std::size_t>(y)][static_cast<std::size_t>(x)], want(y, x), 1e-5 + 1e-4 * std::abs(want(y, x))) << x << "," << y;
    }
  }
  // Refusals.
  const std::string more = " --out " + quoted(dir / "never.csv");
  expect_one_line_error(run_attnlab("explain" + model + " --images fashion --layer 1" + more), "--layer and --query go with --receptive-field");
  expect_one_line_error(run_attnlab("explain" + model + " --images fashion --receptive-field --query 7,0" + more), "outside the 7x7 grid");
  expect_one_line_error(run_attnlab("explain" + model + " --images fashion --methods chefer,gradcam" + more), "'gradcam' is not a method");
  expect_one_line_error(run_attnlab("explain" + model + " --images fashion --methods chefer,chefer" + more), "chefer given twice");
  expect_one_line_error(run_attnlab("explain" + model + " --images " + quoted(dir / "none") + more), "is not a folder");
  expect_one_line_error(run_attnlab("explain" + model + more), "--images");
  expect_one_line_error(run_attnlab("explain" + model + " --images fashion"), "--out");
  expect_one_line_error(run_attnlab("explain --model " + quoted(vit_data_dir() / "dinov2_reg_f32") + " --images fashion" + more), "no classifier");
  EXPECT_FALSE(std::filesystem::exists(dir / "never.csv"));
}

// Issue 48: the high-norm tokens view and the main map's marks pick the patches whose norm is
// over the ratio times the median, worked here from the PyTorch forward's norms (golden), on a
// model without registers and one with 4; the input at its own size (--resize its short side),
// as `vit --norms` runs it.
TEST(CliVit, TheHighNormViewAndTheMapsMarksAreThePatchesOverRatioTimesTheMedian) {
  const auto dir = temp_dir();
  std::size_t marked = 0;  // over all cases: the test must see marks, not only their absence
  for (const auto& [name, ratio] : {std::pair{"timm_f32__safari_61x45", 1.1f}, {"dinov2_reg_f32__safari_61x45", 1.15f},
                                    {"dinov2_reg_f32__safari_48x48", 1.3f}}) {
    const VitGolden& g = golden(name);
    SCOPED_TRACE(name);
    const int cols = g.json.at("grid").at(0), rows = g.json.at("grid").at(1), T = g.json.at("T");
    const int prefix = T - cols * rows, last = static_cast<int>(g.json.at("norms").size()) - 1;
    for (const int layer : {last, 0}) {
      SCOPED_TRACE("layer " + std::to_string(layer));
      const auto all = g.json.at("norms").at(static_cast<std::size_t>(layer)).get<std::vector<double>>();
      std::vector<double> sorted(all.begin() + prefix, all.end());
      std::sort(sorted.begin(), sorted.end());
      const std::size_t n = sorted.size();
      const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
      const double threshold = ratio * median;
      std::vector<int> want;
      for (int t = 0; t < cols * rows; ++t) {
        const double v = all[static_cast<std::size_t>(prefix + t)];
        ASSERT_GT(std::abs(v - threshold), 1e-3 * threshold) << "patch " << t << " too near the threshold to decide";
        if (v > threshold) want.push_back(t);
      }
      marked += want.size();
      const Image photo = load_image(g.image);
      const std::string base = "render --model '" + g.model_dir.string() + "' --image '" + g.image.string() + "' --resize " +
                               std::to_string(std::min(photo.width, photo.height)) + " --layer " + std::to_string(layer) + " --norm-ratio " +
                               std::to_string(ratio) + " --size 800x500";
      const auto view_png = dir / (std::string(name) + std::to_string(layer) + "-view.png");
      const CliRun view = run_attnlab(base + " --view vit-high-norm --out '" + view_png.string() + "'");
      ASSERT_EQ(view.code, 0) << view.err;
      const auto drawn = read_json(std::filesystem::path(view_png).replace_extension(".json")).at("high_norm_drawn");
      EXPECT_EQ(drawn.at("marked").get<std::vector<int>>(), want);
      EXPECT_NEAR(drawn.at("median").get<double>(), median, 1e-4 * median);
      EXPECT_EQ(drawn.at("prefix_norms").size(), static_cast<std::size_t>(prefix));
      int counted = 0;
      for (const int c : drawn.at("histogram").at("counts").get<std::vector<int>>()) counted += c;
      EXPECT_EQ(counted, cols * rows);
      const auto map_png = dir / (std::string(name) + std::to_string(layer) + "-map.png");
      const CliRun map = run_attnlab(base + " --mark-high-norm --out '" + map_png.string() + "'");
      ASSERT_EQ(map.code, 0) << map.err;
      EXPECT_EQ(read_json(std::filesystem::path(map_png).replace_extension(".json")).at("vit_drawn").at("high_norm").at("marked").get<std::vector<int>>(), want);
    }
  }
  EXPECT_GE(marked, 4u);
  std::filesystem::remove_all(dir);
}

// Issue 48, Compare (SPEC §12): `render --model A --compare B` draws the same view of both side by
// side, each half exactly that model's own picture at half the width (one colour scale each),
// B's layer, head and query matched to A's (matched_choice), and `render --from` draws the pair
// again byte for byte. Small models of 3 and 2 layers (relative depth; A's head 3 is the mean in
// B, which has 2 heads) and real-size ones with different patch grids (the query by its place).
TEST(CliRender, CompareHalvesAreEachModelsOwnPictureAndFromRedrawsThePair) {
  const auto dir = temp_dir();
  const auto data = std::filesystem::path(ATTNLAB_SOURCE_DIR) / "tests" / "vit" / "data";
  struct Case {
    std::filesystem::path a, b;
    std::string image, flags, view;
    int b_layer;
    std::string b_head;
  };
  const Case cases[] = {
      {data / "timm_f32", data / "dinov2_reg_f32", (data / "safari_61x45.png").string(), " --layer 1 --head 3 --query 2,3", "map", 1, "mean"},
      {data / "real" / "timm_p16_f16", data / "real" / "dinov2_p8_reg4_bf16", asset("safari.jpg").string(), " --query 5,9", "map", 1, "mean"},
      {data / "real" / "timm_p16_f16", data / "real" / "dinov2_p8_reg4_bf16", asset("safari.jpg").string(), " --query cls", "vit-high-norm", 1, "mean"},
  };
  int n = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.a.filename().string() + " vs " + c.b.filename().string() + c.flags + " " + c.view);
    const auto pair = dir / ("pair" + std::to_string(n) + ".png"), alone_a = dir / ("a" + std::to_string(n) + ".png"),
               alone_b = dir / ("b" + std::to_string(n) + ".png"), again = dir / ("again" + std::to_string(n) + ".png");
    ++n;
    const std::string common = " --image '" + c.image + "' --view " + c.view;
    const CliRun r = run_attnlab("render --model '" + c.a.string() + "' --compare '" + c.b.string() + "'" + common + c.flags +
                                 " --size 1000x600 --out '" + pair.string() + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    const nlohmann::json side = read_json(std::filesystem::path(pair).replace_extension(".json"));
    const nlohmann::json b = side.at("compare");
    EXPECT_EQ(b.at("vit").at("layer"), c.b_layer);
    EXPECT_EQ(b.at("vit").at("head"), c.b_head);
    EXPECT_EQ(b.at("width"), 500);
    // B's query as the flags give it: a register or CLS, or the patch it was moved to.
    const int token = b.at("vit").at("token");
    const std::string b_query = token >= 0 ? (token == 0 ? "cls" : "reg" + std::to_string(token - 1))
                                           : std::to_string(b.at("vit").at("cell").at("col").get<int>()) + "," +
                                                 std::to_string(b.at("vit").at("cell").at("row").get<int>());
    if (c.flags == " --query 5,9") {  // A's patch (5,9) of 16 px, its centre (88, 152) px of the input: B's (11,19) of 8 px
      EXPECT_EQ(b.at("vit").at("cell"), (nlohmann::json{{"col", 11}, {"row", 19}}));
    }
    if (c.view == "map") {  // the query is at the same place on the photo: B's patch holds A's patch's centre
      EXPECT_EQ(side.at("vit_drawn").at("token_label").get<std::string>().rfind("patch", 0), 0u);
      EXPECT_EQ(b.at("vit_drawn").at("token_label").get<std::string>().rfind("patch", 0), 0u);
    }
    const CliRun ra = run_attnlab("render --model '" + c.a.string() + "'" + common + c.flags + " --size 500x600 --out '" + alone_a.string() + "'");
    ASSERT_EQ(ra.code, 0) << ra.err;
    const CliRun rb = run_attnlab("render --model '" + c.b.string() + "'" + common + " --layer " + std::to_string(c.b_layer) + " --head " +
                                  c.b_head + " --query " + b_query + " --size 500x600 --out '" + alone_b.string() + "'");
    ASSERT_EQ(rb.code, 0) << rb.err;
    const Image whole = load_image(pair), left = load_image(alone_a), right = load_image(alone_b);
    ASSERT_EQ(whole.width, 1000);
    int differ_a = 0, differ_b = 0;
    for (int y = 0; y < 600; ++y)
      for (int x = 0; x < 500; ++x)
        for (int ch = 0; ch < 3; ++ch) {
          differ_a += whole.at(x, y, ch) != left.at(x, y, ch);
          differ_b += whole.at(500 + x, y, ch) != right.at(x, y, ch);
        }
    EXPECT_EQ(differ_a, 0) << "the left half is not A's own picture";
    EXPECT_EQ(differ_b, 0) << "the right half is not B's own picture";
    const CliRun from = run_attnlab("render --from '" + std::filesystem::path(pair).replace_extension(".json").string() + "' --out '" +
                                    again.string() + "'");
    ASSERT_EQ(from.code, 0) << from.err;
    EXPECT_EQ(read_file(pair), read_file(again));
  }
  // --one-scale: both maps over one scale, the lowest and the highest of the two rows (min-max);
  // the rows are those drawn apart (pair0), the pair is redrawn from its sidecar.
  {
    const auto one = dir / "one.png", again = dir / "one-again.png";
    const CliRun r = run_attnlab("render --model '" + (data / "timm_f32").string() + "' --compare '" + (data / "dinov2_reg_f32").string() +
                                 "' --image '" + (data / "safari_61x45.png").string() +
                                 "' --view map --layer 1 --head 3 --query 2,3 --one-scale --size 1000x600 --out '" + one.string() + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    const nlohmann::json side = read_json(std::filesystem::path(one).replace_extension(".json"));
    const nlohmann::json apart = read_json(dir / "pair0.json");
    const auto a = side.at("vit_drawn").at("values").get<std::vector<float>>();
    const auto b = side.at("compare").at("vit_drawn").at("values").get<std::vector<float>>();
    EXPECT_EQ(a, apart.at("vit_drawn").at("values").get<std::vector<float>>());
    EXPECT_EQ(b, apart.at("compare").at("vit_drawn").at("values").get<std::vector<float>>());
    const float lo = std::min(*std::min_element(a.begin(), a.end()), *std::min_element(b.begin(), b.end()));
    const float hi = std::max(*std::max_element(a.begin(), a.end()), *std::max_element(b.begin(), b.end()));
    for (const nlohmann::json* drawn : {&side.at("vit_drawn"), &side.at("compare").at("vit_drawn")}) {
      EXPECT_EQ(drawn->at("scale").at("lo").get<float>(), lo);
      EXPECT_EQ(drawn->at("scale").at("hi").get<float>(), hi);
      EXPECT_TRUE(drawn->at("scale").at("shared").get<bool>());
    }
    EXPECT_FALSE(apart.at("vit_drawn").at("scale").at("shared").get<bool>());
    EXPECT_EQ(apart.at("vit_drawn").at("scale").at("hi").get<float>(), *std::max_element(a.begin(), a.end()));
    EXPECT_EQ(side.at("compare").at("one_scale"), true);
    EXPECT_NE(read_file(one), read_file(dir / "pair0.png")) << "one scale coloured the pair as two";
    const CliRun from = run_attnlab("render --from '" + std::filesystem::path(one).replace_extension(".json").string() + "' --out '" +
                                    again.string() + "'");
    ASSERT_EQ(from.code, 0) << from.err;
    EXPECT_EQ(read_file(one), read_file(again));
  }
  const std::string base = "render --model '" + (data / "timm_f32").string() + "' --image '" + (data / "safari_61x45.png").string() + "'";
  expect_one_line_error(run_attnlab(base + " --one-scale --out '" + (dir / "x.png").string() + "'"), "--compare");
  expect_one_line_error(run_attnlab(base + " --compare '" + (data / "dinov2_reg_f32").string() + "' --match-layers middle --out '" +
                                    (dir / "x.png").string() + "'"),
                        "--match-layers");
  expect_one_line_error(run_attnlab(base + " --match-layers index --out '" + (dir / "x.png").string() + "'"), "--compare");
  expect_one_line_error(run_attnlab(base + " --compare '" + (dir / "nothing").string() + "' --out '" + (dir / "x.png").string() + "'"),
                        "does not exist");
  EXPECT_FALSE(std::filesystem::exists(dir / "x.png"));
  std::filesystem::remove_all(dir);
}

// Issue 48: `render --model A --compare hand-made`: the ViT's map beside the chapter's hand-made
// heads on the same photo. B's query is the hand-made patch under A's query patch (A's (8,2) of
// 16 px at 224/500: centre (303.6, 89.3) photo px, hand-made patch (18,5) at K = 16), B's head
// its own (0, the colour head), and B's half is byte for byte `render --query 18,5` at half the
// width; `render --from` redraws the pair; the ViT-only choices are refused in one line.
TEST(CliRender, CompareWithTheHandMadeHeadsHalvesAreEachSourcesOwnPicture) {
  const auto dir = temp_dir();
  const auto model = std::filesystem::path(ATTNLAB_SOURCE_DIR) / "tests" / "vit" / "data" / "real" / "timm_p16_f16";
  const auto pair = dir / "pair.png", alone = dir / "alone.png", again = dir / "again.png";
  const std::string base = "render --model '" + model.string() + "' --compare hand-made --image '" + asset("safari.jpg").string() + "'";
  const CliRun r = run_attnlab(base + " --query 8,2 --size 1000x600 --out '" + pair.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json side = read_json(std::filesystem::path(pair).replace_extension(".json"));
  const nlohmann::json& b = side.at("compare");
  EXPECT_EQ(b.at("model"), "hand-made");
  EXPECT_EQ(b.at("hand_made").at("cell"), (nlohmann::json{{"col", 18}, {"row", 5}}));
  EXPECT_EQ(b.at("hand_made_drawn").at("token"), 5 * 31 + 18);
  EXPECT_EQ(b.at("hand_made_drawn").at("head"), 0);
  EXPECT_EQ(b.at("width"), 500);
  // B's row is the CPU reference's.
  const Reference ref(load_image(asset("safari.jpg")), Settings{});
  const auto want = ref.row(0, 5 * 31 + 18).weights;
  const auto values = b.at("hand_made_drawn").at("values").get<std::vector<float>>();
  ASSERT_EQ(values.size(), want.size());
  for (std::size_t j = 0; j < values.size(); ++j) EXPECT_NEAR(values[j], want[j], 1e-5f) << "key " << j;
  const CliRun rb = run_attnlab("render --image '" + asset("safari.jpg").string() + "' --query 18,5 --size 500x600 --out '" + alone.string() + "'");
  ASSERT_EQ(rb.code, 0) << rb.err;
  const Image whole = load_image(pair), right = load_image(alone);
  int differ = 0;
  for (int y = 0; y < 600; ++y)
    for (int x = 0; x < 500; ++x)
      for (int ch = 0; ch < 3; ++ch) differ += whole.at(500 + x, y, ch) != right.at(x, y, ch);
  EXPECT_EQ(differ, 0) << "the right half is not the hand-made heads' own picture";
  const CliRun from = run_attnlab("render --from '" + std::filesystem::path(pair).replace_extension(".json").string() + "' --out '" +
                                  again.string() + "'");
  ASSERT_EQ(from.code, 0) << from.err;
  EXPECT_EQ(read_file(pair), read_file(again));
  expect_one_line_error(run_attnlab(base + " --one-scale --out '" + (dir / "x.png").string() + "'"), "hand-made");
  expect_one_line_error(run_attnlab(base + " --view vit-grid --out '" + (dir / "x.png").string() + "'"), "map view only");
  EXPECT_FALSE(std::filesystem::exists(dir / "x.png"));
  std::filesystem::remove_all(dir);
}

// Issue 37: auto measures. On a software rasterizer (this machine's llvmpipe) or without
// OpenGL 4.3 the GPU is not timed and the CPU path runs, its time printed; on a hardware GPU
// both first passes are timed, the faster runs, and the next run reads the choice back from
// the settings folder (vit_backend.json) instead of measuring again.
TEST(CliVit, AutoTakesTheCpuPathOnASoftwareRasterizerAndMeasuresOnHardwareAndSaysWhy) {
  const std::string base = "vit --model " + quoted(vit_data_dir() / "timm_f32") + " --image " + quoted(vit_data_dir() / "safari_48x48.png");
  const auto config = temp_dir() / "config";
  const std::string env = "export XDG_CONFIG_HOME=" + quoted(config);
  for (const std::string flag : {"", " --backend auto"}) {
    const CliRun r = run_attnlab(base + flag + " --info", env);
    ASSERT_EQ(r.code, 0) << r.err;
    const auto at = r.out.find("\nbackend: ");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string line = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
    // The reason names the renderer; a software one (this machine's llvmpipe) runs the CPU path.
    if (line.find("software rasterizer") != std::string::npos || line.find("no OpenGL") != std::string::npos) {
      EXPECT_EQ(line.rfind("backend: cpu (auto: cpu ", 0), 0u) << line;
      EXPECT_NE(line.find(" ms, gpu not timed ("), std::string::npos) << line;
      EXPECT_EQ(line.substr(line.size() - 8), "\u2192 cpu)") << line;
      EXPECT_FALSE(std::filesystem::exists(config / "attnlab" / "vit_backend.json")) << "nothing measured, nothing remembered";
    } else if (flag.empty()) {  // measured: "auto: cpu 12 ms, gpu 3.1 ms → gpu"
      float cpu_ms = 0, gpu_ms = 0;
      char chosen[4] = {};
      ASSERT_EQ(std::sscanf(line.c_str(), "backend: %3s (auto: cpu %f ms, gpu %f ms", chosen, &cpu_ms, &gpu_ms), 3) << line;
      EXPECT_EQ(std::string(chosen), gpu_ms < cpu_ms ? "gpu" : "cpu") << line;
      EXPECT_TRUE(std::filesystem::exists(config / "attnlab" / "vit_backend.json"));
    } else {  // the same shape again: read back
      EXPECT_NE(line.find("(auto: remembered "), std::string::npos) << line;
    }
    EXPECT_NE(r.out.find("\nforward: "), std::string::npos) << r.out;
  }
  expect_one_line_error(run_attnlab(base + " --backend vulkan"), "--backend must be auto, gpu or cpu");
}

TEST(CliVit, AnInputOverTheMemoryBudgetIsOneLineExitTwoOnEveryPathNamingASizeThatFits) {
  const std::string model = " --model " + quoted(vit_data_dir() / "timm_f32"), img = " --image " + safari_arg();
  const std::string budget = "export ATTNLAB_MEMORY_BUDGET_MB=4";
  for (const char* backend : {"auto", "gpu", "cpu"}) {
    SCOPED_TRACE(backend);
    // 8 px patches at a short side of 4000: 250 000 tokens, far over 4 MiB.
    const CliRun r = run_attnlab("vit" + model + img + " --resize 4000 --backend " + backend, budget);
    expect_one_line_error(r, "memory budget; use --resize ");
    // The size it names fits.
    const auto at = r.err.find("--resize ");
    ASSERT_NE(at, std::string::npos);
    const int fits = std::stoi(r.err.substr(at + 9));
    const CliRun ok = run_attnlab("vit" + model + img + " --resize " + std::to_string(fits) + " --backend " + backend, budget);
    EXPECT_EQ(ok.code, 0) << ok.err;
    // render --model refuses the same way, writing nothing.
    const auto out = std::filesystem::temp_directory_path() / ("attnlab-budget-" + std::string(backend) + ".png");
    std::filesystem::remove(out);
    expect_one_line_error(run_attnlab("render" + model + img + " --resize 4000 --backend " + std::string(backend) + " --out '" +
                                          out.string() + "'",
                                      budget),
                          "memory budget");
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

TEST(CliVit, HostileCheckpointsAndArgumentsGiveOneLineAndExitTwo) {
  const auto dir = temp_dir();
  const auto img = quoted(vit_data_dir() / "safari_32x32.png");
  const std::string good = read_file(vit_data_dir() / "timm_f32" / "model.safetensors");
  auto vit_on = [&](const std::string& name, const std::string& bytes) {
    write_file(dir / name, bytes);
    return run_attnlab("vit --heads 4 --model " + quoted(dir / name) + " --image " + img);
  };
  auto le64 = [](std::uint64_t n) {
    std::string s(8, '\0');
    for (int b = 0; b < 8; ++b) s[static_cast<std::size_t>(b)] = static_cast<char>((n >> (8 * b)) & 0xff);
    return s;
  };
  std::uint64_t header_len = 0;
  for (int b = 7; b >= 0; --b) header_len = (header_len << 8) | static_cast<unsigned char>(good[static_cast<std::size_t>(b)]);
  const std::string header = good.substr(8, header_len), data = good.substr(8 + header_len);
  auto with_header = [&](std::string h) {
    while (h.size() % 8) h += ' ';
    return le64(h.size()) + h + data;
  };
  auto replace = [](std::string s, const std::string& from, const std::string& to) {
    const auto at = s.find(from);
    return at == std::string::npos ? s : s.replace(at, from.size(), to);
  };
  // Each failure of the reader: the header length past the file and over 100 MB, a truncated
  // file, a bad dtype, a byte length that does not fit the shape, offsets outside the data.
  expect_one_line_error(vit_on("past.safetensors", le64(good.size()) + good.substr(8)), "safetensors");
  expect_one_line_error(vit_on("huge.safetensors", le64(200000000) + good.substr(8)), "safetensors");
  expect_one_line_error(vit_on("truncated.safetensors", good.substr(0, good.size() - 100)), "safetensors");
  expect_one_line_error(vit_on("short.safetensors", good.substr(0, 5)), "safetensors");
  expect_one_line_error(vit_on("i64.safetensors", with_header(replace(header, "\"F32\"", "\"I64\""))), "I64");
  expect_one_line_error(vit_on("shape.safetensors", with_header(replace(header, "[1,1,48]", "[1,1,49]"))), "safetensors");
  expect_one_line_error(vit_on("empty.safetensors", ""), "safetensors");
  // A directory without a model, a missing file, a checkpoint that is not a ViT.
  std::filesystem::create_directories(dir / "folder");
  expect_one_line_error(run_attnlab("vit --model " + quoted(dir / "folder") + " --image " + img), "model.safetensors");
  expect_one_line_error(run_attnlab("vit --model " + quoted(dir / "missing.safetensors") + " --image " + img), "missing.safetensors");
  std::map<std::string, Tensor> bert;
  Tensor t;
  t.shape = {4, 2};
  t.values.assign(8, 0.5f);
  bert["bert.embeddings.word_embeddings.weight"] = t;
  expect_one_line_error(vit_on("bert.safetensors", safetensors_f32_bytes(bert)), "not a ViT");
  // A checkpoint with a block missing (block 1 of 3): the missing tensors are named.
  SafetensorsFile full = read_safetensors(vit_data_dir() / "timm_f32" / "model.safetensors");
  std::map<std::string, Tensor> cut;
  for (auto& [name, tensor] : full.tensors)
    if (name.rfind("blocks.1.", 0) != 0) cut[name] = tensor;
  expect_one_line_error(vit_on("cut.safetensors", safetensors_f32_bytes(cut)), "blocks.1.");
  // Bad arguments.
  const std::string model = " --model " + quoted(vit_data_dir() / "timm_f32");
  expect_one_line_error(run_attnlab("vit" + model + " --image " + img + " --layer 3"), "--layer");
  expect_one_line_error(run_attnlab("vit" + model + " --image " + img + " --head 4"), "--head");
  expect_one_line_error(run_attnlab("vit" + model + " --image " + img + " --head median"), "--head");
  expect_one_line_error(run_attnlab("vit" + model + " --image " + img + " --query 4,0"), "outside");
  expect_one_line_error(run_attnlab("vit" + model + " --image " + img + " --query reg0"), "register");
  expect_one_line_error(run_attnlab("vit" + model + " --image " + img + " --rollout sum"), "--rollout");
  expect_one_line_error(run_attnlab("vit" + model + " --image " + img + " --heads 5"), "divide");
  expect_one_line_error(run_attnlab("vit" + model + " --image " + img + " --distance --top 1"), "one of");
  expect_one_line_error(run_attnlab("vit" + model + " --image " + quoted(dir / "bert.safetensors")), "bert.safetensors");
  expect_one_line_error(run_attnlab("vit" + model), "--image");
  expect_one_line_error(run_attnlab("vit --image " + img), "--model");
}

// The README's command on the bundled, trained Fashion-MNIST ViT: the three likeliest classes
// with their names from config.json, the first PyTorch's prediction with its probability
// (tests/vit/data/fashion/golden.json, made by tests/vit/make_fashion_golden.py), on both
// backends, for every shipped image.
TEST(CliVit, BundledFashionModelTopThreeMatchesPyTorch) {
  const nlohmann::json golden = read_json(vit_data_dir() / "fashion" / "golden.json");
  const auto& labels = golden.at("labels");
  ASSERT_EQ(golden.at("shipped").size(), 20u);
  for (const auto& e : golden.at("shipped")) {
    const std::string file = e.at("file").get<std::string>();
    SCOPED_TRACE(file);
    for (const char* backend : {"gpu", "cpu"}) {
      const CliRun r = run_attnlab("vit --model " + quoted(asset("fashion_vit")) + " --image " +
                                   quoted(std::filesystem::path(ATTNLAB_SOURCE_DIR) / file) + " --top 3 --backend " + backend);
      ASSERT_EQ(r.code, 0) << r.err;
      std::istringstream lines(r.out);
      std::string line;
      std::vector<std::string> got;
      while (std::getline(lines, line)) got.push_back(line);
      ASSERT_EQ(got.size(), 3u) << r.out;
      // Most likely first: PyTorch's class.
      const auto predicted = e.at("predicted").get<std::size_t>();
      SCOPED_TRACE(backend);
      expect_top_line(got[0], predicted, labels.at(predicted).get<std::string>(),
                      e.at("probabilities").at(predicted).get<double>(), 1e-3);
    }
  }
}

// Issue 28: one numbering from the window to the command line. `attnlab render --model M --layer
// L --head H` draws the map whose legend (the header line above it, kept in the sidecar's
// vit_drawn.legend) and whose sidecar (vit_drawn and the document's vit.layer, vit.head) name the
// same L and H, and whose values are the row `attnlab vit --model M --layer L --head H` prints:
// layers and heads from 0 in both. (Seen failing with render counting the layer from 1.)
TEST(CliNumbering, RenderModelsLegendAndSidecarNameTheLayerAndHeadThatAttnlabVitPrints) {
  const auto dir = temp_dir();
  const std::string model = asset("fashion_vit").string(), image = asset("fashion_vit/images/14_bag.png").string();
  for (const auto& [layer, head] : std::vector<std::pair<int, int>>{{4, 2}, {0, 3}}) {
    SCOPED_TRACE("layer " + std::to_string(layer) + ", head " + std::to_string(head));
    const std::string choice = " --model '" + model + "' --image '" + image + "' --layer " + std::to_string(layer) + " --head " +
                               std::to_string(head) + " --query 3,4 --backend cpu";
    const CliRun printed = run_attnlab("vit" + choice);
    ASSERT_EQ(printed.code, 0) << printed.err;
    const auto png = dir / ("L" + std::to_string(layer) + "H" + std::to_string(head) + ".png");
    const CliRun drawn = run_attnlab("render" + choice + " --size 900x700 --out '" + png.string() + "'");
    ASSERT_EQ(drawn.code, 0) << drawn.err;
    const auto sidecar = read_json(std::filesystem::path(png).replace_extension(".json"));
    const auto& d = sidecar.at("vit_drawn");
    EXPECT_EQ(d.at("layer"), layer);
    EXPECT_EQ(d.at("head"), head);
    EXPECT_EQ(sidecar.at("vit").at("layer"), layer);
    EXPECT_EQ(sidecar.at("vit").at("head"), head);
    EXPECT_EQ(d.at("head_label"), "head " + std::to_string(head));
    EXPECT_EQ(d.at("legend"), "layer " + std::to_string(layer) + " (of 0-5), head " + std::to_string(head) + ", query patch (3,4)");
    // The same row: attnlab vit's CSV, the grid's rows top first, against the values drawn.
    std::vector<float> csv;
    std::istringstream lines(printed.out);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream cells(line);
      for (std::string cell; std::getline(cells, cell, ',');) csv.push_back(std::stof(cell));
    }
    const auto values = d.at("values").get<std::vector<float>>();
    ASSERT_EQ(values.size(), csv.size());
    ASSERT_FALSE(values.empty());
    for (std::size_t k = 0; k < values.size(); ++k) EXPECT_NEAR(values[k], csv[k], 1e-6f * std::max(1.0f, csv[k])) << "patch " << k;
  }
}

// `render --model`: the ViT's views headless. The map's sidecar holds the values coloured,
// which must be the engine's row for the layer, head and query asked; every view renders at
// the size asked; --from redraws the same pixels, and refuses a model file that is missing or
// has changed since.
TEST(CliRenderVit, MapIsTheEnginesRowAndFromRedrawsOrRefusesAChangedModel) {
  const auto dir = temp_dir();
  const auto model = dir / "fashion";
  std::filesystem::copy(asset("fashion_vit"), model, std::filesystem::copy_options::recursive);
  const std::string image = asset("fashion_vit/images/14_bag.png").string();
  const std::string base = "render --model '" + model.string() + "' --image '" + image + "'";
  const CliRun map = run_attnlab(base + " --layer 2 --head 1 --query 3,4 --size 900x700 --out '" + (dir / "map.png").string() + "'");
  ASSERT_EQ(map.code, 0) << map.err;
  const auto j = read_json(dir / "map.json");
  const auto drawn = j.at("vit_drawn");
  auto vit = std::make_shared<const VitModel>(load_vit(model));
  VitCpuRunner cpu;
  const VitRun engine(vit, load_image(image), 0, cpu, vit_memory_budget());
  const int token = engine.grid().prefix + 4 * engine.grid().cols + 3;
  EXPECT_EQ(drawn.at("token"), token);
  const auto values = drawn.at("values").get<std::vector<float>>();
  const auto row = engine.patch_row(2, HeadChoice{1, HeadFusion::Mean}, token);
  ASSERT_EQ(values.size(), row.size());
  for (std::size_t k = 0; k < row.size(); ++k) EXPECT_FLOAT_EQ(values[k], row[k]) << k;
  EXPECT_EQ(j.at("vit_model_sha256").get<std::string>().size(), 64u);
  // On this machine's software rasterizer auto runs the CPU path, whose rows these are, exactly.
  if (drawn.at("backend_why").get<std::string>().find("software rasterizer") != std::string::npos) {
    EXPECT_EQ(drawn.at("backend"), "cpu");
  }
  // Asked for the GPU, the GPU ran: the sidecar says so, and its row is the CPU path's within
  // float32 rounding.
  const CliRun gpu = run_attnlab(base + " --layer 2 --head 1 --query 3,4 --backend gpu --size 900x700 --out '" + (dir / "gpu.png").string() + "'");
  ASSERT_EQ(gpu.code, 0) << gpu.err;
  const auto gpu_drawn = read_json(dir / "gpu.json").at("vit_drawn");
  EXPECT_EQ(gpu_drawn.at("backend"), "gpu");
  EXPECT_EQ(gpu_drawn.at("backend_why").get<std::string>().rfind("gpu: asked for", 0), 0u) << gpu_drawn.at("backend_why");
  const auto gpu_values = gpu_drawn.at("values").get<std::vector<float>>();
  ASSERT_EQ(gpu_values.size(), row.size());
  for (std::size_t k = 0; k < row.size(); ++k) EXPECT_NEAR(gpu_values[k], row[k], 2e-4 + 1e-3 * row[k]) << k;

  // The main map's variants and the views under the ViT tab's map (view_registry.cpp).
  for (const std::string view : {"vit-grid", "vit-distance", "vit-rollout", "vit-mask", "vit-norms", "vit-pinned", "vit-step", "vit-high-norm"}) {
    const CliRun r = run_attnlab(base + " --view " + view + " --size 640x480 --out '" + (dir / (view + ".png")).string() + "'");
    ASSERT_EQ(r.code, 0) << view << ": " << r.err;
    const Image png = load_image(dir / (view + ".png"));
    EXPECT_EQ(png.width, 640);
    EXPECT_EQ(png.height, 480);
    EXPECT_EQ(read_json(dir / (view + ".json")).at("render").at("view"), view);
  }
  const auto rollout = read_json(dir / "vit-rollout.json").at("vit_drawn").at("values").get<std::vector<float>>();
  const auto expected = engine.rollout_row(engine.layers() - 1, HeadFusion::Mean, 0);
  ASSERT_EQ(rollout.size(), expected.size());
  for (std::size_t k = 0; k < expected.size(); ++k) EXPECT_FLOAT_EQ(rollout[k], expected[k]) << k;

  const CliRun again = run_attnlab("render --from '" + (dir / "map.json").string() + "' --out '" + (dir / "again.png").string() + "'");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(read_file(dir / "map.png"), read_file(dir / "again.png"));

  expect_one_line_error(run_attnlab(base + " --layer 6 --out '" + (dir / "x.png").string() + "'"), "--layer");
  expect_one_line_error(run_attnlab(base + " --query reg1 --out '" + (dir / "x.png").string() + "'"), "register");
  expect_one_line_error(run_attnlab(base + " --view heads --out '" + (dir / "x.png").string() + "'"), "unknown view");
  {
    std::ofstream grow(model / "model.safetensors", std::ios::app);
    grow << ' ';
  }
  expect_one_line_error(run_attnlab("render --from '" + (dir / "map.json").string() + "' --out '" + (dir / "y.png").string() + "'"),
                        "has changed");
  std::filesystem::remove_all(model);
  expect_one_line_error(run_attnlab("render --from '" + (dir / "map.json").string() + "' --out '" + (dir / "y.png").string() + "'"),
                        "does not exist");
  EXPECT_FALSE(std::filesystem::exists(dir / "x.png"));
  EXPECT_FALSE(std::filesystem::exists(dir / "y.png"));
}

// Issue 48, item 6 (one flag style): every command reads its flags through one table
// (parse_flags); teachers' scripts rely on the lines a bad argument gives, so each is the line it
// was before the tables (taken from the build before them), one line and exit code 2.
TEST(CliFlags, EveryCommandsBadArgumentGivesTheLineItAlwaysGave) {
  const std::pair<const char*, const char*> cases[] = {
      {"render --out", "option --out needs a value"},
      {"render --out x.png --bogus 1", "unknown option '--bogus' (see attnlab --help)"},
      {"render --from a.json --patch 8 --out x.png", "--from FILE.json takes only --out and --force, got '--patch'"},
      {"render --from a.json extra --out x.png", "--from FILE.json takes only --out and --force, got 'extra'"},
      {"render --from a.json --model m --out x.png", "--from FILE.json takes only --out and --force"},
      {"render --model", "option --model needs a value"},
      {"render --model m --patch 8 --out x.png", "unknown option '--patch' for render --model (see attnlab --help)"},
      {"render --resize 64 --out x.png", "unknown option '--resize' (see attnlab --help)"},
      {"render --size abc --out x.png", "--size must be WIDTHxHEIGHT in pixels, got 'abc'"},
      {"render --fps 0 --out x.png --sweep tau", "--fps must be between 0.1 and 120, got 0"},
      {"render --fps 2 --out x.png", "--fps and --sweep-values go with --sweep"},
      {"render --view overlay --size 100x100 --out x.png", "--size goes with the window's views: an overlay is the photo at its own size"},
      {"render --mass 101 --model m --image i.jpg --out x.png", "--mass must be between 0 and 100, got 101"},
      {"render --resize 0 --model m --image i.jpg --out x.png", "--resize must be between 1 and 4096, got 0"},
      {"render --cka-count 10001 --model m --image i.jpg --out x.png", "--cka-count must be between 2 and 10000, got 10001"},
      {"render --model m --out x.png", "--image IMG is required"},
      {"render --model m --image i.jpg --head median --out x.png", "--head must be a head from 0 or mean, max or min, got 'median'"},
      {"figure", "--queries \"C1,R1;C2,R2;...\" is required"},
      {"figure --queries", "option --queries needs a value"},
      {"figure --image i.jpg --out x.png", "--queries \"C1,R1;C2,R2;...\" is required"},
      {"figure --queries 1,2 --out x.png", "--image IMG is required"},
      {"figure --queries 1,2 --image i.jpg --panel 10 --out x.png", "--panel must be between 64 and 2048, got 10"},
      {"figure --queries 1,2 --image i.jpg --view map --out x.png", "unknown option '--view' (see attnlab --help)"},
      {"video --list-cameras --in x", "--list-cameras takes no other option, got '--in'"},
      {"video --in x --list-cameras", "--list-cameras takes no other option, got '--in'"},
      {"video --model", "option --model needs a value"},
      {"video --in a.mp4 --out x.mp4 --layer 2", "--layer needs --model: the hand-made heads have one layer"},
      {"video --in a.mp4 --out x.mp4 --bogus", "unknown option '--bogus' for video without --model (see attnlab --help)"},
      {"video --model m --in a.mp4 --out x.mp4 --patch 8", "unknown option '--patch' for video (see attnlab --help)"},
      {"video --in a.mp4 --out x.mp4 --view rollout", "--view rollout needs --model (a ViT's); the hand-made heads draw --view map"},
      {"video --in a.mp4 --camera c --out x.mp4", "give one of --in VIDEO and --camera DEVICE (attnlab video --list-cameras lists them)"},
      {"video --in a.mp4 --out x.mp4 --fps 0", "--fps must be between 0.1 and 120, got 0"},
      {"video --model m --in a.mp4 --out x.mp4 --layer abc", "--layer must be a whole number, got 'abc'"},
      {"video --in a.mp4", "--out FILE is required"},
      {"models pull --file", "--file needs a file name (e.g. model.safetensors)"},
      {"models pull --bogus", "unknown option '--bogus' for models pull (see attnlab --help)"},
      {"models pull org/a org/b", "one repository at a time: 'org/b' is one too many"},
      {"--model", "--model needs a path (a .safetensors or .pth file, or its folder)"},
      {"--video a.mp4 --video b.mp4", "--video given twice"},
      {"--hover-bench a.json --train --model m", "--train replays over the model being trained: no --model with it"},
      {"photo.jpg other.jpg --model m", "one image at a time: 'other.jpg' is one too many (see attnlab --help)"},
      {"vit --cka-count 1 --model m", "--cka-count must be between 2 and 10000, got 1"},
      {"row --image i.jpg", "--query COL,ROW is required"},
      {"row --image i.jpg --query 1,2 --colormap gray", "unknown option '--colormap' (see attnlab --help)"},
  };
  const std::string dir = (std::filesystem::temp_directory_path() / ("attnlab-cli-flags-" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(dir);
  for (const auto& [args, line] : cases) {
    const CliRun r = run_attnlab(args, "cd '" + dir + "' && export HF_HUB_OFFLINE=1 HF_HOME='" + dir + "/hf'");
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.err, "attnlab: " + std::string(line) + "\n") << args;
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "a refused command wrote something";
  std::filesystem::remove_all(dir);
}
