// `attnlab train` as a user runs it: a short training writes a checkpoint that `attnlab vit`
// reads and whose predictions are the trainer's own; the same seed gives the same files; bad
// flags, an existing folder and Ctrl-C. Needs Debian's dataset-fashion-mnist (setup.sh --tests).
#include "core/image.hpp"
#include "core/safetensors.hpp"
#include "core/vit.hpp"
#include "core/vit_train.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <sys/wait.h>

using namespace attnlab;
using namespace attnlab::testing;

namespace {

namespace fs = std::filesystem;

struct CliRun {
  int code;
  std::string out, err;
};

/// Runs `prefix attnlab args` through the shell, capturing stdout and stderr.
CliRun run_attnlab(const std::string& args, const std::string& prefix = "") {
  const auto dir = fs::temp_directory_path();
  const auto out = dir / ("attnlab-train-out-" + std::to_string(::getpid()));
  const auto err = dir / ("attnlab-train-err-" + std::to_string(::getpid()));
  const std::string cmd = prefix + "env -u DISPLAY EGL_LOG_LEVEL=fatal '" + std::string(ATTNLAB_BINARY) + "' " + args + " >'" + out.string() +
                          "' 2>'" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  CliRun r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(out), read_file(err)};
  fs::remove(out);
  fs::remove(err);
  return r;
}

void expect_one_line_error(const CliRun& r, const std::string& part) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(part), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "not one line: " << r.err;
}

/// A folder under the test's temporary folder, removed at the end.
struct TempDir {
  fs::path path = temp_dir() / ("train-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
  static int& counter() {
    static int n = 0;
    return n;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

const std::string kTiny = "train --steps 20 --depth 1 --dim 16 --heads 2 --patch 7 --batch 16 --seed 3";

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

}  // namespace

TEST(CliTrain, ATinyRunWritesACheckpointThatVitReadsWithTheTrainersPredictions) {
  TempDir d;
  const CliRun r = run_attnlab(kTiny + " --out '" + d.path.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("test accuracy"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("step"), std::string::npos) << r.err;  // the progress bar
  for (const char* f : {"model.safetensors", "config.json", "log.csv"}) EXPECT_TRUE(fs::exists(d.path / f)) << f;
  const auto log = lines(read_file(d.path / "log.csv"));
  ASSERT_GE(log.size(), 2u);
  EXPECT_EQ(log[0], "step,loss,train_accuracy,test_accuracy,seconds");
  EXPECT_EQ(log.back().rfind("20,", 0), 0u) << log.back();
  const auto config = nlohmann::json::parse(read_file(d.path / "config.json"));
  EXPECT_EQ(config.at("global_pool"), "token");
  EXPECT_EQ(config.at("model_args").at("num_heads"), 2);
  EXPECT_EQ(config.at("label_names").size(), 10u);
  EXPECT_EQ(config.at("pretrained_cfg").at("input_size"), nlohmann::json::array({3, 28, 28}));

  const CliRun info = run_attnlab("vit --model '" + d.path.string() + "' --info");
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_NE(info.out.find("heads: 2"), std::string::npos) << info.out;

  // attnlab vit --top 1 on three test images gives the class the trainer's own forward gives.
  VitTrainShape shape;
  shape.D = 16;
  shape.heads = 2;
  shape.depth = 1;
  shape.patch = 7;
  shape.mlp_hidden = 32;
  VitTrainer trainer(shape, {}, 0, 1);
  const SafetensorsFile saved = read_safetensors(d.path / "model.safetensors");
  ASSERT_EQ(saved.tensors.size(), trainer.params().size());
  for (const VitParam& p : trainer.params()) {
    const Tensor& t = saved.tensors.at(p.name);
    EXPECT_EQ(t.shape, p.shape) << p.name;
    std::copy(t.values.begin(), t.values.end(), trainer.values_of(p).begin());
  }
  for (const char* name : {"00_ankle-boot.png", "02_trouser.png", "07_sandal.png"}) {
    const fs::path image = asset(std::string("fashion_vit/images/") + name);
    const CliRun top = run_attnlab("vit --model '" + d.path.string() + "' --image '" + image.string() + "' --top 1 --backend cpu");
    ASSERT_EQ(top.code, 0) << top.err;
    const Image img = load_image(image);
    std::vector<float> in(3 * 784);
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < 784; ++i)
        in[static_cast<std::size_t>(c) * 784 + i] = (img.rgb[static_cast<std::size_t>(i) * 3 + c] - 0.2860f) / 0.3530f;
    const Matrix z = trainer.logits(in, 1);
    Eigen::Index best = 0;
    z.row(0).maxCoeff(&best);
    const std::string label = config.at("label_names")[static_cast<std::size_t>(best)];
    EXPECT_NE(top.out.find(label), std::string::npos) << name << ": the trainer says " << label << ", attnlab vit says " << top.out;
  }
}

// Average pooling and a fixed position embedding: timm's fc_norm instead of norm, pos_embed
// holding the sine–cosine codes (the class token's row zeros), read back as such.
TEST(CliTrain, AveragePoolingAndSincosCodesAreWrittenAsTimmHasThem) {
  TempDir d;
  const CliRun r = run_attnlab(kTiny + " --pool avg --pos sincos --out '" + d.path.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const SafetensorsFile saved = read_safetensors(d.path / "model.safetensors");
  EXPECT_TRUE(saved.tensors.count("fc_norm.weight"));
  EXPECT_FALSE(saved.tensors.count("norm.weight"));
  const Tensor& pos = saved.tensors.at("pos_embed");
  EXPECT_EQ(pos.shape, (std::vector<std::int64_t>{1, 17, 16}));
  const Matrix codes = sincos_position_embedding(4, 4, 16);
  for (int i = 0; i < 17 * 16; ++i) EXPECT_EQ(pos.values[static_cast<std::size_t>(i)], codes.data()[i]);  // untouched by training
  const auto config = nlohmann::json::parse(read_file(d.path / "config.json"));
  EXPECT_EQ(config.at("global_pool"), "avg");
  EXPECT_EQ(config.at("model_args").at("global_pool"), "avg");
  const CliRun info = run_attnlab("vit --model '" + d.path.string() + "' --info");
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_NE(info.out.find("(average of patches)"), std::string::npos) << info.out;
}

TEST(CliTrain, TheSameSeedGivesTheSameModelAndCurve) {
  TempDir a, b;
  ASSERT_EQ(run_attnlab(kTiny + " --out '" + a.path.string() + "'").code, 0);
  ASSERT_EQ(run_attnlab(kTiny + " --out '" + b.path.string() + "'").code, 0);
  EXPECT_EQ(read_file(a.path / "model.safetensors"), read_file(b.path / "model.safetensors"));
  auto without_seconds = [](const fs::path& p) {
    std::string out;
    for (const std::string& l : lines(read_file(p))) out += l.substr(0, l.rfind(',')) + "\n";
    return out;
  };
  EXPECT_EQ(without_seconds(a.path / "log.csv"), without_seconds(b.path / "log.csv"));
}

TEST(CliTrain, NeverOverwritesWithoutForce) {
  TempDir d;
  ASSERT_EQ(run_attnlab(kTiny + " --out '" + d.path.string() + "'").code, 0);
  const std::string before = read_file(d.path / "model.safetensors");
  expect_one_line_error(run_attnlab(kTiny + " --seed 4 --out '" + d.path.string() + "'"), "--force");
  EXPECT_EQ(read_file(d.path / "model.safetensors"), before);
  const CliRun forced = run_attnlab(kTiny + " --seed 4 --force --out '" + d.path.string() + "'");
  ASSERT_EQ(forced.code, 0) << forced.err;
  EXPECT_NE(read_file(d.path / "model.safetensors"), before);
}

TEST(CliTrain, ShapesThatCannotWorkAreOneLineNamingTheFlag) {
  TempDir d;
  const std::string out = " --out '" + d.path.string() + "'";
  expect_one_line_error(run_attnlab("train --dim 64 --heads 3" + out), "--heads");
  expect_one_line_error(run_attnlab("train --patch 5" + out), "--patch");
  expect_one_line_error(run_attnlab("train --lr 0" + out), "--lr");
  expect_one_line_error(run_attnlab("train --lr -0.1" + out), "--lr");
  expect_one_line_error(run_attnlab("train --batch 0" + out), "--batch");
  expect_one_line_error(run_attnlab("train --batch -5" + out), "--batch");
  expect_one_line_error(run_attnlab("train --steps 0" + out), "--steps");
  expect_one_line_error(run_attnlab("train --minutes 0" + out), "--minutes");
  expect_one_line_error(run_attnlab("train --steps 5 --minutes 1" + out), "--steps or --minutes");
  expect_one_line_error(run_attnlab("train --pool max" + out), "--pool");
  expect_one_line_error(run_attnlab("train --pos rope" + out), "--pos");
  expect_one_line_error(run_attnlab("train --data cifar" + out), "--data");
  expect_one_line_error(run_attnlab("train --dim 18 --heads 2 --pos sincos" + out), "--pos sincos");
  expect_one_line_error(run_attnlab("train --wings 2" + out), "unknown option");
  expect_one_line_error(run_attnlab("train --steps 5"), "--out");
  EXPECT_FALSE(fs::exists(d.path));  // nothing written
}

// The window's --train (the hover benchmark over the Train tab's model) goes with --hover-bench
// only, and not with --model: one line, exit 2, before any window opens.
TEST(CliTrain, TheWindowsTrainReplayNeedsHoverBenchAndNoModel) {
  TempDir d;
  expect_one_line_error(run_attnlab("--train"), "--hover-bench");
  expect_one_line_error(run_attnlab("--hover-bench '" + (d.path / "h.json").string() + "' --train --model m"), "--model");
  EXPECT_FALSE(fs::exists(d.path / "h.json"));
}

TEST(CliTrain, CtrlCStopsAndStillWrites) {
  TempDir d;
  // A run of a minute in the background, sent SIGINT after 8 seconds (the dataset is read
  // in under one).
  const fs::path err = temp_dir() / "train-sigint.err";
  const std::string cmd = "env -u DISPLAY '" + std::string(ATTNLAB_BINARY) +
                          "' train --minutes 1 --depth 1 --dim 16 --heads 2 --patch 7 --batch 16 --out '" + d.path.string() +
                          "' >/dev/null 2>'" + err.string() + "' & pid=$!; sleep 8; kill -INT $pid; wait $pid";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << read_file(err);
  EXPECT_NE(read_file(err).find("stopped by Ctrl-C"), std::string::npos) << read_file(err);
  EXPECT_TRUE(fs::exists(d.path / "model.safetensors"));
  EXPECT_TRUE(fs::exists(d.path / "config.json"));
  EXPECT_GE(lines(read_file(d.path / "log.csv")).size(), 2u);
}
