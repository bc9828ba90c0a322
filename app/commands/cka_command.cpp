#include "app/commands/cka_command.hpp"

#include "app/commands/models_command.hpp"
#include "app/commands/image_set.hpp"
#include "app/commands/progress_line.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/base/parse.hpp"
#include "core/cnn/any_model.hpp"
#include "core/cnn/model_cka.hpp"
#include "core/io/fashion_mnist.hpp"
#include "core/io/files.hpp"
#include "core/io/image.hpp"

#include <chrono>
#include <cstdio>
#include <optional>

namespace attnlab::app {

std::string cka_usage() {
  std::string text = R"(  attnlab cka --model A --model B --images DIR|fashion --out F.csv [--count N]
              [--batch B] [--force]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           representational similarity between two models (SPEC
                           section 14; Kornblith et al. 2019; Raghu et al. 2021):
                           the linear CKA between every layer of A (rows) and every
                           layer of B (columns) over the same images, one example
                           per image. A ViT's layers are its block outputs (L0 ...,
                           every token flattened), a ResNet's its residual-block
                           outputs (layer1.0 ..., C x H x W flattened). A and B: any
                           two ViT or ResNet checkpoints (.safetensors, .pth, a
                           folder or hf:ORG/NAME), the same one twice included.
                           Images: the first N (default 500) of Fashion-MNIST's test
                           split, or of DIR's image files by name (default all),
                           each scaled so its short side is the model's trained
                           size, then cropped to the centred square. Exact while
                           the features of all the images fit the memory budget;
                           --batch B (4 or more): minibatch CKA (Nguyen et al.
                           2021), the unbiased HSIC summed over batches of B images,
                           for many images. Writes the CSV layer,<B's layers>, one
                           row per layer of A; progress and the time split on
                           stderr. (vit --cka is another measure: one ViT's tokens
                           of one image set as examples.)
)");
  return text;
}

namespace {

struct CkaOptions {
  std::vector<std::filesystem::path> models;
  std::filesystem::path out;
  std::string images;
  std::optional<int> count;
  int batch = 0;
  bool force = false;
};

std::vector<CommandFlag> cka_flags(CkaOptions& o) {
  using Text = const std::string&;
  return {
      {"--model", true, [&o](Text t, Text) { o.models.push_back(model_argument_path(t)); }},
      {"--images", true, [&o](Text t, Text) { o.images = t; }},
      {"--count", true, [&o](Text t, Text f) { o.count = parse_int(t, f, 2, 1000000); }},
      {"--batch", true, [&o](Text t, Text f) { o.batch = parse_int(t, f, 4, 100000); }},
      {"--out", true, [&o](Text t, Text) { o.out = t; }, "", false, true},
      {"--force", false, [&o](Text, Text) { o.force = true; }},
  };
}

CkaOptions parse(const std::vector<std::string>& args) {
  CkaOptions o;
  // TRANSLATORS: the end of "unknown option 'X'".
  parse_flags(args, cka_flags(o), {N_(" of attnlab cka")});
  if (o.models.size() != 2)
    throw Error(text_format(_("--model must be given exactly twice (A, whose layers are the rows, and B, the columns), got %zu"),
                            o.models.size()));
  if (o.images.empty()) throw Error(_("--images DIR|fashion is required"));
  if (o.out.empty()) throw Error(_("--out F.csv is required"));
  if (!o.force && std::filesystem::exists(o.out))
    throw Error(text_format(_("%s exists (give --force to replace it)"), o.out.string().c_str()));
  return o;
}

CkaModel cka_model(const AnyModel& m, std::int64_t budget) {
  return m.vit ? vit_cka_model(*m.vit, budget) : resnet_cka_model(*m.resnet, budget);
}

}  // namespace

std::vector<CommandFlagName> cka_flag_names() {
  CkaOptions o;
  return flag_names(cka_flags(o));
}

int run_cka(const std::vector<std::string>& args) {
  const CkaOptions o = parse(args);
  const AnyModel a = load_any_model(o.models[0]);
  const AnyModel b = load_any_model(o.models[1]);
  const ImageSet set(o.images, o.count);
  const int count = set.count();
  auto image = [&](int i) { return set(i); };
  const std::int64_t budget = vit_memory_budget();
  const CkaModel ma = cka_model(a, budget), mb = cka_model(b, budget);
  const auto start = std::chrono::steady_clock::now();
  const CrossCka m = cross_cka(ma, mb, count, image, o.batch, budget, nullptr, [&](int done, int n) {
    // TRANSLATORS: the unit of cka's progress line: "cka: 3/40 passes, 1.2 s" (forward passes of a model).
    show_progress("cka", _("passes"), done, n, start);
  });
  std::string csv = "layer";
  for (const std::string& c : mb.layers) csv += "," + c;
  csv += "\n";
  for (Eigen::Index i = 0; i < m.cka.rows(); ++i) {
    csv += ma.layers[static_cast<std::size_t>(i)];
    for (Eigen::Index j = 0; j < m.cka.cols(); ++j) csv += "," + format_float(static_cast<float>(m.cka(i, j)));
    csv += "\n";
  }
  write_file_safely(o.out, csv, o.force);
  // TRANSLATORS: the summary of attnlab cka on stderr: the images, how CKA was computed ("exact" or
  // "minibatches of 64"), the seconds of the forward passes and of the Gram matrices and CKA.
  std::fprintf(stderr, _("cka: %d images, %s; passes %.1f s, Grams and CKA %.1f s\n"), m.images,
               m.batch ? text_format(_("minibatches of %d"), m.batch).c_str() : _("exact"), m.forward_seconds, m.gram_seconds);
  return 0;
}

}  // namespace attnlab::app
