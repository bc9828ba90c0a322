#pragma once
// Residual networks (ResNets; He, Zhang, Ren & Sun 2016) beside the ViTs (SPEC §14): read from
// torchvision's or timm's checkpoints (the same tensor names: conv1, bn1, layer1.0.conv1, …,
// layer2.0.downsample.0/1, fc), BasicBlock (ResNet-18/34) or Bottleneck (ResNet-50/101, the
// stride on the 3×3 convolution as torchvision ≥ 0.2 and timm put it), every batch norm folded
// into the convolution before it at load. The forward and the backward run on the CPU: each
// convolution is im2col and one OpenBLAS sgemm split among the CPU path's threads
// (core/vit/vit_kernels.hpp). The formulas are in docs/MATH.md, "A ResNet beside the ViT".
// Checked against torchvision (tests/cnn/make_resnet_golden.py).
#include "core/base/types.hpp"
#include "core/io/image.hpp"
#include "core/io/safetensors.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace attnlab {

/// One convolution with its batch norm folded in: y = W ⊛ x + b, with W = w·γ/√(σ² + ε) and
/// b = β − μ·γ/√(σ² + ε) per output channel (w PyTorch's Conv2d weight, γ β μ σ² the
/// BatchNorm2d's weight, bias, running mean and running variance; ε = 1e-5, torch's).
struct CnnConv {
  int in = 0, out = 0;  ///< channels
  int k = 1;            ///< kernel side (square)
  int stride = 1;
  int pad = 0;          ///< zeros on each side: k / 2
  Matrix W;             ///< out × in·k·k, each row in (channel, y, x) order (im2col's rows)
  RowVector b;          ///< out
  /// For a 3×3 convolution of stride 1, its Winograd F(2×2, 3×3) weights (Lavin & Gray 2016):
  /// U = G·g·Gᵀ (4 × 4) of every (out, in) kernel g, laid out as 16 matrices out × in, one per
  /// entry (ξ, ν) of U, each row-major: 16·out rows × in columns. Empty for other convolutions.
  Matrix winograd;
  /// Output side for an input side `n`: ⌊(n + 2·pad − k) / stride⌋ + 1.
  int out_size(int n) const { return (n + 2 * pad - k) / stride + 1; }
};

/// One residual block: out = ReLU(F(x) + shortcut(x)), F = conv2(ReLU(conv1(x))) (BasicBlock)
/// or conv3(ReLU(conv2(ReLU(conv1(x))))) (Bottleneck); the shortcut is x, or the 1×1
/// convolution `downsample` where the shape changes.
struct ResnetBlock {
  std::string name;  ///< its tensors' prefix: "layer1.0"
  int stage = 0;     ///< 0 … 3 (layer1 … layer4)
  CnnConv conv1, conv2, conv3;  ///< conv3 has out = 0 in a BasicBlock
  std::optional<CnnConv> downsample;
  bool bottleneck() const { return conv3.out > 0; }
  int out_channels() const { return bottleneck() ? conv3.out : conv2.out; }
};

/// What the tensors and config.json say about the model.
struct ResnetArchitecture {
  bool bottleneck = false;
  std::array<int, 4> stage_blocks{};  ///< residual blocks per stage: {2, 2, 2, 2} for ResNet-18
  int width = 0;        ///< the stem's output channels (64 in the published ResNets)
  int classes = 0;      ///< fc's outputs
  int input_size = 224; ///< the side it was trained at (config.json pretrained_cfg.input_size; else 224)
  std::array<float, 3> mean{0.485f, 0.456f, 0.406f}, std{0.229f, 0.224f, 0.225f};  ///< per RGB channel
  std::vector<std::string> labels;  ///< `classes` names (config.json label_names; else "class N")
  std::int64_t parameters = 0;      ///< elements of the tensors used (batch norms included)
  /// "resnet18", "resnet34", "resnet50", "resnet101", "resnet152" for the published depths;
  /// otherwise "resnet (basic|bottleneck blocks a-b-c-d)".
  std::string name() const;
  int blocks() const { return stage_blocks[0] + stage_blocks[1] + stage_blocks[2] + stage_blocks[3]; }
};

/// A loaded ResNet, weights float32 whatever they were stored in.
struct ResnetModel {
  ResnetArchitecture arch;
  std::uint64_t id = 0;        ///< unique to this load in this process
  std::filesystem::path file;  ///< the checkpoint read
  std::string sha256;          ///< SHA-256 of its bytes ("" when built from values in memory)
  CnnConv stem;                ///< conv1 + bn1 (7×7, stride 2), then ReLU and a 3×3 max pool of stride 2
  std::vector<ResnetBlock> blocks;  ///< every residual block, layer1.0 first (block 0)
  Matrix W_fc;                 ///< classes × features (after the global average pool)
  RowVector b_fc;              ///< classes
};

/// Whether `file` holds a ResNet's tensors (conv1.weight and layer1.0.conv1.weight), told apart
/// from a ViT before either loader runs.
bool is_resnet_checkpoint(const SafetensorsFile& file);

/// Builds a ResNet from tensors in torchvision's names (a safetensors or PyTorch checkpoint
/// opened by open_checkpoint(), or tensors holding their values; batch norms' int64
/// num_batches_tracked are already left out by the readers), with config.json's text ("" when
/// absent: mean, std, input size and labels keep their defaults). Every tensor is checked
/// before any weight is read: missing ones and unknown ones (named), a convolution whose input
/// channels do not follow from the one before, a kernel that is not square and odd, a stage
/// that is empty. `what` names the checkpoint in the one-line Errors. `stop` set from another
/// thread makes the read throw Error("cancelled").
ResnetModel resnet_from_tensors(SafetensorsFile file, const std::string& config_json, const std::string& what,
                                const std::atomic<bool>* stop = nullptr);

/// A ResNet's tensors in torchvision's names with random weights (He initialisation; the last
/// convolution of each residual branch at 0.3 of it, so that the stream neither vanishes nor
/// explodes) and random batch-norm statistics: BasicBlock or Bottleneck, `stage_blocks` blocks
/// per stage, stem width `width` (64 for the published ResNets), `classes` outputs (0: no fc,
/// which the loader refuses), from `seed`. ResNet-18: (false, {2, 2, 2, 2}, 64, 1000); ResNet-50:
/// (true, {3, 4, 6, 3}, 64, 1000). The same tensors for the same arguments on every machine
/// (std::mt19937 and a normal distribution of libstdc++).
SafetensorsFile random_resnet_tensors(bool bottleneck, std::array<int, 4> stage_blocks, int width, int classes, unsigned seed = 42);

/// Loads a checkpoint file (or a folder holding model.safetensors or pytorch_model.bin, as
/// load_vit()) and the config.json beside it. Throws as open_checkpoint() and resnet_from_tensors().
ResnetModel load_resnet(const std::filesystem::path& path, const std::atomic<bool>* stop = nullptr);

/// One line per fact, as vit_info() for a ViT: file, architecture, blocks, classes, input size,
/// mean, std, parameters.
std::string resnet_info(const ResnetModel& model);

/// The image as the ResNet sees it: 3 × H·W, channel after channel, each (x − mean)/std.
struct CnnInput {
  int width = 0, height = 0;
  Matrix x;  ///< 3 × height·width, each row a channel in raster order
};

/// Prepares an image: scaled so its short side is `resize` pixels first (0: as it is;
/// vit_scaled_image()'s filter), then normalised with the model's mean and std. No crop: a
/// ResNet takes any size. Throws Error for an image smaller than 16 pixels a side (the Train
/// tab's ResNets see Fashion-MNIST's 28: a 1 × 1 map after the last stage).
CnnInput cnn_input(const ResnetArchitecture& arch, const Image& image, int resize = 0);

/// The width and height of block `block`'s output map for a `width` × `height` input.
std::array<int, 2> resnet_map_size(const ResnetModel& model, int block, int width, int height);

/// A feature map: `channels` × height·width values, of one image or (the CNN trainer's batch)
/// `count` images side by side in each channel's row.
struct FeatureMap {
  int channels = 0, height = 0, width = 0;
  int count = 1;  ///< images
  Matrix v;       ///< channels × count·height·width, image after image in each row
};

/// What one forward pass leaves: every residual block's output (after its ReLU) and the logits.
struct ResnetPass {
  std::vector<FeatureMap> blocks;  ///< one per residual block, block 0 = layer1.0
  std::vector<float> logits;       ///< classes values, before the softmax
  std::int64_t bytes() const;
};

/// Bytes a gradient pass (the forward keeping every activation, and the backward) of `arch` on
/// a `width` × `height` input holds at its peak beside the weights; the forward alone needs less.
std::int64_t resnet_pass_bytes(const ResnetModel& model, int width, int height);

/// Refuses an input whose gradient pass would not fit `budget` bytes: throws Error with one line
/// giving the MiB needed and the largest --resize that fits.
void resnet_check_budget(const ResnetModel& model, const CnnInput& input, std::int64_t budget);

/// The forward pass on `threads` threads (0: default_threads()). `stop` makes it throw
/// Error("cancelled") between blocks. Throws as resnet_check_budget().
ResnetPass resnet_forward(const ResnetModel& model, const CnnInput& input, std::int64_t budget, int threads = 0,
                          const std::atomic<bool>* stop = nullptr);

/// The scalar whose gradient is taken: class c's logit, or Σ_k z_b[k, row, col], the channels of
/// block b's output at one position summed (the effective receptive field's; Luo et al. 2016).
struct CnnGradientTarget {
  static constexpr int kTopClass = -2;  ///< the likeliest class (the arg-max logit)
  static CnnGradientTarget class_logit(int c) { return {c, -1, 0, 0}; }
  static CnnGradientTarget position_sum(int block, int col, int row) { return {-1, block, col, row}; }
  int klass = -1;
  int block = -1, col = 0, row = 0;
};

/// What one gradient pass leaves.
struct CnnGradients {
  std::vector<FeatureMap> blocks;   ///< block outputs 0 … the target's last
  std::vector<FeatureMap> d_blocks; ///< ∂y/∂ of each of them (same shapes)
  Matrix d_input;                   ///< 3 × H·W: ∂y/∂x, x the normalised input
  int width = 0, height = 0;
  std::vector<float> logits;        ///< a class target only
  int klass = -1;                   ///< the class differentiated (kTopClass resolved); −1 for a position
};

/// One forward and one backward pass of `target`. Throws Error for a class or block or position
/// out of range (named), a model without classes for a class target, and an input over the budget.
CnnGradients resnet_gradients(const ResnetModel& model, const CnnInput& input, const CnnGradientTarget& target,
                              std::int64_t budget, int threads = 0, const std::atomic<bool>* stop = nullptr);

/// Grad-CAM (Selvaraju et al. 2017) at block `block` of a class target's gradients:
/// ReLU(Σ_k α_k·A_k), α_k the mean over positions of ∂y_c/∂A_k, A block `block`'s output;
/// height × width of that block's map, raw (not normalised).
Matrix resnet_grad_cam(const CnnGradients& g, int block);

/// Σ over colour of |∂y/∂x| on the input: height × width.
Matrix cnn_input_gradient_map(const CnnGradients& g);

/// The effective receptive field of position (col, row) of block `block`'s output: Σ over colour
/// of |∂(Σ_k z_b[k, row, col])/∂x|, height × width of the input (Luo et al. 2016; SPEC §13).
Matrix resnet_receptive_field(const ResnetModel& model, const CnnInput& input, int block, int col, int row,
                              std::int64_t budget, int threads = 0);

/// Calls f(conv, weight, norm, block) for every convolution of `model` (const or not) in its
/// state_dict's order, with its tensors' prefixes in torchvision's names and its block (−1 for the
/// stem): the stem ("conv1", "bn1"), then each block's conv1 ("layer1.0.conv1", "layer1.0.bn1"),
/// conv2, conv3 (Bottleneck) and downsample ("….downsample.0", "….downsample.1") where it has one.
/// The one place that order is written.
template <class Model, class F>
void for_each_resnet_conv(Model& model, F&& f) {
  f(model.stem, std::string("conv1"), std::string("bn1"), -1);
  for (std::size_t i = 0; i < model.blocks.size(); ++i) {
    auto& b = model.blocks[i];
    const int block = static_cast<int>(i);
    f(b.conv1, b.name + ".conv1", b.name + ".bn1", block);
    f(b.conv2, b.name + ".conv2", b.name + ".bn2", block);
    if (b.bottleneck()) f(b.conv3, b.name + ".conv3", b.name + ".bn3", block);
    if (b.downsample) f(*b.downsample, b.name + ".downsample.0", b.name + ".downsample.1", block);
  }
}

/// Every convolution of a ResNet in for_each_resnet_conv()'s order.
std::vector<const CnnConv*> resnet_convs(const ResnetModel& model);

/// The gradient of one convolution's parameters: its (folded) weight W and bias b, their shapes.
struct CnnConvGradient {
  Matrix dW;     ///< out × in·k·k
  RowVector db;  ///< out
};

/// A ResNet's parameter gradients, one per convolution in resnet_convs() order, and fc's.
struct ResnetParameterGradients {
  std::vector<CnnConvGradient> convs;
  Matrix dW_fc;     ///< classes × features
  RowVector db_fc;  ///< classes
  /// Sized for `model`, every value 0.
  void zero(const ResnetModel& model);
};

/// One training batch through a ResNet whose batch norms are folded (or absent: the Train
/// tab's, core/cnn/cnn_train.hpp): `count` images of 3 × height × width floats each (image,
/// channel, y, x), already normalized, all through each convolution at once (im2col of every
/// image side by side, one sgemm). The forward pass keeps every activation; `loss_gradient`
/// turns the logits (a copy, count × classes) into ∂loss/∂logits in place; the backward pass
/// adds every parameter's gradient to `grads` (zero()ed for this model): conv weights
/// dW += dy·im2col(x)ᵀ and biases db += Σ dy, fc's dzᵀ·pooled and Σ dz (docs/MATH.md, "Training
/// a small CNN"). Returns the logits. Throws Error for a model without classes, gradients sized
/// for another model, or images that are not `count` of that size. Checked against torch
/// autograd (tests/cnn/make_cnn_train_golden.py).
Matrix resnet_train_batch(const ResnetModel& model, std::span<const float> images, int count, int height, int width,
                          const std::function<void(Matrix&)>& loss_gradient, ResnetParameterGradients& grads, int threads = 1);

/// The logits (count × classes) of a batch laid out as resnet_train_batch() takes it, all
/// through each convolution at once, nothing kept. Throws as it does.
Matrix resnet_batch_logits(const ResnetModel& model, std::span<const float> images, int count, int height, int width, int threads = 1);

/// The stem's k × k kernel (conv1, batch norm folded) as the chapter's fig. 26.21 draws a
/// convolution over the token grid: output channel `out` from input channel `in` (its weights as
/// they are), or with `out` < 0 the sum of |w| over every (output, input) channel pair. Row-major,
/// k·k values. Throws Error for a channel out of range.
std::vector<float> resnet_stem_kernel(const ResnetModel& model, int out, int in);

/// The effective receptive field of position (`col`, `row`) of block `block`, averaged over
/// `count` inputs (input(i) gives input i, all of one size: e.g. cka_square_image() crops at the
/// model's input size), height × width of that size. Throws Error for an input of another size
/// than the first (naming it by index) and what resnet_gradients() throws; calls progress(done,
/// count) after each image when given.
Matrix resnet_mean_receptive_field(const ResnetModel& model, int count, const std::function<CnnInput(int)>& input, int block, int col,
                                   int row, std::int64_t budget, const std::function<void(int, int)>& progress = {});

}  // namespace attnlab