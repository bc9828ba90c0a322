#pragma once
// Training a small ViT on the CPU: timm's VisionTransformer (a class token, global_pool "token"
// or "avg", pre-norm blocks, exact GELU), its forward pass over a batch keeping what the
// backward pass needs, the backward pass by hand (docs/MATH.md, "Training a ViT: the backward
// pass"), cross-entropy with label smoothing, and AdamW with linear warm-up, cosine decay and
// global-norm gradient clipping, as PyTorch's torch.optim.AdamW and clip_grad_norm_ do them.
// Products on OpenBLAS's sgemm; the batch is split among threads, each with its own gradient
// buffer, summed in a fixed order: the same seed and thread count give the same numbers.
// Checked against PyTorch autograd (tests/vit/make_train_golden.py) and finite differences.
#include "core/vit/vit.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace attnlab {

/// Which position embedding is added to the tokens entering block 0.
enum class VitPosKind {
  Learned,  ///< a parameter, timm's trunc_normal(0.02) init, trained
  Sincos,   ///< fixed 2-D sine–cosine codes (MAE's get_2d_sincos_pos_embed), not trained
  None,     ///< zeros, not trained (stored as zeros so that timm and load_vit() read it)
};
const char* pos_kind_name(VitPosKind kind);  ///< "learned", "sincos", "none"
const char* pooling_name(VitPooling pooling);  ///< "cls" (timm's global_pool "token"), "avg"

/// What the model learns to do.
enum class VitTask {
  /// One class per image: the pooled token (cls or the patches' mean) through the final norm and
  /// `head` (classes outputs); cross-entropy with label smoothing.
  Classify,
  /// Masked-patch reconstruction (as MAE's pre-training, He et al. 2022): in every image a share of
  /// the patches is masked. A masked patch's token enters block 0 as its position code alone (the
  /// model never sees its pixels), and in every layer no token attends to it: the chapter's random
  /// mask (section 26.10) drops it as a key, so a_ij = 0 for every masked j. Every patch token's
  /// output goes through the final norm (`norm`) and `head` (3P² outputs: the patch's pixels, as
  /// the input is normalized); the loss is the mean squared error over the masked patches' pixels.
  /// The visible tokens see only visible tokens, as MAE's encoder; the masked ones ask from their
  /// position, as its decoder's mask tokens do.
  MaskedPatches,
};
const char* task_name(VitTask task);  ///< "classify", "masked-patches"

/// The model trained: timm's VisionTransformer(img_size, patch_size, in_chans=3, num_classes,
/// global_pool, embed_dim=D, depth, num_heads=heads, mlp_ratio=mlp_hidden/D, class_token=True,
/// qkv_bias=True, no_embed_class=False): the position embedding covers [cls, patches].
struct VitTrainShape {
  int image_rows = 28, image_cols = 28;  ///< input pixels; both multiples of `patch`
  int patch = 4;                         ///< P: kernel = stride of the patch embedding
  int D = 64;                            ///< token width
  int depth = 4;                         ///< blocks
  int heads = 4;                         ///< H, dividing D
  int mlp_hidden = 128;                  ///< the MLP's hidden width
  int classes = 10;
  VitPooling pooling = VitPooling::Token;  ///< Token: `norm` on the class token; Average: `fc_norm` on the patch tokens' mean
  VitPosKind pos = VitPosKind::Learned;
  float eps = 1e-6f;                     ///< LayerNorm's ε (timm's)
  VitTask task = VitTask::Classify;      ///< MaskedPatches: `classes` and `pooling` are not used
  float mask_ratio = 0.75f;              ///< MaskedPatches: the share of each image's patches its data masks (recorded in config.json)

  int grid_rows() const { return image_rows / patch; }
  int grid_cols() const { return image_cols / patch; }
  int N() const { return grid_rows() * grid_cols(); }  ///< patches
  int T() const { return N() + 1; }                    ///< tokens: cls + patches
  /// The head's outputs: `classes`, or 3P² pixels per patch token for MaskedPatches.
  int outputs() const { return task == VitTask::MaskedPatches ? 3 * patch * patch : classes; }
  /// Throws Error naming what does not fit (D not divisible by heads, a patch not dividing the
  /// image, sincos with D not a multiple of 4, non-positive sizes).
  void check() const;
  /// The values a VitTrainer of this shape holds (fixed position codes included): what the Train
  /// tab sets beside a CNN's count.
  std::int64_t parameters() const {
    const std::int64_t d = D, h = mlp_hidden, block = 4 * d + 3 * d * d + 3 * d + d * d + d + 2 * h * d + h + d;
    return d + static_cast<std::int64_t>(T()) * d + 3ll * patch * patch * d + d + depth * block + 2 * d + outputs() * d + outputs();
  }
};

/// The optimizer and the loss.
struct VitTrainSettings {
  double lr = 2e-3;             ///< peak learning rate
  double min_lr = 0.0;          ///< where the cosine ends
  double beta1 = 0.9, beta2 = 0.999, adam_eps = 1e-8;
  double weight_decay = 0.05;   ///< decoupled (AdamW), on matrices only (see VitTrainer)
  int warmup_steps = 100;       ///< lr rises linearly: lr·(s+1)/warmup for step s < warmup
  int total_steps = 1000;       ///< cosine from lr at step warmup to min_lr at total_steps
  double clip_norm = 1.0;       ///< global L2 norm the gradient is clipped to (≤ 0: never)
  double label_smoothing = 0.1; ///< ε: targets (1−ε)·onehot + ε/C (Classify)
};

/// The learning rate of (0-based) step `step`: warm-up then cosine (see VitTrainSettings).
double vit_learning_rate(const VitTrainSettings& s, std::int64_t step);

/// Cross-entropy with label smoothing of one example (torch's F.cross_entropy(z, y,
/// label_smoothing=ε)): C logits at `z`, label y in [0, C), targets q = (1−ε)·onehot(y) + ε/C.
/// Returns −Σ q_c·log softmax(z)_c; when `gradient`, overwrites z with (softmax(z) − q)·scale (the
/// loss's gradient times scale, e.g. 1/B for a batch mean); `correct` (may be null) tells whether
/// the arg-max logit is y. Shared by VitTrainer and CnnTrainer (core/cnn/cnn_train.hpp).
double smoothed_cross_entropy(float* z, int C, int y, double smoothing, double scale, bool gradient, bool* correct);

/// The 2-D sine–cosine position codes of MAE (Kaiming He et al. 2022, get_2d_sincos_pos_embed):
/// for the patch at column x, row y and ω_k = 10000^(−k/(D/4)), k < D/4, the row is
/// [sin(xω), cos(xω), sin(yω), cos(yω)], each D/4 wide; the class token's row is zeros.
/// (1 + rows·cols) × D. D must be a multiple of 4.
Matrix sincos_position_embedding(int rows, int cols, int D);

/// One parameter tensor: where it lives in the flat buffers, its kind, timm name and shape.
struct VitParam {
  VitTensor kind = VitTensor::Count;  ///< which tensor (core/vit/tensor_names.hpp)
  int block = -1;                     ///< its block, −1 for the whole model's tensors
  std::string name;                   ///< timm's, from the table: e.g. "blocks.0.attn.qkv.weight"
  std::vector<std::int64_t> shape;    ///< timm's, e.g. {192, 64}; {64, 3, 4, 4} for the patch conv
  std::size_t offset = 0, size = 0;   ///< in VitTrainer::values() and gradients()
  bool trained = true;                ///< false for fixed position codes (sincos, none)
  bool decay = true;                  ///< weight decay applied (matrices, not biases/norms/cls/pos)
};

/// What one training step saw.
struct VitStepStats {
  double loss = 0.0;       ///< mean cross-entropy over the batch (with label smoothing); MaskedPatches: mean squared error per masked pixel value
  int correct = 0;         ///< images whose arg-max logit was the label (Classify)
  double grad_norm = 0.0;  ///< global L2 norm of the gradient before clipping
  double lr = 0.0;         ///< the rate the update used
};

/// A ViT being trained: its parameters, their gradients and AdamW's moments, in flat float
/// buffers described by params() in timm's state_dict order (cls_token, pos_embed,
/// patch_embed.proj.weight/bias, blocks.i.{norm1, attn.qkv, attn.proj, norm2, mlp.fc1, mlp.fc2},
/// norm or fc_norm, head; for MaskedPatches `norm` and a head of 3P² × D, timm's
/// VisionTransformer with global_pool "" and num_classes 3P², which applies its head to every token). Weight decay, as timm's param_groups_weight_decay: on tensors of 2
/// or more dimensions except cls_token and pos_embed; none on biases and LayerNorms.
/// Images are float, (channel, y, x) order, 3 × image_rows × image_cols each, already normalized.
/// One caller at a time: a VitTrainer is not to be used from two threads at once (its calls
/// start and join their own threads).
class VitTrainer {
 public:
  /// A fresh model initialized as timm does (init_weights, mode ""): Linear weights
  /// trunc_normal(std 0.02, cut at ±2) with zero biases; pos_embed (learned) trunc_normal 0.02;
  /// cls_token normal(std 1e-6); the patch conv PyTorch's default U(±1/√(3P²)) for weight and
  /// bias; LayerNorm w = 1, b = 0. All from one std::mt19937_64 seeded by `seed`.
  /// `threads`: how many threads share a batch (0: one per core). Throws Error for a bad shape.
  VitTrainer(const VitTrainShape& shape, const VitTrainSettings& settings, std::uint64_t seed, int threads = 0);
  ~VitTrainer();
  VitTrainer(const VitTrainer&) = delete;
  VitTrainer& operator=(const VitTrainer&) = delete;
  VitTrainer(VitTrainer&&) noexcept;
  VitTrainer& operator=(VitTrainer&&) noexcept;

  const VitTrainShape& shape() const { return shape_; }
  const VitTrainSettings& settings() const { return settings_; }
  void set_settings(const VitTrainSettings& s) { settings_ = s; }
  int threads() const { return threads_; }
  std::int64_t step() const { return step_; }  ///< updates applied so far

  const std::vector<VitParam>& params() const { return params_; }
  /// The parameter named `name` (timm's; a search over the list: for tests and tools, never a step);
  /// throws Error if there is none.
  const VitParam& param(const std::string& name) const;
  /// The parameter of kind `kind` in block `block` (−1: the whole model's), found by index;
  /// throws Error if the model has none (e.g. fc_norm with token pooling).
  const VitParam& param(VitTensor kind, int block = -1) const;
  std::span<float> values() { return values_; }
  std::span<const float> values() const { return values_; }
  std::span<const float> gradients() const { return grad_; }
  std::span<float> values_of(const VitParam& p) { return std::span<float>(values_).subspan(p.offset, p.size); }
  std::span<const float> values_of(const VitParam& p) const { return std::span<const float>(values_).subspan(p.offset, p.size); }
  std::span<const float> gradient_of(const VitParam& p) const { return std::span<const float>(grad_).subspan(p.offset, p.size); }

  /// Forward and backward over a batch: `images` B·3·rows·cols floats, `labels` B class
  /// indices in [0, classes). Leaves the gradient of the batch's mean loss in gradients()
  /// (unclipped) and returns the loss and the correct count (lr and grad_norm 0). Throws Error
  /// for sizes that do not match or a label out of range.
  VitStepStats compute_gradients(std::span<const float> images, std::span<const int> labels);

  /// Clips the gradient to settings().clip_norm (global L2 norm, as torch's clip_grad_norm_:
  /// factor clip/(norm + 1e-6) when below 1), applies one AdamW update at the rate of step(),
  /// and counts the step. Returns the norm before clipping and the rate used.
  VitStepStats apply_update();

  /// compute_gradients() then apply_update().
  VitStepStats train_step(std::span<const float> images, std::span<const int> labels);

  /// MaskedPatches: forward and backward over a batch of B images with `masked` B·N bytes (1: patch
  /// p of image b, raster order, is masked; at least one per image); the gradient of the mean
  /// squared error over the masked patches' pixel values (their normalized input values, in the
  /// patch embedding's (channel, y, x) order). Returns the loss. Throws Error for sizes that do not
  /// match, an image with no masked patch, or a trainer made for Classify.
  VitStepStats compute_gradients_masked(std::span<const float> images, std::span<const std::uint8_t> masked);
  /// compute_gradients_masked() then apply_update().
  VitStepStats train_step_masked(std::span<const float> images, std::span<const std::uint8_t> masked);
  /// MaskedPatches: the head's predicted pixels of every patch of `count` images masked by `masked`,
  /// (count·N) × 3P² (image after image, patches in raster order; the visible patches' rows are
  /// predicted too, though the loss never asks for them), and the loss of the batch into `loss`
  /// when given. Nothing kept, no gradient.
  Matrix reconstruct(std::span<const float> images, std::span<const std::uint8_t> masked, int count, double* loss = nullptr);

  /// The logits of a batch, B × classes (the same forward as training, nothing kept). Classify only.
  Matrix logits(std::span<const float> images, int count);

  /// The tokens entering block 0 and leaving each block, for `count` images: depth + 1 matrices
  /// of (count·T) × D, image after image, T rows each (cls first): the representations whose
  /// similarity cka_matrix() (core/vit/cka.hpp) measures.
  std::vector<Matrix> layer_tokens(std::span<const float> images, int count);

  /// The model as load_vit() would read it back: a VitModel for VitCpuRunner and the views.
  /// `mean`, `std` and `labels` go to its architecture.
  VitModel model(const std::array<float, 3>& mean, const std::array<float, 3>& std, const std::vector<std::string>& labels) const;

  /// The tensors in timm's names and shapes (F32 values), for write_safetensors().
  SafetensorsFile tensors() const;

 private:
  struct Work;  // one thread's activations and gradient buffer
  /// The forward pass of `count` images (masked: MaskedPatches' count·N mask bytes, or null), and
  /// with `labels` (Classify) or `masked`, the summed loss, whose gradient times `loss_scale` is
  /// added to w.grad when `backward`. `out`: the head's outputs (count × classes, or
  /// count·T × 3P² for MaskedPatches, the class token's rows included).
  double forward_backward(Work& w, const float* images, const int* labels, const std::uint8_t* masked, int count, double loss_scale,
                          bool backward, float* out);
  /// The steps of forward_backward(): the patches cut out of the images and embedded, with the
  /// class token and the position embedding, into w.X[0] (a masked patch: its position code alone);
  /// the blocks, w.X[l] to w.X[l + 1], keeping what the backward pass needs; then the task's head
  /// and loss, and when `backward` the gradient back through everything (backward_blocks()).
  void embed(Work& w, const float* images, const std::uint8_t* masked, int count);
  void forward_blocks(Work& w, const std::uint8_t* masked, int count);
  double reconstruction_loss(Work& w, const std::uint8_t* masked, int count, double loss_scale, bool backward, float* out);
  double classification_loss(Work& w, const int* labels, int count, double loss_scale, bool backward, float* out);
  /// A parameter's values, and its gradient in w.grad, by kind and block (no look-up by name).
  float* value_of(VitTensor kind, int block = -1);
  float* gradient_in(Work& w, VitTensor kind, int block = -1) const;
  /// From dX (w.dX: the gradient of the last block's output) back through the blocks, the
  /// position embedding and the patch embedding into w.grad; `masked` as in forward_backward().
  void backward_blocks(Work& w, const std::uint8_t* masked, int n);
  VitStepStats compute(std::span<const float> images, const int* labels, const std::uint8_t* masked, int B);

  VitTrainShape shape_;
  VitTrainSettings settings_;
  int threads_ = 1;
  std::int64_t step_ = 0;
  std::vector<VitParam> params_;
  /// index_[block + 1][kind]: the parameter's place in params_, −1 where there is none.
  std::vector<std::array<int, kVitTensorKinds>> index_;
  std::vector<float> values_, grad_, m_, v_;
  std::vector<std::unique_ptr<Work>> work_;
};

/// One AdamW update of every trained parameter in `params` (their offset and size in the flat
/// `values`, `grad`, `m`, `v`), at 0-based step `step`: the gradient clipped to s.clip_norm by its
/// global L2 norm (torch's clip_grad_norm_: factor clip/(norm + 1e-6) when below 1), decoupled
/// weight decay lr·s.weight_decay on those with `decay`, then Adam's moments with bias
/// correction, as torch.optim.AdamW. Returns the norm before clipping and the rate used
/// (vit_learning_rate()). Shared by VitTrainer and CnnTrainer.
VitStepStats adamw_update(const VitTrainSettings& s, std::int64_t step, const std::vector<VitParam>& params, std::span<float> values,
                          std::span<const float> grad, std::span<float> m, std::span<float> v);

/// Bytes a VitTrainer of `shape` holds while it trains on batches of `batch` images on `threads`
/// threads (0: one per core) and evaluates: the parameters, their gradient and AdamW's two moments
/// (4 × P floats), the model handed to the views (P), and per thread its own gradient (P) and the
/// activations of VitTrainer's Work for its share of a batch, or the 128 images an evaluation
/// chunk holds when that is more. size_t with checked products (SIZE_MAX when it overflows).
std::size_t vit_train_bytes(const VitTrainShape& shape, int batch, int threads);

/// Refuses training that would need more than `budget` bytes (vit_train_bytes()), before anything
/// is allocated: Error, one line naming the model, the MiB needed, the budget and the largest
/// batch that fits, or that no batch does (a smaller D, depth or MLP width is needed). The
/// memory budget is core/base/budget.hpp's (issue 38); `shape` must have passed check().
void vit_check_train_budget(const VitTrainShape& shape, int batch, int threads, std::uint64_t budget);

/// The timm config.json of a trained model: architecture, num_classes, global_pool, model_args
/// (embed_dim, depth, num_heads, patch_size, mlp_ratio, img_size, in_chans, class_token,
/// global_pool, no_embed_class, pos_embed), pretrained_cfg (mean, std, input_size,
/// num_classes), label_names, and "attnlab" with the position embedding's kind.
std::string vit_train_config_json(const VitTrainShape& shape, const std::array<float, 3>& mean, const std::array<float, 3>& std,
                                  const std::vector<std::string>& labels);

}  // namespace attnlab
