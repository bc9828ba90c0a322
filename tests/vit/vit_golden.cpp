#include "vit/vit_golden.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace attnlab::testing {

std::filesystem::path vit_data_dir() { return std::filesystem::path(ATTNLAB_SOURCE_DIR) / "tests" / "vit" / "data"; }

VitLoadOptions VitGolden::load_options() const {
  VitLoadOptions o;
  for (std::size_t i = 0; i + 1 < args.size(); i += 2)
    if (args[i] == "--heads") o.heads = std::stoi(args[i + 1]);
  return o;
}

Matrix VitGolden::attention(int layer, int head) const {
  const int T = json.at("T").get<int>();
  const auto& flat = json.at("attention").at(static_cast<std::size_t>(layer)).at(static_cast<std::size_t>(head));
  Matrix A(T, T);
  for (int i = 0; i < T * T; ++i) A.data()[i] = flat.at(static_cast<std::size_t>(i)).get<float>();
  return A;
}

Matrix VitGolden::rollout(const std::string& fusion, int layer) const {
  const int T = json.at("T").get<int>();
  const auto& flat = json.at("rollout").at(fusion).at(static_cast<std::size_t>(layer));
  Matrix R(T, T);
  for (int i = 0; i < T * T; ++i) R.data()[i] = flat.at(static_cast<std::size_t>(i)).get<float>();
  return R;
}

namespace {

// Every golden file (*.json) in `data_dir`/golden, its model and image named relative to
// `data_dir`, sorted by name. Throws when the folder does not hold `expected` of them, so that a
// loop over the list can never pass by checking nothing (a missing or emptied folder).
std::vector<VitGolden> read_goldens(const std::filesystem::path& data_dir, std::size_t expected) {
  std::vector<VitGolden> out;
  const auto dir = data_dir / "golden";
  if (std::filesystem::is_directory(dir))
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() != ".json") continue;
      VitGolden g;
      g.name = entry.path().stem().string();
      g.json = nlohmann::json::parse(read_file(entry.path()));
      g.model_dir = data_dir / g.json.at("model").get<std::string>();
      g.image = data_dir / g.json.at("image").get<std::string>();
      g.args = g.json.at("args").get<std::vector<std::string>>();
      out.push_back(std::move(g));
    }
  if (out.size() != expected)
    throw std::runtime_error(dir.string() + " holds " + std::to_string(out.size()) + " golden files, not " +
                             std::to_string(expected));
  std::sort(out.begin(), out.end(), [](const VitGolden& a, const VitGolden& b) { return a.name < b.name; });
  return out;
}

}  // namespace

std::vector<VitGolden> vit_goldens() { return read_goldens(vit_data_dir(), kVitGoldens); }

std::filesystem::path vit_real_data_dir() { return vit_data_dir() / "real"; }

std::vector<VitGolden> vit_real_goldens() { return read_goldens(vit_real_data_dir(), kVitRealGoldens); }

namespace {

Matrix json_row(const nlohmann::json& values) {
  const auto v = values.get<std::vector<float>>();
  Matrix m(1, static_cast<Eigen::Index>(v.size()));
  for (std::size_t i = 0; i < v.size(); ++i) m(0, static_cast<Eigen::Index>(i)) = v[i];
  return m;
}

Matrix vector_row(const std::vector<float>& v) { return Eigen::Map<const Matrix>(v.data(), 1, static_cast<Eigen::Index>(v.size())); }

}  // namespace

void expect_real_size_pass_matches(const VitGolden& g, const VitModel& model, const VitInput& input, const VitPass& pass) {
  constexpr double kAbs = 2e-4, kRel = 1e-3;  // the tolerance on attention weights
  const auto& j = g.json;
  const auto& info = j.at("info");
  const VitArchitecture& a = model.arch;
  // The shape the file was made with: real size (T ≥ 197, head width 64).
  ASSERT_EQ(a.D, info.at("D").get<int>());
  ASSERT_EQ(a.heads, info.at("heads").get<int>());
  ASSERT_EQ(a.depth, info.at("depth").get<int>());
  ASSERT_EQ(a.patch, info.at("patch").get<int>());
  ASSERT_EQ(a.registers, info.at("registers").get<int>());
  EXPECT_EQ(naming_name(a.naming), info.at("naming").get<std::string>());
  EXPECT_EQ(a.layer_scale, info.at("layer_scale").get<bool>());
  EXPECT_EQ(a.classes, info.at("classes").get<int>());
  EXPECT_EQ(dtype_name(a.dtype), info.at("dtype").get<std::string>());
  EXPECT_EQ(a.parameters, info.at("parameters").get<std::int64_t>());
  ASSERT_EQ(input.cols, j.at("grid").at(0).get<int>());
  ASSERT_EQ(input.rows, j.at("grid").at(1).get<int>());
  const int T = j.at("T").get<int>();
  ASSERT_EQ(pass.T, T);
  ASSERT_EQ(pass.H, a.heads);
  ASSERT_EQ(pass.m, 64);
  ASSERT_GE(pass.T, 197);
  ASSERT_EQ(pass.layers(), a.depth);
  const int prefix = a.prefix(), last = pass.layers() - 1;

  // Every stored row of every layer and head, over all T keys.
  const auto queries = j.at("queries").get<std::vector<int>>();
  ASSERT_GE(queries.size(), 5u);
  for (int l = 0; l < pass.layers(); ++l)
    for (std::size_t qi = 0; qi < queries.size(); ++qi) {
      const int q = queries[qi];
      const std::vector<float> rows = vit_attention_rows(pass, l, q);
      ASSERT_EQ(rows.size(), static_cast<std::size_t>(pass.H * T));
      for (int h = 0; h < pass.H; ++h) {
        const Matrix got = Eigen::Map<const Matrix>(rows.data() + static_cast<std::ptrdiff_t>(h) * T, 1, T);
        const Matrix want = json_row(j.at("rows").at(static_cast<std::size_t>(l)).at(static_cast<std::size_t>(h)).at(qi));
        EXPECT_EQ(compare_within(got, want, kAbs, kRel), "") << "layer " << l << " head " << h << " query " << q;
        EXPECT_NEAR(got.sum(), 1.0, 1e-4) << "layer " << l << " head " << h << " query " << q;
      }
    }
  // The last layer's patch rows, one head and fused (prefix keys dropped, not renormalized).
  for (std::size_t qi = 0; qi < queries.size(); ++qi) {
    const int q = queries[qi];
    const auto& stored = j.at("rows").at(static_cast<std::size_t>(last));
    Matrix mean = Matrix::Zero(1, T - prefix), mx = Matrix::Constant(1, T - prefix, -1.0f), mn = Matrix::Constant(1, T - prefix, 2.0f);
    for (int h = 0; h < pass.H; ++h) {
      const Matrix r = json_row(stored.at(static_cast<std::size_t>(h)).at(qi)).rightCols(T - prefix);
      if (h == 0) {
        EXPECT_EQ(compare_within(vector_row(vit_patch_row(pass, prefix, last, {0, HeadFusion::Mean}, q)), r, kAbs, kRel), "") << "query " << q;
      }
      mean += r / static_cast<float>(pass.H);
      mx = mx.cwiseMax(r);
      mn = mn.cwiseMin(r);
    }
    EXPECT_EQ(compare_within(vector_row(vit_patch_row(pass, prefix, last, {-1, HeadFusion::Mean}, q)), mean, kAbs, kRel), "") << "mean, query " << q;
    EXPECT_EQ(compare_within(vector_row(vit_patch_row(pass, prefix, last, {-1, HeadFusion::Max}, q)), mx, kAbs, kRel), "") << "max, query " << q;
    EXPECT_EQ(compare_within(vector_row(vit_patch_row(pass, prefix, last, {-1, HeadFusion::Min}, q)), mn, kAbs, kRel), "") << "min, query " << q;
  }
  // Rollout rows at the last layer.
  const auto roll_queries = j.at("rollout_queries").get<std::vector<int>>();
  ASSERT_FALSE(roll_queries.empty());
  for (const auto& [name, fusion] : {std::pair{"mean", HeadFusion::Mean}, {"max", HeadFusion::Max}, {"min", HeadFusion::Min}})
    for (std::size_t qi = 0; qi < roll_queries.size(); ++qi) {
      const int q = roll_queries[qi];
      const Matrix want = json_row(j.at("rollout").at(name).at(qi));
      EXPECT_EQ(compare_within(vector_row(vit_rollout_row(pass, last, fusion, q)), want, kAbs, kRel), "") << name << " rollout, query " << q;
    }
  // Mean attention distance: streamed by the forward pass, and recomputed from q and k.
  ASSERT_EQ(pass.distance.rows(), pass.layers());
  ASSERT_EQ(pass.distance.cols(), pass.H);
  const Matrix d = vit_attention_distance(pass, prefix, input.cols, input.rows, a.patch);
  for (int l = 0; l < pass.layers(); ++l)
    for (int h = 0; h < pass.H; ++h) {
      const double want = j.at("distance").at(static_cast<std::size_t>(l)).at(static_cast<std::size_t>(h)).get<double>();
      EXPECT_NEAR(pass.distance(l, h), want, 1e-2) << "layer " << l << " head " << h;
      EXPECT_NEAR(d(l, h), want, 1e-2) << "layer " << l << " head " << h;
    }
  // Norms of each block's output tokens.
  const auto norm_tokens = j.at("norm_tokens").get<std::vector<int>>();
  ASSERT_EQ(pass.token_norms.size(), static_cast<std::size_t>(pass.layers()));
  for (int l = 0; l < pass.layers(); ++l) {
    ASSERT_EQ(pass.token_norms[static_cast<std::size_t>(l)].size(), T);
    for (std::size_t ti = 0; ti < norm_tokens.size(); ++ti) {
      const double want = j.at("token_norms").at(static_cast<std::size_t>(l)).at(ti).get<double>();
      EXPECT_NEAR(pass.token_norms[static_cast<std::size_t>(l)](norm_tokens[ti]), want, 1e-4 * std::abs(want))
          << "layer " << l << " token " << norm_tokens[ti];
    }
  }
  // The classifier.
  if (!j.contains("logits")) {
    EXPECT_TRUE(pass.logits.empty());
    return;
  }
  const auto want = j.at("logits").get<std::vector<float>>();
  ASSERT_EQ(pass.logits.size(), want.size());
  for (std::size_t c = 0; c < want.size(); ++c) EXPECT_NEAR(pass.logits[c], want[c], 1e-4 + 1e-3 * std::abs(want[c])) << "class " << c;
  const auto probs = j.at("probabilities").get<std::vector<float>>();
  const auto top = vit_top_classes(pass.logits, static_cast<int>(want.size()));
  ASSERT_EQ(top.size(), want.size());
  for (const auto& [c, p] : top) EXPECT_NEAR(p, probs[static_cast<std::size_t>(c)], 1e-4) << "class " << c;
}

std::string compare_within(const Matrix& got, const Matrix& want, double abs_tol, double rel_tol) {
  if (got.rows() != want.rows() || got.cols() != want.cols())
    return "shape " + std::to_string(got.rows()) + "x" + std::to_string(got.cols()) + " vs " + std::to_string(want.rows()) + "x" +
           std::to_string(want.cols());
  double worst = 0.0;
  Eigen::Index wi = 0;
  for (Eigen::Index i = 0; i < got.size(); ++i) {
    const double excess = std::abs(double(got.data()[i]) - double(want.data()[i])) - (abs_tol + rel_tol * std::abs(double(want.data()[i])));
    if (!(excess <= 0.0) && (excess > worst || std::isnan(excess))) {
      worst = std::isnan(excess) ? 1e30 : excess;
      wi = i;
    }
  }
  if (worst == 0.0) return {};
  std::ostringstream s;
  s << "entry " << wi / got.cols() << "," << wi % got.cols() << ": got " << got.data()[wi] << ", want " << want.data()[wi];
  return s.str();
}

std::string safetensors_f32_bytes(const std::map<std::string, Tensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const auto& [name, t] : tensors) {
    const std::size_t begin = data.size();
    data.append(reinterpret_cast<const char*>(t.values.data()), t.values.size() * sizeof(float));
    header[name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  std::string text = header.dump();
  while (text.size() % 8) text += ' ';
  std::string out(8, '\0');
  const std::uint64_t n = text.size();
  for (int b = 0; b < 8; ++b) out[static_cast<std::size_t>(b)] = static_cast<char>((n >> (8 * b)) & 0xff);
  return out + text + data;
}

}  // namespace attnlab::testing
