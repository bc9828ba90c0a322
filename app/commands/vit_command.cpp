#include "app/commands/vit_command.hpp"

#include "app/commands/command_flags.hpp"
#include "app/commands/models_command.hpp"
#include "app/commands/source_choice.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/io/fashion_mnist.hpp"
#include "core/io/files.hpp"
#include "core/hand_made/tokens.hpp"
#include "core/gpu/context.hpp"
#include "core/gpu/vit_backend.hpp"
#include "core/base/parse.hpp"
#include "core/cnn/any_model.hpp"
#include "core/vit/relevance.hpp"
#include "core/vit/vit_similarity.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>

namespace attnlab::app {

std::string vit_usage() {
  std::string text = R"(  attnlab vit --model PATH --image IMG [--layer L] [--head H|mean|max|min]
              [--query cls|regN|COL,ROW] [--rollout mean|max|min] [--distance] [--top K]
              [--norms] [--relevance CLASS|top [--method NAME]] [--receptive-field]
              [--heads N] [--eps E] [--resize S] [--backend auto|gpu|cpu] [--info]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           a real ViT checkpoint (timm, DINO, DINOv2 or Hugging Face
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
                           per head in pixels, one line per layer; --norms: each
                           patch token's L2 norm ||z_l[t]|| after the layer (the
                           residual stream before the final LayerNorm; Darcet et al.
                           2023's high-norm tokens); --relevance: which patches
                           class CLASS (an index, a label, or top) depended on, by
                           --method attention, rollout, grad-rollout, chefer (default)
                           or input-gradient (gradients through the model, CPU path;
                           raw values, SPEC section 13); --receptive-field: the
                           query's effective receptive field after the layer,
                           sum over colour of |d(sum of its features)/d input|, one
                           CSV line per row of the model's input pixels; --top K: the
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
                           A ResNet checkpoint (torchvision's or timm's names) has no
                           attention: --info, --top, --relevance (Grad-CAM at the
                           block --layer, default the last, or --method
                           input-gradient; one CSV line per row of the map) and
                           --receptive-field (block --layer, position --query COL,ROW
                           of its map, default its centre).
)");
  text += R"(  attnlab vit --model PATH --cka [--against PATH2] [--cka-examples fashion|photo]
              [--cka-count N] [--image IMG] [--resize S] [--heads N] [--eps E]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           representational similarity: the linear CKA between every
                           layer's tokens (input: the tokens entering block 0; L0 …:
                           leaving each block) and every other's, over N Fashion-MNIST
                           test images (default 500, scaled to the model's input size)
                           or the tokens of IMG (photo), every token one example; with
                           --against, PATH's layers (rows) against PATH2's (columns)
                           over the same examples. CSV with a header line.
)");
  return text;
}

namespace {

struct VitOptions {
  // Paths as paths: on Windows path::string() gives UTF-8 while path(std::string) reads the
  // code page, so a round trip through std::string would garble a name like "mödel".
  std::filesystem::path model, against;
  std::string image;
  ChoiceFlags choice;  ///< --layer, --head, --query: checked against the model once it is loaded
  std::optional<HeadFusion> rollout;
  std::optional<int> top;
  std::optional<std::string> relevance;  ///< --relevance CLASS|top
  std::optional<RelevanceMethod> method;  ///< --method
  bool grad_cam = false;                  ///< --method grad-cam (a ResNet)
  bool receptive_field = false;
  bool distance = false, info = false, cka = false, norms = false;
  bool cka_photo = false;
  int cka_count = 500;
  VitBackend backend = VitBackend::Auto;
  VitLoadOptions load;
  int resize = 0;
};

/// The flags of `attnlab vit`, each bound to its option of `o`.
std::vector<CommandFlag> vit_flags(VitOptions& o) {
  using Text = const std::string&;
  auto choice = [&o](Text t, Text f) { read_choice_flag(o.choice, f, t); };
  return {
      {"--model", true, [&o](Text t, Text) { o.model = model_argument_path(t); }},
      {"--image", true, [&o](Text t, Text) { o.image = t; }},
      {"--layer", true, choice},
      {"--head", true, choice},
      {"--query", true, choice},
      {"--rollout", true, [&o](Text t, Text f) {
         o.rollout = parse_head_fusion(t);
         if (!o.rollout) throw Error(text_format(_("%s must be mean, max or min, got '%s'"), f.c_str(), t.c_str()));
       }},
      {"--distance", false, [&o](Text, Text) { o.distance = true; }},
      {"--norms", false, [&o](Text, Text) { o.norms = true; }},
      {"--relevance", true, [&o](Text t, Text) { o.relevance = t; }},
      {"--method", true, [&o](Text t, Text f) {
         o.grad_cam = t == "grad-cam";  // a ResNet's (SPEC §14)
         if (o.grad_cam) return;
         o.method = parse_relevance_method(t);
         if (!o.method)
           throw Error(text_format(_("%s must be one of %s (grad-cam for a ResNet), got '%s'"), f.c_str(),
                                   relevance_method_list().c_str(), t.c_str()));
       }},
      {"--receptive-field", false, [&o](Text, Text) { o.receptive_field = true; }},
      {"--top", true, [&o](Text t, Text f) { o.top = parse_int(t, f, 1, 1000000); }},
      {"--heads", true, [&o](Text t, Text f) { o.load.heads = parse_int(t, f, 1, 4096); }},
      {"--eps", true, [&o](Text t, Text f) {
         o.load.eps = parse_float(t, f, 0.0f, 1.0f);
         if (!(*o.load.eps > 0.0f)) throw Error(text_format(_("%s must be > 0, got %s"), f.c_str(), t.c_str()));
       }},
      {"--resize", true, [&o](Text t, Text f) { o.resize = parse_int(t, f, 1, 8192); }},
      {"--backend", true, [&o](Text t, Text) { o.backend = parse_vit_backend(t); }},
      {"--info", false, [&o](Text, Text) { o.info = true; }},
      {"--cka", false, [&o](Text, Text) { o.cka = true; }},
      {"--against", true, [&o](Text t, Text) { o.against = model_argument_path(t); }},
      {"--cka-examples", true, [&o](Text t, Text f) {
         if (t != "fashion" && t != "photo")
           throw Error(text_format(_("%s must be fashion or photo, got '%s'"), f.c_str(), t.c_str()));
         o.cka_photo = t == "photo";
       }},
      {"--cka-count", true, [&o](Text t, Text f) {  // the document's range (render --model --cka-count, the CKA view)
         const FieldRange r = field_range("cka.count");
         o.cka_count = parse_int(t, f, static_cast<int>(r.lo), static_cast<int>(r.hi));
       }},
  };
}

VitOptions parse(const std::vector<std::string>& args) {
  VitOptions o;
  // TRANSLATORS: the end of "unknown option 'X'".
  parse_flags(args, vit_flags(o), {N_(" of attnlab vit")});
  if (o.model.empty())
    throw Error(
        _("--model PATH is required (a .safetensors or .pth file, or a folder holding model.safetensors or pytorch_model.bin)"));
  if (o.image.empty() && !o.info && !(o.cka && !o.cka_photo)) throw Error(_("--image IMG is required"));
  const int modes = (o.distance ? 1 : 0) + (o.top ? 1 : 0) + (o.rollout ? 1 : 0) + (o.info ? 1 : 0) + (o.cka ? 1 : 0) + (o.norms ? 1 : 0) +
                    (o.relevance ? 1 : 0) + (o.receptive_field ? 1 : 0);
  if (modes > 1)
    throw Error(_("give one of --info, --distance, --top, --rollout, --norms, --relevance, --receptive-field, --cka at a time"));
  if ((o.method || o.grad_cam) && !o.relevance) throw Error(_("--method goes with --relevance"));
  if (!o.cka && !o.against.empty()) throw Error(_("--against goes with --cka"));
  return o;
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

/// --relevance and --receptive-field: one gradient pass on the CPU path (SPEC §13).
int run_gradients(const VitOptions& o, const VitModel& model, const VitInput& input, int layer, int query, std::int64_t budget) {
  std::string out;
  if (o.relevance) {
    const int klass = vit_class_named(model.arch, *o.relevance);
    const std::vector<float> map = vit_relevance(model, input, klass, o.method.value_or(RelevanceMethod::Chefer), budget);
    PatchGrid grid;
    grid.cols = input.cols;
    grid.rows = input.rows;
    grid.K = model.arch.patch;
    out = grid_csv(map, grid);
  } else {  // one line per row of input pixels, not normalised
    const Matrix field = vit_receptive_field(model, input, layer, query, budget);
    out = rows_csv(field.data(), field.rows(), field.cols());
  }
  print(out);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

/// The same command for a ResNet (SPEC §14): --info, --top, --relevance (Grad-CAM at --layer, or
/// the input gradient), --receptive-field (--layer a residual block, --query COL,ROW a position in
/// its map). A ResNet has no attention: the rest is refused.
int run_resnet(const VitOptions& o, const ResnetModel& model) {
  const ResnetArchitecture& arch = model.arch;
  if (o.cka) throw Error(_("vit --cka compares a ViT's tokens; for a ResNet give attnlab cka --model A --model B"));
  if (o.distance || o.rollout || o.norms || !o.choice.head.empty() || o.backend != VitBackend::Auto)
    throw Error(text_format(_("%s is a ResNet: it has no attention (give --top, --relevance, --receptive-field or --info)"),
                            model.file.string().c_str()));
  if (o.method && *o.method != RelevanceMethod::InputGradient)
    throw Error(_("a ResNet's --method is grad-cam (default) or input-gradient"));
  if (o.info && o.image.empty()) {
    print(resnet_info(model));
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  if (!o.top && !o.relevance && !o.receptive_field && !o.info)
    throw Error(text_format(_("%s is a ResNet: it has no attention rows (give --top, --relevance, --receptive-field or --info)"),
                            model.file.string().c_str()));
  const CnnInput input = cnn_input(arch, load_image(o.image), o.resize);
  const std::int64_t budget = vit_memory_budget();
  const int blocks = static_cast<int>(model.blocks.size());
  int block = blocks - 1;
  const std::string &layer_flag = choice_flag_names()[0], &query_flag = choice_flag_names()[2];
  if (!o.choice.layer.empty()) {
    block = parse_int(o.choice.layer, layer_flag, 0, 1000000);
    if (block >= blocks)
      // TRANSLATORS: the flag (--layer), the block given, the last block.
      throw Error(text_format(_("%s %s is outside this ResNet's blocks 0…%d"),
                              layer_flag.c_str(), o.choice.layer.c_str(), blocks - 1));
  }
  std::string out;
  if (o.info || o.top) {
    const auto start = std::chrono::steady_clock::now();
    const ResnetPass pass = resnet_forward(model, input, budget);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (o.info) {
      char forward[64];
      std::snprintf(forward, sizeof forward, "%.1f ms", ms);
      out = resnet_info(model) + "input: " + std::to_string(input.width) + "x" + std::to_string(input.height) + "\nbackend: cpu\nforward: " +
            forward + "\n";
    } else {
      for (const auto& [c, p] : vit_top_classes(pass.logits, *o.top))
        out += std::to_string(c) + "," + arch.labels[static_cast<std::size_t>(c)] + "," + format_float(p) + "\n";
    }
  } else if (o.relevance) {  // Grad-CAM at the block (its map's grid), or |d y_c / d x| per input pixel
    const CnnGradients g = resnet_gradients(model, input, CnnGradientTarget::class_logit(class_named(arch.labels, *o.relevance)), budget);
    const Matrix map = o.method ? cnn_input_gradient_map(g) : resnet_grad_cam(g, block);
    out = rows_csv(map.data(), map.rows(), map.cols());
  } else {  // the receptive field of a position of the block's map: one line per row of input pixels
    const auto [cols, rows] = resnet_map_size(model, block, input.width, input.height);
    std::array<int, 2> at{cols / 2, rows / 2};
    if (!o.choice.query.empty()) at = parse_cell(o.choice.query, query_flag);
    const Matrix field = resnet_receptive_field(model, input, block, at[0], at[1], budget);
    out = rows_csv(field.data(), field.rows(), field.cols());
  }
  print(out);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

std::vector<CommandFlagName> vit_flag_names() {
  VitOptions o;
  return flag_names(vit_flags(o));
}

int run_vit(const std::vector<std::string>& args) {
  const VitOptions o = parse(args);
  AnyModel any = load_any_model(o.model, o.load);
  if (any.resnet) return run_resnet(o, *any.resnet);
  const VitModel& model = *any.vit;
  if (o.grad_cam)
    throw Error(text_format(_("--method grad-cam is for a ResNet; a ViT's methods are %s"), relevance_method_list().c_str()));
  if (o.cka) return run_cka(o, model);
  const VitArchitecture& arch = model.arch;
  if (o.info && o.image.empty()) {
    print(vit_info(model));
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  const VitInput input = vit_input(model, load_image(o.image), o.resize);
  const std::int64_t budget = vit_memory_budget();
  vit_check_budget(arch, input, budget);
  const SourceGrid tokens{.cols = input.cols, .rows = input.rows, .prefix = arch.prefix()};
  const SourceChoice chosen = parse_source_choice(o.choice, ChoiceShape{tokens, arch.depth, arch.heads, true}, Document().vit);
  const int layer = choice_layer(chosen, arch.depth), query = choice_query(chosen, tokens);
  const HeadChoice head = choice_head(chosen, arch.heads);
  if (o.top && arch.classes == 0) throw Error(_("--top: this checkpoint has no classifier"));
  if (o.relevance || o.receptive_field) return run_gradients(o, model, input, layer, query, budget);

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
    out = rows_csv(pass.distance.data(), pass.distance.rows(), pass.distance.cols());
  } else if (o.top) {
    for (const auto& [c, p] : vit_top_classes(pass.logits, *o.top))
      out += std::to_string(c) + "," + arch.labels[static_cast<std::size_t>(c)] + "," + format_float(p) + "\n";
  } else {
    std::vector<float> row;
    if (o.norms) {  // ||z_l[t]||_2 of the patch tokens leaving block `layer` (SPEC §12)
      const RowVector& n = pass.token_norms[static_cast<std::size_t>(layer)];
      row.assign(n.data() + arch.prefix(), n.data() + n.size());
    } else if (o.rollout) {
      const std::vector<float> R = vit_rollout_row(pass, layer, *o.rollout, query);
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
