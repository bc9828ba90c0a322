#include "core/vit_source.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <numeric>

namespace attnlab {

int vit_trained_size(const VitArchitecture& arch) { return std::min(arch.pos_rows, arch.pos_cols) * arch.patch; }

std::vector<std::uint8_t> vit_mass_mask(const std::vector<float>& row, float p) {
  if (!(p >= 0.0f && p <= 1.0f)) throw Error("the attention mass to keep must be in 0…1");
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

VitSource::VitSource(std::shared_ptr<const VitModel> model, const Image& image, int resize, const std::atomic<bool>* stop)
    : model_(std::move(model)) {
  if (!model_) throw Error("no model");
  auto check = [&] {
    if (stop && stop->load()) throw Error("cancelled");
  };
  const VitInput input = vit_input(*model_, image, resize > 0 ? resize : vit_trained_size(model_->arch));
  check();
  runner_.run(*model_, input);
  check();
  grid_.cols = input.cols;
  grid_.rows = input.rows;
  grid_.prefix = model_->arch.prefix();
  grid_.covered_w = static_cast<double>(input.width) * image.width / input.scaled_width;
  grid_.covered_h = static_cast<double>(input.height) * image.height / input.scaled_height;
  input_w_ = input.width;
  input_h_ = input.height;
  distance_ = vit_attention_distance(runner_, grid_.prefix, grid_.cols, grid_.rows, model_->arch.patch);
}

std::vector<float> VitSource::patch_row(int layer, HeadChoice head, int query) const {
  return vit_patch_row(runner_, grid_.prefix, layer, head, query);
}

Matrix VitSource::matrix(int layer, HeadChoice head) const {
  if (layer < 0 || layer >= layers()) throw Error("layer " + std::to_string(layer) + " is outside 0…" + std::to_string(layers() - 1));
  if (head.head >= heads()) throw Error("head " + std::to_string(head.head) + " is outside 0…" + std::to_string(heads() - 1));
  if (head.head >= 0) return runner_.attention(layer, head.head);
  return fuse_heads(heads(), head.fusion, [&](int h) { return runner_.attention(layer, h); });
}

float VitSource::prefix_share(int layer, HeadChoice head, int query) const {
  double share = 0.0;
  const int H = heads();
  for (int h = 0; h < H; ++h) {
    if (head.head >= 0 && h != head.head) continue;
    const std::vector<float> row = patch_row(layer, HeadChoice{h, HeadFusion::Mean}, query);
    share += 1.0 - std::accumulate(row.begin(), row.end(), 0.0);
  }
  if (head.head < 0) share /= H;
  return static_cast<float>(std::clamp(share, 0.0, 1.0));
}

std::vector<float> VitSource::rollout_row(int layer, HeadFusion fusion, int query) const {
  if (query < 0 || query >= grid_.T()) throw Error("query token " + std::to_string(query) + " is outside 0…" + std::to_string(grid_.T() - 1));
  const Matrix R = vit_rollout(runner_, layer, fusion);
  std::vector<float> out(static_cast<std::size_t>(grid_.N()));
  for (int j = 0; j < grid_.N(); ++j) out[static_cast<std::size_t>(j)] = R(query, grid_.prefix + j);
  return out;
}

VitHeadStep VitSource::head_step(int layer, int head, int query) const {
  if (layer < 0 || layer >= layers()) throw Error("layer " + std::to_string(layer) + " is outside 0…" + std::to_string(layers() - 1));
  if (head < 0 || head >= heads()) throw Error("head " + std::to_string(head) + " is outside 0…" + std::to_string(heads() - 1));
  if (query < 0 || query >= grid_.T()) throw Error("query token " + std::to_string(query) + " is outside 0…" + std::to_string(grid_.T() - 1));
  const VitArchitecture& a = model_->arch;
  const VitBlock& b = model_->blocks[static_cast<std::size_t>(layer)];
  const int D = a.D, m = D / a.heads;
  const Matrix X = layer_norm(runner_.block_input(layer), b.ln1_w, b.ln1_b, a.eps);  // T × D
  // W_qkv is 3D × D (PyTorch's Linear): rows [h·m, (h+1)·m) give head h's query, D further its key.
  const Matrix Wq = b.W_qkv.middleRows(static_cast<Eigen::Index>(head) * m, m);
  const Matrix Wk = b.W_qkv.middleRows(D + static_cast<Eigen::Index>(head) * m, m);
  const RowVector q = X.row(query) * Wq.transpose() + b.b_qkv.segment(static_cast<Eigen::Index>(head) * m, m);
  const Matrix Kh = (X * Wk.transpose()).rowwise() + b.b_qkv.segment(D + static_cast<Eigen::Index>(head) * m, m);
  VitHeadStep step;
  step.layer = layer;
  step.head = head;
  step.query = query;
  step.m = m;
  step.q.assign(q.data(), q.data() + m);
  const RowVector s = (Kh * q.transpose()).transpose() / std::sqrt(static_cast<float>(m));
  step.scores.assign(s.data(), s.data() + s.size());
  step.max_score = s.maxCoeff();
  step.weights.resize(step.scores.size());
  for (std::size_t j = 0; j < step.scores.size(); ++j) step.Z += std::exp(static_cast<double>(step.scores[j] - step.max_score));
  for (std::size_t j = 0; j < step.scores.size(); ++j)
    step.weights[j] = static_cast<float>(std::exp(static_cast<double>(step.scores[j] - step.max_score)) / step.Z);
  return step;
}

std::vector<float> VitSource::token_norms(int layer) const {
  if (layer < 0 || layer >= layers()) throw Error("layer " + std::to_string(layer) + " is outside 0…" + std::to_string(layers() - 1));
  const Matrix& x = runner_.tokens(layer);
  std::vector<float> out(static_cast<std::size_t>(x.rows()));
  for (Eigen::Index t = 0; t < x.rows(); ++t) out[static_cast<std::size_t>(t)] = x.row(t).norm();
  return out;
}

std::vector<std::pair<int, float>> VitSource::top_classes(int k) const {
  const std::vector<float> logits = runner_.logits();
  return vit_top_classes(logits, k);
}

}  // namespace attnlab
