#pragma once
// Training a small ResNet on the CPU beside a ViT (issue 50, item 2: the Train tab's run B "a
// CNN"): torchvision's ResNet with BasicBlocks (conv1 7×7/2, ReLU, max pool 3×3/2, four stages
// of residual blocks, global average pool, fc), narrow, with each batch norm replaced by a
// per-channel bias: the ResNet with its batch norms folded (core/cnn/resnet.hpp) is what trains.
// Batch norm's batch statistics are left out so that a step's numbers do not depend on how the
// batch is split, and so that the model the views see is the one that trained. The loss,
// schedule and optimizer are the ViT's (core/vit/vit_train.hpp: smoothed_cross_entropy,
// vit_learning_rate, adamw_update), so A against B compares the two architectures alone.
// Checked against torch autograd on torchvision's own ResNet (tests/cnn/make_cnn_train_golden.py).
#include "core/cnn/resnet.hpp"
#include "core/vit/vit_train.hpp"

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace attnlab {

/// The ResNet trained: torchvision's ResNet(BasicBlock, stage_blocks, num_classes=classes) with
/// width channels after the stem (64 there), 2·width, 4·width and 8·width in the stages, and
/// norm_layer a per-channel bias.
struct CnnTrainShape {
  int image_side = 28;                    ///< input pixels a side (Fashion-MNIST's 28)
  int width = 16;                         ///< the stem's output channels
  std::array<int, 4> stage_blocks{1, 1, 1, 1};  ///< residual blocks per stage
  int classes = 10;
  /// Throws Error naming what does not fit (non-positive sizes, an image under 16 pixels).
  void check() const;
  /// Parameters (conv weights and biases, fc): what the Train tab sets beside the ViT's count.
  std::int64_t parameters() const;
};

/// A ResNet being trained. Parameters in flat float buffers described by params() in
/// torchvision's state_dict order and names (conv1.weight, bn1.bias, layer1.0.conv1.weight,
/// layer1.0.bn1.bias, …, layer2.0.downsample.0.weight, layer2.0.downsample.1.bias, fc.weight,
/// fc.bias): a convolution's bias is its batch norm's β. Weight decay on conv and fc weights,
/// none on biases (timm's param_groups_weight_decay). Images as VitTrainer's: float, (channel,
/// y, x), 3 × side × side each, normalized. One caller at a time.
class CnnTrainer {
 public:
  /// A fresh model initialized as torchvision's ResNet (zero_init_residual False, its default):
  /// conv weights kaiming_normal_(mode "fan_out", ReLU), std √(2/(out·k·k)); biases 0 (a batch
  /// norm's β); fc PyTorch's Linear default U(±1/√in) for weight and bias. From one
  /// std::mt19937_64 seeded by `seed`. `threads`: how many threads share a batch (0: one per
  /// core). Throws Error for a bad shape.
  CnnTrainer(const CnnTrainShape& shape, const VitTrainSettings& settings, std::uint64_t seed, int threads = 1);

  const CnnTrainShape& shape() const { return shape_; }
  const VitTrainSettings& settings() const { return settings_; }
  std::int64_t step() const { return step_; }
  int threads() const { return threads_; }

  const std::vector<VitParam>& params() const { return params_; }
  std::span<float> values() { return values_; }
  std::span<const float> values() const { return values_; }
  std::span<const float> gradients() const { return grad_; }
  std::span<const float> values_of(const VitParam& p) const { return std::span<const float>(values_).subspan(p.offset, p.size); }
  std::span<const float> gradient_of(const VitParam& p) const { return std::span<const float>(grad_).subspan(p.offset, p.size); }
  /// After values() were written from outside (tests loading a golden file's parameters).
  void values_changed() { sync(); }

  /// Forward and backward over a batch (`images` B·3·side·side floats, `labels` B classes):
  /// the gradient of the batch's mean smoothed cross-entropy in gradients(); returns the loss and
  /// the correct count. Throws Error for sizes that do not match or a label out of range.
  VitStepStats compute_gradients(std::span<const float> images, std::span<const int> labels);
  /// Clip and AdamW (adamw_update()), counting the step.
  VitStepStats apply_update();
  VitStepStats train_step(std::span<const float> images, std::span<const int> labels);

  /// The logits of `count` images, count × classes.
  Matrix logits(std::span<const float> images, int count) const;

  /// The tensors in torchvision's names and shapes: each batch norm as weight 1, bias the
  /// convolution's bias, running_mean 0 and running_var 1 − 10⁻⁵ (so that load_resnet() folds
  /// it to exactly the trained convolution), for write_safetensors().
  SafetensorsFile tensors() const;
  /// The model as load_resnet() reads tensors() and cnn_train_config_json() back.
  ResnetModel model(const std::array<float, 3>& mean, const std::array<float, 3>& std, const std::vector<std::string>& labels) const;

 private:
  void sync();  // the flat values into net_'s convolutions and fc
  struct Slot {  // where a convolution's weight and bias live in the flat buffers
    std::size_t weight = 0, bias = 0;
  };
  CnnTrainShape shape_;
  VitTrainSettings settings_;
  int threads_ = 1;
  std::int64_t step_ = 0;
  std::vector<VitParam> params_;
  std::vector<float> values_, grad_, m_, v_;
  std::vector<Slot> slots_;  // for_each_resnet_conv(net_)'s order
  std::size_t fc_weight_ = 0, fc_bias_ = 0;
  ResnetModel net_;  // the structure (from the loader), its values kept equal to values_
};

/// The config.json of a trained CNN: architecture "resnet", num_classes, pretrained_cfg (mean,
/// std, input_size [3, side, side], num_classes), label_names, and "attnlab" with the stage blocks,
/// the width and how the batch norms were stored.
std::string cnn_train_config_json(const CnnTrainShape& shape, const std::array<float, 3>& mean, const std::array<float, 3>& std,
                                  const std::vector<std::string>& labels);

/// Bytes a CnnTrainer holds while training on batches of `batch` images on `threads` threads: the
/// parameters four times (values, gradient, moments), the views' model, and per thread its own
/// gradient and the gradient pass of its share of the batch (all its images at once).
std::size_t cnn_train_bytes(const CnnTrainShape& shape, int batch, int threads);

}  // namespace attnlab
