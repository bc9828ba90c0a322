#include "app/gui/sessions/vit_session.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <cmath>

namespace attnlab::app {

ImTextureID MapTextures::get(const std::string& slot, const std::string& key, int cols, int rows,
                             const std::function<std::vector<std::uint8_t>()>& rgba, bool smooth) {
  Slot& s = slots_[slot];
  const std::string full = key + (smooth ? "|smooth" : "|nearest");
  if (s.key != full || s.texture.id() == 0) {
    const std::vector<std::uint8_t> px = rgba();
    s.texture.set(cols, rows, 4, px, smooth);
    s.key = full;
  }
  return s.texture.im();
}

namespace {
enum Stage { kIdle, kReading, kRunning, kDone };
}

void VitSession::open(const std::filesystem::path& path, const Image& image, int resize) { start(path, image, resize); }

void VitSession::run_on(const Image& image, int resize) {
  if (model_) start(std::nullopt, image, resize);
}

void VitSession::start(std::optional<std::filesystem::path> path, const Image& image, int resize) {
  // A job under way is replaced (told to stop, its result dropped); no waiting for it here.
  stage_ = std::make_shared<std::atomic<int>>(kIdle);
  loading_model_ = path.has_value();
  Result base;
  base.model = model_;
  base.opened = opened_;
  base.file = file_;
  base.sha256 = sha256_;
  base.info = info_;
  auto work = [path, image, resize, backend = backend_, base = std::move(base), stage = stage_](const std::atomic<bool>& stop) {
    Result r = base;
    r.image = image;
    auto check = [&] {
      if (stop.load()) throw Error(_("cancelled"));
    };
    if (path) {
      stage->store(kReading);  // the file's SHA-256 is computed in the same pass
      VitLoadOptions options;
      options.stop = &stop;  // a close stops the read within 1 MiB
      auto model = std::make_shared<VitModel>(load_vit(*path, options));
      check();
      r.sha256 = model->sha256;
      r.file = model->file;
      r.opened = *path;
      r.info = vit_info(*model);
      r.model = std::move(model);
      check();
    }
    stage->store(kRunning);
    // The runner (and the GPU runner's headless context) is made on this pool thread, for this job.
    VitRunnerChoice choice = choose_vit_runner(backend);
    r.run = std::make_shared<VitRun>(r.model, image, resize, *choice.runner, vit_memory_budget(), &stop);
    r.why = choice.after_run();  // auto: both paths' times and the choice (Diagnostics)
    stage->store(kDone);
    return r;
  };
  scheduler_.submit<Result>(key_, std::move(work), [this](std::future<Result> result) {
    try {
      take(result.get());
    } catch (const std::exception& e) {
      error_ = e.what();
    }
  });
}

void VitSession::cancel() { scheduler_.cancel(key_); }

void VitSession::show(std::shared_ptr<const VitModel> model, std::shared_ptr<const VitRun> run, const Image& image,
                      const std::string& label) {
  Result r;
  r.model = std::move(model);
  r.run = std::move(run);
  r.image = image;
  r.why = std::string("cpu: ") + _("the model being trained runs on the CPU, in the training job");
  take(std::move(r));
  label_ = label;
}

void VitSession::clear() {
  scheduler_.cancel(key_);
  model_.reset();
  run_.reset();
  image_.reset();
  textures_.clear();
  label_.clear();
  ++generation_;
}

void VitSession::take(Result r) {
  label_.clear();
  model_ = std::move(r.model);
  run_ = std::move(r.run);
  opened_ = std::move(r.opened);
  file_ = std::move(r.file);
  sha256_ = std::move(r.sha256);
  info_ = std::move(r.info);
  why_ = std::move(r.why);
  // a small image (Fashion-MNIST's 28 × 28) is shown as its pixels, not blurred
  photo_.set_photo(r.image, std::max(r.image.width, r.image.height) >= 128);
  image_ = std::make_shared<const Image>(std::move(r.image));
  textures_.clear();
  ++generation_;
}

std::string VitSession::stage() const {
  switch (stage_->load()) {
    case kReading: return _("reading the checkpoint");
    // TRANSLATORS: %s is the backend: auto, cpu or gpu.
    case kRunning: return text_format(_("running the forward pass (%s, on a pool thread)"), vit_backend_name(backend_));
    // TRANSLATORS: a job's stage: finished.
    case kDone: return tr_c("job stage", "done");
    default: return _("starting");
  }
}

float VitSession::progress() const {
  const int s = stage_->load();
  if (!loading_model_) return s >= kRunning ? (s == kDone ? 1.0f : 0.5f) : 0.1f;
  return static_cast<float>(s) / static_cast<float>(kDone);
}

}  // namespace attnlab::app
