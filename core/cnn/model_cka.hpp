#pragma once
// Representational similarity between any two models over the same images (SPEC §14; Kornblith,
// Norouzi, Lee & Hinton 2019; Raghu et al. 2021, figs. 1–2): one example per image, each layer's
// features flattened — a ViT's block outputs (every token × D), a ResNet's residual-block outputs
// (C × H × W) — and the linear CKA between every layer of A and every layer of B. Exact over all
// the images (the n × n Gram matrices of every layer, centred) when their features fit the
// memory budget; otherwise minibatch CKA (Nguyen, Raghu & Kornblith 2021): the unbiased HSIC of
// Song et al. 2012 over batches of images, summed. docs/MATH.md, "CKA across two models". Unlike
// vit_cka() (core/vit/vit_similarity.hpp), which takes every token of one image as an example.
#include "core/base/types.hpp"
#include "core/cnn/resnet.hpp"
#include "core/io/image.hpp"
#include "core/vit/vit.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attnlab {

/// A model as CKA sees it: named layers, each giving a vector of features for one image.
struct CkaModel {
  std::string name;                 ///< for messages: the checkpoint's file name
  std::vector<std::string> layers;  ///< row (A) or column (B) labels: "L0" … for a ViT, "layer1.0" … for a ResNet
  int input_size = 224;             ///< the side it was trained at: images are made that square (cka_square_image())
  /// The features of one image already input_size × input_size: one vector per layer, each of
  /// the same length for every image. Throws Error("cancelled") when `stop` is set.
  std::function<std::vector<std::vector<float>>(const Image& image, const std::atomic<bool>* stop)> features;
};

/// A ViT's block outputs: L0 … L{depth−1}, each the T × D tokens leaving the block (before the
/// final LayerNorm) flattened; run by the CPU path (vit_layer_tokens()) on `threads` threads.
CkaModel vit_cka_model(const VitModel& model, std::int64_t budget, int threads = 0);

/// A ResNet's residual-block outputs: layer1.0 … (block 0 the first of layer1; the stem is not
/// counted), each C × H × W flattened.
CkaModel resnet_cka_model(const ResnetModel& model, std::int64_t budget, int threads = 0);

/// The image as CKA's example for a model trained at `side`: its short side scaled to `side`
/// (vit_scaled_image()), then the centred side × side square; an image already side × side as
/// it is. Throws Error for an image with no pixels.
Image cka_square_image(const Image& image, int side);

/// Linear CKA between the columns' features centred over the n rows, in the Gram form:
/// ⟨HKH, HLH⟩_F / (‖HKH‖_F ‖HLH‖_F), K = XXᵀ, L = YYᵀ (n × n), H = I − 11ᵀ/n; equal to
/// ‖YᵀX‖²_F / (‖XᵀX‖_F ‖YᵀY‖_F) of the centred features. 0 when either has no variance.
double gram_cka(const Eigen::MatrixXd& K, const Eigen::MatrixXd& L);

/// The unbiased HSIC₁ of Song et al. 2012 from two n × n Gram matrices (n ≥ 4): with K̃, L̃
/// their diagonals set to 0, [tr(K̃L̃) + (1ᵀK̃1)(1ᵀL̃1)/((n−1)(n−2)) − 2/(n−2)·1ᵀK̃L̃1] / (n(n−3)).
double unbiased_hsic(const Eigen::MatrixXd& K, const Eigen::MatrixXd& L);

/// Calls progress(images done, images in all) — each image counted once per model — from the
/// computing thread.
using CrossCkaProgress = std::function<void(int done, int total)>;

/// The CKA matrix of two models and how it was made.
struct CrossCka {
  Eigen::MatrixXd cka;      ///< a.layers × b.layers
  int images = 0;           ///< images used
  int batch = 0;            ///< 0: exact over all the images; else the minibatch size
  double forward_seconds = 0.0, gram_seconds = 0.0;  ///< the time split: both models' passes, the Grams and CKA
};

/// Bytes the exact CKA holds for `count` images whose layers have `features_a` and `features_b`
/// floats per image: every image's features of every layer, and each layer's n × n Gram in double.
std::int64_t cross_cka_bytes(std::int64_t count, std::int64_t features_a, std::int64_t features_b, int layers);

/// cross_cka()'s `batch` that chooses: exact while every image's features fit half the budget
/// (cross_cka_bytes()), else minibatches of min(100, count); image 0's features, computed to tell
/// their size, are used in the pass (the window's CNN view).
inline constexpr int kCkaAutoBatch = -1;

/// The CKA between every layer of `a` (rows) and every layer of `b` (columns) over `count`
/// images, image(i) giving image i (each made square for each model by cka_square_image()).
/// `batch` kCkaAutoBatch: chosen as it says; 0: exact, refused with one line naming the --batch that would fit when the features
/// of all the images would not fit `budget` bytes; `batch` ≥ 4: minibatch CKA over consecutive
/// batches of that many images (a last batch of fewer than 4 is left out: `images` says how many
/// were used). Throws Error for fewer than 2 images (4 with a batch), a batch under 4, a model
/// whose features change length between images, and Error("cancelled") when `stop` is set.
CrossCka cross_cka(const CkaModel& a, const CkaModel& b, int count, const std::function<Image(int)>& image, int batch,
                   std::int64_t budget, const std::atomic<bool>* stop = nullptr, const CrossCkaProgress& progress = {});

}  // namespace attnlab
