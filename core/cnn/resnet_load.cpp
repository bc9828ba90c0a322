// Loading a ResNet (core/cnn/resnet.hpp): the tensors found by torchvision's names and checked,
// read in one pass, every batch norm folded into its convolution; config.json's mean, std,
// input size and labels.
#include "core/cnn/resnet.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/io/config_json.hpp"
#include "core/io/files.hpp"
#include "core/io/pytorch_checkpoint.hpp"
#include "core/vit/vit.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace attnlab {

namespace {

using json = nlohmann::json;

constexpr float kBatchNormEps = 1e-5f;  // torch.nn.BatchNorm2d's default, torchvision's and timm's ResNets

// The tensors a ResNet uses, found and checked, their values read later in one pass.
class Reader {
 public:
  Reader(const SafetensorsFile& file, std::string what) : file_(file), what_(std::move(what)) {}

  [[noreturn]] void fail(const std::string& problem) const { throw Error(what_ + ": " + problem); }

  bool has(const std::string& name) const { return file_.tensors.count(name) > 0; }

  /// The tensor `name` of `rank` dimensions; its values to be read into a buffer of its own.
  const Tensor& take(const std::string& name, std::size_t rank) {
    const auto it = file_.tensors.find(name);
    if (it == file_.tensors.end()) fail(text_format(_("tensor '%s' of the ResNet is missing"), name.c_str()));
    if (it->second.shape.size() != rank)
      // TRANSLATORS: %1$s is a tensor's name, %2$s its shape such as [64, 3, 7, 7].
      fail(text_format(_("tensor '%s' has shape %s, not %zu dimensions"), name.c_str(), shape_text(it->second.shape).c_str(),
                       rank));
    if (used_.insert(name).second) parameters_ += it->second.numel();
    return it->second;
  }

  /// Throws naming the tensors nothing took.
  void check_complete() const {
    std::vector<std::string> unknown;
    for (const auto& [name, t] : file_.tensors)
      if (!used_.count(name)) unknown.push_back(name);
    if (unknown.empty()) return;
    std::string list;
    for (std::size_t i = 0; i < unknown.size() && i < 5; ++i) list += (i ? ", " : "") + unknown[i];
    if (unknown.size() > 5) list += ", …";
    // TRANSLATORS: %1$zu is a count, %2$s the tensors' names.
    fail(text_format(_("%zu tensor(s) are not part of a ResNet as read here: %s"), unknown.size(), list.c_str()));
  }

  /// Reads every taken tensor (one pass over the file), returns the file's SHA-256.
  std::string read_all(const std::atomic<bool>* stop) {
    std::vector<TensorRead> reads;
    for (const std::string& name : used_) {
      const Tensor& t = file_.tensors.at(name);
      auto& v = values_[name];
      v.resize(static_cast<std::size_t>(t.numel()));
      reads.push_back({&t, v.data()});
    }
    return file_.read(reads, stop);
  }
  const std::vector<float>& values(const std::string& name) const { return values_.at(name); }
  std::int64_t parameters() const { return parameters_; }

 private:
  const SafetensorsFile& file_;
  std::string what_;
  std::set<std::string> used_;
  std::map<std::string, std::vector<float>> values_;
  std::int64_t parameters_ = 0;
};

// A convolution `conv` followed by the batch norm `norm` (tensor prefixes), shapes checked
// against the expected input channels and stride; folded once the values are read.
struct ConvPlan {
  std::string conv, norm;
  CnnConv* out = nullptr;
};

void plan_conv(Reader& r, const std::string& conv, const std::string& norm, int in, int stride, CnnConv& c,
               std::vector<ConvPlan>& plans) {
  const Tensor& w = r.take(conv + ".weight", 4);
  const auto& s = w.shape;
  if (s[2] != s[3] || s[2] % 2 == 0 || s[2] > 11)
    // TRANSLATORS: %1$s.weight is a tensor's name (the %1$s part its convolution's), %2$s its shape such as [64, 3, 7, 7].
    r.fail(text_format(_("tensor '%s.weight' has shape %s: the kernel must be square and odd (1, 3, 7)"), conv.c_str(),
                       shape_text(s).c_str()));
  if (s[1] != in)
    // TRANSLATORS: %1$s.weight is a tensor's name, %2$s its shape, then two numbers of channels.
    r.fail(text_format(_("tensor '%s.weight' has shape %s: it takes %lld channels where the layer before gives %d"), conv.c_str(),
                       shape_text(s).c_str(), static_cast<long long>(s[1]), in));
  if (s[0] < 1 || s[0] > 65536)
    // TRANSLATORS: %1$s.weight is a tensor's name, %2$s its shape.
    r.fail(text_format(_("tensor '%s.weight' has shape %s: no output channels"), conv.c_str(), shape_text(s).c_str()));
  c.in = in;
  c.out = static_cast<int>(s[0]);
  c.k = static_cast<int>(s[2]);
  c.stride = stride;
  c.pad = c.k / 2;
  for (const char* p : {".weight", ".bias", ".running_mean", ".running_var"}) {
    const Tensor& t = r.take(norm + p, 1);
    if (t.shape[0] != c.out)
      // TRANSLATORS: %1$s%2$s is a tensor's name, %3$s its shape, %4$d a number of channels, %5$s a convolution's name.
      r.fail(text_format(_("tensor '%s%s' has shape %s, not [%d] (the channels of %s)"), norm.c_str(), p,
                         shape_text(t.shape).c_str(), c.out, conv.c_str()));
  }
  plans.push_back({conv, norm, &c});
}

void fold(const Reader& r, const ConvPlan& p) {
  CnnConv& c = *p.out;
  const auto& w = r.values(p.conv + ".weight");
  const auto &gamma = r.values(p.norm + ".weight"), &beta = r.values(p.norm + ".bias");
  const auto &mean = r.values(p.norm + ".running_mean"), &var = r.values(p.norm + ".running_var");
  const int cols = c.in * c.k * c.k;
  c.W.resize(c.out, cols);
  c.b.resize(c.out);
  for (int o = 0; o < c.out; ++o) {
    const auto oi = static_cast<std::size_t>(o);
    const double scale = gamma[oi] / std::sqrt(static_cast<double>(var[oi]) + kBatchNormEps);
    for (int j = 0; j < cols; ++j) c.W(o, j) = static_cast<float>(w[oi * static_cast<std::size_t>(cols) + static_cast<std::size_t>(j)] * scale);
    c.b[o] = static_cast<float>(beta[oi] - mean[oi] * scale);
  }
  if (c.k != 3 || c.stride != 1) return;
  // Winograd F(2×2, 3×3): U = G g Gᵀ, G = [1 0 0; ½ ½ ½; ½ −½ ½; 0 0 1] (docs/MATH.md).
  static constexpr double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  c.winograd.resize(16 * c.out, c.in);
  for (int o = 0; o < c.out; ++o)
    for (int i = 0; i < c.in; ++i) {
      const float* g = c.W.data() + static_cast<std::size_t>(o) * cols + static_cast<std::size_t>(i) * 9;
      double Gg[4][3];
      for (int a = 0; a < 4; ++a)
        for (int x = 0; x < 3; ++x) Gg[a][x] = G[a][0] * g[x] + G[a][1] * g[3 + x] + G[a][2] * g[6 + x];
      for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b)
          c.winograd((a * 4 + b) * c.out + o, i) = static_cast<float>(Gg[a][0] * G[b][0] + Gg[a][1] * G[b][1] + Gg[a][2] * G[b][2]);
    }
}

// timm's config.json: pretrained_cfg.{mean, std, input_size}, label_names.
void read_config(const std::string& text, const std::string& what, ResnetArchitecture& arch) {
  arch.labels.resize(static_cast<std::size_t>(arch.classes));
  for (int c = 0; c < arch.classes; ++c) arch.labels[static_cast<std::size_t>(c)] = "class " + std::to_string(c);
  const std::string cfg = what + " (config.json)";
  const json config = parse_config_json(text, cfg);
  if (const auto pc = config.find("pretrained_cfg"); pc != config.end() && pc->is_object()) {
    if (const auto m = read_config_rgb(*pc, "mean", cfg)) arch.mean = *m;
    if (const auto s = read_config_rgb(*pc, "std", cfg)) arch.std = *s;
    if (const auto in = pc->find("input_size"); in != pc->end()) {
      if (!in->is_array() || in->size() != 3 || !(*in)[2].is_number_integer() || (*in)[2].get<int>() < 16 || (*in)[2].get<int>() > 4096)
        // TRANSLATORS: %s is the file and "(config.json)"; 'input_size' is a key in it; H, W: height and width.
        throw Error(text_format(_("%s: 'input_size' is not [3, H, W] with W from 16 to 4096"), cfg.c_str()));
      arch.input_size = (*in)[2].get<int>();
    }
  }
  for (const float s : arch.std)
    // TRANSLATORS: %s is the file; std: the standard deviations the input is divided by.
    if (!(s > 0.0f)) throw Error(text_format(_("%s: the normalization's std must be positive"), cfg.c_str()));
  if (const auto names = config.find("label_names"); names != config.end() && names->is_array())
    for (std::size_t c = 0; c < names->size() && c < arch.labels.size(); ++c)
      if ((*names)[c].is_string()) arch.labels[c] = (*names)[c].get<std::string>();
}

// The blocks of stage `s` (0 … 3): layer{s+1}.I for as long as its conv1 is there.
int count_in(const Reader& r, int s) {
  int i = 0;
  while (r.has("layer" + std::to_string(s + 1) + "." + std::to_string(i) + ".conv1.weight")) ++i;
  return i;
}

}  // namespace

std::string ResnetArchitecture::name() const {
  const auto& b = stage_blocks;
  auto is = [&](std::array<int, 4> x) { return b == x; };
  if (!bottleneck && is({2, 2, 2, 2})) return "resnet18";
  if (!bottleneck && is({3, 4, 6, 3})) return "resnet34";
  if (bottleneck && is({3, 4, 6, 3})) return "resnet50";
  if (bottleneck && is({3, 4, 23, 3})) return "resnet101";
  if (bottleneck && is({3, 8, 36, 3})) return "resnet152";
  return std::string("resnet (") + (bottleneck ? "bottleneck" : "basic") + " blocks " + std::to_string(b[0]) + "-" +
         std::to_string(b[1]) + "-" + std::to_string(b[2]) + "-" + std::to_string(b[3]) + ")";
}

bool is_resnet_checkpoint(const SafetensorsFile& file) {
  return file.tensors.count("conv1.weight") && file.tensors.count("layer1.0.conv1.weight");
}

ResnetModel resnet_from_tensors(SafetensorsFile file, const std::string& config_json, const std::string& what,
                                const std::atomic<bool>* stop) {
  Reader r(file, what);
  ResnetModel model;
  static std::atomic<std::uint64_t> next_id{1};
  model.id = next_id++;
  ResnetArchitecture& arch = model.arch;
  std::vector<ConvPlan> plans;
  // The stem: conv1 (7×7, stride 2) + bn1.
  if (!r.has("conv1.weight")) r.fail(_("not a ResNet (no tensor 'conv1.weight')"));
  plan_conv(r, "conv1", "bn1", 3, 2, model.stem, plans);
  arch.width = model.stem.out;
  arch.bottleneck = r.has("layer1.0.conv3.weight");
  // The stages: layerS.I for as long as its conv1 is there.
  int channels = arch.width;
  // The plans point into model.blocks: its size is fixed before the first.
  std::size_t count = 0;
  for (int s = 0; s < 4; ++s) count += static_cast<std::size_t>(count_in(r, s));
  model.blocks.reserve(count);
  for (int s = 0; s < 4; ++s) {
    const std::string stage = "layer" + std::to_string(s + 1);
    int i = 0;
    for (; r.has(stage + "." + std::to_string(i) + ".conv1.weight"); ++i) {
      ResnetBlock& block = model.blocks.emplace_back();
      block.name = stage + "." + std::to_string(i);
      block.stage = s;
      const int stride = (s > 0 && i == 0) ? 2 : 1;
      const std::string p = block.name + ".";
      if (arch.bottleneck) {
        plan_conv(r, p + "conv1", p + "bn1", channels, 1, block.conv1, plans);
        plan_conv(r, p + "conv2", p + "bn2", block.conv1.out, stride, block.conv2, plans);
        plan_conv(r, p + "conv3", p + "bn3", block.conv2.out, 1, block.conv3, plans);
      } else {
        plan_conv(r, p + "conv1", p + "bn1", channels, stride, block.conv1, plans);
        plan_conv(r, p + "conv2", p + "bn2", block.conv1.out, 1, block.conv2, plans);
      }
      const int out = block.out_channels();
      if (r.has(p + "downsample.0.weight")) {
        block.downsample.emplace();
        plan_conv(r, p + "downsample.0", p + "downsample.1", channels, stride, *block.downsample, plans);
        if (block.downsample->out != out || block.downsample->k != 1)
          // TRANSLATORS: %1$sdownsample.0.weight is a tensor's name ("layer2.0.downsample.0.weight").
          r.fail(text_format(_("tensor '%sdownsample.0.weight' must be a 1×1 convolution to %d channels"), p.c_str(), out));
      } else if (stride != 1 || out != channels) {
        // TRANSLATORS: %1$s is a block's name (layer2.0); 'downsample' is part of tensors' names.
        r.fail(text_format(_("block %s changes the shape (%d to %d channels, stride %d) but has no 'downsample' tensors"),
                           block.name.c_str(), channels, out, stride));
      }
      channels = out;
    }
    // TRANSLATORS: %1$s is a stage's name (layer1 … layer4); %2$s.0.conv1.weight a tensor's name.
    if (i == 0) r.fail(text_format(_("stage %s has no blocks (no tensor '%s.0.conv1.weight')"), stage.c_str(), stage.c_str()));
    arch.stage_blocks[static_cast<std::size_t>(s)] = i;
  }
  // The classifier after the global average pool.
  const Tensor& fc = r.take("fc.weight", 2);
  if (fc.shape[1] != channels)
    // TRANSLATORS: 'fc.weight' is a tensor's name, %1$s its shape.
    r.fail(text_format(_("tensor 'fc.weight' has shape %s: it takes %lld features where the last block gives %d"),
                       shape_text(fc.shape).c_str(), static_cast<long long>(fc.shape[1]), channels));
  const Tensor& fcb = r.take("fc.bias", 1);
  if (fcb.shape[0] != fc.shape[0])
    // TRANSLATORS: 'fc.bias' is a tensor's name, %1$s its shape.
    r.fail(text_format(_("tensor 'fc.bias' has shape %s, not [%lld]"), shape_text(fcb.shape).c_str(),
                       static_cast<long long>(fc.shape[0])));
  arch.classes = static_cast<int>(fc.shape[0]);
  r.check_complete();
  read_config(config_json, what, arch);
  arch.parameters = r.parameters();

  model.sha256 = r.read_all(stop);
  for (const ConvPlan& p : plans) fold(r, p);
  const auto& w = r.values("fc.weight");
  model.W_fc = Eigen::Map<const Matrix>(w.data(), arch.classes, channels);
  const auto& b = r.values("fc.bias");
  model.b_fc = Eigen::Map<const RowVector>(b.data(), arch.classes);
  return model;
}

ResnetModel load_resnet(const std::filesystem::path& path, const std::atomic<bool>* stop) {
  const std::filesystem::path file = checkpoint_file(path);
  const auto dir = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  ResnetModel model = resnet_from_tensors(open_checkpoint(file, stop), read_config_file(dir / "config.json"), file.string(), stop);
  model.file = file;
  return model;
}

std::string resnet_info(const ResnetModel& model) {
  const ResnetArchitecture& a = model.arch;
  std::ostringstream s;
  s << "file: " << model.file.string() << "\n"
    << "architecture: " << a.name() << "\n"
    << "blocks: " << a.blocks() << " (" << (a.bottleneck ? "bottleneck" : "basic") << "; " << a.stage_blocks[0] << ","
    << a.stage_blocks[1] << "," << a.stage_blocks[2] << "," << a.stage_blocks[3] << " per stage)\n"
    << "stem width: " << a.width << "\n"
    << "features: " << model.W_fc.cols() << "\n"
    << "input size: " << a.input_size << "\n"
    << "mean: " << a.mean[0] << "," << a.mean[1] << "," << a.mean[2] << "\n"
    << "std: " << a.std[0] << "," << a.std[1] << "," << a.std[2] << "\n"
    << "classes: " << a.classes << "\n"
    << "parameters: " << a.parameters << " (batch norms folded at load)\n";
  return s.str();
}

}  // namespace attnlab
