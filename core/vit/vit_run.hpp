#pragma once
// A real ViT run once on one image, kept so that every layer, head and query can be read
// without a second forward pass: the attention source the app's ViT views draw from, with what
// those views need beside rows (rollout, mean attention distance, token norms, DINO-style
// masks, the classifier's top classes). The forward pass is any VitRunner (the CPU path or the
// GPU engine); what it leaves is a VitPass, O(L·T·D), from which every row is read.
#include "core/vit/attention_source.hpp"
#include "core/vit/vit.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

namespace attnlab {

/// The short side, in input pixels, of the image a model was trained on: its position
/// embedding's grid times the patch size (224 for a ViT-S/16 at 14 × 14, 28 for the bundled
/// Fashion-MNIST model).
int vit_trained_size(const VitArchitecture& arch);

/// Which patches hold the top `p` of a row's attention mass, as DINO draws its masks (Caron et
/// al. 2021, visualize_attention.py): the weights are sorted ascending and normalized to sum 1,
/// and a patch is kept when the cumulative mass up to and including it exceeds 1 − p. Returns 0/1
/// per value. `p` in [0, 1]; throws Error outside. An all-zero row keeps nothing.
std::vector<std::uint8_t> vit_mass_mask(const std::vector<float>& row, float p);

/// One query's row of one head, worked step by step from the block's input (the chapter's
/// eqs. 26.17–26.20 as a ViT computes them; docs/MATH.md, "A learned ViT"):
/// q_i = LN1(x_i) W_q + b_q and k_j likewise (m = D/H values each), the scores
/// s_ij = q_i · k_j / √m, and a_ij = exp(s_ij − max_j s_ij) / Z with Z = Σ_j exp(s_ij − max).
struct VitHeadStep {
  int layer = 0, head = 0, query = 0;
  int m = 0;                   ///< D/H, the length of q_i and k_j
  std::vector<float> q;        ///< q_i, m values
  std::vector<float> scores;   ///< s_ij, one per key token j (T values, prefix tokens first)
  float max_score = 0;         ///< max_j s_ij, subtracted before exp
  double Z = 0;                ///< Σ_j exp(s_ij − max_score)
  std::vector<float> weights;  ///< a_ij, T values, summing to 1
};

class VitRun final : public AttentionSource {
 public:
  /// Runs `model` on `image`, scaled so its short side is `resize` input pixels (0: the
  /// model's trained size, vit_trained_size()) and cropped to whole patches (vit_input()).
  /// `runner` runs the forward pass within `budget` bytes (vit_memory_budget()); `stop`, when
  /// set by another thread, makes it throw Error("cancelled") between layers. Throws Error when
  /// the image is smaller than a patch or the pass would not fit the budget (one line saying
  /// what size would).
  VitRun(std::shared_ptr<const VitModel> model, const Image& image, int resize, VitRunner& runner,
            std::int64_t budget, const std::atomic<bool>* stop = nullptr);

  SourceGrid grid() const override { return grid_; }
  int layers() const override { return pass_.layers(); }
  int heads() const override { return pass_.H; }
  std::vector<float> patch_row(int layer, HeadChoice head, int query) const override;
  Matrix matrix(int layer, HeadChoice head) const override;

  const VitModel& model() const { return *model_; }
  const std::shared_ptr<const VitModel>& model_ptr() const { return model_; }
  int input_width() const { return input_.width; }    ///< pixels the model saw
  int input_height() const { return input_.height; }
  /// The input the pass ran on (the patches, normalized): what a gradient pass of the same
  /// model and image starts from (core/vit/vit_gradients.hpp).
  const VitInput& input() const { return input_; }
  int patch() const { return model_->arch.patch; }  ///< P, input pixels
  /// The runner that made it: "cpu" or "gpu".
  const std::string& path() const { return pass_.path; }
  /// What the forward pass left (queries and keys of every layer, norms, distance, logits).
  const VitPass& pass() const { return pass_; }

  /// The share of query `query`'s attention that went to the prefix tokens (CLS, registers),
  /// which a patch map leaves out: 1 − Σ_j a_ij over patch keys, for one head, or the mean over
  /// heads for a fused choice. In [0, 1].
  float prefix_share(int layer, HeadChoice head, int query) const;
  /// Row `query` of the attention rollout up to `layer` (vit_rollout_row()), patch keys only;
  /// kept once computed (the CLS row up to the last layer, with the heads' mean, is computed by
  /// the constructor, in the pass's job).
  std::vector<float> rollout_row(int layer, HeadFusion fusion, int query) const;
  /// Row `query` of head `head` in layer `layer`, step by step (VitHeadStep), recomputed from
  /// the layer's queries and keys. Throws Error when layer, head or query is outside the model.
  VitHeadStep head_step(int layer, int head, int query) const;
  /// ‖x_t‖ of every output token of block `layer` (before the final LayerNorm), T values.
  std::vector<float> token_norms(int layer) const;
  /// Mean attention distance in input pixels, layers × heads (vit_attention_distance()).
  const Matrix& distance() const { return pass_.distance; }
  /// The classifier's top `k` classes with softmax probabilities (empty without a classifier).
  std::vector<std::pair<int, float>> top_classes(int k) const;

 private:
  std::shared_ptr<const VitModel> model_;
  VitPass pass_;
  SourceGrid grid_;
  VitInput input_;
  mutable std::mutex rollout_mutex_;
  mutable std::map<std::tuple<int, int, int>, std::vector<float>> rollouts_;  ///< (layer, fusion, query) → patch row
};

}  // namespace attnlab
