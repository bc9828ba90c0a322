#include "app/gui/sessions/train_session.hpp"

#include "app/commands/train_files.hpp"
#include "core/base/budget.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/io/overlay.hpp"
#include "core/vit/vit_cpu.hpp"
#include "core/vit/vit_run.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>

namespace attnlab::app {

namespace {

constexpr double kChunkSeconds = 0.2;  // training per job: the maps and curves move 5 times a second
constexpr double kEvalEvery = 2.0;     // seconds of training between test accuracies
constexpr int kDistanceImages = 16;

// The run's switches, the map's label and the probe's name stay English: the sidecar, the CSV's header and
// the report name the model with them, and switches() is compared to the preview's.
std::string switches_of(const VitTrainShape& s) {
  char buf[160];
  if (s.task == VitTask::MaskedPatches)
    std::snprintf(buf, sizeof buf, "masked patches (%.0f %%), crop %d, depth %d, %d heads, D %d, patch %d, %s position",
                  100.0 * s.mask_ratio, s.image_cols, s.depth, s.heads, s.D, s.patch, pos_kind_name(s.pos));
  else
    std::snprintf(buf, sizeof buf, "depth %d, %d heads, D %d, patch %d, %s, %s position", s.depth, s.heads, s.D, s.patch,
                  pooling_name(s.pooling), pos_kind_name(s.pos));
  return buf;
}

std::string cnn_switches_of(const CnnTrainShape& s) {
  char buf[160];
  const auto& b = s.stage_blocks;
  std::snprintf(buf, sizeof buf, "CNN: ResNet, %d-%d-%d-%d basic blocks, width %d, %.0fk parameters", b[0], b[1], b[2], b[3], s.width,
                static_cast<double>(s.parameters()) / 1000.0);
  return buf;
}

// What the map's header and the sidecar name the snapshot.
std::string label_of(const std::string& run, const VitTrainShape& s, std::int64_t step) {
  return "being trained (run " + run + "): step " + std::to_string(step) + " (" + switches_of(s) + ")";
}

}  // namespace

TrainConfig::TrainConfig() { set_task(VitTask::Classify); }

void TrainConfig::set_task(VitTask task) {
  const bool masked = task == VitTask::MaskedPatches;
  const TaskDefaults& d = task_defaults(task);  // attnlab train's (train_files.hpp)
  shape = VitTrainShape{};
  shape.task = task;
  shape.depth = d.depth;
  shape.heads = d.heads;
  shape.D = d.dim;
  shape.patch = d.patch;
  shape.image_rows = shape.image_cols = d.side;
  shape.pos = d.pos;
  shape.mask_ratio = kDefaultMaskRatio;
  batch = d.batch;
  lr = d.lr;
  // "depth=1 dim=32 heads=2 batch=32 chunk=5": the tests' tiny model, fast on any machine.
  if (const char* env = std::getenv("ATTNLAB_TRAIN_DEFAULTS")) {
    std::istringstream in(env);
    std::string item;
    while (in >> item) {
      const auto eq = item.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = item.substr(0, eq);
      const int v = std::atoi(item.c_str() + eq + 1);
      if (v <= 0) continue;
      if (key == "depth") shape.depth = v;
      else if (key == "dim") shape.D = v;
      else if (key == "heads") shape.heads = v;
      else if (key == "patch" && !masked) shape.patch = v;
      else if (key == "batch") batch = v;
      else if (key == "steps") steps = v;
      else if (key == "chunk") chunk_steps = v;
    }
  }
  shape.mlp_hidden = kDefaultMlpRatio * shape.D;
}

// --- The data set and the probe (kept apart from the training, which another task will share).

struct TrainData {
  FashionMnistSplit train, test;
};

std::shared_ptr<const TrainData> TrainDataSet::get(const std::atomic<bool>& stop) {
  const std::lock_guard lock(mutex_);
  if (auto d = cached_.lock()) return d;
  auto d = std::make_shared<TrainData>();
  d->train = load_fashion_mnist(true, fashion_mnist_dir(), &stop);  // a close stops it within 4 MiB
  d->test = load_fashion_mnist(false, fashion_mnist_dir(), &stop);
  cached_ = d;
  return d;
}

namespace {

// The probe as the model's photo: the photo made as the data are, or the test image.
Image probe_image(const FashionMnistSplit& test, const TrainProbe& probe) {
  if (probe.photo) return *probe.photo;
  return fashion_mnist_image(test, std::clamp(probe.test_index, 0, test.count - 1));
}

}  // namespace

struct TrainSession::Run {
  std::shared_ptr<const Data> data;  // before batches, which hold a reference into it (classification)
  std::optional<VitTrainer> trainer;  // a ViT run's
  std::optional<CnnTrainer> cnn;      // a CNN run's
  std::optional<FashionMnistBatches> batches;  // classification: Fashion-MNIST's training split
  std::optional<MaskedPatchData> masked;       // masked patches: crops of the photo
  double seconds = 0, since_eval = 0;
  std::vector<float> images;
  std::vector<int> labels;
  Run(std::shared_ptr<const Data> d, const TrainConfig& c, const VitTrainSettings& settings) : data(std::move(d)) {
    const auto seed = static_cast<std::uint64_t>(c.seed) + 1;
    if (c.cnn) cnn.emplace(c.cnn_shape, settings, static_cast<std::uint64_t>(c.seed), /*threads=*/1);
    else trainer.emplace(c.shape, settings, static_cast<std::uint64_t>(c.seed), /*threads=*/1);
    // The same batches for a CNN as for a ViT of the same seed: A against B differ in the model alone.
    if (!c.cnn && c.shape.task == VitTask::MaskedPatches) masked.emplace(*c.photo, c.shape, seed, kTrainFixedCrops);
    else batches.emplace(data->train, c.batch, seed, 0, false);
  }
  std::int64_t step() const { return cnn ? cnn->step() : trainer->step(); }
  /// The snapshot as a checkpoint would load it, with the data's normalization.
  VitModel model() const {
    if (masked) return trainer->model(masked->crops().mean(), masked->crops().std(), {});
    return trainer->model(fashion_mnist_mean3(), fashion_mnist_std3(), fashion_mnist_label_names());
  }
};

namespace {

// A CNN's snapshot on the probe: its prediction and the input gradient of the predicted class's logit.
std::shared_ptr<const CnnSnapshot> make_cnn_snapshot(std::shared_ptr<const ResnetModel> model, const Image& probe, const std::atomic<bool>& stop) {
  auto s = std::make_shared<CnnSnapshot>();
  s->model = std::move(model);
  s->probe = probe;
  const CnnGradients g = resnet_gradients(*s->model, cnn_input(s->model->arch, probe), CnnGradientTarget::class_logit(CnnGradientTarget::kTopClass),
                                          static_cast<std::int64_t>(vit_memory_budget()), 1, &stop);
  s->klass = g.klass;
  const float top = g.logits[static_cast<std::size_t>(g.klass)];
  double sum = 0;
  for (const float z : g.logits) sum += std::exp(static_cast<double>(z - top));
  s->probability = static_cast<float>(1.0 / sum);
  s->input_gradient = cnn_input_gradient_map(g);
  return s;
}

}  // namespace

struct TrainSession::Chunk {
  std::shared_ptr<const Data> data;
  std::shared_ptr<const MaskedPatchPictures> pictures;  // masked patches: the probe reconstructed
  std::shared_ptr<Run> run;  // the first chunk's new run
  TrainPoint point;
  double rate = 0;
  std::shared_ptr<const VitModel> model;
  std::shared_ptr<const VitRun> probe_run;
  std::shared_ptr<const CnnSnapshot> cnn;  // a CNN run's snapshot in place of model and probe_run
  Image probe_image;
  std::string probe_name;  // what the probe is (TrainProbe::name)
  unsigned probe_serial = 0;  // which of the session's probes it is
  std::string label;
};

TrainSession::TrainSession(Scheduler& scheduler, TrainLane& lane, std::shared_ptr<TrainDataSet> data_set, std::string name)
    : scheduler_(scheduler), lane_(lane), data_set_(std::move(data_set)), name_(std::move(name)), vit_(scheduler, key("run")) {}

TrainSession::~TrainSession() {
  scheduler_.cancel(key("chunk"));  // their continuations would reach this session
  scheduler_.cancel(key("probe"));
  lane_.release(this);
}

std::string TrainSession::key(const char* job) const {
  std::string run = name_;
  std::transform(run.begin(), run.end(), run.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return "train:" + run + ":" + job;
}

bool TrainSession::is_cnn() const { return run_ ? run_->cnn.has_value() : config_.cnn; }

std::string TrainSession::switches() const {
  if (is_cnn()) return cnn_switches_of(config_.cnn_shape);  // fixed once started, as the panel disables it
  return switches_of(run_ ? run_shape_ : config_.shape);
}

ImTextureID TrainSession::cnn_texture() {
  if (!cnn_snapshot_) return ImTextureID{};
  if (cnn_uploaded_ != cnn_serial_) {
    const CnnSnapshot& s = *cnn_snapshot_;
    const Matrix& g = s.input_gradient;
    const std::vector<std::uint8_t> bytes = overlay_heat_map(s.probe, std::span<const float>(g.data(), static_cast<std::size_t>(g.size())),
                                                             static_cast<int>(g.cols()), static_cast<int>(g.rows()), kDefaultColormap,
                                                             Normalization::MinMax, 0.55f, false);
    Image shown;
    shown.width = s.probe.width;
    shown.height = s.probe.height;
    shown.rgb.resize(bytes.size());
    for (std::size_t i = 0; i < bytes.size(); ++i) shown.rgb[i] = static_cast<float>(bytes[i]) / 255.0f;
    cnn_texture_.set_photo(shown, false);
    cnn_uploaded_ = cnn_serial_;
  }
  return cnn_texture_.im();
}

ImTextureID TrainSession::picture_texture(int which) {
  if (!pictures_) return ImTextureID{};
  if (uploaded_serial_ != pictures_serial_) {
    picture_textures_[0].set_photo(pictures_->masked, false);
    picture_textures_[1].set_photo(pictures_->reconstructed, false);
    picture_textures_[2].set_photo(pictures_->original, false);
    uploaded_serial_ = pictures_serial_;
  }
  return picture_textures_[static_cast<std::size_t>(std::clamp(which, 0, 2))].im();
}

float TrainSession::fixed_loss() const {
  for (auto it = points_.rbegin(); it != points_.rend(); ++it)
    if (it->fixed_loss >= 0) return it->fixed_loss;
  return -1;
}

float TrainSession::test_accuracy() const {
  for (auto it = points_.rbegin(); it != points_.rend(); ++it)
    if (it->test_accuracy >= 0) return it->test_accuracy;
  return -1;
}

bool TrainSession::preview() {
  if (started() || (!preview_of_.empty() && preview_of_ == switches())) return false;
  try {
    start();  // the first chunk is step 0's snapshot only; not running, so no chunk follows it
  } catch (const Error&) {
    reset();  // a shape that cannot work: Start says why
    return false;
  }
  running_ = false;
  preview_of_ = switches();
  return true;
}

void TrainSession::start() {
  reset();
  TrainConfig c = config_;
  c.shape.mlp_hidden = kDefaultMlpRatio * c.shape.D;
  if (c.cnn) {
    c.cnn_shape.check();  // one line naming what does not fit, before any job
    if (c.batch <= 0 || c.steps <= 0 || !(c.lr > 0)) throw Error(_("batch, steps and the learning rate must be positive"));
    const std::size_t need = cnn_train_bytes(c.cnn_shape, c.batch, 1);
    if (need > memory_budget())
      throw Error(text_format(_("the CNN needs %zu MiB to train, over the memory budget of %llu MiB: a smaller width or batch "
                                "fits"),
                              need >> 20, static_cast<unsigned long long>(memory_budget() >> 20)));
    config_ = c;
    run_shape_ = c.shape;
    running_ = true;
    submit_chunk(true);
    return;
  }
  c.shape.check();  // one line naming what does not fit, before any job
  if (c.shape.task == VitTask::MaskedPatches) {
    if (!c.photo || c.photo->empty()) throw Error(_("no photo is open to cut the training crops from"));
    if (c.shape.grid_cols() < 2) throw Error(_("a crop of one patch a side leaves nothing to reconstruct it from"));
  }
  if (c.batch <= 0 || c.steps <= 0 || !(c.lr > 0)) throw Error(_("batch, steps and the learning rate must be positive"));
  vit_check_train_budget(c.shape, c.batch, /*threads=*/1, memory_budget());  // one thread: Run's trainer
  config_ = c;
  run_shape_ = c.shape;
  running_ = true;
  submit_chunk(true);
}

void TrainSession::pause() {
  running_ = false;
  if (lane_.waiting(this)) lane_.release(this);  // not yet submitted: no chunk to wait for
}

void TrainSession::resume() {
  if (!run_ || running_ || finished()) return;
  running_ = true;
  if (!in_flight()) submit_chunk(false);
}

void TrainSession::reset() {
  preview_of_.clear();
  scheduler_.cancel(key("chunk"));
  scheduler_.cancel(key("probe"));
  lane_.release(this);  // the other run's turn, if it waits
  run_.reset();
  points_.clear();
  rate_ = 0;
  running_ = false;
  pending_save_.reset();
  vit_.clear();
  shown_probe_.clear();
  pictures_.reset();
  cnn_snapshot_.reset();
  ++generation_;
}

// --- Training: a chunk of steps, then the snapshot on the probe.

namespace {

// The chunk's steps: until about kChunkSeconds (or config.chunk_steps steps) have passed, the
// schedule has ended or `stop` is set. Fills the point's loss and train accuracy; returns the
// steps per second.
double train_steps(TrainSession::Run& r, const TrainConfig& c, const std::atomic<bool>& stop, TrainPoint& point) {
  double loss = 0;
  int correct = 0, seen = 0, steps = 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  while (!stop.load() && r.step() < c.steps) {
    VitStepStats st;
    if (r.masked) {
      st = r.masked->train_step(*r.trainer, c.batch);
    } else {
      r.batches->next(r.images, r.labels);
      st = r.cnn ? r.cnn->train_step(r.images, r.labels) : r.trainer->train_step(r.images, r.labels);
    }
    loss += st.loss;
    correct += st.correct;
    seen += c.batch;
    ++steps;
    if (c.chunk_steps > 0 ? steps >= c.chunk_steps : elapsed() >= kChunkSeconds) break;
  }
  const double trained = elapsed();
  r.seconds += trained;
  r.since_eval += trained;
  if (steps > 0) {
    point.loss = static_cast<float>(loss / steps);
    point.train_accuracy = r.masked ? -1.0f : static_cast<float>(correct) / static_cast<float>(seen);
  }
  return steps > 0 && trained > 0 ? steps / trained : 0;
}

}  // namespace

void TrainSession::submit_chunk(bool first) {
  // The chunk waits for its turn on the lane; what it trains is read when it is submitted.
  lane_.ask(this, [this, first] {
    const TrainConfig c = config_;
    const std::string label_run = name_;
    auto work = [first, c, label_run, data = data_, data_set = data_set_, run = run_, probe = probe_, serial = probe_serial_](const std::atomic<bool>& stop) {
      Chunk out;
      const bool masked = !c.cnn && c.shape.task == VitTask::MaskedPatches;
      out.data = data || masked ? data : data_set->get(stop);  // masked patches need no data set
      std::shared_ptr<Run> r = run;
      if (first) {
        VitTrainSettings s;
        s.lr = c.lr;
        s.total_steps = c.steps;
        s.warmup_steps = default_warmup_steps(c.steps, masked ? 0 : out.data->train.count / c.batch);  // as attnlab train
        r = std::make_shared<Run>(out.data, c, s);
        out.run = r;
      }
      out.point.loss = std::log(static_cast<float>(c.shape.classes));  // step 0: the uniform guess's loss
      out.point.train_accuracy = masked ? -1.0f : 0.1f;
      if (!first) out.rate = train_steps(*r, c, stop, out.point);
      if (stop.load()) throw Error(_("cancelled"));
      out.point.step = r->step();
      out.point.seconds = r->seconds;
      if (first || r->since_eval >= kEvalEvery || r->step() >= c.steps) {
        if (masked) out.point.fixed_loss = static_cast<float>(r->masked->fixed_loss(*r->trainer));
        else if (r->cnn)
          out.point.test_accuracy = static_cast<float>(fashion_mnist_accuracy(
              [&](std::span<const float> in, int n) { return r->cnn->logits(in, n); }, out.data->test, kTrainEvalImages));
        else out.point.test_accuracy = static_cast<float>(fashion_mnist_accuracy(*r->trainer, out.data->test, kTrainEvalImages));
        r->since_eval = 0;
      }
      if (r->cnn) {
        // A CNN's snapshot: the model as its checkpoint loads, on the probe; no heads, no distances.
        auto model = std::make_shared<const ResnetModel>(r->cnn->model(fashion_mnist_mean3(), fashion_mnist_std3(), fashion_mnist_label_names()));
        out.probe_image = probe_image(out.data->test, probe);
        out.probe_name = probe.name;
        out.probe_serial = serial;
        out.cnn = make_cnn_snapshot(std::move(model), out.probe_image, stop);
        return out;
      }
      VitTrainer& t = *r->trainer;
      if (first && masked) out.point.loss = out.point.fixed_loss;  // step 0: the untrained model's loss
      // The snapshot: the model as a checkpoint would load, on the probe, and its mean attention
      // distance over 16 test images (masked patches: over the probe, the whole photo).
      out.model = std::make_shared<const VitModel>(r->model());
      VitCpuRunner cpu(1);
      out.probe_image = masked ? r->masked->probe() : probe_image(out.data->test, probe);
      out.probe_name = masked ? "the whole photo, " + c.photo_name + ", at " + std::to_string(c.shape.image_cols) + " x " +
                                    std::to_string(c.shape.image_rows) + " pixels"
                              : probe.name;
      out.probe_serial = serial;
      out.probe_run = std::make_shared<const VitRun>(out.model, out.probe_image, 0, cpu, vit_memory_budget(), &stop);
      if (masked) {
        out.point.distance = out.probe_run->distance();
        out.pictures = std::make_shared<const MaskedPatchPictures>(r->masked->probe_pictures(t));
      } else {
        Matrix distance = Matrix::Zero(c.shape.depth, c.shape.heads);
        for (int i = 0; i < kDistanceImages; ++i)
          distance += VitRun(out.model, fashion_mnist_image(out.data->test, i), 0, cpu, vit_memory_budget(), &stop).distance();
        out.point.distance = distance / static_cast<float>(kDistanceImages);
      }
      out.label = label_of(label_run, c.shape, t.step());
      return out;
    };
    scheduler_.submit<Chunk>(key("chunk"), std::move(work), [this](std::future<Chunk> result) {
      lane_.release(this);  // the other run's turn: it may ask again below, behind it
      try {
        take(result.get());
      } catch (const std::exception& e) {
        // TRANSLATORS: %s is the run's name ("A" or "B"), then the reason.
        error_ = text_format(_("training run %s stopped: %s"), name_.c_str(), e.what());
        running_ = false;
        // The save asked for during the chunk is not made (the trainer may be half a step on):
        // said in the same line, and Save is free again.
        if (pending_save_)
          // TRANSLATORS: %s is the checkpoint folder the user asked to save to.
          *error_ += "; " + text_format(_("%s was not saved"), std::exchange(pending_save_, std::nullopt)->string().c_str());
      }
    }, Scheduler::Priority::Background);  // the scheduler's low-priority thread: the window's frames come first
  });
}


void TrainSession::take(Chunk c) {
  data_ = c.data;
  if (c.run) run_ = c.run;
  if (!run_) return;
  points_.push_back(std::move(c.point));
  if (c.rate > 0) rate_ = c.rate;
  if (c.cnn) {
    cnn_snapshot_ = std::move(c.cnn);
    ++cnn_serial_;
  } else {
    vit_.show(c.model, c.probe_run, c.probe_image, c.label);
  }
  shown_probe_ = c.probe_name;
  if (c.pictures) {
    pictures_ = std::move(c.pictures);
    ++pictures_serial_;
  }
  ++generation_;
  // The probe changed while the chunk ran (it took the one of its start): its snapshot again on the new one.
  if (c.probe_serial != probe_serial_) run_probe();
  if (pending_save_) write(*std::exchange(pending_save_, std::nullopt));  // the trainer is free between chunks
  if (finished()) running_ = false;
  if (running_) submit_chunk(false);
}

void TrainSession::set_probe(TrainProbe probe) {
  probe_ = std::move(probe);
  ++probe_serial_;
  run_probe();
}

void TrainSession::run_probe() {
  if (cnn_snapshot_ && data_) {  // a CNN's snapshot again on the new probe
    auto model = cnn_snapshot_->model;
    auto work = [model, data = data_, probe = probe_](const std::atomic<bool>& stop) {
      Chunk out;
      out.probe_image = probe_image(data->test, probe);
      out.probe_name = probe.name;
      out.cnn = make_cnn_snapshot(model, out.probe_image, stop);
      return out;
    };
    scheduler_.submit<Chunk>(key("probe"), std::move(work), [this, model](std::future<Chunk> result) {
      try {
        Chunk c = result.get();
        if (cnn_snapshot_ && cnn_snapshot_->model == model) {
          cnn_snapshot_ = std::move(c.cnn);
          ++cnn_serial_;
          shown_probe_ = c.probe_name;
          ++generation_;
        }
      } catch (const std::exception& e) {
        error_ = e.what();
      }
    });
    return;
  }
  const VitRun* shown = vit_.run();
  if (!shown || !data_ || task() == VitTask::MaskedPatches) return;  // the next chunk's snapshot is on it; the photo is a masked run's own probe
  auto model = shown->model_ptr();
  const std::string label = vit_.label();
  auto work = [model, data = data_, probe = probe_](const std::atomic<bool>& stop) {
    Chunk out;
    VitCpuRunner cpu(1);
    out.probe_image = probe_image(data->test, probe);
    out.probe_name = probe.name;
    out.probe_run = std::make_shared<const VitRun>(model, out.probe_image, 0, cpu, vit_memory_budget(), &stop);
    return out;
  };
  scheduler_.submit<Chunk>(key("probe"), std::move(work), [this, model, label](std::future<Chunk> result) {
    try {
      Chunk c = result.get();
      if (vit_.run() && vit_.run()->model_ptr() == model) {
        vit_.show(model, c.probe_run, c.probe_image, label);
        shown_probe_ = c.probe_name;
        ++generation_;
      }
    } catch (const std::exception& e) {
      error_ = e.what();
    }
  });
}

void TrainSession::save(const std::filesystem::path& dir) {
  if (!run_) {
    error_ = _("nothing trained yet: press Start first");
    return;
  }
  if (in_flight()) pending_save_ = dir;  // at the end of the chunk under way
  else write(dir);
}

void TrainSession::write(const std::filesystem::path& dir) {
  try {
    prepare_checkpoint_folder(dir, false,
                              text_format(_("%s exists: choose another folder (a checkpoint is never written over)"),
                                          dir.string().c_str()));
    if (run_->cnn) {
      write_cnn_train_checkpoint(dir, *run_->cnn, log_csv());
    } else {
      const VitModel& shown = vit_.run()->model();  // the normalization and the class names the snapshots have
      write_train_checkpoint(dir, *run_->trainer, log_csv(), shown.arch.mean, shown.arch.std, shown.arch.labels);
    }
    saved_ = dir;
    last_saved_ = dir;
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

std::string TrainSession::log_csv() const {
  const VitTask t = task();
  std::string out = train_log_header(t);
  float evaluation = 0;  // the last test accuracy, or the fixed crops' loss
  for (const TrainPoint& p : points_) {
    const float measured = t == VitTask::MaskedPatches ? p.fixed_loss : p.test_accuracy;
    if (measured >= 0) evaluation = measured;
    out += train_log_row(t, p.step, p.loss, p.train_accuracy, evaluation, p.seconds);
  }
  return out;
}

}  // namespace attnlab::app
