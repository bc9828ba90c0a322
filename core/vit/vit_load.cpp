// Loading a ViT: a checkpoint's tensors (safetensors or PyTorch) and its config files into a
// VitModel. The checkpoint's model family (core/vit/model_family.hpp) is detected first; every
// tensor is found through its names, and its rules say where the position embedding covers the
// tokens and where config.json keeps the heads and ε. No family is known here by name.
#include "core/vit/vit.hpp"

#include "core/base/budget.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/io/config_json.hpp"
#include "core/io/files.hpp"
#include "core/io/pytorch_checkpoint.hpp"
#include "core/vit/model_family.hpp"
#include "core/vit/tensor_names.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

namespace attnlab {

namespace {

using json = nlohmann::json;

std::string join_names(const std::vector<std::string>& names, std::size_t most = 5) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < most; ++i) out += (i ? ", " : "") + ("'" + names[i] + "'");
  // TRANSLATORS: after a list of tensor names: "'a', 'b', 'c' and 12 more" (with its leading space).
  if (names.size() > most) out += text_format(_(" and %zu more"), names.size() - most);
  return out;
}

/// Takes tensors by name from a checkpoint, remembering which were used and which were missing,
/// so that one error can name every missing tensor and every unknown one.
class TensorTaker {
 public:
  TensorTaker(SafetensorsFile& file, std::string what) : file_(file), what_(std::move(what)) {}

  /// The tensor, or nullptr (and remembered as missing unless optional).
  const Tensor* get(const std::string& name, bool optional = false) {
    const auto it = file_.tensors.find(name);
    if (it == file_.tensors.end()) {
      if (!optional) missing_.push_back(name);
      return nullptr;
    }
    used_.insert(name);
    return &it->second;
  }
  bool has(const std::string& name) const { return file_.tensors.count(name) > 0; }
  void ignore(const std::string& name) { ignored_.insert(name); }

  /// Throws naming the missing tensors, then the unknown ones.
  void check_complete() const {
    if (!missing_.empty())
      // TRANSLATORS: %1$s is the file, %2$zu a count, %3$s the tensors' names.
      throw Error(text_format(_("%s: %zu tensor(s) of the ViT are missing: %s"), what_.c_str(), missing_.size(),
                              join_names(missing_).c_str()));
    std::vector<std::string> unknown;
    for (const auto& [name, t] : file_.tensors)
      if (!used_.count(name) && !ignored_.count(name)) unknown.push_back(name);
    if (!unknown.empty())
      // TRANSLATORS: %1$s is the file, %2$zu a count, %3$s the tensors' names.
      throw Error(text_format(_("%s: %zu tensor(s) are not part of a ViT as read here: %s"), what_.c_str(), unknown.size(),
                              join_names(unknown).c_str()));
  }
  std::int64_t used_elements() const {
    std::int64_t n = 0;
    for (const auto& name : used_) n += file_.tensors.at(name).numel();
    return n;
  }
  const std::string& what() const { return what_; }

  /// Schedules an allocation of `floats` floats, made by `make` (which may schedule reads) only
  /// once every check passed: make_allocations(). Sizes in size_t, checked (SIZE_MAX on overflow).
  void allocate(std::size_t floats, std::function<void()> make) {
    planned_ = checked_sum(planned_, checked_product({floats, sizeof(float)}));
    allocations_.push_back(std::move(make));
  }
  /// Bytes every scheduled allocation will take together.
  std::size_t planned_bytes() const { return planned_; }
  /// Bytes of the tensors the model uses as stored in the file.
  std::size_t stored_bytes() const {
    std::size_t n = 0;
    for (const auto& name : used_) {
      const Tensor& t = file_.tensors.at(name);
      n = checked_sum(n, checked_product({static_cast<std::size_t>(t.numel()), t.dtype == TensorDType::F32 ? 4u : 2u}));
    }
    return n;
  }
  void make_allocations() {
    for (auto& make : allocations_) make();
    allocations_.clear();
  }

  /// Schedules `t`'s values (t.numel() floats) to be read into `out` by read_scheduled().
  void read_into(const Tensor& t, float* out) { reads_.push_back({&t, out}); }
  /// Reads every scheduled tensor in one pass over the file; its SHA-256 ("" without a file).
  std::string read_scheduled(const std::atomic<bool>* stop) const { return file_.read(reads_, stop); }

 private:
  SafetensorsFile& file_;
  std::string what_;
  std::set<std::string> used_, ignored_;
  std::vector<std::string> missing_;
  std::vector<TensorRead> reads_;
  std::vector<std::function<void()>> allocations_;
  std::size_t planned_ = 0;
};

/// Checks a tensor's shape; throws naming it with the shape expected and found.
void expect_shape(const TensorTaker& taker, const std::string& name, const Tensor& t,
                  const std::vector<std::int64_t>& shape) {
  if (t.shape != shape)
    // TRANSLATORS: %1$s is the file, %2$s a tensor's name, then two shapes such as [768, 3, 16, 16].
    throw Error(text_format(_("%s: tensor '%s' has shape %s, expected %s"), taker.what().c_str(), name.c_str(),
                            shape_text(t.shape).c_str(), shape_text(shape).c_str()));
}

// `m` to be sized rows × cols (= t.numel(), its shape checked) and `t` read into it. Nothing is
// allocated before every tensor was found and checked and the sum fits the budget, nothing read
// before every check passed (make_allocations(), read_scheduled()).
void take_matrix(TensorTaker& taker, const Tensor& t, Matrix& m, Eigen::Index rows, Eigen::Index cols) {
  taker.allocate(checked_product({static_cast<std::size_t>(rows), static_cast<std::size_t>(cols)}),
                 [&taker, &t, &m, rows, cols] {
                   m.resize(rows, cols);
                   taker.read_into(t, m.data());
                 });
}
void take_row(TensorTaker& taker, const Tensor& t, RowVector& v) {
  taker.allocate(static_cast<std::size_t>(t.numel()), [&taker, &t, &v] {
    v.resize(static_cast<Eigen::Index>(t.numel()));
    taker.read_into(t, v.data());
  });
}
// `v` to be n copies of `value` (a bias or scale the file leaves out), scheduled like take_row.
void take_constant(TensorTaker& taker, std::int64_t n, float value, RowVector& v) {
  taker.allocate(static_cast<std::size_t>(n), [&v, n, value] { v = RowVector::Constant(n, value); });
}

/// The checkpoint's family and the prefix in front of its names (e.g. "vit." for HF classifiers):
/// every tensor's name comes from the family's {kind, pattern} pairs.
struct CheckpointNames {
  const ModelFamily* family = nullptr;
  std::string prefix;
  std::string operator()(VitTensor kind, int block = -1) const { return family->tensor_name(kind, block, prefix); }
  /// Whether the family has tensors of this kind at all.
  bool has(VitTensor kind) const { return family->has(kind); }
};

/// The bias (or a LayerNorm's shift) of a weight kind: the next kind (VitTensor lists them in pairs).
VitTensor bias_of(VitTensor weight) { return static_cast<VitTensor>(static_cast<int>(weight) + 1); }

/// A Linear layer: weight out × in, optional bias (zeros when absent and allowed).
void take_linear(TensorTaker& taker, const CheckpointNames& names, VitTensor weight, int block, std::int64_t out, std::int64_t in,
                 Matrix& W, RowVector& b, bool bias_optional = false, bool* has_bias = nullptr) {
  const std::string w_name = names(weight, block), b_name = names(bias_of(weight), block);
  const Tensor* w = taker.get(w_name);
  const Tensor* bt = taker.get(b_name, bias_optional);
  if (has_bias) *has_bias = bt != nullptr;
  if (w) {
    expect_shape(taker, w_name, *w, {out, in});
    take_matrix(taker, *w, W, out, in);
  }
  if (bt) {
    expect_shape(taker, b_name, *bt, {out});
    take_row(taker, *bt, b);
  } else {
    take_constant(taker, out, 0.0f, b);
  }
}

void take_vector(TensorTaker& taker, const std::string& name, std::int64_t n, RowVector& v, bool optional = false,
                 float absent = 0.0f) {
  const Tensor* t = taker.get(name, optional);
  if (!t) {
    take_constant(taker, n, absent, v);
    return;
  }
  expect_shape(taker, name, *t, {n});
  take_row(taker, *t, v);
}

void take_norm(TensorTaker& taker, const CheckpointNames& names, VitTensor weight, int block, std::int64_t D, RowVector& w,
               RowVector& b) {
  take_vector(taker, names(weight, block), D, w);
  take_vector(taker, names(bias_of(weight), block), D, b);
}

/// The indices i of names "<prefix>{i}.<rest>", sorted.
std::set<int> block_indices(const SafetensorsFile& file, const std::string& prefix) {
  std::set<int> out;
  for (const auto& [name, t] : file.tensors) {
    if (name.rfind(prefix, 0) != 0) continue;
    std::size_t pos = prefix.size();
    int idx = 0;
    std::size_t digits = 0;
    while (pos < name.size() && std::isdigit(static_cast<unsigned char>(name[pos])) && digits < 6) {
      idx = idx * 10 + (name[pos] - '0');
      ++pos;
      ++digits;
    }
    if (digits > 0 && pos < name.size() && name[pos] == '.') out.insert(idx);
  }
  return out;
}

int perfect_square_root(std::int64_t n) {
  if (n <= 0) return 0;
  const auto r = static_cast<std::int64_t>(std::llround(std::sqrt(static_cast<double>(n))));
  return r * r == n ? static_cast<int>(r) : 0;
}

/// The patch embedding (a conv D × 3 × P × P, kernel = stride = P): D, P and the dtype from it.
void take_patch_embedding(TensorTaker& taker, const CheckpointNames& names, VitModel& model) {
  VitArchitecture& arch = model.arch;
  const std::string w_name = names(VitTensor::PatchWeight);
  const Tensor& pw = *taker.get(w_name);
  const std::string& what = taker.what();
  if (pw.shape.size() != 4 || pw.shape[1] != 3 || pw.shape[2] != pw.shape[3] || pw.shape[0] <= 0 || pw.shape[2] <= 0)
    // TRANSLATORS: %1$s is the file, %2$s a tensor's name, %3$s its shape. D: the token width; P: the patch size in pixels.
    throw Error(text_format(_("%s: tensor '%s' has shape %s, expected [D, 3, P, P] (a patch embedding over RGB)"), what.c_str(),
                            w_name.c_str(), shape_text(pw.shape).c_str()));
  if (pw.shape[0] > 65536 || pw.shape[2] > 1024)
    // TRANSLATORS: %1$s is the file, %2$s a tensor's shape such as [768, 3, 16, 16].
    throw Error(text_format(_("%s: the patch embedding %s is too large"), what.c_str(), shape_text(pw.shape).c_str()));
  arch.D = static_cast<int>(pw.shape[0]);
  arch.patch = static_cast<int>(pw.shape[2]);
  arch.dtype = pw.dtype;
  const std::int64_t D = arch.D;
  take_matrix(taker, pw, model.W_patch, D, 3LL * arch.patch * arch.patch);
  take_vector(taker, names(VitTensor::PatchBias), D, model.b_patch, /*optional=*/true);
}

/// The position embedding, its layout and grid (PosLayout) told by how many tokens it covers.
void take_position_embedding(TensorTaker& taker, const CheckpointNames& names, VitModel& model) {
  VitArchitecture& arch = model.arch;
  const std::int64_t D = arch.D;
  const FamilyInput& rules = names.family->input;
  const std::string pos_name = names(VitTensor::PosEmbed);
  const Tensor* pos = taker.get(pos_name);
  if (!pos) return;
  const std::string& what = taker.what();
  if (pos->shape.size() != 3 || pos->shape[0] != 1 || pos->shape[2] != D)
    // TRANSLATORS: %1$s is the file, %2$s a tensor's name, %3$s its shape; L: the number of positions; %4$lld the token width.
    throw Error(text_format(_("%s: tensor '%s' has shape %s, expected [1, L, %lld]"), what.c_str(), pos_name.c_str(),
                            shape_text(pos->shape).c_str(), static_cast<long long>(D)));
  const std::int64_t L = pos->shape[1];
  int side = 0;
  if (!rules.registers_have_positions) {
    arch.pos_layout = PosLayout::ClsAndPatches;
    side = perfect_square_root(L - 1);
  } else if ((side = perfect_square_root(L - arch.prefix())) > 0) {
    arch.pos_layout = PosLayout::AllTokens;
  } else if (rules.positions_may_skip_prefix && (side = perfect_square_root(L)) > 0) {
    arch.pos_layout = PosLayout::PatchesOnly;
  }
  if (side == 0)
    // TRANSLATORS: %1$s is the file, %2$s a tensor's name; prefix tokens: the class token and registers before the patches.
    throw Error(text_format(_("%s: tensor '%s' covers %lld tokens, which is no square grid of patches with or without the %d prefix "
                              "token(s)"),
                            what.c_str(), pos_name.c_str(), static_cast<long long>(L), arch.prefix()));
  arch.pos_rows = arch.pos_cols = side;
  take_matrix(taker, *pos, model.pos, L, D);
}

/// Class token, registers, position embedding; the tensors read past (mask token, HF's pooler).
void take_prefix_tokens(TensorTaker& taker, const CheckpointNames& names, VitModel& model) {
  VitArchitecture& arch = model.arch;
  const std::int64_t D = arch.D;
  const std::string cls_name = names(VitTensor::ClsToken);
  if (const Tensor* cls = taker.get(cls_name)) {
    expect_shape(taker, cls_name, *cls, {1, 1, D});
    take_row(taker, *cls, model.cls);
  }
  const Tensor* reg = nullptr;
  std::string reg_name;
  if (names.has(VitTensor::Registers)) {
    reg_name = names(VitTensor::Registers);
    reg = taker.get(reg_name, /*optional=*/true);
  }
  if (reg) {
    if (reg->shape.size() != 3 || reg->shape[0] != 1 || reg->shape[2] != D || reg->shape[1] <= 0 || reg->shape[1] > 4096)
      // TRANSLATORS: %1$s is the file, %2$s a tensor's name, %3$s its shape; R: the number of registers; %4$lld the token width.
      throw Error(text_format(_("%s: tensor '%s' has shape %s, expected [1, R, %lld]"), taker.what().c_str(), reg_name.c_str(),
                              shape_text(reg->shape).c_str(), static_cast<long long>(D)));
    arch.registers = static_cast<int>(reg->shape[1]);
    take_matrix(taker, *reg, model.registers, arch.registers, D);
  } else {
    model.registers = Matrix(0, D);
  }
  take_position_embedding(taker, names, model);
  taker.ignore(names(VitTensor::MaskToken));
  if (names.has(VitTensor::PoolerWeight)) {
    taker.ignore(names(VitTensor::PoolerWeight));
    taker.ignore(names(VitTensor::PoolerBias));
  }
}

/// Depth from the blocks that exist: 0 … n−1, none left out (block 999 alone is no 1000 blocks);
/// the MLP width from block 0's first layer.
void read_depth(const SafetensorsFile& file, const CheckpointNames& names, const std::string& what, VitArchitecture& arch) {
  const std::string block_prefix = vit_block_prefix(names.family->naming, names.prefix);
  const auto indices = block_indices(file, block_prefix);
  if (indices.empty())
    // TRANSLATORS: %1$s is the file, %2$s the start of the blocks' tensor names ("blocks.").
    throw Error(text_format(_("%s: the checkpoint has no transformer blocks ('%s0.…')"), what.c_str(), block_prefix.c_str()));
  if (indices.size() > 1000)
    throw Error(text_format(_("%s: %zu blocks is more than a ViT has"), what.c_str(), indices.size()));
  for (int i = 0; const int idx : indices) {
    if (idx != i)
      // TRANSLATORS: %1$s is the file, %2$d and %4$d block numbers, %3$s a tensor's name.
      throw Error(text_format(_("%s: block %d is missing (no '%s' nor the rest of its tensors), but block %d is there: blocks are "
                                "numbered 0, 1, 2, … with none left out"),
                              what.c_str(), i, names(VitTensor::Norm1Weight, i).c_str(), idx));
    ++i;
  }
  arch.depth = static_cast<int>(indices.size());
  const std::string fc1 = names(VitTensor::Fc1Weight, 0);
  if (file.tensors.count(fc1) && file.tensors.at(fc1).shape.size() == 2) arch.mlp_hidden = static_cast<int>(file.tensors.at(fc1).shape[0]);
  else if (!file.tensors.count(fc1)) arch.mlp_hidden = 4 * arch.D;
  else
    // TRANSLATORS: %1$s is the file, %2$s a tensor's name, %3$s its shape; hidden: the MLP's width, D: the token width.
    throw Error(text_format(_("%s: tensor '%s' has shape %s, expected [hidden, D]"), what.c_str(), fc1.c_str(),
                            shape_text(file.tensors.at(fc1).shape).c_str()));
  if (arch.mlp_hidden <= 0 || arch.mlp_hidden > 1 << 20)
    throw Error(text_format(_("%s: tensor '%s' has no usable width"), what.c_str(), fc1.c_str()));
}

/// HF's query, key and value, read straight into their rows of W_qkv and parts of b_qkv (zeros
/// where a bias is absent). Returns whether any bias was there.
bool take_split_qkv(TensorTaker& taker, const CheckpointNames& names, int i, std::int64_t D, VitBlock& b) {
  constexpr VitTensor kWeights[3] = {VitTensor::QueryWeight, VitTensor::KeyWeight, VitTensor::ValueWeight};
  bool any_bias = false;
  const Tensor* w[3];
  take_constant(taker, 3 * D, 0.0f, b.b_qkv);
  for (int k = 0; k < 3; ++k) {
    const std::string w_name = names(kWeights[k], i), b_name = names(bias_of(kWeights[k]), i);
    w[k] = taker.get(w_name);
    const Tensor* bias = taker.get(b_name, /*optional=*/true);
    any_bias |= bias != nullptr;
    if (w[k]) expect_shape(taker, w_name, *w[k], {D, D});
    if (bias) {
      expect_shape(taker, b_name, *bias, {D});
      taker.allocate(0, [&taker, bias, &b, k, D] { taker.read_into(*bias, b.b_qkv.data() + k * D); });
    }
  }
  if (w[0] && w[1] && w[2]) {
    taker.allocate(checked_product({3, static_cast<std::size_t>(D), static_cast<std::size_t>(D)}),
                   [&taker, &b, w0 = w[0], w1 = w[1], w2 = w[2], D] {
                     b.W_qkv.resize(3 * D, D);
                     const Tensor* parts[3] = {w0, w1, w2};
                     for (int k = 0; k < 3; ++k) taker.read_into(*parts[k], b.W_qkv.data() + k * D * D);
                   });
  }
  return any_bias;
}

/// Every block's weights; qkv_bias and layer_scale from what the blocks hold.
void take_blocks(TensorTaker& taker, const CheckpointNames& names, VitModel& model) {
  VitArchitecture& arch = model.arch;
  const std::int64_t D = arch.D, Hd = arch.mlp_hidden;
  const bool split_qkv = !names.has(VitTensor::QkvWeight);  // HF
  bool any_qkv_bias = false, any_layer_scale = false;
  model.blocks.resize(static_cast<std::size_t>(arch.depth));
  for (int i = 0; i < arch.depth; ++i) {
    VitBlock& b = model.blocks[static_cast<std::size_t>(i)];
    take_norm(taker, names, VitTensor::Norm1Weight, i, D, b.ln1_w, b.ln1_b);
    if (split_qkv) {
      any_qkv_bias |= take_split_qkv(taker, names, i, D, b);
    } else {
      bool has_bias = false;
      take_linear(taker, names, VitTensor::QkvWeight, i, 3 * D, D, b.W_qkv, b.b_qkv, true, &has_bias);
      any_qkv_bias |= has_bias;
    }
    take_linear(taker, names, VitTensor::ProjWeight, i, D, D, b.W_proj, b.b_proj);
    take_norm(taker, names, VitTensor::Norm2Weight, i, D, b.ln2_w, b.ln2_b);
    take_linear(taker, names, VitTensor::Fc1Weight, i, Hd, D, b.W_fc1, b.b_fc1);
    take_linear(taker, names, VitTensor::Fc2Weight, i, D, Hd, b.W_fc2, b.b_fc2);
    if (names.has(VitTensor::LayerScale1)) {
      const std::string ls1 = names(VitTensor::LayerScale1, i), ls2 = names(VitTensor::LayerScale2, i);
      any_layer_scale |= taker.has(ls1) || taker.has(ls2);
      take_vector(taker, ls1, D, b.ls1, true, 1.0f);
      take_vector(taker, ls2, D, b.ls2, true, 1.0f);
    } else {
      take_constant(taker, D, 1.0f, b.ls1);
      take_constant(taker, D, 1.0f, b.ls2);
    }
  }
  arch.qkv_bias = any_qkv_bias;
  arch.layer_scale = any_layer_scale;
}

/// Whether config.json's global_pool is "" (timm's: no pooling, a head on every token).
bool pools_nothing(const json& config, const ModelFamily& family) {
  const auto gp = config.find("global_pool");
  return family.config.reads_global_pool && gp != config.end() && gp->is_string() && gp->get<std::string>().empty();
}

/// The final LayerNorm, or timm's fc_norm after average pooling; the classifier, where there is
/// one (HF's sits outside the "vit." prefix). timm's global_pool "" pools nothing: its head maps
/// every token (here: masked-patch reconstruction, 3P² pixels per token), which is no
/// classifier; it is read past, and its width noted.
void take_head(TensorTaker& taker, const SafetensorsFile& file, const CheckpointNames& names, const json& config, VitModel& model) {
  VitArchitecture& arch = model.arch;
  const std::int64_t D = arch.D;
  if (names.has(VitTensor::FcNormWeight) && !taker.has(names(VitTensor::NormWeight)) && taker.has(names(VitTensor::FcNormWeight))) {
    arch.pooling = VitPooling::Average;
    take_norm(taker, names, VitTensor::FcNormWeight, -1, D, model.norm_w, model.norm_b);
  } else {
    take_norm(taker, names, VitTensor::NormWeight, -1, D, model.norm_w, model.norm_b);
  }
  const std::string head_w = names(VitTensor::HeadWeight);
  if (pools_nothing(config, *names.family) && taker.has(head_w)) {
    const Tensor& hw = file.tensors.at(head_w);
    if (hw.shape.size() == 2 && hw.shape[0] > 0 && hw.shape[0] <= 1000000) arch.token_head = static_cast<int>(hw.shape[0]);
    taker.ignore(head_w);
    taker.ignore(names(VitTensor::HeadBias));
    model.W_head = Matrix(0, D);
    model.b_head = RowVector(0);
  } else if (taker.has(head_w)) {
    const Tensor& hw = file.tensors.at(head_w);
    if (hw.shape.size() != 2 || hw.shape[1] != D || hw.shape[0] <= 0 || hw.shape[0] > 1000000)
      // TRANSLATORS: %1$s is the file, %2$s a tensor's name, %3$s its shape; %4$lld the token width.
      throw Error(text_format(_("%s: tensor '%s' has shape %s, expected [classes, %lld]"), taker.what().c_str(), head_w.c_str(),
                              shape_text(hw.shape).c_str(), static_cast<long long>(D)));
    arch.classes = static_cast<int>(hw.shape[0]);
    take_linear(taker, names, VitTensor::HeadWeight, -1, arch.classes, D, model.W_head, model.b_head, true);
  } else {
    model.W_head = Matrix(0, D);
    model.b_head = RowVector(0);
  }
}

/// Every tensor found and its shape checked: what the weights will take, against the budget
/// and against the file (floats from F16/BF16 double, the biases and scales a file may leave
/// out add a little; more than that is a header that does not describe its file). Then the
/// matrices are allocated.
void allocate_weights(TensorTaker& taker) {
  const std::string& what = taker.what();
  const std::size_t need = taker.planned_bytes(), stored = taker.stored_bytes();
  if (need > checked_sum(checked_product({stored, 4}), std::size_t{1} << 20))
    // TRANSLATORS: %1$s is the file, %2$s an amount such as "12 MiB".
    throw Error(text_format(_("%s: the model would need %s in memory, more than its %zu bytes of tensors can hold: the checkpoint is "
                              "inconsistent"),
                            what.c_str(), mib_text(need).c_str(), stored));
  // TRANSLATORS: %s is the file; goes into "... would need N MiB, over the B MiB memory budget".
  check_memory(need, std::max<std::uint64_t>(memory_budget(), kAlwaysAllowedBytes),
               text_format(_("%s: the model's weights"), what.c_str()));
  taker.make_allocations();
}

/// The first of `keys` config.json holds ("a.b": key b of the object a), read as a number;
/// nullopt when it holds none. A key present but no finite number is an error (read_config_number
/// of one key, core/io/config_json.hpp).
std::optional<float> read_config_number(const json& config, std::span<const char* const> keys, const std::string& what) {
  for (const std::string key : keys) {
    const json* obj = &config;
    std::string leaf = key;
    if (const auto dot = key.find('.'); dot != std::string::npos) {
      const auto it = config.find(key.substr(0, dot));
      if (it == config.end() || !it->is_object()) continue;
      obj = &*it;
      leaf = key.substr(dot + 1);
    }
    if (auto v = attnlab::read_config_number(*obj, leaf.c_str(), what)) return v;  // one key (config_json.hpp)
  }
  return std::nullopt;
}

/// Heads and ε: the options, else config.json (at the family's keys), else the defaults (H = D/64;
/// the family's ε); timm's global_pool "avg".
void read_heads_and_eps(const json& config, const ModelFamily& family, const VitLoadOptions& options, const std::string& what,
                        VitArchitecture& arch) {
  const std::string cfg_what = what + " (config.json)";
  const std::optional<float> heads_cfg = read_config_number(config, family.config.heads_keys, cfg_what);
  const std::optional<float> eps_cfg = read_config_number(config, family.config.eps_keys, cfg_what);
  if (family.config.reads_global_pool) {
    const auto gp = config.find("global_pool");
    if (gp != config.end() && gp->is_string() && *gp == "avg") arch.pooling = VitPooling::Average;
  }
  if (options.heads) {
    arch.heads = *options.heads;
    arch.heads_from = "--heads";
  } else if (heads_cfg) {
    if (*heads_cfg != std::floor(*heads_cfg) || *heads_cfg < 1 || *heads_cfg > 4096)
      // TRANSLATORS: %s is the file and "(config.json)".
      throw Error(text_format(_("%s: the number of heads is not a positive whole number"), cfg_what.c_str()));
    arch.heads = static_cast<int>(*heads_cfg);
    arch.heads_from = "config.json";
  } else {
    if (arch.D % 64 != 0)
      // TRANSLATORS: %1$s is the file; D: the token width; --heads N is a command-line option.
      throw Error(text_format(_("%s: the number of heads cannot be read from the tensors, and D = %d is no multiple of 64: give "
                                "--heads N or a config.json beside the file"),
                              what.c_str(), arch.D));
    arch.heads = arch.D / 64;
    arch.heads_from = "default D/64";
  }
  if (arch.heads < 1 || arch.D % arch.heads != 0)
    // TRANSLATORS: %1$s is the file; D: the token width.
    throw Error(text_format(_("%s: %d heads do not divide D = %d"), what.c_str(), arch.heads, arch.D));
  if (options.eps) {
    arch.eps = *options.eps;
    arch.eps_from = "--eps";
  } else if (eps_cfg) {
    arch.eps = *eps_cfg;
    arch.eps_from = "config.json";
  } else {
    arch.eps = family.config.default_eps;
    arch.eps_from = family.config.default_eps_from;
  }
  if (!(arch.eps > 0.0f) || !std::isfinite(arch.eps))
    // TRANSLATORS: %s is the file; eps (ε) is LayerNorm's small constant.
    throw Error(text_format(_("%s: LayerNorm's eps must be a positive number"), what.c_str()));
}

/// Mean and std (HF's preprocessor_config.json, timm's pretrained_cfg, else the family's) and the
/// class names (id2label or label_names; "class N" for the rest).
void read_normalization_and_labels(const json& config, const json& pre, const ModelFamily& family, const std::string& what,
                                   VitArchitecture& arch) {
  const std::string cfg_what = what + " (config.json)", pre_what = what + " (preprocessor_config.json)";
  arch.mean = family.input.mean;
  arch.std = family.input.std;
  if (auto m = read_config_rgb(pre, "image_mean", pre_what)) arch.mean = *m;
  if (auto s = read_config_rgb(pre, "image_std", pre_what)) arch.std = *s;
  if (const auto pc = config.find("pretrained_cfg"); pc != config.end() && pc->is_object()) {
    if (auto m = read_config_rgb(*pc, "mean", cfg_what)) arch.mean = *m;
    if (auto s = read_config_rgb(*pc, "std", cfg_what)) arch.std = *s;
  }
  for (const float s : arch.std)
    // TRANSLATORS: %s is the file; std: the standard deviations the input is divided by.
    if (!(s > 0.0f)) throw Error(text_format(_("%s: the normalization's std must be positive"), what.c_str()));

  arch.labels.resize(static_cast<std::size_t>(arch.classes));
  for (int c = 0; c < arch.classes; ++c) arch.labels[static_cast<std::size_t>(c)] = "class " + std::to_string(c);
  if (const auto id2label = config.find("id2label"); id2label != config.end() && id2label->is_object()) {
    for (const auto& [key, value] : id2label->items()) {
      char* end = nullptr;
      const long c = std::strtol(key.c_str(), &end, 10);
      if (end && *end == '\0' && c >= 0 && c < arch.classes && value.is_string())
        arch.labels[static_cast<std::size_t>(c)] = value.get<std::string>();
    }
  } else if (const auto names = config.find("label_names"); names != config.end() && names->is_array()) {
    for (std::size_t c = 0; c < names->size() && c < arch.labels.size(); ++c)
      if ((*names)[c].is_string()) arch.labels[c] = (*names)[c].get<std::string>();
  }
}

}  // namespace

VitModel vit_from_tensors(SafetensorsFile file, const std::string& config_json, const std::string& preprocessor_json,
                          const VitLoadOptions& options, const std::string& what) {
  TensorTaker taker(file, what);
  VitModel model;
  static std::atomic<std::uint64_t> next_id{1};
  model.id = next_id++;
  const DetectedFamily detected = detect_model_family(file, what);
  const CheckpointNames names{detected.family, detected.prefix};
  model.arch.naming = names.family->naming;
  // Every tensor found and checked, its allocation and read scheduled, in the file's order of ideas.
  take_patch_embedding(taker, names, model);
  take_prefix_tokens(taker, names, model);
  read_depth(file, names, what, model.arch);
  take_blocks(taker, names, model);
  const json config = parse_config_json(config_json, what + " (config.json)");
  take_head(taker, file, names, config, model);
  taker.check_complete();
  allocate_weights(taker);
  model.arch.parameters = taker.used_elements();
  // What only the config files can say: heads, ε, mean/std, labels, pooling.
  const json pre = parse_config_json(preprocessor_json, what + " (preprocessor_config.json)");
  read_heads_and_eps(config, *names.family, options, what, model.arch);
  read_normalization_and_labels(config, pre, *names.family, what, model.arch);
  // Everything checked: now the weights, in one pass over the file, into the matrices above
  // (which must not move or be resized before this).
  model.sha256 = taker.read_scheduled(options.stop);
  return model;
}

std::filesystem::path checkpoint_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return path;
  for (const char* name : {"model.safetensors", "pytorch_model.bin"})
    if (std::filesystem::is_regular_file(path / name, ec)) return path / name;
  // TRANSLATORS: %s is a folder; model.safetensors, pytorch_model.bin and config.json are file names.
  throw Error(text_format(_("%s: a folder without model.safetensors or pytorch_model.bin (give the checkpoint file, or a folder "
                            "holding one of them and config.json)"),
                          path.string().c_str()));
}

VitModel load_vit(const std::filesystem::path& path, const VitLoadOptions& options) {
  const std::filesystem::path file = checkpoint_file(path);
  const auto dir = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  // A safetensors file: the header only, the weights at the end of vit_from_tensors. A PyTorch
  // checkpoint: every tensor read now (core/io/pytorch_checkpoint.hpp), the file hashed at the end.
  SafetensorsFile tensors = open_checkpoint(file, options.stop);
  VitModel model = vit_from_tensors(std::move(tensors), read_config_file(dir / "config.json"),
                                    read_config_file(dir / "preprocessor_config.json"), options, file.string());
  model.file = file;
  return model;
}

std::string vit_info(const VitModel& model) {
  const VitArchitecture& a = model.arch;
  std::ostringstream s;
  const char* layout = a.pos_layout == PosLayout::AllTokens       ? "all tokens"
                       : a.pos_layout == PosLayout::ClsAndPatches ? "cls and patches"
                                                                  : "patches only";
  s << "file: " << model.file.string() << "\n"
    << "naming: " << naming_name(a.naming) << "\n"
    << "depth: " << a.depth << "\n"
    << "heads: " << a.heads << " (" << a.heads_from << ")\n"
    << "D: " << a.D << "\n"
    << "head width: " << a.D / a.heads << "\n"
    << "mlp hidden: " << a.mlp_hidden << "\n"
    << "patch: " << a.patch << "\n"
    << "position grid: " << a.pos_cols << "x" << a.pos_rows << " (" << layout << ")\n"
    << "prefix tokens: " << a.prefix() << "\n"
    << "registers: " << a.registers << "\n"
    << "layer scale: " << (a.layer_scale ? "yes" : "no") << "\n"
    << "qkv bias: " << (a.qkv_bias ? "yes" : "no") << "\n"
    << "eps: " << a.eps << " (" << a.eps_from << ")\n"
    << "mean: " << a.mean[0] << "," << a.mean[1] << "," << a.mean[2] << "\n"
    << "std: " << a.std[0] << "," << a.std[1] << "," << a.std[2] << "\n"
    << "classes: " << a.classes << (a.classes ? (a.pooling == VitPooling::Token ? " (cls token)" : " (average of patches)") : "")
    << "\n";
  if (a.token_head > 0) s << "token head: " << a.token_head << " outputs per token (global_pool \"\": masked-patch reconstruction), not read\n";
  s << "parameters: " << a.parameters << "\n"
    << "dtype: " << dtype_name(a.dtype) << "\n";
  return s.str();
}

}  // namespace attnlab
