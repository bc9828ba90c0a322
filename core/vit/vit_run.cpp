#include "core/vit/vit_run.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnlab {

int vit_trained_size(const VitArchitecture& arch) { return std::min(arch.pos_rows, arch.pos_cols) * arch.patch; }

std::vector<std::uint8_t> vit_mass_mask(const std::vector<float>& row, float p) {
  if (!(p >= 0.0f && p <= 1.0f)) throw Error(_("the attention mass to keep must be in 0…1"));
  std::vector<std::uint8_t> keep(row.size(), 0);
  double total = 0.0;
  for (const float v : row) total += v;
  if (!(total > 0.0)) return keep;
  std::vector<std::size_t> order(row.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return row[a] < row[b]; });
  double cumulative = 0.0;
  for (const std::size_t j : order) {
    cumulative += row[j] / total;
    keep[j] = cumulative > 1.0 - static_cast<double>(p);
  }
  return keep;
}

VitRun::VitRun(std::shared_ptr<const VitModel> model, const Image& image, int resize, VitRunner& runner,
                     std::int64_t budget, const std::atomic<bool>* stop)
    : model_(std::move(model)) {
  if (!model_) throw Error(_("no model"));
  input_ = vit_input(*model_, image, resize > 0 ? resize : vit_trained_size(model_->arch));
  const VitInput& input = input_;
  if (stop && stop->load()) throw Error(_("cancelled"));
  pass_ = runner.run(*model_, input, budget, stop);
  grid_.cols = input.cols;
  grid_.rows = input.rows;
  grid_.prefix = model_->arch.prefix();
  grid_.covered_w = static_cast<double>(input.width) * image.width / input.scaled_width;
  grid_.covered_h = static_cast<double>(input.height) * image.height / input.scaled_height;
  // The CLS token's rollout up to the last layer (the view's default) is worked in this job,
  // not when a view first asks for it: L vector–matrix products, each a pass over the layer's rows.
  if (stop && stop->load()) throw Error(_("cancelled"));
  rollout_row(layers() - 1, HeadFusion::Mean, 0);
}

std::vector<float> VitRun::patch_row(int layer, HeadChoice head, int query) const {
  return vit_patch_row(pass_, grid_.prefix, layer, head, query);
}

Matrix VitRun::matrix(int layer, HeadChoice head) const {
  if (layer < 0 || layer >= layers()) throw Error(text_format(_("layer %d is outside 0…%d"), layer, layers() - 1));
  if (head.head >= heads()) throw Error(text_format(_("head %d is outside 0…%d"), head.head, heads() - 1));
  if (head.head >= 0) return vit_attention(pass_, layer, head.head);
  return fuse_heads(heads(), head.fusion, [&](int h) { return vit_attention(pass_, layer, h); });
}

float VitRun::prefix_share(int layer, HeadChoice head, int query) const {
  const std::vector<float> rows = vit_attention_rows(pass_, layer, query);
  double share = 0.0;
  const int H = heads(), T = pass_.T;
  for (int h = 0; h < H; ++h) {
    if (head.head >= 0 && h != head.head) continue;
    for (int j = 0; j < grid_.prefix; ++j) share += rows[static_cast<std::size_t>(h) * T + j];
  }
  if (head.head < 0) share /= H;
  return static_cast<float>(std::clamp(share, 0.0, 1.0));
}

std::vector<float> VitRun::rollout_row(int layer, HeadFusion fusion, int query) const {
  if (query < 0 || query >= grid_.T()) throw Error(text_format(_("query token %d is outside 0…%d"), query, grid_.T() - 1));
  const auto key = std::make_tuple(layer, static_cast<int>(fusion), query);
  {
    const std::lock_guard lock(rollout_mutex_);
    if (const auto it = rollouts_.find(key); it != rollouts_.end()) return it->second;
  }
  const std::vector<float> R = vit_rollout_row(pass_, layer, fusion, query);
  std::vector<float> out(R.begin() + grid_.prefix, R.end());
  const std::lock_guard lock(rollout_mutex_);
  rollouts_[key] = out;
  return out;
}

VitHeadStep VitRun::head_step(int layer, int head, int query) const {
  if (layer < 0 || layer >= layers()) throw Error(text_format(_("layer %d is outside 0…%d"), layer, layers() - 1));
  if (head < 0 || head >= heads()) throw Error(text_format(_("head %d is outside 0…%d"), head, heads() - 1));
  if (query < 0 || query >= grid_.T()) throw Error(text_format(_("query token %d is outside 0…%d"), query, grid_.T() - 1));
  const int m = pass_.m;
  // Head h's q and k are columns [h·m, (h+1)·m) of the layer's Q and K (LN1(x) W_q + b_q, …).
  const Matrix& Q = pass_.Q[static_cast<std::size_t>(layer)];
  const Matrix& K = pass_.K[static_cast<std::size_t>(layer)];
  const RowVector q = Q.block(query, static_cast<Eigen::Index>(head) * m, 1, m);
  VitHeadStep step;
  step.layer = layer;
  step.head = head;
  step.query = query;
  step.m = m;
  step.q.assign(q.data(), q.data() + m);
  const RowVector s = (K.middleCols(static_cast<Eigen::Index>(head) * m, m) * q.transpose()).transpose() / std::sqrt(static_cast<float>(m));
  step.scores.assign(s.data(), s.data() + s.size());
  step.max_score = s.maxCoeff();
  step.weights.resize(step.scores.size());
  for (std::size_t j = 0; j < step.scores.size(); ++j) step.Z += std::exp(static_cast<double>(step.scores[j] - step.max_score));
  for (std::size_t j = 0; j < step.scores.size(); ++j)
    step.weights[j] = static_cast<float>(std::exp(static_cast<double>(step.scores[j] - step.max_score)) / step.Z);
  return step;
}

std::vector<float> VitRun::token_norms(int layer) const {
  if (layer < 0 || layer >= layers()) throw Error(text_format(_("layer %d is outside 0…%d"), layer, layers() - 1));
  const RowVector& n = pass_.token_norms[static_cast<std::size_t>(layer)];
  return {n.data(), n.data() + n.size()};
}

std::vector<std::pair<int, float>> VitRun::top_classes(int k) const {
  return vit_top_classes(pass_.logits, k);
}

}  // namespace attnlab
