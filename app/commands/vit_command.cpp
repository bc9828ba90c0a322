#include "app/commands/vit_command.hpp"

#include "app/commands/models_command.hpp"
#include "core/base/error.hpp"
#include "core/io/fashion_mnist.hpp"
#include "core/io/files.hpp"
#include "core/hand_made/tokens.hpp"
#include "core/gpu/context.hpp"
#include "core/gpu/vit_backend.hpp"
#include "core/base/parse.hpp"
#include "core/vit/vit_similarity.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>

namespace attnlab::app {

std::string vit_usage() {
  return R"(  attnlab vit --model PATH --image IMG [--layer L] [--head H|mean|max|min]
              [--query cls|regN|COL,ROW] [--rollout mean|max|min] [--distance] [--top K]
              [--heads N] [--eps E] [--resize S] [--backend auto|gpu|cpu] [--info]
                           a real ViT checkpoint (timm, DINO, DINOv2 or Hugging Face
                           .safetensors; a PyTorch .pth, .pt or pytorch_model.bin; a
                           folder with model.safetensors or pytorch_model.bin and
                           config.json; or hf:ORG/NAME[@REVISION] from the Hugging Face
                           cache, downloaded first when missing) on IMG: the query's
                           row of A in a layer for a head or the heads' mean/max/min,
                           over the patches (prefix
                           keys left out), as CSV in the grid's layout. Layers and
                           heads from 0; default: last layer, heads' mean, query cls.
                           --rollout: the query's row of the attention rollout up to
                           the layer; --distance: each layer's mean attention distance
                           per head in pixels, one line per layer; --top K: the
                           classifier's K likeliest classes; --info: the architecture
                           (with --image: runs the pass and says which path ran, why,
                           and how long it took). --resize S scales the short side to
                           S pixels first; width and height are cropped to whole
                           patches. --backend: auto (default) times the GPU engine and
                           the CPU path on a hardware GPU and keeps the faster (once
                           per renderer, CPU and model shape, remembered), and takes
                           the CPU path on a software rasterizer (llvmpipe) or without
                           OpenGL 4.3. An input whose pass would
                           not fit the memory budget (a quarter of the RAM, or
                           ATTNLAB_MEMORY_BUDGET_MB) is refused, naming a size that fits.
  attnlab vit --model PATH --cka [--against PATH2] [--cka-examples fashion|photo]
              [--cka-count N] [--image IMG] [--resize S] [--heads N] [--eps E]
                           representational similarity: the linear CKA between every
                           layer's tokens (input: the tokens entering block 0; L0 …:
                           leaving each block) and every other's, over N Fashion-MNIST
                           test images (default 500, scaled to the model's input size)
                           or the tokens of IMG (photo), every token one example; with
                           --against, PATH's layers (rows) against PATH2's (columns)
                           over the same examples. CSV with a header line.
)";
}

namespace {

struct VitOptions {
  // Paths as paths: on Windows path::string() gives UTF-8 while path(std::string) reads the
  // code page, so a round trip through std::string would garble a name like "mödel".
  std::filesystem::path model, against;
  std::string image, head = "mean", query = "cls", rollout;
  std::optional<int> layer, top;
  bool distance = false, info = false, cka = false;
  bool cka_photo = false;
  int cka_count = 500;
  VitBackend backend = VitBackend::Auto;
  VitLoadOptions load;
  int resize = 0;
};

VitOptions parse(const std::vector<std::string>& args) {
  VitOptions o;
  for (std::size_t n = 0; n < args.size(); ++n) {
    const std::string& a = args[n];
    auto value = [&]() -> std::string {
      if (n + 1 >= args.size()) throw Error("option " + a + " needs a value");
      return args[++n];
    };
    if (a == "--model") o.model = model_argument_path(value());
    else if (a == "--image") o.image = value();
    else if (a == "--layer") o.layer = parse_int(value(), "--layer", 0, 100000);
    else if (a == "--head") o.head = value();
    else if (a == "--query") o.query = value();
    else if (a == "--rollout") o.rollout = value();
    else if (a == "--distance") o.distance = true;
    else if (a == "--top") o.top = parse_int(value(), "--top", 1, 1000000);
    else if (a == "--heads") o.load.heads = parse_int(value(), "--heads", 1, 4096);
    else if (a == "--eps") {
      const std::string e = value();
      o.load.eps = parse_float(e, "--eps", 0.0f, 1.0f);
      if (!(*o.load.eps > 0.0f)) throw Error("--eps must be > 0, got " + e);
    } else if (a == "--resize") o.resize = parse_int(value(), "--resize", 1, 8192);
    else if (a == "--backend") o.backend = parse_vit_backend(value());
    else if (a == "--info") o.info = true;
    else if (a == "--cka") o.cka = true;
    else if (a == "--against") o.against = model_argument_path(value());
    else if (a == "--cka-examples") {
      const std::string e = value();
      if (e != "fashion" && e != "photo") throw Error("--cka-examples must be fashion or photo, got '" + e + "'");
      o.cka_photo = e == "photo";
    } else if (a == "--cka-count") o.cka_count = parse_int(value(), "--cka-count", 2, 10000);
    else throw Error("unknown option '" + a + "' of attnlab vit (see attnlab --help)");
  }
  if (o.model.empty()) throw Error("--model PATH is required (a .safetensors or .pth file, or a folder holding model.safetensors or pytorch_model.bin)");
  if (o.image.empty() && !o.info && !(o.cka && !o.cka_photo)) throw Error("--image IMG is required");
  const int modes = (o.distance ? 1 : 0) + (o.top ? 1 : 0) + (o.rollout.empty() ? 0 : 1) + (o.info ? 1 : 0) + (o.cka ? 1 : 0);
  if (modes > 1) throw Error("give one of --info, --distance, --top, --rollout, --cka at a time");
  if (!o.cka && !o.against.empty()) throw Error("--against goes with --cka");
  return o;
}

HeadFusion parse_fusion(const std::string& text, const char* what) {
  if (text == "mean") return HeadFusion::Mean;
  if (text == "max") return HeadFusion::Max;
  if (text == "min") return HeadFusion::Min;
  throw Error(std::string(what) + " must be mean, max or min, got '" + text + "'");
}

HeadChoice parse_head_choice(const std::string& text, int heads) {
  if (text == "mean" || text == "max" || text == "min") return {-1, parse_fusion(text, "--head")};
  const int h = parse_int(text, "--head", 0, 1 << 20);
  if (h >= heads) throw Error("--head " + text + " is outside the model's heads 0…" + std::to_string(heads - 1));
  return {h, HeadFusion::Mean};
}

/// cls → 0, regN → 1 + N, COL,ROW → the patch's token.
int parse_query(const std::string& text, const VitArchitecture& arch, const VitInput& input) {
  if (text == "cls") return 0;
  if (text.rfind("reg", 0) == 0) {
    const int r = parse_int(text.substr(3), "--query regN", 0, 1 << 20);
    if (r >= arch.registers)
      throw Error("--query " + text + ": the model has " + std::to_string(arch.registers) + " register token(s)");
    return 1 + r;
  }
  const auto cell = parse_cell(text, "--query");
  if (cell[0] >= input.cols || cell[1] >= input.rows)
    throw Error("--query " + text + " is outside the " + std::to_string(input.cols) + "x" + std::to_string(input.rows) +
                " patch grid");
  return arch.prefix() + cell[1] * input.cols + cell[0];
}

void print(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
}

/// --cka: the layer × layer CKA of the model, or against a second one, as CSV.
int run_cka(const VitOptions& o, const VitModel& model) {
  std::optional<VitModel> other;
  if (!o.against.empty()) other = load_vit(o.against, o.load);
  const VitModel& b = other ? *other : model;
  std::vector<Image> images;
  if (o.cka_photo) {
    images.push_back(load_image(o.image));
  } else {
    const FashionMnistSplit test = load_fashion_mnist(false);
    for (int i = 0; i < std::min(o.cka_count, test.count); ++i) images.push_back(fashion_mnist_image(test, i));
  }
  // The photo at --resize (0: the model's trained size, as the app runs it); the Fashion-MNIST
  // images at the model's trained size.
  const VitCka m = vit_cka(model, b, images, o.cka_photo ? o.resize : 0, vit_memory_budget());
  const auto rows = vit_cka_labels(model.arch.depth), cols = vit_cka_labels(b.arch.depth);
  std::string out = "layer";
  for (const std::string& c : cols) out += "," + c;
  out += "\n";
  for (Eigen::Index i = 0; i < m.cka.rows(); ++i) {
    out += rows[static_cast<std::size_t>(i)];
    for (Eigen::Index j = 0; j < m.cka.cols(); ++j) out += "," + format_float(static_cast<float>(m.cka(i, j)));
    out += "\n";
  }
  print(out);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

int run_vit(const std::vector<std::string>& args) {
  const VitOptions o = parse(args);
  const VitModel model = load_vit(o.model, o.load);
  if (o.cka) return run_cka(o, model);
  const VitArchitecture& arch = model.arch;
  if (o.info && o.image.empty()) {
    print(vit_info(model));
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  const VitInput input = vit_input(model, load_image(o.image), o.resize);
  const std::int64_t budget = vit_memory_budget();
  vit_check_budget(arch, input, budget);
  const int layer = o.layer.value_or(arch.depth - 1);
  if (layer >= arch.depth) throw Error("--layer " + std::to_string(layer) + " is outside the model's layers 0…" + std::to_string(arch.depth - 1));
  const HeadChoice head = parse_head_choice(o.head, arch.heads);
  const int query = parse_query(o.query, arch, input);
  const bool rollout = !o.rollout.empty();
  const HeadFusion rollout_fusion = rollout ? parse_fusion(o.rollout, "--rollout") : HeadFusion::Mean;
  if (o.top && arch.classes == 0) throw Error("--top: this checkpoint has no classifier");

  // Auto: the faster path by measuring on a hardware GPU (remembered), the CPU path on a
  // software rasterizer (vit_backend.hpp, vit_auto.hpp).
  VitRunnerChoice choice = choose_vit_runner(o.backend);
  const auto start = std::chrono::steady_clock::now();
  const VitPass pass = choice.runner->run(model, input, budget);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const std::string why = choice.after_run();  // auto: both paths' times and the choice
  choice = VitRunnerChoice();  // the GPU objects go while their context is still current

  std::string out;
  if (o.info) {
    char forward[64];
    std::snprintf(forward, sizeof forward, "%.1f ms", ms);
    out = vit_info(model) + "input: " + std::to_string(input.width) + "x" + std::to_string(input.height) + "\ngrid: " +
          std::to_string(input.cols) + "x" + std::to_string(input.rows) + "\ntokens: " + std::to_string(arch.prefix() + input.N()) +
          "\nbackend: " + pass.path + " (" + why + ")\nforward: " + forward + "\nmemory budget: " + std::to_string(budget >> 20) +
          " MiB\npass memory: " + std::to_string(pass.bytes() >> 20) + " MiB\n";
  } else if (o.distance) {
    const Matrix& d = pass.distance;
    for (Eigen::Index l = 0; l < d.rows(); ++l) {
      for (Eigen::Index h = 0; h < d.cols(); ++h) out += (h ? "," : "") + format_float(d(l, h));
      out += "\n";
    }
  } else if (o.top) {
    for (const auto& [c, p] : vit_top_classes(pass.logits, *o.top))
      out += std::to_string(c) + "," + arch.labels[static_cast<std::size_t>(c)] + "," + format_float(p) + "\n";
  } else {
    std::vector<float> row;
    if (rollout) {
      const std::vector<float> R = vit_rollout_row(pass, layer, rollout_fusion, query);
      row.assign(R.begin() + arch.prefix(), R.end());
    } else {
      row = vit_patch_row(pass, arch.prefix(), layer, head, query);
    }
    PatchGrid grid;
    grid.cols = input.cols;
    grid.rows = input.rows;
    grid.K = arch.patch;
    out = grid_csv(row, grid);
  }
  print(out);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace attnlab::app
