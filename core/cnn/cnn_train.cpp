// A small ResNet trained on the CPU (core/cnn/cnn_train.hpp): the structure is the loader's
// (random_resnet_tensors() read by resnet_from_tensors()), the values live in flat buffers for
// AdamW and are copied into the model's convolutions after each update; each example's
// gradient comes from resnet_train_batch(). The batch is split among threads, each with its own
// gradient, summed in a fixed order.
#include "core/cnn/cnn_train.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/base/flush_subnormals.hpp"
#include "core/vit/vit_kernels.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

namespace attnlab {

namespace {

// What a running_var of 1 − 10⁻⁵ and ε = 10⁻⁵ fold to: γ/√(σ² + ε) = 1 in float.
constexpr float kIdentityVariance = 1.0f - 1e-5f;

int part_begin(int count, int parts, int p) { return static_cast<int>(static_cast<std::int64_t>(count) * p / parts); }

}  // namespace

void CnnTrainShape::check() const {
  if (image_side < 16) throw Error(_("a CNN's images need at least 16 pixels a side"));
  if (width < 1 || width > 256) throw Error(_("the CNN's width must be from 1 to 256 channels"));
  for (const int b : stage_blocks)
    if (b < 1 || b > 8) throw Error(_("each of the CNN's four stages needs from 1 to 8 blocks"));
  if (classes < 1) throw Error(_("the CNN needs at least one class"));
}

std::int64_t CnnTrainShape::parameters() const {
  std::int64_t n = 3ll * width * 49 + width, in = width;
  for (int s = 0; s < 4; ++s) {
    const std::int64_t planes = static_cast<std::int64_t>(width) << s;
    for (int i = 0; i < stage_blocks[static_cast<std::size_t>(s)]; ++i) {
      n += in * planes * 9 + planes + planes * planes * 9 + planes;
      if (i == 0 && (s > 0 || in != planes)) n += in * planes + planes;
      in = planes;
    }
  }
  return n + in * classes + classes;
}

std::string cnn_train_config_json(const CnnTrainShape& shape, const std::array<float, 3>& mean, const std::array<float, 3>& std,
                                  const std::vector<std::string>& labels) {
  nlohmann::ordered_json j;
  j["architecture"] = "resnet";
  j["num_classes"] = shape.classes;
  j["pretrained_cfg"] = {{"mean", mean}, {"std", std}, {"input_size", {3, shape.image_side, shape.image_side}}, {"num_classes", shape.classes}};
  j["label_names"] = labels;
  j["attnlab"] = {{"trained_by", "the Train tab (core/cnn/cnn_train.cpp)"},
                  {"block", "basic"},
                  {"stage_blocks", shape.stage_blocks},
                  {"width", shape.width},
                  {"batch_norm", "none trained: each stored as weight 1, running_mean 0, running_var 1 - 1e-5, bias the convolution's bias"}};
  return j.dump(2) + "\n";
}

CnnTrainer::CnnTrainer(const CnnTrainShape& shape, const VitTrainSettings& settings, std::uint64_t seed, int threads)
    : shape_(shape), settings_(settings), threads_(threads > 0 ? threads : vit_kernels::default_threads()) {
  shape_.check();
  // The structure: the loader's reading of a random ResNet of this shape.
  std::vector<std::string> names(static_cast<std::size_t>(shape_.classes));
  for (int c = 0; c < shape_.classes; ++c) names[static_cast<std::size_t>(c)] = "class " + std::to_string(c);
  net_ = resnet_from_tensors(random_resnet_tensors(false, shape_.stage_blocks, shape_.width, shape_.classes),
                             cnn_train_config_json(shape_, {0, 0, 0}, {1, 1, 1}, names), _("the CNN being trained"));
  // The trainer's forward is im2col's on the weights as they are: no Winograd copy to keep in step.
  for_each_resnet_conv(net_, [](CnnConv& c, const std::string&, const std::string&, int) { c.winograd.resize(0, 0); });
  // The layout, in the state_dict's order.
  std::size_t at = 0;
  auto add = [&](const std::string& name, std::vector<std::int64_t> dims, bool decay) {
    VitParam p;
    p.name = name;
    p.shape = std::move(dims);
    p.size = 1;
    for (const std::int64_t d : p.shape) p.size *= static_cast<std::size_t>(d);
    p.offset = at;
    p.decay = decay;
    at += p.size;
    params_.push_back(std::move(p));
    return params_.back().offset;
  };
  for_each_resnet_conv(net_, [&](const CnnConv& c, const std::string& weight, const std::string& norm, int) {
    Slot s;
    s.weight = add(weight + ".weight", {c.out, c.in, c.k, c.k}, true);
    s.bias = add(norm + ".bias", {c.out}, false);
    slots_.push_back(s);
  });
  fc_weight_ = add("fc.weight", {net_.W_fc.rows(), net_.W_fc.cols()}, true);
  fc_bias_ = add("fc.bias", {net_.W_fc.rows()}, false);
  values_.assign(at, 0.0f);
  grad_.assign(at, 0.0f);
  m_.assign(at, 0.0f);
  v_.assign(at, 0.0f);
  // torchvision's init (ResNet.__init__, zero_init_residual False as its default): kaiming_normal_
  // fan_out for the convolutions, Linear's default for fc.
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::size_t i = 0;
  for_each_resnet_conv(net_, [&](const CnnConv& c, const std::string&, const std::string&, int) {
    const float sd = std::sqrt(2.0f / static_cast<float>(c.out * c.k * c.k));
    for (std::size_t j = 0; j < static_cast<std::size_t>(c.W.size()); ++j) values_[slots_[i].weight + j] = sd * normal(gen);
    ++i;
  });
  const float bound = 1.0f / std::sqrt(static_cast<float>(net_.W_fc.cols()));
  std::uniform_real_distribution<float> uniform(-bound, bound);
  for (std::size_t j = 0; j < static_cast<std::size_t>(net_.W_fc.size()); ++j) values_[fc_weight_ + j] = uniform(gen);
  for (int j = 0; j < shape_.classes; ++j) values_[fc_bias_ + static_cast<std::size_t>(j)] = uniform(gen);
  sync();
}

void CnnTrainer::sync() {
  std::size_t i = 0;
  for_each_resnet_conv(net_, [&](CnnConv& c, const std::string&, const std::string&, int) {
    const Slot& s = slots_[i++];
    c.W = Eigen::Map<const Matrix>(values_.data() + s.weight, c.out, c.W.cols());
    c.b = Eigen::Map<const RowVector>(values_.data() + s.bias, c.out);
  });
  net_.W_fc = Eigen::Map<const Matrix>(values_.data() + fc_weight_, net_.W_fc.rows(), net_.W_fc.cols());
  net_.b_fc = Eigen::Map<const RowVector>(values_.data() + fc_bias_, net_.b_fc.size());
}

VitStepStats CnnTrainer::compute_gradients(std::span<const float> images, std::span<const int> labels) {
  const int B = static_cast<int>(labels.size()), side = shape_.image_side;
  const std::size_t image_size = 3ull * side * side;
  if (B <= 0) throw Error(_("a training batch needs at least one image"));
  if (images.size() != image_size * static_cast<std::size_t>(B))
    throw Error(text_format(_("the batch holds %zu floats, not %d images of %zu"), images.size(), B, image_size));
  for (const int y : labels)
    if (y < 0 || y >= shape_.classes) throw Error(text_format(_("label %d is outside [0, %d)"), y, shape_.classes));
  const int parts = std::min(threads_, B);
  std::vector<ResnetParameterGradients> grads(static_cast<std::size_t>(parts));
  std::vector<double> losses(static_cast<std::size_t>(parts), 0.0);
  std::vector<int> correct(static_cast<std::size_t>(parts), 0);
  const double scale = 1.0 / B;
  auto run = [&](int p) {
    FlushSubnormals ftz;
    const auto pp = static_cast<std::size_t>(p);
    grads[pp].zero(net_);
    const int b0 = part_begin(B, parts, p), b1 = part_begin(B, parts, p + 1);
    if (b1 <= b0) return;
    resnet_train_batch(net_, images.subspan(image_size * static_cast<std::size_t>(b0), image_size * static_cast<std::size_t>(b1 - b0)), b1 - b0,
                       side, side, [&](Matrix& z) {
      for (int b = 0; b < b1 - b0; ++b) {
        bool right = false;
        losses[pp] += smoothed_cross_entropy(&z(b, 0), static_cast<int>(z.cols()), labels[static_cast<std::size_t>(b0 + b)],
                                             settings_.label_smoothing, scale, true, &right);
        correct[pp] += right;
      }
    }, grads[pp], 1);
  };
  std::vector<std::thread> pool;
  for (int p = 1; p < parts; ++p) pool.emplace_back(run, p);
  run(0);
  for (std::thread& t : pool) t.join();
  // Summed in the parts' order into the flat gradient.
  std::fill(grad_.begin(), grad_.end(), 0.0f);
  VitStepStats stats;
  double loss = 0.0;
  for (int p = 0; p < parts; ++p) {
    const ResnetParameterGradients& g = grads[static_cast<std::size_t>(p)];
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      const CnnConvGradient& c = g.convs[i];
      for (Eigen::Index j = 0; j < c.dW.size(); ++j) grad_[slots_[i].weight + static_cast<std::size_t>(j)] += c.dW.data()[j];
      for (Eigen::Index j = 0; j < c.db.size(); ++j) grad_[slots_[i].bias + static_cast<std::size_t>(j)] += c.db[j];
    }
    for (Eigen::Index j = 0; j < g.dW_fc.size(); ++j) grad_[fc_weight_ + static_cast<std::size_t>(j)] += g.dW_fc.data()[j];
    for (Eigen::Index j = 0; j < g.db_fc.size(); ++j) grad_[fc_bias_ + static_cast<std::size_t>(j)] += g.db_fc[j];
    loss += losses[static_cast<std::size_t>(p)];
    stats.correct += correct[static_cast<std::size_t>(p)];
  }
  stats.loss = loss / B;
  return stats;
}

VitStepStats CnnTrainer::apply_update() {
  const VitStepStats stats = adamw_update(settings_, step_, params_, values_, grad_, m_, v_);
  ++step_;
  sync();
  return stats;
}

VitStepStats CnnTrainer::train_step(std::span<const float> images, std::span<const int> labels) {
  VitStepStats stats = compute_gradients(images, labels);
  const VitStepStats update = apply_update();
  stats.grad_norm = update.grad_norm;
  stats.lr = update.lr;
  return stats;
}

Matrix CnnTrainer::logits(std::span<const float> images, int count) const {
  const int side = shape_.image_side;
  const std::size_t image_size = 3ull * side * side;
  if (count < 0 || images.size() != image_size * static_cast<std::size_t>(count))
    throw Error(text_format(_("logits: %zu floats are not %d images"), images.size(), count));
  Matrix z(count, shape_.classes);
  FlushSubnormals ftz;
  constexpr int kChunk = 100;  // images through the network at once (their maps side by side)
  for (int b0 = 0; b0 < count; b0 += kChunk) {
    const int n = std::min(kChunk, count - b0);
    z.middleRows(b0, n) = resnet_batch_logits(net_, images.subspan(image_size * static_cast<std::size_t>(b0), image_size * static_cast<std::size_t>(n)),
                                              n, side, side, 1);
  }
  return z;
}

SafetensorsFile CnnTrainer::tensors() const {
  SafetensorsFile file;
  auto put = [&](const std::string& name, std::vector<std::int64_t> shape, const float* from, float fill = 0.0f) {
    Tensor t;
    t.shape = std::move(shape);
    t.values.resize(static_cast<std::size_t>(t.numel()));
    if (from) std::copy(from, from + t.values.size(), t.values.begin());
    else std::fill(t.values.begin(), t.values.end(), fill);
    file.tensors[name] = std::move(t);
  };
  std::size_t i = 0;
  for_each_resnet_conv(net_, [&](const CnnConv& c, const std::string& weight, const std::string& bn, int) {
    put(weight + ".weight", {c.out, c.in, c.k, c.k}, values_.data() + slots_[i].weight);
    put(bn + ".weight", {c.out}, nullptr, 1.0f);
    put(bn + ".bias", {c.out}, values_.data() + slots_[i].bias);
    put(bn + ".running_mean", {c.out}, nullptr, 0.0f);
    put(bn + ".running_var", {c.out}, nullptr, kIdentityVariance);
    ++i;
  });
  put("fc.weight", {net_.W_fc.rows(), net_.W_fc.cols()}, values_.data() + fc_weight_);
  put("fc.bias", {net_.W_fc.rows()}, values_.data() + fc_bias_);
  return file;
}

ResnetModel CnnTrainer::model(const std::array<float, 3>& mean, const std::array<float, 3>& std, const std::vector<std::string>& labels) const {
  // TRANSLATORS: stands where a file's name would in messages about the model ("the CNN being trained: ...").
  return resnet_from_tensors(tensors(), cnn_train_config_json(shape_, mean, std, labels), _("the CNN being trained"));
}

std::size_t cnn_train_bytes(const CnnTrainShape& shape, int batch, int threads) {
  const auto p = static_cast<std::size_t>(shape.parameters());
  const int parts = std::max(1, std::min(threads > 0 ? threads : vit_kernels::default_threads(), std::max(batch, 1)));
  const auto per_part = static_cast<std::size_t>((std::max(batch, 1) + parts - 1) / parts);  // images through each thread's pass at once
  // One image's share of a gradient pass: the stem's map (width × ⌈side/2⌉²) and its im2col (3·7·7
  // rows of as many columns) are the largest; the later maps, kept and with their gradients, are
  // at most a few times the stem's (each stage halves the side and doubles the channels).
  const std::size_t half = static_cast<std::size_t>(shape.image_side + 1) / 2;
  const std::size_t pass = 8 * static_cast<std::size_t>(shape.width) * half * half + 147 * half * half;
  return (5 * p + static_cast<std::size_t>(parts) * (p + per_part * pass)) * sizeof(float);
}

}  // namespace attnlab
