// The bundled, trained Fashion-MNIST ViT (assets/fashion_vit, trained by its train.py): the
// C++ forward pass, on the GPU and on the CPU path, predicts the same class as PyTorch on the 20
// shipped images and on 500 test-set images, with every class probability within 1e-3, and its
// own predictions are right (against the data set's labels) as often as PyTorch's were.
// PyTorch's predictions were written by tests/vit/make_fashion_golden.py.
#include "core/gpu/vit_engine.hpp"
#include "core/vit/vit_cpu.hpp"
#include "gpu_fixture.hpp"
#include "test_support.hpp"
#include "vit/vit_golden.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

namespace attnlab {
namespace {

using testing::GpuTest;

std::filesystem::path source_dir() { return ATTNLAB_SOURCE_DIR; }

nlohmann::json fashion_golden() {
  std::ifstream in(testing::vit_data_dir() / "fashion" / "golden.json");
  return nlohmann::json::parse(in);
}

// Tile k of the mosaic (column k % across, row k / across) as an image of its own.
Image tile(const Image& mosaic, int k, int across, int size) {
  Image out;
  out.width = out.height = size;
  out.rgb.resize(static_cast<std::size_t>(size * size * 3));
  const int x0 = (k % across) * size, y0 = (k / across) * size;
  for (int y = 0; y < size; ++y)
    for (int x = 0; x < size; ++x)
      for (int c = 0; c < 3; ++c) out.at(x, y, c) = mosaic.at(x0 + x, y0 + y, c);
  return out;
}

// What one runner made of one image: its class (-1 when it gave no probabilities), and whether
// it agreed with PyTorch and with the image's label.
struct Prediction {
  int predicted = -1;
  bool agrees = false;  // with PyTorch's class (and every probability within 1e-3, else a failure)
  bool right = false;   // with the data set's label
};

// Checks one runner's prediction against PyTorch's. The probabilities are the classifier's
// softmax as `attnlab vit --top` prints it (vit_top_classes).
Prediction predict(const VitPass& pass, const nlohmann::json& want, const std::string& what) {
  const std::vector<float>& logits = pass.logits;
  const auto ranked = vit_top_classes(logits, static_cast<int>(logits.size()));
  const auto& want_p = want.at("probabilities");
  EXPECT_EQ(ranked.size(), want_p.size()) << what;
  if (ranked.empty() || ranked.size() != want_p.size()) return {};
  for (const auto& [c, p] : ranked)
    EXPECT_NEAR(p, want_p.at(static_cast<std::size_t>(c)).get<double>(), 1e-3) << what << ", class " << c;
  Prediction out;
  out.predicted = ranked.front().first;
  EXPECT_EQ(out.predicted, want.at("predicted").get<int>()) << what;
  out.agrees = out.predicted == want.at("predicted").get<int>();
  out.right = out.predicted == want.at("label").get<int>();
  return out;
}

// How many of `images` PyTorch classified right (golden.json): what our runners must match.
int pytorch_right(const nlohmann::json& images) {
  int n = 0;
  for (const auto& e : images) n += e.at("predicted") == e.at("label");
  return n;
}

class FashionVit : public GpuTest {};

TEST_F(FashionVit, LoadsAsATimmCheckpointWithItsLabels) {
  const VitModel model = load_vit(testing::asset("fashion_vit"));
  EXPECT_EQ(model.arch.patch, 4);
  EXPECT_EQ(model.arch.classes, 10);
  EXPECT_EQ(model.arch.prefix(), 1);
  ASSERT_EQ(model.arch.labels.size(), 10u);
  EXPECT_EQ(model.arch.labels[0], "T-shirt/top");
  EXPECT_EQ(model.arch.labels[8], "Bag");
}

TEST_F(FashionVit, ShippedImagesPredictAsPyTorchOnGpuAndCpu) {
  const nlohmann::json golden = fashion_golden();
  const VitModel model = load_vit(testing::asset("fashion_vit"));
  VitGpuRunner gpu;
  VitCpuRunner cpu;
  ASSERT_EQ(golden.at("shipped").size(), 20u);
  int right_gpu = 0, right_cpu = 0;
  for (const auto& e : golden.at("shipped")) {
    const std::string file = e.at("file").get<std::string>();
    const VitInput input = vit_input(model, load_image(source_dir() / file));
    ASSERT_EQ(input.cols * input.rows, 49) << file;
    const std::int64_t budget = vit_memory_budget();
    const Prediction g = predict(gpu.run(model, input, budget), e, file + " (GPU)");
    const Prediction c = predict(cpu.run(model, input, budget), e, file + " (CPU)");
    EXPECT_TRUE(g.agrees);
    EXPECT_TRUE(c.agrees);
    right_gpu += g.right;
    right_cpu += c.right;
  }
  // Our forward pass really classifies: as many of the shipped images right as PyTorch, which
  // is most of them.
  const int want = pytorch_right(golden.at("shipped"));
  EXPECT_EQ(right_gpu, want);
  EXPECT_EQ(right_cpu, want);
  EXPECT_GE(right_gpu, 16);
  EXPECT_GE(right_cpu, 16);
}

TEST_F(FashionVit, FiveHundredTestImagesPredictAsPyTorchOnGpuAndCpu) {
  const nlohmann::json golden = fashion_golden();
  const auto& mosaic_json = golden.at("mosaic");
  const Image mosaic = load_image(source_dir() / mosaic_json.at("file").get<std::string>());
  const int across = mosaic_json.at("across").get<int>(), size = golden.at("tile").get<int>();
  const VitModel model = load_vit(testing::asset("fashion_vit"));
  VitGpuRunner gpu;
  VitCpuRunner cpu;
  const auto& tiles = mosaic_json.at("tiles");
  ASSERT_EQ(tiles.size(), 500u);
  int agree_gpu = 0, agree_cpu = 0, right_gpu = 0, right_cpu = 0;
  for (std::size_t k = 0; k < tiles.size(); ++k) {
    const VitInput input = vit_input(model, tile(mosaic, static_cast<int>(k), across, size));
    const std::string what = "test image " + std::to_string(k);
    const std::int64_t budget = vit_memory_budget();
    const Prediction g = predict(gpu.run(model, input, budget), tiles[k], what + " (GPU)");
    const Prediction c = predict(cpu.run(model, input, budget), tiles[k], what + " (CPU)");
    agree_gpu += g.agrees;
    agree_cpu += c.agrees;
    right_gpu += g.right;
    right_cpu += c.right;
  }
  EXPECT_EQ(agree_gpu, 500);
  EXPECT_EQ(agree_cpu, 500);
  // Our predictions, against the labels: right as often as PyTorch's (golden.json's count, and
  // the same count made again from its per-image predictions).
  const int want = mosaic_json.at("correct").get<int>();
  EXPECT_EQ(pytorch_right(tiles), want);
  EXPECT_EQ(right_gpu, want);
  EXPECT_EQ(right_cpu, want);
  // A model that learned: at least 88 % of these 500 right (442 for the shipped weights; the
  // whole test set's accuracy, 88.11 %, is in assets/fashion_vit/train_log.txt).
  EXPECT_GE(right_gpu, 440);
  EXPECT_GE(right_cpu, 440);
}

}  // namespace
}  // namespace attnlab
