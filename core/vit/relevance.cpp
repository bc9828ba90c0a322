#include "core/vit/relevance.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace attnlab {

namespace {

// T × T products in float, as PyTorch computes them (about 10x faster than double here; the
// goldens, in double, agree within 1e-6 of the map's largest value).
using MatrixT = Eigen::MatrixXf;

struct MethodName {
  RelevanceMethod method;
  const char* name;
};
constexpr MethodName kNames[] = {
    {RelevanceMethod::Attention, "attention"}, {RelevanceMethod::Rollout, "rollout"},
    {RelevanceMethod::GradRollout, "grad-rollout"}, {RelevanceMethod::Chefer, "chefer"},
    {RelevanceMethod::InputGradient, "input-gradient"},
};

/// mean_h A_l: T × T.
MatrixT head_mean(const Matrix& A, int H, int T) {
  MatrixT mean = MatrixT::Zero(T, T);
  for (int h = 0; h < H; ++h) mean += A.middleRows(static_cast<Eigen::Index>(h) * T, T);
  return mean / static_cast<float>(H);
}

/// mean_h((∂y/∂A_l ⊙ A_l)⁺): T × T (Chefer et al.'s gradient-weighted attention).
MatrixT positive_gradient_mean(const Matrix& A, const Matrix& dA, int H, int T) {
  MatrixT mean = MatrixT::Zero(T, T);
  for (int h = 0; h < H; ++h) {
    const auto rows = Eigen::seqN(static_cast<Eigen::Index>(h) * T, T);
    mean += (dA(rows, Eigen::all).array() * A(rows, Eigen::all).array()).max(0.0f).matrix();
  }
  return mean / static_cast<float>(H);
}

/// R = Â_{L−1} ⋯ Â_0 with Â_l = ½(M_l + I), rows renormalised (Abnar & Zuidema 2020).
template <class LayerMatrix>
MatrixT rollout(int layers, int T, const LayerMatrix& layer_matrix) {
  MatrixT R = MatrixT::Identity(T, T);
  for (int l = 0; l < layers; ++l) {
    MatrixT hat = 0.5f * (layer_matrix(l) + MatrixT::Identity(T, T));
    hat.array().colwise() /= hat.rowwise().sum().array();
    R = hat * R;
  }
  return R;
}

/// The row the classifier reads, over the patches: row 0 (the class token), or the mean of the
/// patch rows for a model pooled by averaging.
std::vector<float> read_patch_row(const MatrixT& R, const VitGradients& g) {
  const int pre = g.prefix, N = g.N();
  Eigen::RowVectorXf row =
      g.pooling == VitPooling::Token ? Eigen::RowVectorXf(R.row(0)) : Eigen::RowVectorXf(R.bottomRows(N).colwise().mean());
  std::vector<float> out(static_cast<std::size_t>(N));
  for (int p = 0; p < N; ++p) out[static_cast<std::size_t>(p)] = row(pre + p);
  return out;
}

void check_gradients(const VitGradients& g, RelevanceMethod method) {
  if (g.A.empty()) throw Error(_("internal: a relevance map needs a gradient pass over every block"));
  if (g.klass < 0) throw Error(_("internal: a relevance map needs a class's gradient pass, not a token's"));
  if (relevance_needs_gradient(method) && g.dA.size() != g.A.size()) throw Error(_("internal: the gradient pass kept no ∂y/∂A"));
}

}  // namespace

const char* relevance_method_name(RelevanceMethod method) {
  for (const MethodName& n : kNames)
    if (n.method == method) return n.name;
  return "chefer";
}

std::optional<RelevanceMethod> parse_relevance_method(std::string_view name) {
  for (const MethodName& n : kNames)
    if (name == n.name) return n.method;
  return std::nullopt;
}

std::string relevance_method_list() {
  std::string out;
  for (const MethodName& n : kNames) out += (out.empty() ? "" : ", ") + std::string(n.name);
  return out;
}

bool relevance_needs_gradient(RelevanceMethod method) {
  return method != RelevanceMethod::Attention && method != RelevanceMethod::Rollout;
}

std::vector<float> relevance_map(const VitGradients& g, RelevanceMethod method) {
  check_gradients(g, method);
  const int T = g.T, H = g.H, L = static_cast<int>(g.A.size());
  auto A = [&](int l) -> const Matrix& { return g.A[static_cast<std::size_t>(l)]; };
  auto G = [&](int l) { return positive_gradient_mean(A(l), g.dA[static_cast<std::size_t>(l)], H, T); };
  switch (method) {
    case RelevanceMethod::Attention: return read_patch_row(head_mean(A(L - 1), H, T), g);
    case RelevanceMethod::Rollout: return read_patch_row(rollout(L, T, [&](int l) { return head_mean(A(l), H, T); }), g);
    case RelevanceMethod::GradRollout: return read_patch_row(rollout(L, T, G), g);
    case RelevanceMethod::Chefer: {  // eqs. 5–6: R ← R + Ḡ_l·R, from R = I
      MatrixT R = MatrixT::Identity(T, T);
      for (int l = 0; l < L; ++l) R += G(l) * R;
      return read_patch_row(R, g);
    }
    case RelevanceMethod::InputGradient: {  // Σ over each patch's values (every colour) of |∂y_c/∂x|
      std::vector<float> out(static_cast<std::size_t>(g.N()));
      for (int p = 0; p < g.N(); ++p) out[static_cast<std::size_t>(p)] = g.d_patches.row(p).cwiseAbs().sum();
      return out;
    }
  }
  return {};
}

std::vector<float> vit_relevance(const VitModel& model, const VitInput& input, int klass, RelevanceMethod method,
                                 std::int64_t budget, const std::atomic<bool>* stop) {
  return relevance_map(vit_gradients(model, input, VitGradientTarget::class_logit(klass), budget, stop), method);
}

Matrix vit_receptive_field(const VitModel& model, const VitInput& input, int layer, int token, std::int64_t budget,
                           const std::atomic<bool>* stop) {
  return vit_input_gradient_map(vit_gradients(model, input, VitGradientTarget::token_sum(layer, token), budget, stop));
}

Matrix vit_mean_receptive_field(const VitModel& model, int count, const std::function<VitInput(int)>& image, int cols, int rows,
                                int layer, int col, int row, std::int64_t budget, const std::function<void(int, int)>& progress,
                                const std::atomic<bool>* stop) {
  if (col < 0 || row < 0 || col >= cols || row >= rows)
    // TRANSLATORS: "patch (column,row) is outside the columns x rows grid" of patches.
    throw Error(text_format(_("patch (%d,%d) is outside the %dx%d grid"), col, row, cols, rows));
  const int P = model.arch.patch;
  Matrix sum = Matrix::Zero(static_cast<Eigen::Index>(rows) * P, static_cast<Eigen::Index>(cols) * P);
  for (int i = 0; i < count; ++i) {
    const VitInput full = image(i);
    if (full.cols < cols || full.rows < rows)
      // TRANSLATORS: grids of patches, columns x rows.
      throw Error(text_format(_("image %d gives a %dx%d grid, smaller than %dx%d"), i, full.cols, full.rows, cols, rows));
    VitInput crop = full;  // the top-left cols × rows patches, as vit_input() crops the remainder
    crop.cols = cols;
    crop.rows = rows;
    crop.width = cols * P;
    crop.height = rows * P;
    crop.patches.resize(static_cast<Eigen::Index>(cols) * rows, full.patches.cols());
    for (int r = 0; r < rows; ++r) crop.patches.middleRows(static_cast<Eigen::Index>(r) * cols, cols) = full.patches.middleRows(static_cast<Eigen::Index>(r) * full.cols, cols);
    sum += vit_receptive_field(model, crop, layer, model.arch.prefix() + row * cols + col, budget, stop);
    if (progress) progress(i + 1, count);
  }
  return count > 0 ? Matrix(sum / static_cast<float>(count)) : sum;
}

int vit_class_named(const VitArchitecture& arch, const std::string& text) {
  return class_named(arch.labels, text);
}

int class_named(const std::vector<std::string>& labels, const std::string& text) {
  const int classes = static_cast<int>(labels.size());
  if (classes == 0) throw Error(_("this checkpoint has no classifier: no class to explain"));
  if (text == "top") return VitGradientTarget::kTopClass;
  if (!text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); })) {
    if (text.size() < 10) {
      const int c = std::stoi(text);
      if (c < classes) return c;
    }
    throw Error(text_format(_("class %s is outside 0…%d"), text.c_str(), classes - 1));
  }
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  };
  const std::string want = lower(text);
  for (std::size_t c = 0; c < labels.size(); ++c)
    if (lower(labels[c]) == want) return static_cast<int>(c);
  // TRANSLATORS: "top" is a value the user types (the likeliest class); config.json is a file name.
  throw Error(text_format(_("no class is named '%s': give an index 0…%d, a label from the model's config.json, or top"),
                          text.c_str(), classes - 1));
}

}  // namespace attnlab
