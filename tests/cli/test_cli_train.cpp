// `attnlab train` as a user runs it: a short training writes a checkpoint that `attnlab vit`
// reads and whose predictions are the trainer's own; the same seed gives the same files; bad
// flags, an existing folder and Ctrl-C. The layers' similarity (`attnlab vit --cka`, `render
// --view vit-cka`) against PyTorch's and core's numbers, one model and two. Needs Debian's
// dataset-fashion-mnist (setup.sh --tests).
#include "core/io/fashion_mnist.hpp"
#include "core/io/image.hpp"
#include "core/io/safetensors.hpp"
#include "core/io/safetensors_write.hpp"
#include "core/vit/vit.hpp"
#include "core/vit/vit_similarity.hpp"
#include "core/vit/vit_train.hpp"
#include "command_support.hpp"
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

using CliRun = attnlab::testing::CommandRun;

/// Runs `prefix attnlab args` through the shell, capturing stdout and stderr.
CliRun run_attnlab(const std::string& args, const std::string& prefix = "") {
  return attnlab::testing::run_attnlab_binary(ATTNLAB_BINARY, args, "train", prefix);
}

using attnlab::testing::expect_one_line_error;

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
  const VitTrainShape shape{.patch = 7, .D = 16, .depth = 1, .heads = 2, .mlp_hidden = 32};
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

// Each `train ARGS --out DIR` of `cases` ({ARGS, what its one-line error must name}) is refused,
// and nothing is written in DIR.
namespace {
void expect_train_refused(std::initializer_list<std::pair<const char*, const char*>> cases) {
  TempDir d;
  for (const auto& [args, named] : cases)
    expect_one_line_error(run_attnlab("train " + std::string(args) + " --out '" + d.path.string() + "'"), named);
  EXPECT_FALSE(fs::exists(d.path));
}
}  // namespace

TEST(CliTrain, ShapesThatCannotWorkAreOneLineNamingTheFlag) {
  expect_train_refused({
      {"--dim 64 --heads 3", "--heads"},
      {"--patch 5", "--patch"},
      {"--lr 0", "--lr"},
      {"--lr -0.1", "--lr"},
      {"--batch 0", "--batch"},
      {"--batch -5", "--batch"},
      {"--steps 0", "--steps"},
      {"--minutes 0", "--minutes"},
      {"--steps 5 --minutes 1", "--steps or --minutes"},
      {"--pool max", "--pool"},
      {"--pos rope", "--pos"},
      {"--data cifar", "--data"},
      {"--dim 18 --heads 2 --pos sincos", "--pos sincos"},
      {"--wings 2", "unknown option"},
  });
  expect_one_line_error(run_attnlab("train --steps 5"), "--out");
}

// The masked-patch task on the safari photo: a tiny run's checkpoint is timm's VisionTransformer
// with a head on every token (global_pool ""), opens in `attnlab vit` with no classifier, and its
// log holds the fixed crops' loss; the same seed gives the same bytes.
TEST(CliTrain, AMaskedPatchRunOnThePhotoWritesAViTWithATokenHead) {
  TempDir a, b;
  const std::string tiny = "train --task masked --steps 12 --depth 1 --dim 16 --heads 2 --crop 32 --patch 8 --batch 8 --seed 2 --image '" +
                           asset("safari.jpg").string() + "'";
  const CliRun r = run_attnlab(tiny + " --out '" + a.path.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("fixed crops loss"), std::string::npos) << r.out;
  const SafetensorsFile saved = read_safetensors(a.path / "model.safetensors");
  EXPECT_EQ(saved.tensors.at("head.weight").shape, (std::vector<std::int64_t>{3 * 8 * 8, 16}));
  EXPECT_TRUE(saved.tensors.count("norm.weight"));
  EXPECT_EQ(saved.tensors.at("pos_embed").shape, (std::vector<std::int64_t>{1, 17, 16}));  // sine-cosine by default
  const Matrix codes = sincos_position_embedding(4, 4, 16);
  for (int i = 0; i < 17 * 16; ++i) EXPECT_EQ(saved.tensors.at("pos_embed").values[static_cast<std::size_t>(i)], codes.data()[i]);
  const auto config = nlohmann::json::parse(read_file(a.path / "config.json"));
  EXPECT_EQ(config.at("global_pool"), "");
  EXPECT_EQ(config.at("attnlab").at("task"), "masked-patches");
  EXPECT_FLOAT_EQ(config.at("attnlab").at("mask_ratio").get<float>(), 0.75f);
  const auto log = lines(read_file(a.path / "log.csv"));
  ASSERT_GE(log.size(), 2u);
  EXPECT_EQ(log[0], "step,loss,fixed_crops_loss,seconds");
  EXPECT_EQ(log.back().substr(0, 3), "12,");
  const CliRun info = run_attnlab("vit --model '" + a.path.string() + "' --image '" + asset("safari.jpg").string() + "' --resize 32 --info");
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_NE(info.out.find("classes: 0"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("token head: 192"), std::string::npos) << info.out;
  ASSERT_EQ(run_attnlab(tiny + " --out '" + b.path.string() + "'").code, 0);
  EXPECT_EQ(read_file(a.path / "model.safetensors"), read_file(b.path / "model.safetensors"));
}

TEST(CliTrain, EachTasksOptionsAreRefusedForTheOther) {
  expect_train_refused({
      {"--task masked --pool avg", "--pool"},
      {"--task masked --augment on", "--augment"},
      {"--crop 32", "--crop"},
      {"--mask-ratio 0.5", "--mask-ratio"},
      {"--task masked --mask-ratio 1", "--mask-ratio"},
      {"--task masked --crop 60 --patch 8", "--patch"},
      {"--task mae", "--task"},
      {"--task masked --image /nonexistent/photo.jpg --steps 2", "photo.jpg"},
  });
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

namespace {

/// `attnlab vit --cka`'s CSV: the header's labels (after "layer"), each row's label and values.
struct CkaCsv {
  std::vector<std::string> cols, rows;
  Eigen::MatrixXd m;
};

CkaCsv parse_cka_csv(const std::string& text) {
  CkaCsv c;
  const auto ls = lines(text);
  if (ls.empty()) return c;
  auto cells = [](const std::string& line) {
    std::vector<std::string> v;
    std::istringstream in(line);
    for (std::string cell; std::getline(in, cell, ',');) v.push_back(cell);
    return v;
  };
  const auto head = cells(ls[0]);
  EXPECT_EQ(head.at(0), "layer");
  c.cols.assign(head.begin() + 1, head.end());
  c.m.resize(static_cast<Eigen::Index>(ls.size() - 1), static_cast<Eigen::Index>(c.cols.size()));
  for (std::size_t i = 1; i < ls.size(); ++i) {
    const auto v = cells(ls[i]);
    EXPECT_EQ(v.size(), c.cols.size() + 1) << ls[i];
    c.rows.push_back(v.at(0));
    for (std::size_t j = 1; j < v.size() && j <= c.cols.size(); ++j)
      c.m(static_cast<Eigen::Index>(i - 1), static_cast<Eigen::Index>(j - 1)) = std::stod(v[j]);
  }
  return c;
}

std::vector<Image> fashion_test_images(int count) {
  const FashionMnistSplit split = load_fashion_mnist(false);
  std::vector<Image> out;
  for (int i = 0; i < count; ++i) out.push_back(fashion_mnist_image(split, i));
  return out;
}

const std::vector<std::string> kSevenLabels = {"input", "L0", "L1", "L2", "L3", "L4", "L5"};

std::string fashion_model_arg() { return "'" + asset("fashion_vit").string() + "'"; }

/// A copy of the bundled model in `dir` (model.safetensors and config.json), with the last
/// block's MLP output weights multiplied by `scale_fc2`.
fs::path fashion_copy(const fs::path& dir, float scale_fc2) {
  fs::create_directories(dir);
  SafetensorsFile f = read_safetensors(asset("fashion_vit/model.safetensors"));
  for (float& v : f.tensors.at("blocks.5.mlp.fc2.weight").values) v *= scale_fc2;
  write_safetensors(dir / "model.safetensors", f);
  fs::copy_file(asset("fashion_vit/config.json"), dir / "config.json");
  return dir;
}

}  // namespace

// The bundled model over the first 500 test images, against tests/vit/make_cka_vit_golden.py
// (PyTorch's tokens, numpy in float64). The CSV prints each value as the shortest float32
// string (6e-8 at most); the matrices agree to 2e-8 before (test VitCka.Fashion…); 1e-6.
TEST(CliCka, TheBundledModelOverFiveHundredTestImagesIsPyTorchsMatrix) {
  const CliRun r = run_attnlab("vit --model " + fashion_model_arg() + " --cka");
  ASSERT_EQ(r.code, 0) << r.err;
  const CkaCsv c = parse_cka_csv(r.out);
  EXPECT_EQ(c.cols, kSevenLabels);
  EXPECT_EQ(c.rows, kSevenLabels);
  std::ifstream in(fs::path(ATTNLAB_SOURCE_DIR) / "tests/vit/data/fashion/cka_golden.json");
  const auto golden = nlohmann::json::parse(in).at("cka_500");
  ASSERT_EQ(c.m.rows(), 7);
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 7; ++j) EXPECT_NEAR(c.m(i, j), golden[i][j].get<double>(), 1e-6) << i << "," << j;
}

// --against: model A's layers (rows) against model B's (columns) over the same examples, as
// core computes them. B is A with its last block's MLP output halved: up to L4 the tokens are
// A's (CKA 1), at L5 they are not. A copy of A against A has ones on the diagonal and is the
// one-model matrix.
TEST(CliCka, ASecondModelIsComparedLayerByLayerOverTheSameExamples) {
  TempDir d;
  const fs::path b = fashion_copy(d.path / "b", 0.5f), same = fashion_copy(d.path / "same", 1.0f);
  const CliRun r = run_attnlab("vit --model " + fashion_model_arg() + " --cka --cka-count 50 --against '" + b.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const CkaCsv c = parse_cka_csv(r.out);
  EXPECT_EQ(c.rows, kSevenLabels);
  EXPECT_EQ(c.cols, kSevenLabels);
  const VitModel ma = load_vit(asset("fashion_vit")), mb = load_vit(b);
  const Eigen::MatrixXd want = vit_cka(ma, mb, fashion_test_images(50), 0, vit_memory_budget()).cka;
  ASSERT_EQ(c.m.rows(), 7);
  EXPECT_LE((c.m - want).cwiseAbs().maxCoeff(), 1e-6);  // the CSV's float32 strings
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(c.m(i, i), 1.0, 1e-6) << i;
  EXPECT_LT(c.m(6, 6), 0.9999) << "the last block differs";

  const CliRun self = run_attnlab("vit --model " + fashion_model_arg() + " --cka --cka-count 50 --against '" + same.string() + "'");
  const CliRun one = run_attnlab("vit --model " + fashion_model_arg() + " --cka --cka-count 50");
  ASSERT_EQ(self.code, 0) << self.err;
  ASSERT_EQ(one.code, 0) << one.err;
  const CkaCsv cs = parse_cka_csv(self.out), co = parse_cka_csv(one.out);
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(cs.m(i, i), 1.0, 1e-6) << i;
  EXPECT_LE((cs.m - co.m).cwiseAbs().maxCoeff(), 1e-6);
}

// The view drawn headless records what it drew: the sidecar's matrix is core's vit_cka on the
// same images (one thread, as the view runs it: the same operations; JSON keeps doubles).
TEST(CliCka, TheRenderedViewRecordsCoresNumbersForTestImagesAndThePhoto) {
  TempDir d;
  fs::create_directories(d.path);
  const fs::path image = asset("fashion_vit/images/14_bag.png");
  const std::string base = "render --model " + fashion_model_arg() + " --image '" + image.string() + "' --view vit-cka --size 900x600";
  const CliRun r = run_attnlab(base + " --cka-count 50 --out '" + (d.path / "tests.png").string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const CliRun p = run_attnlab(base + " --cka-examples photo --out '" + (d.path / "photo.png").string() + "'");
  ASSERT_EQ(p.code, 0) << p.err;
  // The sidecar holds the examples (cka.examples, cka.count): --from draws the same picture.
  const CliRun again = run_attnlab("render --from '" + (d.path / "tests.json").string() + "' --out '" + (d.path / "again.png").string() + "'");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(read_file(d.path / "again.png"), read_file(d.path / "tests.png"));
  const VitModel model = load_vit(asset("fashion_vit"));
  const std::vector<Image> photo = {load_image(image)};
  for (const auto& [file, want, tokens] : {std::tuple{"tests.json", vit_cka(model, model, fashion_test_images(50), 0, vit_memory_budget(), 1), 2500},
                                           std::tuple{"photo.json", vit_cka(model, model, photo, 0, vit_memory_budget(), 1), 50}}) {
    SCOPED_TRACE(file);
    std::ifstream in(d.path / file);
    const auto j = nlohmann::json::parse(in);
    const auto& drawn = j.at("cka_drawn");
    EXPECT_TRUE(drawn.at("current").get<bool>());
    EXPECT_EQ(drawn.at("rows").get<std::vector<std::string>>(), kSevenLabels);
    EXPECT_EQ(drawn.at("tokens"), tokens);
    EXPECT_EQ(want.examples, tokens);
    for (int i = 0; i < 7; ++i)
      for (int k = 0; k < 7; ++k) EXPECT_NEAR(drawn.at("cka")[i][k].get<double>(), want.cka(i, k), 1e-12) << i << "," << k;
  }
}

TEST(CliCka, BadArgumentsAreOneLineAndExitTwo) {
  const std::string a = "vit --model " + fashion_model_arg();
  const std::string other = "'" + (fs::path(ATTNLAB_SOURCE_DIR) / "tests/vit/data/timm_f32").string() + "'";
  expect_one_line_error(run_attnlab(a + " --cka --cka-count 5 --against " + other), "50 tokens per image and model B 17");
  expect_one_line_error(run_attnlab(a + " --cka --cka-examples photo"), "--image");
  expect_one_line_error(run_attnlab(a + " --cka --cka-examples pictures"), "--cka-examples");
  expect_one_line_error(run_attnlab(a + " --cka --cka-count 1"), "--cka-count");
  expect_one_line_error(run_attnlab(a + " --against " + other + " --image x.png"), "--against goes with --cka");
  expect_one_line_error(run_attnlab(a + " --cka --distance"), "one of");
  expect_one_line_error(run_attnlab(a + " --cka", "ATTNLAB_MEMORY_BUDGET_MB=1 "), "images fit");
  TempDir d;
  fs::create_directories(d.path);
  expect_one_line_error(run_attnlab("render --model " + fashion_model_arg() + " --image '" + asset("safari.jpg").string() +
                                    "' --view vit-cka --cka-count 0 --out '" + (d.path / "x.png").string() + "'"),
                        "--cka-count");
  expect_one_line_error(run_attnlab("render --model " + fashion_model_arg() + " --image '" + asset("safari.jpg").string() +
                                        "' --view vit-cka --out '" + (d.path / "x.png").string() + "'",
                                    "ATTNLAB_MEMORY_BUDGET_MB=1 "),
                        "at most 2 images fit");
  EXPECT_FALSE(fs::exists(d.path / "x.png"));
}
