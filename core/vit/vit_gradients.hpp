#pragma once
// Gradients through a loaded ViT on the CPU (SPEC §13): one forward pass over one image keeping
// what the backward pass needs (every block's input, LayerNorms, q/k/v, A, the MLP's hidden layer),
// then one backward pass of one scalar: a class logit y_c, or the sum of one token's features
// in the residual stream after a block. It gives ∂y/∂A for every block's attention matrix and
// ∂y/∂x for the model's input tensor, the two things the class-relevance maps
// (core/vit/relevance.hpp) and the effective receptive field are made from. No parameter
// gradients: the weights are constants here. The forward is the one of docs/MATH.md, "A learned
// ViT" (the CPU runner's, vit_cpu.cpp, computed unfused); the backward is the trainer's
// (docs/MATH.md, "Training a ViT: the backward pass"), with layer scale and registers. Checked
// against PyTorch autograd (tests/vit/make_relevance_golden.py).
#include "core/vit/vit.hpp"

#include <atomic>
#include <cstdint>
#include <vector>

namespace attnlab {

/// The scalar whose gradient is taken.
struct VitGradientTarget {
  /// The class that stands for "the likeliest class" (the arg-max logit, known after the forward).
  static constexpr int kTopClass = -2;
  /// y_c, class c's logit (before the softmax), or the likeliest class's for kTopClass. The
  /// model must have a classifier.
  static VitGradientTarget class_logit(int c) { return {c, -1, -1}; }
  /// Σ_d z_l[t, d]: the features of token `token` (prefix tokens counted: cls, registers, then
  /// the patches in raster order) summed, in the residual stream after block `layer` (before
  /// the final LayerNorm). The pass stops at that block.
  static VitGradientTarget token_sum(int layer, int token) { return {-1, layer, token}; }
  int klass = -1;  ///< ≥ 0 or kTopClass: the class logit
  int layer = -1;  ///< ≥ 0: the token sum after this block
  int token = -1;
};

/// What one gradient pass leaves.
struct VitGradients {
  int T = 0, H = 0;           ///< tokens (prefix + N), heads
  int prefix = 0;             ///< cls and registers, before the patches
  int cols = 0, rows = 0;     ///< the patch grid
  int patch = 0;              ///< P, input values per patch side
  VitPooling pooling = VitPooling::Token;
  /// Per block 0 … the target's last, (H·T) × T: head h's A (after the softmax, eq. 26.20) in
  /// rows [h·T, (h+1)·T).
  std::vector<Matrix> A;
  /// The same shapes: ∂y/∂A_l, the gradient with respect to the weights after the softmax.
  std::vector<Matrix> dA;
  /// N × 3P²: ∂y/∂x for each patch's input values, in VitInput::patches' (channel, y, x) order;
  /// x is the model's input tensor (after resizing and normalisation).
  Matrix d_patches;
  /// The classifier's logits (a class target only; empty otherwise).
  std::vector<float> logits;
  /// The class whose logit was differentiated (kTopClass resolved); −1 for a token target.
  int klass = -1;
  /// Wall-clock milliseconds of the forward pass (keeping the activations) and of the backward
  /// pass, as this call measured them: how a gradient pass's time splits (attnlab-bench).
  double forward_ms = 0.0, backward_ms = 0.0;
  int N() const { return cols * rows; }
};

/// Bytes a gradient pass of `arch` over `blocks` blocks on `T` tokens holds at its peak beside
/// the weights: each block's kept activations and A, the gradients ∂y/∂A, and the working
/// buffers of the backward pass.
std::int64_t vit_gradient_bytes(const VitArchitecture& arch, int T, int blocks);

/// Refuses, before anything is allocated, an input whose gradient pass over `blocks` blocks
/// would not fit `budget` bytes: throws Error with one line saying the MiB needed and the
/// largest --resize that would fit.
void vit_check_gradient_budget(const VitArchitecture& arch, const VitInput& input, int blocks, std::int64_t budget);

/// One forward and one backward pass of `target` through `model` on `input` (the CPU path,
/// OpenBLAS's sgemm). `stop`, when set from another thread, makes it throw Error("cancelled")
/// between blocks. Throws Error for a class target on a model without a classifier, a class,
/// layer or token out of range (named), and an input over the budget
/// (vit_check_gradient_budget()).
VitGradients vit_gradients(const VitModel& model, const VitInput& input, const VitGradientTarget& target, std::int64_t budget,
                           const std::atomic<bool>* stop = nullptr);

/// Σ over colour of |∂y/∂x|, put back on the input tensor: rows × P by cols × P values (the
/// input's height × width after its crop to whole patches), row after row.
Matrix vit_input_gradient_map(const VitGradients& g);

}  // namespace attnlab
