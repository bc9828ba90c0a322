#include "core/vit/vit.hpp"

#include "core/vit/attention_source.hpp"
#include "core/base/budget.hpp"
#include "core/base/error.hpp"
#include "core/io/pytorch_checkpoint.hpp"

#include "core/base/blas.hpp"
#include <nlohmann/json.hpp>
#include <stb_image_resize.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include <unistd.h>

namespace attnlab {

namespace {

using json = nlohmann::json;

std::string join_names(const std::vector<std::string>& names, std::size_t most = 5) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < most; ++i) out += (i ? ", " : "") + ("'" + names[i] + "'");
  if (names.size() > most) out += " and " + std::to_string(names.size() - most) + " more";
  return out;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
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
      throw Error(what_ + ": " + std::to_string(missing_.size()) + " tensor(s) of the ViT are missing: " +
                  join_names(missing_));
    std::vector<std::string> unknown;
    for (const auto& [name, t] : file_.tensors)
      if (!used_.count(name) && !ignored_.count(name)) unknown.push_back(name);
    if (!unknown.empty())
      throw Error(what_ + ": " + std::to_string(unknown.size()) + " tensor(s) are not part of a ViT as read here: " +
                  join_names(unknown));
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
    throw Error(taker.what() + ": tensor '" + name + "' has shape " + shape_text(t.shape) + ", expected " +
                shape_text(shape));
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

/// A Linear layer: weight out × in, optional bias (zeros when absent and allowed).
void take_linear(TensorTaker& taker, const std::string& name, std::int64_t out, std::int64_t in, Matrix& W, RowVector& b,
                 bool bias_optional = false, bool* has_bias = nullptr) {
  const Tensor* w = taker.get(name + ".weight");
  const Tensor* bt = taker.get(name + ".bias", bias_optional);
  if (has_bias) *has_bias = bt != nullptr;
  if (w) {
    expect_shape(taker, name + ".weight", *w, {out, in});
    take_matrix(taker, *w, W, out, in);
  }
  if (bt) {
    expect_shape(taker, name + ".bias", *bt, {out});
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

void take_norm(TensorTaker& taker, const std::string& name, std::int64_t D, RowVector& w, RowVector& b) {
  take_vector(taker, name + ".weight", D, w);
  take_vector(taker, name + ".bias", D, b);
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

json parse_config(const std::string& text, const std::string& what) {
  if (text.empty()) return json::object();
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw Error(what + ": not a JSON object");
  return j;
}

std::optional<float> read_number(const json& j, const char* key, const std::string& what) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_number() || !std::isfinite(it->get<double>()))
    throw Error(what + ": '" + key + "' is not a finite number");
  return static_cast<float>(it->get<double>());
}

std::optional<std::array<float, 3>> read_rgb(const json& j, const char* key, const std::string& what) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_array() || it->size() != 3) throw Error(what + ": '" + key + "' is not a list of 3 numbers");
  std::array<float, 3> out{};
  for (int c = 0; c < 3; ++c) {
    const auto& v = (*it)[static_cast<std::size_t>(c)];
    if (!v.is_number() || !std::isfinite(v.get<double>())) throw Error(what + ": '" + key + "' is not a list of 3 numbers");
    out[static_cast<std::size_t>(c)] = static_cast<float>(v.get<double>());
  }
  return out;
}

std::string read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return {};
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size > 64ull * 1024 * 1024) throw Error(path.string() + ": cannot be read as a config file");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in && !in.eof()) throw Error(path.string() + ": cannot be read");
  return s.str();
}

}  // namespace

const char* naming_name(VitNaming naming) {
  switch (naming) {
    case VitNaming::Timm: return "timm";
    case VitNaming::Dinov2: return "dinov2";
    case VitNaming::HuggingFace: return "hf";
  }
  return "?";
}

VitModel vit_from_tensors(SafetensorsFile file, const std::string& config_json, const std::string& preprocessor_json,
                          const VitLoadOptions& options, const std::string& what) {
  TensorTaker taker(file, what);
  VitModel model;
  static std::atomic<std::uint64_t> next_id{1};
  model.id = next_id++;
  VitArchitecture& arch = model.arch;

  // Which naming, and the prefix in front of every name (e.g. "vit." for HF classifiers).
  std::string prefix;
  auto find_suffix = [&](const std::string& suffix) -> std::optional<std::string> {
    for (const auto& [name, t] : file.tensors)
      if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        const std::string p = name.substr(0, name.size() - suffix.size());
        if (p.empty() || p.back() == '.') return p;
      }
    return std::nullopt;
  };
  if (const auto p = find_suffix("embeddings.patch_embeddings.projection.weight")) {
    arch.naming = VitNaming::HuggingFace;
    prefix = *p;
  } else if (const auto q = find_suffix("patch_embed.proj.weight")) {
    prefix = *q;
    arch.naming = file.tensors.count(prefix + "register_tokens") ? VitNaming::Dinov2 : VitNaming::Timm;
  } else {
    std::vector<std::string> some;
    for (const auto& [name, t] : file.tensors) some.push_back(name);
    throw Error(what + ": not a ViT checkpoint: it has no patch embedding ('patch_embed.proj.weight' or "
                "'embeddings.patch_embeddings.projection.weight'); its tensors are " +
                (some.empty() ? std::string("none") : join_names(some, 3)));
  }
  const bool hf = arch.naming == VitNaming::HuggingFace;
  const std::string emb = prefix + (hf ? "embeddings." : "");

  // Patch embedding: a conv D × 3 × P × P, kernel = stride = P.
  const std::string patch_name = hf ? emb + "patch_embeddings.projection" : prefix + "patch_embed.proj";
  const Tensor& pw = *taker.get(patch_name + ".weight");
  if (pw.shape.size() != 4 || pw.shape[1] != 3 || pw.shape[2] != pw.shape[3] || pw.shape[0] <= 0 || pw.shape[2] <= 0)
    throw Error(what + ": tensor '" + patch_name + ".weight' has shape " + shape_text(pw.shape) +
                ", expected [D, 3, P, P] (a patch embedding over RGB)");
  if (pw.shape[0] > 65536 || pw.shape[2] > 1024) throw Error(what + ": the patch embedding " + shape_text(pw.shape) + " is too large");
  arch.D = static_cast<int>(pw.shape[0]);
  arch.patch = static_cast<int>(pw.shape[2]);
  arch.dtype = pw.dtype;
  const std::int64_t D = arch.D;
  const std::int64_t PP3 = 3LL * arch.patch * arch.patch;
  take_matrix(taker, pw, model.W_patch, D, PP3);
  take_vector(taker, patch_name + ".bias", D, model.b_patch, /*optional=*/true);

  // Class token, registers, position embedding.
  const Tensor* cls = taker.get(emb + "cls_token");
  if (cls) {
    expect_shape(taker, emb + "cls_token", *cls, {1, 1, D});
    take_row(taker, *cls, model.cls);
  }
  const Tensor* reg = nullptr;
  std::string reg_name;
  if (!hf) {
    reg_name = prefix + (arch.naming == VitNaming::Dinov2 ? "register_tokens" : "reg_token");
    reg = taker.get(reg_name, /*optional=*/true);
  }
  if (reg) {
    if (reg->shape.size() != 3 || reg->shape[0] != 1 || reg->shape[2] != D || reg->shape[1] <= 0 || reg->shape[1] > 4096)
      throw Error(what + ": tensor '" + reg_name + "' has shape " + shape_text(reg->shape) + ", expected [1, R, " +
                  std::to_string(D) + "]");
    arch.registers = static_cast<int>(reg->shape[1]);
    take_matrix(taker, *reg, model.registers, arch.registers, D);
  } else {
    model.registers = Matrix(0, D);
  }
  const std::string pos_name = hf ? emb + "position_embeddings" : prefix + "pos_embed";
  const Tensor* pos = taker.get(pos_name);
  if (pos) {
    if (pos->shape.size() != 3 || pos->shape[0] != 1 || pos->shape[2] != D)
      throw Error(what + ": tensor '" + pos_name + "' has shape " + shape_text(pos->shape) + ", expected [1, L, " +
                  std::to_string(D) + "]");
    const std::int64_t L = pos->shape[1];
    int side = 0;
    if (arch.naming == VitNaming::Dinov2) {
      arch.pos_layout = PosLayout::ClsAndPatches;
      side = perfect_square_root(L - 1);
    } else if ((side = perfect_square_root(L - arch.prefix())) > 0) {
      arch.pos_layout = PosLayout::AllTokens;
    } else if (!hf && (side = perfect_square_root(L)) > 0) {
      arch.pos_layout = PosLayout::PatchesOnly;
    }
    if (side == 0)
      throw Error(what + ": tensor '" + pos_name + "' covers " + std::to_string(L) +
                  " tokens, which is no square grid of patches with or without the " + std::to_string(arch.prefix()) +
                  " prefix token(s)");
    arch.pos_rows = arch.pos_cols = side;
    take_matrix(taker, *pos, model.pos, L, D);
  }
  if (!hf) taker.ignore(prefix + "mask_token");
  if (hf) {
    taker.ignore(emb + "mask_token");
    taker.ignore(prefix + "pooler.dense.weight");
    taker.ignore(prefix + "pooler.dense.bias");
  }

  // Blocks: 0 … depth−1, every one complete.
  const std::string block_prefix = hf ? prefix + "encoder.layer." : prefix + "blocks.";
  const auto indices = block_indices(file, block_prefix);
  if (indices.empty()) throw Error(what + ": the checkpoint has no transformer blocks ('" + block_prefix + "0.…')");
  // Depth from the blocks that exist: 0 … n−1, none left out (block 999 alone is no 1000 blocks).
  if (indices.size() > 1000)
    throw Error(what + ": " + std::to_string(indices.size()) + " blocks is more than a ViT has");
  for (int i = 0; const int idx : indices) {
    if (idx != i)
      throw Error(what + ": block " + std::to_string(i) + " is missing (no '" + block_prefix + std::to_string(i) +
                  (hf ? ".layernorm_before.weight'" : ".norm1.weight'") + " nor the rest of its tensors), but block " +
                  std::to_string(idx) + " is there: blocks are numbered 0, 1, 2, … with none left out");
    ++i;
  }
  arch.depth = static_cast<int>(indices.size());
  // The MLP width from block 0's first layer.
  {
    const std::string fc1 = block_prefix + "0." + (hf ? "intermediate.dense.weight" : "mlp.fc1.weight");
    if (file.tensors.count(fc1) && file.tensors.at(fc1).shape.size() == 2) arch.mlp_hidden = static_cast<int>(file.tensors.at(fc1).shape[0]);
    else if (!file.tensors.count(fc1)) arch.mlp_hidden = 4 * arch.D;
    else throw Error(what + ": tensor '" + fc1 + "' has shape " + shape_text(file.tensors.at(fc1).shape) + ", expected [hidden, D]");
    if (arch.mlp_hidden <= 0 || arch.mlp_hidden > 1 << 20) throw Error(what + ": tensor '" + fc1 + "' has no usable width");
  }
  const std::int64_t Hd = arch.mlp_hidden;
  bool any_qkv_bias = false, any_layer_scale = false;
  model.blocks.resize(static_cast<std::size_t>(arch.depth));
  for (int i = 0; i < arch.depth; ++i) {
    VitBlock& b = model.blocks[static_cast<std::size_t>(i)];
    const std::string p = block_prefix + std::to_string(i) + ".";
    if (hf) {
      take_norm(taker, p + "layernorm_before", D, b.ln1_w, b.ln1_b);
      // Query, key and value read straight into their rows of W_qkv and parts of b_qkv.
      const Tensor* w[3];
      take_constant(taker, 3 * D, 0.0f, b.b_qkv);
      for (int k = 0; k < 3; ++k) {
        const std::string name = p + "attention.attention." + (k == 0 ? "query" : k == 1 ? "key" : "value");
        w[k] = taker.get(name + ".weight");
        const Tensor* bias = taker.get(name + ".bias", /*optional=*/true);
        any_qkv_bias |= bias != nullptr;
        if (w[k]) expect_shape(taker, name + ".weight", *w[k], {D, D});
        if (bias) {
          expect_shape(taker, name + ".bias", *bias, {D});
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
      take_linear(taker, p + "attention.output.dense", D, D, b.W_proj, b.b_proj);
      take_norm(taker, p + "layernorm_after", D, b.ln2_w, b.ln2_b);
      take_linear(taker, p + "intermediate.dense", Hd, D, b.W_fc1, b.b_fc1);
      take_linear(taker, p + "output.dense", D, Hd, b.W_fc2, b.b_fc2);
      take_constant(taker, D, 1.0f, b.ls1);
      take_constant(taker, D, 1.0f, b.ls2);
    } else {
      take_norm(taker, p + "norm1", D, b.ln1_w, b.ln1_b);
      bool has_bias = false;
      take_linear(taker, p + "attn.qkv", 3 * D, D, b.W_qkv, b.b_qkv, true, &has_bias);
      any_qkv_bias |= has_bias;
      take_linear(taker, p + "attn.proj", D, D, b.W_proj, b.b_proj);
      take_norm(taker, p + "norm2", D, b.ln2_w, b.ln2_b);
      take_linear(taker, p + "mlp.fc1", Hd, D, b.W_fc1, b.b_fc1);
      take_linear(taker, p + "mlp.fc2", D, Hd, b.W_fc2, b.b_fc2);
      any_layer_scale |= taker.has(p + "ls1.gamma") || taker.has(p + "ls2.gamma");
      take_vector(taker, p + "ls1.gamma", D, b.ls1, true, 1.0f);
      take_vector(taker, p + "ls2.gamma", D, b.ls2, true, 1.0f);
    }
  }
  arch.qkv_bias = any_qkv_bias;
  arch.layer_scale = any_layer_scale;

  // The final LayerNorm, or timm's fc_norm after average pooling.
  const std::string norm_name = hf ? prefix + "layernorm" : prefix + "norm";
  if (!hf && !taker.has(norm_name + ".weight") && taker.has(prefix + "fc_norm.weight")) {
    arch.pooling = VitPooling::Average;
    take_norm(taker, prefix + "fc_norm", D, model.norm_w, model.norm_b);
  } else {
    take_norm(taker, norm_name, D, model.norm_w, model.norm_b);
  }
  // The classifier, where there is one (HF's sits outside the "vit." prefix). timm's
  // global_pool "" pools nothing: its head maps every token (here: masked-patch reconstruction,
  // 3P² pixels per token), which is no classifier; it is read past, and its width noted.
  const json config = parse_config(config_json, what + " (config.json)");
  const std::string head_name = hf ? "classifier" : prefix + "head";
  const auto gp = config.find("global_pool");
  const bool token_head = !hf && gp != config.end() && gp->is_string() && gp->get<std::string>().empty();
  if (token_head && taker.has(head_name + ".weight")) {
    const Tensor& hw = file.tensors.at(head_name + ".weight");
    if (hw.shape.size() == 2 && hw.shape[0] > 0 && hw.shape[0] <= 1000000) arch.token_head = static_cast<int>(hw.shape[0]);
    taker.ignore(head_name + ".weight");
    taker.ignore(head_name + ".bias");
    model.W_head = Matrix(0, D);
    model.b_head = RowVector(0);
  } else if (taker.has(head_name + ".weight")) {
    const Tensor& hw = file.tensors.at(head_name + ".weight");
    if (hw.shape.size() != 2 || hw.shape[1] != D || hw.shape[0] <= 0 || hw.shape[0] > 1000000)
      throw Error(what + ": tensor '" + head_name + ".weight' has shape " + shape_text(hw.shape) + ", expected [classes, " +
                  std::to_string(D) + "]");
    arch.classes = static_cast<int>(hw.shape[0]);
    take_linear(taker, head_name, arch.classes, D, model.W_head, model.b_head, true);
  } else {
    model.W_head = Matrix(0, D);
    model.b_head = RowVector(0);
  }
  taker.check_complete();
  // Every tensor found and its shape checked: what the weights will take, against the budget
  // and against the file (floats from F16/BF16 double, the biases and scales a file may leave
  // out add a little; more than that is a header that does not describe its file).
  const std::size_t need = taker.planned_bytes(), stored = taker.stored_bytes();
  if (need > checked_sum(checked_product({stored, 4}), std::size_t{1} << 20))
    throw Error(what + ": the model would need " + mib_text(need) + " in memory, more than its " +
                std::to_string(stored) + " bytes of tensors can hold: the checkpoint is inconsistent");
  check_memory(need, std::max<std::uint64_t>(memory_budget(), kAlwaysAllowedBytes), what + ": the model's weights");
  taker.make_allocations();
  arch.parameters = taker.used_elements();

  // What only the config files can say: heads, ε, mean/std, labels, pooling.
  const json pre = parse_config(preprocessor_json, what + " (preprocessor_config.json)");
  const std::string cfg_what = what + " (config.json)";
  std::optional<float> heads_cfg, eps_cfg;
  if (hf) {
    heads_cfg = read_number(config, "num_attention_heads", cfg_what);
    eps_cfg = read_number(config, "layer_norm_eps", cfg_what);
  } else {
    if (const auto ma = config.find("model_args"); ma != config.end() && ma->is_object()) {
      heads_cfg = read_number(*ma, "num_heads", cfg_what);
      eps_cfg = read_number(*ma, "norm_eps", cfg_what);
    }
    if (!heads_cfg) heads_cfg = read_number(config, "num_heads", cfg_what);
    if (gp != config.end() && gp->is_string() && *gp == "avg") arch.pooling = VitPooling::Average;
  }
  if (options.heads) {
    arch.heads = *options.heads;
    arch.heads_from = "--heads";
  } else if (heads_cfg) {
    if (*heads_cfg != std::floor(*heads_cfg) || *heads_cfg < 1 || *heads_cfg > 4096)
      throw Error(cfg_what + ": the number of heads is not a positive whole number");
    arch.heads = static_cast<int>(*heads_cfg);
    arch.heads_from = "config.json";
  } else {
    if (arch.D % 64 != 0)
      throw Error(what + ": the number of heads cannot be read from the tensors, and D = " + std::to_string(arch.D) +
                  " is no multiple of 64: give --heads N or a config.json beside the file");
    arch.heads = arch.D / 64;
    arch.heads_from = "default D/64";
  }
  if (arch.heads < 1 || arch.D % arch.heads != 0)
    throw Error(what + ": " + std::to_string(arch.heads) + " heads do not divide D = " + std::to_string(arch.D));
  if (options.eps) {
    arch.eps = *options.eps;
    arch.eps_from = "--eps";
  } else if (eps_cfg) {
    arch.eps = *eps_cfg;
    arch.eps_from = "config.json";
  } else {
    arch.eps = hf ? 1e-12f : 1e-6f;
    arch.eps_from = hf ? "default of HF's ViTConfig" : "default of timm";
  }
  if (!(arch.eps > 0.0f) || !std::isfinite(arch.eps)) throw Error(what + ": LayerNorm's eps must be a positive number");

  // Mean and std: HF's preprocessor_config.json, timm's pretrained_cfg.
  const std::string pre_what = what + " (preprocessor_config.json)";
  if (auto m = read_rgb(pre, "image_mean", pre_what)) arch.mean = *m;
  if (auto s = read_rgb(pre, "image_std", pre_what)) arch.std = *s;
  if (const auto pc = config.find("pretrained_cfg"); pc != config.end() && pc->is_object()) {
    if (auto m = read_rgb(*pc, "mean", cfg_what)) arch.mean = *m;
    if (auto s = read_rgb(*pc, "std", cfg_what)) arch.std = *s;
  }
  for (const float s : arch.std)
    if (!(s > 0.0f)) throw Error(what + ": the normalization's std must be positive");

  // Class names.
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
  // Everything checked: now the weights, in one pass over the file, into the matrices above
  // (which must not move or be resized before this).
  model.sha256 = taker.read_scheduled(options.stop);
  return model;
}

namespace {

// Whether `file` is a PyTorch checkpoint: by its first bytes (a zip archive, or a legacy torch
// pickle or tar, which open_pytorch() refuses with its own message), and for files that are
// neither, by the extensions torch.save's files get (.pth, .pt, .bin), so that those are told
// what they are not rather than read as a safetensors header.
bool is_pytorch_file(const std::filesystem::path& file) {
  std::vector<std::uint8_t> first(512);
  std::ifstream in(file, std::ios::binary);
  in.read(reinterpret_cast<char*>(first.data()), static_cast<std::streamsize>(first.size()));
  first.resize(static_cast<std::size_t>(in.gcount()));
  if (is_zip_magic(first) || is_legacy_torch_magic(first)) return true;
  const std::string ext = file.extension().string();
  return ext == ".pth" || ext == ".pt" || ext == ".bin";
}

}  // namespace

std::filesystem::path checkpoint_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return path;
  for (const char* name : {"model.safetensors", "pytorch_model.bin"})
    if (std::filesystem::is_regular_file(path / name, ec)) return path / name;
  throw Error(path.string() + ": a folder without model.safetensors or pytorch_model.bin (give the checkpoint file, or a "
                              "folder holding one of them and config.json)");
}

VitModel load_vit(const std::filesystem::path& path, const VitLoadOptions& options) {
  std::error_code ec;
  const std::filesystem::path file = checkpoint_file(path);
  const auto dir = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  // A safetensors file: the header only, the weights at the end of vit_from_tensors. A PyTorch
  // checkpoint: every tensor read now (core/io/pytorch_checkpoint.hpp), the file hashed at the end.
  SafetensorsFile tensors = std::filesystem::is_regular_file(file, ec) && is_pytorch_file(file) ? open_pytorch(file, options.stop)
                                                                                              : open_safetensors(file);
  VitModel model = vit_from_tensors(std::move(tensors), read_text_file(dir / "config.json"),
                                    read_text_file(dir / "preprocessor_config.json"), options, file.string());
  model.file = file;
  return model;
}

Image vit_scaled_image(const Image& image, int resize) {
  if (resize <= 0 || std::min(image.width, image.height) == resize) return image;
  Image scaled;
  // The short side becomes `resize`, the long one keeps the aspect ratio (rounded).
  const bool portrait = image.width <= image.height;
  const double f = static_cast<double>(resize) / (portrait ? image.width : image.height);
  scaled.width = portrait ? resize : std::max(1, static_cast<int>(std::lround(image.width * f)));
  scaled.height = portrait ? std::max(1, static_cast<int>(std::lround(image.height * f))) : resize;
  if (static_cast<std::int64_t>(scaled.width) * scaled.height > kMaxImagePixels)
    throw Error("--resize " + std::to_string(resize) + " makes the image larger than the largest accepted");
  scaled.rgb.resize(static_cast<std::size_t>(scaled.width) * scaled.height * 3);
  if (!stbir_resize_float(image.rgb.data(), image.width, image.height, 0, scaled.rgb.data(), scaled.width, scaled.height, 0, 3))
    throw Error("the image could not be resized");
  for (float& v : scaled.rgb) v = std::clamp(v, 0.0f, 1.0f);
  return scaled;
}

VitInput vit_input(const VitModel& model, const Image& image, int resize) {
  const int P = model.arch.patch;
  if (resize < 0) throw Error("--resize must be a positive number of pixels");
  // A picture with no pixels (an empty probe photo): stb's resampler asserts on it.
  if (image.width <= 0 || image.height <= 0 ||
      image.rgb.size() != static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) * 3)
    throw Error("the image has no pixels (" + std::to_string(image.width) + "x" + std::to_string(image.height) + ")");
  const Image* src = &image;
  Image scaled;
  if (resize > 0 && std::min(image.width, image.height) != resize) {
    scaled = vit_scaled_image(image, resize);
    src = &scaled;
  }
  VitInput in;
  in.cols = src->width / P;
  in.rows = src->height / P;
  if (in.cols < 1 || in.rows < 1)
    throw Error("the image (" + std::to_string(src->width) + "×" + std::to_string(src->height) + " pixels) is smaller than one " +
                std::to_string(P) + "×" + std::to_string(P) + " patch of the model");
  in.width = in.cols * P;
  in.height = in.rows * P;
  in.scaled_width = src->width;
  in.scaled_height = src->height;
  in.patches.resize(in.N(), 3 * P * P);
  const auto& mean = model.arch.mean;
  const auto& sd = model.arch.std;
  for (int r = 0; r < in.rows; ++r)
    for (int c = 0; c < in.cols; ++c) {
      float* row = in.patches.row(r * in.cols + c).data();
      for (int ch = 0; ch < 3; ++ch)
        for (int y = 0; y < P; ++y)
          for (int x = 0; x < P; ++x)
            row[(ch * P + y) * P + x] = (src->at(c * P + x, r * P + y, ch) - mean[static_cast<std::size_t>(ch)]) /
                                        sd[static_cast<std::size_t>(ch)];
    }
  return in;
}

namespace {

/// Keys' cubic convolution kernel W(x) with parameter a (a = −0.5 in PyTorch's antialiased
/// bicubic, −0.75 in its plain bicubic).
float keys_cubic(float x, float a) {
  x = std::abs(x);
  if (x < 1.0f) return ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f;
  if (x < 2.0f) return (((x - 5.0f) * x + 8.0f) * x - 4.0f) * a;
  return 0.0f;
}

/// Resampling weights along one axis, in float32 as PyTorch 1.13–2.x computes them on the CPU
/// (aten/src/ATen/native/cpu/UpSampleKernel.cpp): out[i] = Σ_k w[i][k] in[first[i] + k].
struct AxisWeights {
  std::vector<int> first;
  std::vector<std::vector<float>> w;
  std::vector<std::vector<int>> index;  ///< the input index of each weight (clamped for plain bicubic)
};

/// F.interpolate(mode="bicubic", antialias=True, align_corners=False): _compute_weights_aa with
/// the aa_filter (a = −0.5): support 2·max(scale, 1), weights normalized to sum 1, taps outside
/// the input left out.
AxisWeights weights_antialiased(int in, int out) {
  AxisWeights a;
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  const float support = scale >= 1.0f ? 2.0f * scale : 2.0f;
  const float invscale = scale >= 1.0f ? 1.0f / scale : 1.0f;
  for (int i = 0; i < out; ++i) {
    const float center = scale * (static_cast<float>(i) + 0.5f);
    const int xmin = std::max(static_cast<int>(center - support + 0.5f), 0);
    const int xsize = std::min(static_cast<int>(center + support + 0.5f), in) - xmin;
    std::vector<float> w(static_cast<std::size_t>(std::max(xsize, 0)));
    std::vector<int> idx(w.size());
    float total = 0.0f;
    for (int j = 0; j < xsize; ++j) {
      w[static_cast<std::size_t>(j)] = keys_cubic((static_cast<float>(j + xmin) - center + 0.5f) * invscale, -0.5f);
      idx[static_cast<std::size_t>(j)] = xmin + j;
      total += w[static_cast<std::size_t>(j)];
    }
    if (total != 0.0f)
      for (float& v : w) v /= total;
    a.w.push_back(std::move(w));
    a.index.push_back(std::move(idx));
  }
  return a;
}

/// F.interpolate(mode="bicubic", align_corners=False) without antialias: source x =
/// scale·(i + 0.5) − 0.5 (not clamped), four taps at ⌊x⌋−1 … ⌊x⌋+2 clamped to the edge, a = −0.75.
AxisWeights weights_bicubic(int in, int out) {
  AxisWeights a;
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (int i = 0; i < out; ++i) {
    const float x = scale * (static_cast<float>(i) + 0.5f) - 0.5f;
    const int x0 = static_cast<int>(std::floor(x));
    const float t = x - static_cast<float>(x0);
    std::vector<float> w = {keys_cubic(t + 1.0f, -0.75f), keys_cubic(t, -0.75f), keys_cubic(1.0f - t, -0.75f),
                            keys_cubic(2.0f - t, -0.75f)};
    std::vector<int> idx(4);
    for (int k = 0; k < 4; ++k) idx[static_cast<std::size_t>(k)] = std::clamp(x0 - 1 + k, 0, in - 1);
    a.w.push_back(std::move(w));
    a.index.push_back(std::move(idx));
  }
  return a;
}

/// Resamples a grid of vectors (rows_in × cols_in, each D wide, raster order) to rows_out ×
/// cols_out: along x first, then y (the order of PyTorch's separable antialiased kernel; the
/// plain bicubic sums the same products, rounding aside).
Matrix resample_grid(const Matrix& grid, int rows_in, int cols_in, int rows_out, int cols_out, bool antialias) {
  const Eigen::Index D = grid.cols();
  Matrix horizontal = grid;
  if (cols_out != cols_in) {
    const AxisWeights ax = antialias ? weights_antialiased(cols_in, cols_out) : weights_bicubic(cols_in, cols_out);
    horizontal = Matrix::Zero(static_cast<Eigen::Index>(rows_in) * cols_out, D);
    for (int r = 0; r < rows_in; ++r)
      for (int c = 0; c < cols_out; ++c)
        for (std::size_t k = 0; k < ax.w[static_cast<std::size_t>(c)].size(); ++k)
          horizontal.row(r * cols_out + c) += ax.w[static_cast<std::size_t>(c)][k] * grid.row(r * cols_in + ax.index[static_cast<std::size_t>(c)][k]);
  }
  if (rows_out == rows_in) return horizontal;
  const AxisWeights ay = antialias ? weights_antialiased(rows_in, rows_out) : weights_bicubic(rows_in, rows_out);
  Matrix out = Matrix::Zero(static_cast<Eigen::Index>(rows_out) * cols_out, D);
  for (int r = 0; r < rows_out; ++r)
    for (int c = 0; c < cols_out; ++c)
      for (std::size_t k = 0; k < ay.w[static_cast<std::size_t>(r)].size(); ++k)
        out.row(r * cols_out + c) += ay.w[static_cast<std::size_t>(r)][k] * horizontal.row(ay.index[static_cast<std::size_t>(r)][k] * cols_out + c);
  return out;
}

int covered_prefix(const VitArchitecture& a) {
  switch (a.pos_layout) {
    case PosLayout::AllTokens: return a.prefix();
    case PosLayout::ClsAndPatches: return 1;
    case PosLayout::PatchesOnly: return 0;
  }
  return 0;
}

}  // namespace

Matrix vit_position_embedding(const VitModel& model, int rows, int cols) {
  const VitArchitecture& a = model.arch;
  if (rows == a.pos_rows && cols == a.pos_cols) return model.pos;
  const int pre = covered_prefix(a);
  const Matrix patches = model.pos.bottomRows(model.pos.rows() - pre);
  const bool antialias = a.naming != VitNaming::HuggingFace;
  Matrix out(pre + static_cast<Eigen::Index>(rows) * cols, model.pos.cols());
  out.topRows(pre) = model.pos.topRows(pre);
  out.bottomRows(static_cast<Eigen::Index>(rows) * cols) = resample_grid(patches, a.pos_rows, a.pos_cols, rows, cols, antialias);
  return out;
}

Matrix vit_initial_tokens(const VitModel& model, const Matrix& patch_tokens, const Matrix& pos) {
  const VitArchitecture& a = model.arch;
  const Eigen::Index N = patch_tokens.rows(), R = a.registers, pre = a.prefix();
  Matrix X(pre + N, a.D);
  X.row(0) = model.cls;
  if (R) X.middleRows(1, R) = model.registers;
  X.bottomRows(N) = patch_tokens;
  switch (a.pos_layout) {
    case PosLayout::AllTokens: X += pos; break;
    case PosLayout::ClsAndPatches:
      X.row(0) += pos.row(0);
      X.bottomRows(N) += pos.bottomRows(N);
      break;
    case PosLayout::PatchesOnly: X.bottomRows(N) += pos; break;
  }
  return X;
}

VitBackend parse_vit_backend(const std::string& text, const char* flag) {
  if (text == "auto") return VitBackend::Auto;
  if (text == "gpu") return VitBackend::Gpu;
  if (text == "cpu") return VitBackend::Cpu;
  throw Error(std::string(flag) + " must be auto, gpu or cpu, got '" + text + "'");
}

const char* vit_backend_name(VitBackend backend) {
  switch (backend) {
    case VitBackend::Auto: return "auto";
    case VitBackend::Gpu: return "gpu";
    case VitBackend::Cpu: return "cpu";
  }
  return "auto";
}

bool is_software_renderer(std::string_view renderer) {
  std::string lower(renderer);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* name : {"llvmpipe", "softpipe", "swiftshader"})
    if (lower.find(name) != std::string::npos) return true;
  return false;
}

std::int64_t VitPass::bytes() const {
  std::int64_t n = 0;
  for (const Matrix& q : Q) n += q.size();
  for (const Matrix& k : K) n += k.size();
  for (const RowVector& t : token_norms) n += t.size();
  n += distance.size() + static_cast<std::int64_t>(logits.size());
  return n * static_cast<std::int64_t>(sizeof(float));
}

std::int64_t vit_pass_bytes(const VitArchitecture& arch, int T) {
  const std::int64_t t = T, D = arch.D, L = arch.depth, hidden = arch.mlp_hidden;
  const std::int64_t kept = 2 * L * t * D + L * t;              // Q, K, norms
  const std::int64_t working = t * (D + D + 3 * D + D + hidden)  // X, LN(X), QKV, O, MLP hidden
                               + 2 * 64 * t                      // a block of score rows, per thread
                               + t * 3 * arch.patch * arch.patch;  // the patches
  return (kept + working) * static_cast<std::int64_t>(sizeof(float));
}

std::int64_t vit_memory_budget() { return static_cast<std::int64_t>(memory_budget()); }

void vit_check_budget(const VitArchitecture& arch, const VitInput& input, std::int64_t budget) {
  const int T = arch.prefix() + input.N();
  const std::int64_t need = vit_pass_bytes(arch, T);
  if (need <= budget) return;
  // The largest short side (a multiple of P) whose grid, at this image's aspect, fits.
  const double aspect = static_cast<double>(std::max(input.scaled_width, input.scaled_height)) /
                        std::max(1, std::min(input.scaled_width, input.scaled_height));
  int fits = 0;
  for (int side = arch.patch; side <= 65536; side += arch.patch) {
    const int short_patches = side / arch.patch;
    const int long_patches = static_cast<int>(std::floor(side * aspect)) / arch.patch;
    if (vit_pass_bytes(arch, arch.prefix() + short_patches * long_patches) > budget) break;
    fits = side;
  }
  throw Error("the image gives " + std::to_string(T) + " tokens: the forward pass would need " + std::to_string(need >> 20) +
              " MiB, over the " + std::to_string(budget >> 20) + " MiB memory budget" +
              (fits > 0 ? "; use --resize " + std::to_string(fits) + " or less" : "; no size fits this budget"));
}

namespace {

void check_layer(const VitPass& pass, int layer) {
  if (layer < 0 || layer >= pass.layers())
    throw Error("layer " + std::to_string(layer) + " is outside 0…" + std::to_string(pass.layers() - 1));
}
void check_query(const VitPass& pass, int query) {
  if (query < 0 || query >= pass.T) throw Error("query token " + std::to_string(query) + " is outside 0…" + std::to_string(pass.T - 1));
}

constexpr int kRowBlock = 64;  ///< rows of A computed at once where a whole A is streamed over

}  // namespace

void vit_softmax_rows(Eigen::Ref<Matrix> S) {
  for (Eigen::Index i = 0; i < S.rows(); ++i) {
    auto row = S.row(i).array();
    row = (row - row.maxCoeff()).exp();
    row *= 1.0f / row.sum();
  }
}

void vit_attention_block(const VitPass& pass, int layer, int head, int first, int count, Matrix& out) {
  check_layer(pass, layer);
  if (head < 0 || head >= pass.H) throw Error("head " + std::to_string(head) + " is outside 0…" + std::to_string(pass.H - 1));
  if (first < 0 || count < 0 || first + count > pass.T) throw Error("internal: attention rows outside the pass");
  const Matrix& Q = pass.Q[static_cast<std::size_t>(layer)];
  const Matrix& K = pass.K[static_cast<std::size_t>(layer)];
  const float scale = 1.0f / std::sqrt(static_cast<float>(pass.m));
  const int D = static_cast<int>(Q.cols());
  out.resize(count, pass.T);
  if (count == 0) return;
  blas::sgemm(false, true, count, pass.T, pass.m, scale,
              Q.data() + static_cast<std::ptrdiff_t>(first) * D + static_cast<std::ptrdiff_t>(head) * pass.m, D,
              K.data() + static_cast<std::ptrdiff_t>(head) * pass.m, D, 0.0f, out.data(), pass.T);
  vit_softmax_rows(out);
}

std::vector<float> vit_attention_rows(const VitPass& pass, int layer, int query) {
  check_layer(pass, layer);
  check_query(pass, query);
  std::vector<float> out(static_cast<std::size_t>(pass.H) * pass.T);
  Matrix row;
  for (int h = 0; h < pass.H; ++h) {
    vit_attention_block(pass, layer, h, query, 1, row);
    std::copy(row.data(), row.data() + pass.T, out.begin() + static_cast<std::ptrdiff_t>(h) * pass.T);
  }
  return out;
}

Matrix vit_attention(const VitPass& pass, int layer, int head) {
  Matrix A;
  vit_attention_block(pass, layer, head, 0, pass.T, A);
  return A;
}

std::vector<float> vit_patch_row(const VitPass& pass, int prefix, int layer, HeadChoice head, int query) {
  check_layer(pass, layer);
  if (head.head >= pass.H) throw Error("head " + std::to_string(head.head) + " is outside 0…" + std::to_string(pass.H - 1));
  check_query(pass, query);
  const int T = pass.T, N = T - prefix;
  const std::vector<float> rows = vit_attention_rows(pass, layer, query);
  auto patch_keys = [&](int h) {  // head h's row over the patch keys, 1 × N
    return Matrix(Eigen::Map<const Matrix>(rows.data() + static_cast<std::size_t>(h) * T + prefix, 1, N));
  };
  const Matrix out = head.head >= 0 ? patch_keys(head.head) : fuse_heads(pass.H, head.fusion, patch_keys);
  return {out.data(), out.data() + out.size()};
}

std::vector<float> vit_rollout_row(const VitPass& pass, int layer, HeadFusion fusion, int query) {
  check_layer(pass, layer);
  check_query(pass, query);
  const int T = pass.T, H = pass.H;
  Eigen::RowVectorXd r = Eigen::RowVectorXd::Zero(T);
  r(query) = 1.0;
  Matrix block;
  for (int l = layer; l >= 0; --l) {
    // r ← r Â_l, over blocks of Â_l's rows; rows where r is 0 are skipped (the first step reads one).
    Eigen::RowVectorXd next = Eigen::RowVectorXd::Zero(T);
    for (int first = 0; first < T; first += kRowBlock) {
      const int count = std::min(kRowBlock, T - first);
      if (r.segment(first, count).isZero(0.0)) continue;
      const Eigen::MatrixXd hat_rows = fuse_heads(H, fusion, [&](int h) {
                                         vit_attention_block(pass, l, h, first, count, block);
                                         return block;
                                       }).cast<double>();
      for (int i = 0; i < count; ++i) {
        const double ri = r(first + i);
        if (ri == 0.0) continue;
        // Â's row: (a + e_i)/2, renormalized to sum 1.
        const double sum = 0.5 * (hat_rows.row(i).sum() + 1.0);
        next += (0.5 * ri / sum) * hat_rows.row(i);
        next(first + i) += 0.5 * ri / sum;
      }
    }
    r = next;
  }
  std::vector<float> out(static_cast<std::size_t>(T));
  for (int j = 0; j < T; ++j) out[static_cast<std::size_t>(j)] = static_cast<float>(r(j));
  return out;
}

Matrix vit_attention_distance(const VitPass& pass, int prefix, int cols, int rows, int patch) {
  const int T = pass.T, N = cols * rows;
  if (T != prefix + N) throw Error("the grid does not match the tokens of the pass");
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(pass.layers(), pass.H);
  Matrix block;
  const PatchDistances distances(cols, rows, patch);
  for (int first = prefix; first < T; first += kRowBlock) {
    const int count = std::min(kRowBlock, T - first);
    for (int l = 0; l < pass.layers(); ++l)
      for (int h = 0; h < pass.H; ++h) {
        vit_attention_block(pass, l, h, first, count, block);
        for (int i = 0; i < count; ++i) sum(l, h) += distances.weighted_sum(first + i - prefix, block.row(i).data() + prefix);
      }
  }
  return (sum / N).cast<float>();
}

PatchDistances::PatchDistances(int cols, int rows, int patch) : cols_(cols), rows_(rows) {
  const int width = 2 * cols - 1;
  profiles_.resize(static_cast<std::size_t>(rows) * width);
  for (int dy = 0; dy < rows; ++dy)
    for (int k = 0; k < width; ++k)
      profiles_[static_cast<std::size_t>(dy) * width + k] =
          static_cast<float>(patch * std::hypot(static_cast<double>(k - cols + 1), static_cast<double>(dy)));
}

double PatchDistances::weighted_sum(int query, const float* w) const {
  const int qx = query % cols_, qy = query / cols_, width = 2 * cols_ - 1;
  double sum = 0.0;
  for (int y = 0; y < rows_; ++y) {
    const float* profile = profiles_.data() + static_cast<std::size_t>(std::abs(y - qy)) * width + (cols_ - 1 - qx);
    sum += Eigen::Map<const Eigen::VectorXf>(w + static_cast<std::ptrdiff_t>(y) * cols_, cols_).dot(Eigen::Map<const Eigen::VectorXf>(profile, cols_));
  }
  return sum;
}

std::vector<std::pair<int, float>> vit_top_classes(std::span<const float> logits, int k) {
  if (logits.empty()) return {};
  const float top = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p(logits.size());
  double sum = 0.0;
  for (std::size_t c = 0; c < logits.size(); ++c) sum += p[c] = std::exp(static_cast<double>(logits[c]) - top);
  std::vector<int> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[static_cast<std::size_t>(a)] > logits[static_cast<std::size_t>(b)]; });
  std::vector<std::pair<int, float>> out;
  for (int i = 0; i < k && i < static_cast<int>(order.size()); ++i)
    out.emplace_back(order[static_cast<std::size_t>(i)], static_cast<float>(p[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] / sum));
  return out;
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
