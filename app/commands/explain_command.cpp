#include "app/commands/explain_command.hpp"

#include "app/commands/models_command.hpp"
#include "app/commands/image_set.hpp"
#include "app/commands/progress_line.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/base/parse.hpp"
#include "core/io/fashion_mnist.hpp"
#include "core/io/files.hpp"
#include "core/io/image.hpp"
#include "core/cnn/any_model.hpp"
#include "core/cnn/model_cka.hpp"
#include "core/vit/faithfulness.hpp"

#include <array>
#include <chrono>
#include <cstdio>
#include <optional>

namespace attnlab::app {

std::string explain_usage() {
  std::string text = R"(  attnlab explain --model PATH --images DIR|fashion --out F.csv [--count N]
                  [--methods LIST | --receptive-field [--layer L] [--query COL,ROW]]
                  [--resize S] [--force]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           how faithful each class-relevance method is to the model
                           (SPEC section 13): for each image the class the model
                           decides, its relevance map by each method, then deletion
                           (the most relevant patches replaced by the image's mean
                           colour first, 0, 10, ..., 100 %) and insertion (restored
                           into the mean-colour image) with the class probability at
                           each step, and the areas under both curves; a fixed-seed
                           random order is the baseline. Lower deletion and higher
                           insertion areas are more faithful. Images: the first N
                           (default 500) of Fashion-MNIST's test split, or of DIR's
                           image files by name (default all), at --resize S (default:
                           the model's trained size). LIST: methods separated by
                           commas (default attention,rollout,grad-rollout,chefer,
                           input-gradient). Writes the CSV
                           method,deletion_auc,insertion_auc,images, one row per
                           method and random last; progress on stderr.
                           --receptive-field: instead, the effective receptive field
                           of patch COL,ROW (default 0,0) after layer L (default the
                           last), averaged over the images (each cropped to the
                           top-left square of patches its short side covers), one
                           CSV line per row of input pixels, as vit
                           --receptive-field prints one image's. For a ResNet: the
                           mean field of position COL,ROW (default its map's centre)
                           of block L, each image scaled and cropped to the model's
                           input size square.
)");
  return text;
}

namespace {

struct ExplainOptions {
  std::filesystem::path model, out;
  std::string images;
  std::optional<int> count;
  std::vector<RelevanceMethod> methods{kRelevanceMethods.begin(), kRelevanceMethods.end()};
  std::optional<int> resize;
  bool force = false;
  bool receptive_field = false;    ///< --receptive-field: the mean field instead of the table
  std::optional<int> layer;        ///< --layer (default the last)
  std::array<int, 2> query{0, 0};  ///< --query COL,ROW (default 0,0)
  bool query_given = false;
};

std::vector<RelevanceMethod> parse_methods(const std::string& text, const std::string& flag) {
  std::vector<RelevanceMethod> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    const auto m = parse_relevance_method(name);
    // TRANSLATORS: a flag, the name given, the methods there are.
    if (!m)
      throw Error(text_format(_("%s: '%s' is not a method (%s)"), flag.c_str(), name.c_str(), relevance_method_list().c_str()));
    if (std::find(out.begin(), out.end(), *m) != out.end())
      throw Error(text_format(_("%s: %s given twice"), flag.c_str(), name.c_str()));
    out.push_back(*m);
    start = comma + 1;
  }
  return out;
}

std::vector<CommandFlag> explain_flags(ExplainOptions& o) {
  using Text = const std::string&;
  return {
      {"--model", true, [&o](Text t, Text) { o.model = model_argument_path(t); }},
      {"--images", true, [&o](Text t, Text) { o.images = t; }},
      {"--count", true, [&o](Text t, Text f) { o.count = parse_int(t, f, 1, 1000000); }},
      {"--methods", true, [&o](Text t, Text f) { o.methods = parse_methods(t, f); }},
      {"--resize", true, [&o](Text t, Text f) { o.resize = parse_int(t, f, 1, 8192); }},
      {"--out", true, [&o](Text t, Text) { o.out = t; }, "", false, true},
      {"--force", false, [&o](Text, Text) { o.force = true; }},
      {"--receptive-field", false, [&o](Text, Text) { o.receptive_field = true; }},
      {"--layer", true, [&o](Text t, Text f) { o.layer = parse_int(t, f, 0, 100000); }},
      {"--query", true, [&o](Text t, Text f) {
         o.query = parse_cell(t, f);
         o.query_given = true;
       }},
  };
}

ExplainOptions parse(const std::vector<std::string>& args) {
  ExplainOptions o;
  // TRANSLATORS: the end of "unknown option 'X'".
  parse_flags(args, explain_flags(o), {N_(" of attnlab explain")});
  if (o.model.empty()) throw Error(_("--model PATH is required (a ViT classifier: .safetensors, .pth, a folder or hf:ORG/NAME)"));
  if (o.images.empty()) throw Error(_("--images DIR|fashion is required"));
  if (o.out.empty()) throw Error(_("--out F.csv is required"));
  if (!o.force && std::filesystem::exists(o.out))
    throw Error(text_format(_("%s exists (give --force to replace it)"), o.out.string().c_str()));
  if (!o.receptive_field && (o.layer || o.query_given)) throw Error(_("--layer and --query go with --receptive-field"));
  if (o.receptive_field && o.methods.size() != kRelevanceMethods.size())
    throw Error(_("--methods goes with the faithfulness table, not --receptive-field"));
  return o;
}

}  // namespace

std::vector<CommandFlagName> explain_flag_names() {
  ExplainOptions o;
  return flag_names(explain_flags(o));
}

namespace {

/// --receptive-field of a ResNet (SPEC §14): the mean field of position --query (default the map's
/// centre) after block --layer (default the last) over the images, each made the model's input
/// size square (cka_square_image()), one CSV line per row of input pixels.
int explain_resnet_field(const ExplainOptions& o, const ResnetModel& model) {
  if (!o.receptive_field)
    throw Error(text_format(_("%s is a ResNet: explain measures a ViT's relevance methods; give --receptive-field"),
                            model.file.string().c_str()));
  const ImageSet set(o.images, o.count);
  const int count = set.count();
  const int side = o.resize.value_or(model.arch.input_size);
  const int blocks = static_cast<int>(model.blocks.size()), block = o.layer.value_or(blocks - 1);
  if (block >= blocks) throw Error(text_format(_("--layer %d is outside this ResNet's blocks 0…%d"), block, blocks - 1));
  const auto [mw, mh] = resnet_map_size(model, block, side, side);
  const std::array<int, 2> at = o.query_given ? o.query : std::array<int, 2>{mw / 2, mh / 2};
  auto input = [&](int i) {
    const Image photo = set(i);
    return cnn_input(model.arch, cka_square_image(photo, side));
  };
  const auto start = std::chrono::steady_clock::now();
  const Matrix field = resnet_mean_receptive_field(model, count, input, block, at[0], at[1], vit_memory_budget(),
                                                   [&](int done, int n) {
                                                     // TRANSLATORS: the unit of "explain: 40/500 images, 12.3 s".
                                                     show_progress("explain", _("images"), done, n, start);
                                                   });
  write_file_safely(o.out, rows_csv(field.data(), field.rows(), field.cols()), o.force);
  return 0;
}

}  // namespace

int run_explain(const std::vector<std::string>& args) {
  const ExplainOptions o = parse(args);
  AnyModel any = load_any_model(o.model);
  if (any.resnet) return explain_resnet_field(o, *any.resnet);
  const VitModel& model = *any.vit;
  if (model.arch.classes == 0 && !o.receptive_field) throw Error(_("this checkpoint has no classifier: no class to explain"));
  // The images at the model's trained size unless --resize says otherwise.
  const int resize = o.resize.value_or(std::min(model.arch.pos_rows, model.arch.pos_cols) * model.arch.patch);
  const ImageSet set(o.images, o.count);
  const int count = set.count();
  auto image = [&](int i) {
    const Image photo = set(i);
    return vit_input(model, photo, resize);
  };
  const auto start = std::chrono::steady_clock::now();
  auto progress = [&](int done, int n) { show_progress("explain", _("images"), done, n, start); };
  if (o.receptive_field) {  // the mean field over the images, one line per row of input pixels
    const int layer = o.layer.value_or(model.arch.depth - 1);
    if (layer >= model.arch.depth) throw Error(text_format(_("--layer %d is outside 0…%d"), layer, model.arch.depth - 1));
    // Every image's short side is `resize` pixels: the square of patches it covers fits them all.
    const int side = resize / model.arch.patch;
    const Matrix field = vit_mean_receptive_field(model, count, image, side, side, layer, o.query[0], o.query[1], vit_memory_budget(), progress);
    write_file_safely(o.out, rows_csv(field.data(), field.rows(), field.cols()), o.force);
    return 0;
  }
  const std::vector<FaithfulnessRow> rows =
      faithfulness_table(model, count, image, o.methods, vit_memory_budget(), progress);
  std::string csv = "method,deletion_auc,insertion_auc,images\n";
  for (const FaithfulnessRow& r : rows)
    csv += r.method + "," + format_float(static_cast<float>(r.deletion_auc)) + "," + format_float(static_cast<float>(r.insertion_auc)) +
           "," + std::to_string(r.images) + "\n";
  write_file_safely(o.out, csv, o.force);
  return 0;
}

}  // namespace attnlab::app
