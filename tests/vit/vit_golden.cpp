#include "vit/vit_golden.hpp"

#include "test_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

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

std::vector<VitGolden> vit_goldens() {
  std::vector<VitGolden> out;
  for (const auto& entry : std::filesystem::directory_iterator(vit_data_dir() / "golden")) {
    if (entry.path().extension() != ".json") continue;
    VitGolden g;
    g.name = entry.path().stem().string();
    g.json = nlohmann::json::parse(read_file(entry.path()));
    g.model_dir = vit_data_dir() / g.json.at("model").get<std::string>();
    g.image = vit_data_dir() / g.json.at("image").get<std::string>();
    g.args = g.json.at("args").get<std::vector<std::string>>();
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(), [](const VitGolden& a, const VitGolden& b) { return a.name < b.name; });
  return out;
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
