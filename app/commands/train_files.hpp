#pragma once
// What `attnlab train` and the window's Train panel share: the folder a checkpoint goes to (never
// overwritten without asking), the files written there (model.safetensors in timm's names,
// config.json, log.csv) and the accuracy of a model on Fashion-MNIST images.
#include "core/cnn/cnn_train.hpp"
#include "core/io/fashion_mnist.hpp"
#include "core/vit/vit_train.hpp"

#include <array>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace attnlab::app {

/// A task's defaults, attnlab train's and the Train tab's: what learned best in 5 minutes on the
/// project's 2-core machine (docs/TRAINING.md, "On the command line" and "Masked patches of the photo").
struct TaskDefaults {
  int depth, heads, dim, patch, batch;
  int side;  ///< the images' side in pixels: Fashion-MNIST's 28, or the photo's crops'
  double lr;
  VitPosKind pos;
};
inline constexpr TaskDefaults kClassifyDefaults{4, 4, 96, 7, 128, 28, 2e-3, VitPosKind::Learned};
inline constexpr TaskDefaults kMaskedDefaults{4, 4, 64, 8, 64, 64, 1.5e-3, VitPosKind::Sincos};
constexpr const TaskDefaults& task_defaults(VitTask task) { return task == VitTask::MaskedPatches ? kMaskedDefaults : kClassifyDefaults; }
/// Both tasks': the MLP's width over D, the seed, a timed run's minutes, the masked share of patches.
inline constexpr int kDefaultMlpRatio = 2, kDefaultSeed = 0;
inline constexpr double kDefaultMinutes = 5.0;
inline constexpr float kDefaultMaskRatio = 0.75f;

/// The warm-up of a schedule of `total_steps`: a tenth of it (at least 1), at most half an epoch
/// of `steps_per_epoch` (0: the data has no epochs, as the photo's crops).
int default_warmup_steps(int total_steps, int steps_per_epoch);

/// The first line of log.csv: "step,loss,train_accuracy,test_accuracy,seconds" (Classify), or
/// "step,loss,fixed_crops_loss,seconds" (MaskedPatches: the training batches' loss and the loss
/// on a fixed set of crops with fixed masks, the same every evaluation), with its newline.
const char* train_log_header(VitTask task);
/// One row of log.csv under that header: the step, the batches' mean loss since the last row,
/// their train accuracy (Classify only) and the last evaluation (test accuracy, or the fixed
/// crops' loss), the training seconds so far.
std::string train_log_row(VitTask task, std::int64_t step, double loss, double train_accuracy, double evaluation, double seconds);

/// Fashion-MNIST's normalization on the three channels (grey copied to each), and its labels:
/// what config.json and VitTrainer::model() are given.
std::array<float, 3> fashion_mnist_mean3();
std::array<float, 3> fashion_mnist_std3();
std::vector<std::string> fashion_mnist_label_names();

/// Makes `dir` ready for a checkpoint: refused (Error, one line) when it exists and `force` is
/// false ("DIR exists: give --force …" from the command line; the window says `refusal` instead
/// when it is not empty), or exists and is not a folder. An existing folder is checked writable;
/// a new one is not made here (write_train_checkpoint() makes it whole), only its parent.
void prepare_checkpoint_folder(const std::filesystem::path& dir, bool force, const std::string& refusal = "");

/// Writes dir/model.safetensors (VitTrainer::tensors()), dir/config.json
/// (vit_train_config_json with the input's normalization and the class names) and dir/log.csv
/// (`log_csv`, its header included): a new folder in one step (write_new_folder(): a failed save
/// leaves nothing, and a retry works), or in an existing one (--force) the three files replaced
/// together or not at all (write_files_together()). Throws Error when they cannot be written.
void write_train_checkpoint(const std::filesystem::path& dir, const VitTrainer& trainer, const std::string& log_csv,
                            const std::array<float, 3>& mean, const std::array<float, 3>& std, const std::vector<std::string>& labels);
/// The same with Fashion-MNIST's normalization and labels.
void write_train_checkpoint(const std::filesystem::path& dir, const VitTrainer& trainer, const std::string& log_csv);

/// The same files for the Train tab's CNN: CnnTrainer::tensors() in torchvision's names,
/// cnn_train_config_json() with Fashion-MNIST's normalization and labels, and `log_csv`: a
/// folder load_resnet() opens (the CNN tab's --cnn).
void write_cnn_train_checkpoint(const std::filesystem::path& dir, const CnnTrainer& trainer, const std::string& log_csv);

/// The share of the first `count` images of `split` whose arg-max logit is their label
/// (forwards in chunks of 1000).
double fashion_mnist_accuracy(VitTrainer& trainer, const FashionMnistSplit& split, int count);
/// The same with any model's logits: `logits(images, n)` is n × classes for n images as
/// fashion_mnist_input() makes them.
double fashion_mnist_accuracy(const std::function<Matrix(std::span<const float>, int)>& logits, const FashionMnistSplit& split,
                              int count);

}  // namespace attnlab::app
