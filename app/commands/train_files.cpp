#include "app/commands/train_files.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/io/files.hpp"
#include "core/base/platform.hpp"
#include "core/io/safetensors_write.hpp"


#include <algorithm>
#include <cstdio>

namespace attnlab::app {

int default_warmup_steps(int total_steps, int steps_per_epoch) {
  const int tenth = std::max(1, total_steps / 10);
  return steps_per_epoch > 0 ? std::min(steps_per_epoch / 2, tenth) : tenth;
}

const char* train_log_header(VitTask task) {
  return task == VitTask::MaskedPatches ? "step,loss,fixed_crops_loss,seconds\n" : "step,loss,train_accuracy,test_accuracy,seconds\n";
}

std::string train_log_row(VitTask task, std::int64_t step, double loss, double train_accuracy, double evaluation, double seconds) {
  char row[160];
  if (task == VitTask::MaskedPatches)
    std::snprintf(row, sizeof row, "%lld,%.5f,%.5f,%.2f\n", static_cast<long long>(step), loss, evaluation, seconds);
  else
    std::snprintf(row, sizeof row, "%lld,%.5f,%.4f,%.4f,%.2f\n", static_cast<long long>(step), loss, train_accuracy, evaluation, seconds);
  return row;
}

std::array<float, 3> fashion_mnist_mean3() { return {kFashionMnistMean, kFashionMnistMean, kFashionMnistMean}; }
std::array<float, 3> fashion_mnist_std3() { return {kFashionMnistStd, kFashionMnistStd, kFashionMnistStd}; }
std::vector<std::string> fashion_mnist_label_names() { return {kFashionMnistLabels.begin(), kFashionMnistLabels.end()}; }

void prepare_checkpoint_folder(const std::filesystem::path& given, bool force, const std::string& refusal) {
  namespace fs = std::filesystem;
  const fs::path dir = given.has_filename() ? given : given.parent_path();  // "runs/a/" is "runs/a"
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!force)
      throw Error(refusal.empty()
                      ? text_format(_("%s exists: give --force to overwrite its model.safetensors, config.json and log.csv"),
                                    dir.string().c_str())
                      : refusal);
    if (!fs::is_directory(dir, ec)) throw Error(text_format(_("%s exists and is not a folder"), dir.string().c_str()));
    if (!platform::folder_is_writable(dir)) throw Error(text_format(_("%s: not writable"), dir.string().c_str()));
    return;
  }
  // The folder itself is made by write_train_checkpoint, whole, in one step; here its parent.
  const fs::path parent = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  // TRANSLATORS: a folder, and why the system could not make it.
  if (ec) throw Error(text_format(_("%s: cannot be created (%s)"), parent.string().c_str(), ec.message().c_str()));
  if (!platform::folder_is_writable(parent))
    throw Error(text_format(_("%s: not writable, so %s cannot be made"), parent.string().c_str(), dir.string().c_str()));
}

namespace {
// model.safetensors, config.json and log.csv: a new folder in one step, or in an existing one the
// three replaced together.
void write_checkpoint_files(const std::filesystem::path& given, const SafetensorsFile& tensors, const std::string& config,
                            const std::string& log_csv) {
  const std::filesystem::path dir = given.has_filename() ? given : given.parent_path();  // "runs/a/" is "runs/a"
  const std::vector<std::uint8_t> model = safetensors_bytes(tensors);
  const FileToWrite files[] = {
      {"model.safetensors", std::span<const char>(reinterpret_cast<const char*>(model.data()), model.size())},
      {"config.json", std::span<const char>(config.data(), config.size())},
      {"log.csv", std::span<const char>(log_csv.data(), log_csv.size())}};
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    write_new_folder(dir, files);  // a new folder appears whole or not at all
    return;
  }
  // An existing folder (--force): the three files replaced together or not at all; others kept.
  FileToWrite inside[3];
  for (int i = 0; i < 3; ++i) inside[i] = {dir / files[i].path, files[i].bytes};
  write_files_together(inside, /*overwrite=*/true);
}
}  // namespace

void write_train_checkpoint(const std::filesystem::path& given, const VitTrainer& trainer, const std::string& log_csv,
                            const std::array<float, 3>& mean, const std::array<float, 3>& std, const std::vector<std::string>& labels) {
  write_checkpoint_files(given, trainer.tensors(), vit_train_config_json(trainer.shape(), mean, std, labels), log_csv);
}

void write_cnn_train_checkpoint(const std::filesystem::path& dir, const CnnTrainer& trainer, const std::string& log_csv) {
  write_checkpoint_files(dir, trainer.tensors(),
                         cnn_train_config_json(trainer.shape(), fashion_mnist_mean3(), fashion_mnist_std3(), fashion_mnist_label_names()),
                         log_csv);
}

void write_train_checkpoint(const std::filesystem::path& dir, const VitTrainer& trainer, const std::string& log_csv) {
  write_train_checkpoint(dir, trainer, log_csv, fashion_mnist_mean3(), fashion_mnist_std3(), fashion_mnist_label_names());
}

double fashion_mnist_accuracy(VitTrainer& trainer, const FashionMnistSplit& split, int count) {
  return fashion_mnist_accuracy([&](std::span<const float> in, int n) { return trainer.logits(in, n); }, split, count);
}

double fashion_mnist_accuracy(const std::function<Matrix(std::span<const float>, int)>& logits, const FashionMnistSplit& split,
                              int count) {
  if (count < 0 || count > split.count)
    throw Error(text_format(_("the evaluation reads %d images, but the split has only %d"), count, split.count));
  constexpr int kChunk = 1000;
  const int pixels = 3 * split.rows * split.cols;
  std::vector<float> in;
  int correct = 0;
  for (int b0 = 0; b0 < count; b0 += kChunk) {
    const int n = std::min(kChunk, count - b0);
    in.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(pixels));
    for (int i = 0; i < n; ++i) fashion_mnist_input(split, b0 + i, in.data() + static_cast<std::size_t>(i) * static_cast<std::size_t>(pixels));
    const Matrix z = logits(in, n);
    for (int i = 0; i < n; ++i) {
      Eigen::Index best = 0;
      z.row(i).maxCoeff(&best);
      correct += best == split.labels[static_cast<std::size_t>(b0 + i)];
    }
  }
  return count > 0 ? static_cast<double>(correct) / count : 0.0;
}

}  // namespace attnlab::app
