#include "core/vit/vit_similarity.hpp"

#include "core/vit/cka.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/vit/vit_cpu.hpp"
#include "core/vit/vit_run.hpp"

#include <algorithm>

namespace attnlab {

std::vector<std::string> vit_cka_labels(int depth) {
  std::vector<std::string> out = {"input"};
  for (int l = 0; l < depth; ++l) out.push_back("L" + std::to_string(l));
  return out;
}

std::int64_t vit_cka_bytes(const VitArchitecture& arch, std::int64_t rows) {
  return rows * arch.D * (arch.depth + 1) * static_cast<std::int64_t>(sizeof(float) + sizeof(double));
}

namespace {

/// One model's representations being filled, image after image.
struct Collector {
  const VitModel* model = nullptr;
  std::vector<Matrix> reps;  ///< depth + 1, rows grown as images come
  Eigen::Index rows = 0;     ///< rows filled so far
  int tokens_first = 0;      ///< T of the first image (the budget's estimate)
};

int effective_resize(const VitModel& m, int resize) { return resize > 0 ? resize : vit_trained_size(m.arch); }

/// Runs `c.model` on `input` and appends its tokens at every depth to c.reps; returns T.
int append_tokens(Collector& c, const VitInput& input, VitCpuRunner& runner, std::int64_t budget, const std::atomic<bool>* stop,
                  Eigen::Index rows_hint) {
  const Eigen::Index T = c.model->arch.prefix() + input.N();
  for (Matrix& m : c.reps)
    if (m.rows() < c.rows + T) m.conservativeResize(std::max(c.rows + T, rows_hint), Eigen::NoChange);
  runner.run(*c.model, input, budget, stop, [&](int index, const Matrix& X) { c.reps[static_cast<std::size_t>(index)].middleRows(c.rows, T) = X; });
  c.rows += T;
  return static_cast<int>(T);
}

/// The representations of one or two models (b null: one) over the same images.
void collect(Collector& a, Collector* b, std::span<const Image> images, int resize, std::int64_t budget, int threads,
             const std::atomic<bool>* stop, const CkaProgress& progress) {
  if (images.empty()) throw Error(_("CKA needs at least one example image"));
  const auto count = static_cast<std::int64_t>(images.size());
  // The first image fixes the estimate of the memory needed (every image of a set is usually
  // the same size: the Fashion-MNIST tiles, or the one photo).
  std::vector<Collector*> models = {&a};
  if (b) models.push_back(b);
  std::int64_t need = 0, per_image = 0, pass = 0;
  for (Collector* c : models) {
    const VitArchitecture& arch = c->model->arch;
    const VitInput first = vit_input(*c->model, images[0], effective_resize(*c->model, resize));
    c->tokens_first = arch.prefix() + first.N();
    per_image += vit_cka_bytes(arch, c->tokens_first);
    pass = std::max(pass, vit_pass_bytes(arch, c->tokens_first));
    c->reps.assign(static_cast<std::size_t>(arch.depth + 1), Matrix(0, arch.D));
  }
  if (b && a.tokens_first != b->tokens_first)
    throw Error(text_format(_("model A gives %d tokens per image and model B %d: CKA compares the same examples (tokens), so "
                              "both need the same patch grid and prefix tokens"),
                            a.tokens_first, b->tokens_first));
  need = per_image * count + pass;
  if (need > budget) {
    const std::int64_t fits = per_image > 0 ? std::max<std::int64_t>(0, (budget - pass) / per_image) : 0;
    const auto need_mib = static_cast<long long>(need >> 20), budget_mib = static_cast<long long>(budget >> 20);
    if (fits > 0)
      throw Error(text_format(
          // TRANSLATORS: MiB: mebibytes.
          _("CKA over %lld images of %d tokens needs %lld MiB, over the %lld MiB memory budget; at most %lld images fit"),
          static_cast<long long>(count), a.tokens_first, need_mib, budget_mib, static_cast<long long>(fits)));
    throw Error(text_format(
        // TRANSLATORS: MiB: mebibytes.
        _("CKA over %lld images of %d tokens needs %lld MiB, over the %lld MiB memory budget; not one image fits"),
        static_cast<long long>(count), a.tokens_first, need_mib, budget_mib));
  }
  if (static_cast<std::int64_t>(a.tokens_first) * count < 2) throw Error(_("CKA needs at least 2 examples (tokens)"));
  VitCpuRunner runner(threads);
  const int total = static_cast<int>(count) * static_cast<int>(models.size());
  int done = 0;
  for (const Image& image : images) {
    if (stop && stop->load()) throw Error(_("cancelled"));
    int T_a = 0;
    for (Collector* c : models) {
      const VitInput input = vit_input(*c->model, image, effective_resize(*c->model, resize));
      const int T = append_tokens(*c, input, runner, budget, stop, static_cast<Eigen::Index>(c->tokens_first) * count);
      if (c == &a) T_a = T;
      else if (T != T_a)
        throw Error(text_format(
            _("model A gives %d tokens for image %lld and model B %d: CKA compares the same examples (tokens)"), T_a,
            static_cast<long long>(&image - images.data()), T));
      if (progress) progress(++done, total);
    }
  }
  for (Collector* c : models)
    for (Matrix& m : c->reps) m.conservativeResize(c->rows, Eigen::NoChange);
}

}  // namespace

std::vector<Matrix> vit_layer_tokens(const VitModel& model, std::span<const Image> images, int resize, std::int64_t budget, int threads,
                                     const std::atomic<bool>* stop, const CkaProgress& progress) {
  Collector c;
  c.model = &model;
  collect(c, nullptr, images, resize, budget, threads, stop, progress);
  return std::move(c.reps);
}

VitCka vit_cka(const VitModel& a, const VitModel& b, std::span<const Image> images, int resize, std::int64_t budget, int threads, const std::atomic<bool>* stop, const CkaProgress& progress) {
  Collector ca, cb;
  ca.model = &a;
  cb.model = &b;
  const bool same = &a == &b;
  collect(ca, same ? nullptr : &cb, images, resize, budget, threads, stop, progress);
  if (stop && stop->load()) throw Error(_("cancelled"));
  VitCka out;
  out.examples = ca.rows;
  out.cka = cka_matrix(ca.reps, same ? ca.reps : cb.reps, stop);
  return out;
}

}  // namespace attnlab
