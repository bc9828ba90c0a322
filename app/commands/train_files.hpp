#pragma once
// What `attnlab train` and the window's Train panel share: the folder a checkpoint goes to (never
// overwritten without asking), the files written there (model.safetensors in timm's names,
// config.json, log.csv) and the accuracy of a model on Fashion-MNIST images.
#include "core/fashion_mnist.hpp"
#include "core/vit_train.hpp"

#include <array>
#include <filesystem>
#include <string>
#include <vector>

namespace attnlab::app {

/// attnlab train's defaults, and the Train tab's: what learned best in 5 minutes on the project's
/// 2-core machine (README, "Train your own ViT").
struct TrainDefaults {
  static constexpr int depth = 4, heads = 4, dim = 96, patch = 7, batch = 128, mlp_ratio = 2, seed = 0;
  static constexpr double lr = 2e-3, minutes = 5.0;
};

/// The masked-patch task's defaults (README, "A second task: masked patches of the photo").
struct MaskedDefaults {
  static constexpr int depth = 4, heads = 4, dim = 64, patch = 8, batch = 64, crop = 64;
  static constexpr double lr = 1.5e-3;
  static constexpr float mask_ratio = 0.75f;
};

/// The first line of log.csv.
inline constexpr const char* kTrainLogHeader = "step,loss,train_accuracy,test_accuracy,seconds\n";

/// Fashion-MNIST's normalization on the three channels (grey copied to each), and its labels:
/// what config.json and VitTrainer::model() are given.
std::array<float, 3> fashion_mnist_mean3();
std::array<float, 3> fashion_mnist_std3();
std::vector<std::string> fashion_mnist_label_names();

/// Makes `dir` ready for a checkpoint: refused (Error, one line) when it exists and `force` is
/// false ("DIR exists: give --force …" from the command line; the window says `refusal` instead
/// when it is not empty), or exists and is not a folder; created, and checked writable.
void prepare_checkpoint_folder(const std::filesystem::path& dir, bool force, const std::string& refusal = "");

/// The first line of log.csv for masked-patch reconstruction: the training batches' loss and
/// the loss on a fixed set of crops with fixed masks (the same every evaluation).
inline constexpr const char* kMaskedLogHeader = "step,loss,fixed_crops_loss,seconds\n";

/// Writes dir/model.safetensors (VitTrainer::tensors()), dir/config.json
/// (vit_train_config_json with the input's normalization and the class names) and dir/log.csv
/// (`log_csv`, its header included), each atomically. Throws Error when one cannot be written.
void write_train_checkpoint(const std::filesystem::path& dir, const VitTrainer& trainer, const std::string& log_csv,
                            const std::array<float, 3>& mean, const std::array<float, 3>& std, const std::vector<std::string>& labels);
/// The same with Fashion-MNIST's normalization and labels.
void write_train_checkpoint(const std::filesystem::path& dir, const VitTrainer& trainer, const std::string& log_csv);

/// The share of the first `count` images of `split` whose arg-max logit is their label
/// (forwards in chunks of 1000).
double fashion_mnist_accuracy(VitTrainer& trainer, const FashionMnistSplit& split, int count);

}  // namespace attnlab::app
