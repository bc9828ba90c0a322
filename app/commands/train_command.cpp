#include "app/commands/train_command.hpp"

#include "app/commands/options.hpp"
#include "app/commands/train_files.hpp"

#include "core/base/budget.hpp"
#include "core/base/error.hpp"
#include "core/io/fashion_mnist.hpp"
#include "core/io/image.hpp"
#include "core/vit/photo_crops.hpp"
#include "core/base/parse.hpp"
#include "core/io/safetensors_write.hpp"
#include "core/vit/vit_train.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <fstream>
#include <optional>
#include <sstream>

namespace attnlab::app {

std::string train_usage() {
  return R"(  attnlab train [--task classify|masked] [--data fashion-mnist] [--depth L] [--heads H]
                [--dim D] [--patch P] [--pool cls|avg] [--pos learned|sincos|none]
                [--batch B] [--lr X] [--steps N | --minutes M] [--seed S] [--mlp W]
                [--warmup N] [--augment on|off] [--image IMG] [--crop S]
                [--mask-ratio R] [--threads T] --out DIR [--force]
                           trains a small ViT on Fashion-MNIST (Debian's
                           dataset-fashion-mnist) on the CPU and writes DIR/model.safetensors
                           (timm's names), DIR/config.json and DIR/log.csv (step, loss,
                           train_accuracy, test_accuracy, seconds; test accuracy on the
                           first 1000 test images, on all 10000 in the last row).
                           Defaults: depth 4, 4 heads, D 96, patch 7, MLP 2D, cls token, 
                           learned position embedding, batch 128, lr 0.002 (AdamW, weight
                           decay 0.05, warm-up then cosine, clipping at norm 1, label
                           smoothing 0.1), no augmentation (--augment on: random crop and
                           flip), 5 minutes, seed 0. --minutes fits the step count to the
                           speed measured while it runs (fixed after 3/4 of the time);
                           --steps N repeats exactly. Ctrl-C stops and still writes.
                           DIR is never overwritten without --force.
                           --task masked: masked-patch reconstruction (MAE-style) on
                           random crops of one photo (--image, default the safari
                           photo), scaled to S × S pixels (--crop, default 64); in each
                           crop a share R (--mask-ratio, default 0.75) of the patches is
                           dropped as keys and its pixels predicted. Defaults there:
                           depth 4, 4 heads, D 64, patch 8, batch 64, lr 0.0015,
                           sine-cosine position codes; log.csv holds step, loss,
                           fixed_crops_loss (128 fixed crops and masks), seconds.
)";
}

namespace {

struct TrainOptions {
  VitTask task = VitTask::Classify;
  std::optional<int> depth, heads, dim, patch, batch;  // unset: the task's default
  int mlp = 0, threads = 0;
  std::optional<int> warmup;
  std::optional<double> lr;
  std::optional<int> steps;
  std::optional<double> minutes;
  std::uint64_t seed = kDefaultSeed;
  std::optional<VitPooling> pool;
  std::optional<VitPosKind> pos;
  std::optional<bool> augment;
  bool force = false;
  std::string out;
  std::optional<std::string> image, data;
  std::optional<int> crop;
  std::optional<float> mask_ratio;
};

TrainOptions parse(const std::vector<std::string>& args) {
  TrainOptions o;
  for (std::size_t n = 0; n < args.size(); ++n) {
    const std::string& a = args[n];
    auto value = [&]() -> std::string {
      if (n + 1 >= args.size()) throw Error("option " + a + " needs a value");
      return args[++n];
    };
    if (a == "--data") {
      o.data = value();
      if (*o.data != "fashion-mnist") throw Error("--data must be fashion-mnist (the only data set), got '" + *o.data + "'");
    } else if (a == "--task") {
      const std::string t = value();
      if (t == "classify") o.task = VitTask::Classify;
      else if (t == "masked") o.task = VitTask::MaskedPatches;
      else throw Error("--task must be classify or masked, got '" + t + "'");
    } else if (a == "--image") o.image = value();
    else if (a == "--crop") o.crop = parse_int(value(), "--crop", 2, 512);
    else if (a == "--mask-ratio") {
      const std::string r = value();
      o.mask_ratio = parse_float(r, "--mask-ratio", -1e9f, 1e9f);
      if (!(*o.mask_ratio > 0.0f && *o.mask_ratio < 1.0f)) throw Error("--mask-ratio must be between 0 and 1 (exclusive), got " + r);
    } else if (a == "--depth") o.depth = parse_int(value(), "--depth", 1, 64);
    else if (a == "--heads") o.heads = parse_int(value(), "--heads", 1, 4096);
    else if (a == "--dim") o.dim = parse_int(value(), "--dim", 1, 4096);
    else if (a == "--patch") o.patch = parse_int(value(), "--patch", 1, 512);  // checked against the images' side below
    else if (a == "--mlp") o.mlp = parse_int(value(), "--mlp", 1, 16384);
    else if (a == "--pool") {
      const std::string p = value();
      if (p == "cls") o.pool = VitPooling::Token;
      else if (p == "avg") o.pool = VitPooling::Average;
      else throw Error("--pool must be cls or avg, got '" + p + "'");
    } else if (a == "--pos") {
      const std::string p = value();
      if (p == "learned") o.pos = VitPosKind::Learned;
      else if (p == "sincos") o.pos = VitPosKind::Sincos;
      else if (p == "none") o.pos = VitPosKind::None;
      else throw Error("--pos must be learned, sincos or none, got '" + p + "'");
    } else if (a == "--batch") {
      const std::string b = value();
      const float v = parse_float(b, "--batch", -1e9f, 1e9f);
      if (v <= 0.0f || v != std::floor(v)) throw Error("--batch must be a positive whole number, got " + b);
      o.batch = parse_int(b, "--batch", 1, 60000);
    } else if (a == "--lr") {
      const std::string l = value();
      o.lr = parse_float(l, "--lr", -1e9f, 1e9f);
      if (!(*o.lr > 0.0) || *o.lr > 10.0) throw Error("--lr must be a positive rate (at most 10), got " + l);
    } else if (a == "--steps") {
      const std::string s = value();
      if (parse_float(s, "--steps", -1e12f, 1e12f) <= 0.0f) throw Error("--steps must be a positive number of steps, got " + s);
      o.steps = parse_int(s, "--steps", 1, 100000000);
    } else if (a == "--minutes") {
      const std::string m = value();
      o.minutes = parse_float(m, "--minutes", -1e9f, 1e9f);
      if (!(*o.minutes > 0.0) || *o.minutes > 100000.0) throw Error("--minutes must be a positive duration, got " + m);
    } else if (a == "--warmup") o.warmup = parse_int(value(), "--warmup", 0, 100000000);
    else if (a == "--seed") o.seed = static_cast<std::uint64_t>(parse_int(value(), "--seed", 0, 2147483647));
    else if (a == "--augment") {
      const std::string v = value();
      if (v != "on" && v != "off") throw Error("--augment must be on or off, got '" + v + "'");
      o.augment = v == "on";
    } else if (a == "--threads") o.threads = parse_int(value(), "--threads", 1, 256);
    else if (a == "--out") o.out = value();
    else if (a == "--force") o.force = true;
    else throw Error("unknown option '" + a + "' of attnlab train (see attnlab --help)");
  }
  if (o.out.empty()) throw Error("--out DIR is required (the folder the checkpoint, config.json and log.csv go to)");
  if (o.steps && o.minutes) throw Error("give --steps or --minutes, not both");
  const bool masked = o.task == VitTask::MaskedPatches;
  // The options of the other task: refused, not silently ignored.
  if (masked && (o.data || o.pool || o.augment))
    throw Error(std::string(o.data ? "--data" : o.pool ? "--pool" : "--augment") + " is for --task classify (--task masked trains on --image's crops)");
  if (!masked && (o.image || o.crop || o.mask_ratio))
    throw Error(std::string(o.image ? "--image" : o.crop ? "--crop" : "--mask-ratio") + " is for --task masked");
  // The task's defaults where nothing was given.
  const TaskDefaults& d = task_defaults(o.task);
  o.depth = o.depth.value_or(d.depth);
  o.heads = o.heads.value_or(d.heads);
  o.dim = o.dim.value_or(d.dim);
  o.patch = o.patch.value_or(d.patch);
  o.batch = o.batch.value_or(d.batch);
  o.lr = o.lr.value_or(d.lr);
  o.pos = o.pos.value_or(d.pos);
  if (*o.dim % *o.heads != 0) throw Error("--heads " + std::to_string(*o.heads) + " does not divide --dim " + std::to_string(*o.dim));
  if (masked) {
    o.crop = o.crop.value_or(d.side);
    if (*o.crop % *o.patch != 0 || *o.crop / *o.patch < 2)
      throw Error("--patch " + std::to_string(*o.patch) + " must divide --crop " + std::to_string(*o.crop) + " into at least 2 patches a side");
  } else if (d.side % *o.patch != 0) {
    throw Error("--patch " + std::to_string(*o.patch) + " does not divide the 28-pixel images (1, 2, 4, 7, 14 or 28)");
  }
  if (*o.pos == VitPosKind::Sincos && *o.dim % 4 != 0)
    throw Error("--pos sincos needs --dim to be a multiple of 4, got " + std::to_string(*o.dim));
  if (*o.batch > 60000) throw Error("--batch must be at most 60000 (the training set)");
  return o;
}

std::atomic<bool> g_stop{false};
extern "C" void on_sigint(int) { g_stop.store(true); }

/// SIGINT sets g_stop for the scope; the previous handler comes back after.
class StopOnSigint {
 public:
  StopOnSigint() {
    g_stop.store(false);
    before_ = std::signal(SIGINT, on_sigint);
  }
  ~StopOnSigint() { std::signal(SIGINT, before_); }
  StopOnSigint(const StopOnSigint&) = delete;
  StopOnSigint& operator=(const StopOnSigint&) = delete;

 private:
  void (*before_)(int) = SIG_DFL;
};

std::string clock_text(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

}  // namespace

namespace {

/// What the training loop asks of its data: Fashion-MNIST's classes, or masked patches of one
/// photo. `evaluate(final)`: the test accuracy (1000 images; all 10 000 when final) or the loss
/// on the fixed crops; `eval_images`: the images of a periodic evaluation; `final_cost`: how
/// many periodic evaluations the final one costs.
struct TrainData {
  std::function<VitStepStats(VitTrainer&)> step;
  std::function<double(VitTrainer&, bool final)> evaluate;
  int eval_images = 0;
  double final_cost = 1.0;
  int steps_per_epoch = 0;  ///< 0: crops are drawn without end (no epochs)
  int final_count = 0;      ///< the test images of the final evaluation (classify)
  std::array<float, 3> mean{}, std{};
  std::vector<std::string> labels;
};

constexpr int kFixedCrops = 128;  // the masked task's evaluation set

TrainData fashion_data(const TrainOptions& o, std::shared_ptr<FashionMnistSplit> train, std::shared_ptr<FashionMnistSplit> test) {
  constexpr int kSubset = 1000;
  auto batches = std::make_shared<FashionMnistBatches>(*train, *o.batch, o.seed + 1, o.augment.value_or(false) ? 2 : 0, o.augment.value_or(false));
  auto images = std::make_shared<std::vector<float>>();
  auto labels = std::make_shared<std::vector<int>>();
  TrainData d;
  d.step = [train, batches, images, labels](VitTrainer& t) {  // `train` outlives the batches drawn from it
    batches->next(*images, *labels);
    return t.train_step(*images, *labels);
  };
  d.evaluate = [test](VitTrainer& t, bool final) { return fashion_mnist_accuracy(t, *test, final ? test->count : kSubset); };
  d.eval_images = kSubset;
  d.final_cost = static_cast<double>(test->count) / kSubset;
  d.final_count = test->count;
  d.steps_per_epoch = train->count / *o.batch;
  d.mean = fashion_mnist_mean3();
  d.std = fashion_mnist_std3();
  d.labels = fashion_mnist_label_names();
  return d;
}

TrainData masked_data(const TrainOptions& o, const Image& photo, const VitTrainShape& shape) {
  auto data = std::make_shared<MaskedPatchData>(photo, shape, o.seed + 1, kFixedCrops);
  TrainData d;
  const int batch = *o.batch;
  d.step = [data, batch](VitTrainer& t) { return data->train_step(t, batch); };
  d.evaluate = [data](VitTrainer& t, bool) { return data->fixed_loss(t); };
  d.eval_images = kFixedCrops;
  d.mean = data->crops().mean();
  d.std = data->crops().std();
  return d;
}

}  // namespace

int run_train(const std::vector<std::string>& args) {
  TrainOptions o = parse(args);
  const bool masked = o.task == VitTask::MaskedPatches;
  namespace fs = std::filesystem;
  const fs::path out = o.out;
  std::error_code ec;
  if (fs::exists(out, ec)) {  // refused before the data is read; prepare_checkpoint_folder() says it again below
    if (!o.force) throw Error(o.out + " exists: give --force to overwrite its model.safetensors, config.json and log.csv");
    if (!fs::is_directory(out, ec)) throw Error(o.out + " exists and is not a folder");
  }

  VitTrainShape shape;
  shape.task = o.task;
  shape.D = *o.dim;
  shape.depth = *o.depth;
  shape.heads = *o.heads;
  shape.patch = *o.patch;
  shape.mlp_hidden = o.mlp > 0 ? o.mlp : kDefaultMlpRatio * *o.dim;
  shape.pooling = o.pool.value_or(VitPooling::Token);
  shape.pos = *o.pos;
  if (masked) {
    o.mask_ratio = o.mask_ratio.value_or(kDefaultMaskRatio);
    shape.image_rows = shape.image_cols = *o.crop;
    shape.mask_ratio = *o.mask_ratio;
  }
  shape.check();
  // Before the data are read or the folder made: a model or batch too large for the memory
  // budget is refused in one line (issue 38).
  vit_check_train_budget(shape, *o.batch, o.threads, memory_budget());

  TrainData data;
  if (masked) {
    const fs::path image = o.image ? fs::path(*o.image) : assets_dir() / "safari.jpg";
    data = masked_data(o, load_image(image), shape);
  } else {
    data = fashion_data(o, std::make_shared<FashionMnistSplit>(load_fashion_mnist(true)),
                        std::make_shared<FashionMnistSplit>(load_fashion_mnist(false)));
  }
  prepare_checkpoint_folder(out, o.force);

  VitTrainSettings settings;
  settings.lr = *o.lr;
  settings.total_steps = o.steps.value_or(1000000);  // --minutes: set from the speed of the first steps
  settings.warmup_steps = o.warmup.value_or(default_warmup_steps(settings.total_steps, data.steps_per_epoch));
  VitTrainer trainer(shape, settings, o.seed, o.threads);

  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - t0).count(); };
  const double budget = o.minutes.value_or(o.steps ? 0.0 : kDefaultMinutes) * 60.0;
  const bool timed = !o.steps;
  constexpr int kTimingSteps = 20;
  const int log_every = 50;
  bool total_fixed = !timed;
  double eval_seconds = 0.0;  // of one periodic evaluation, measured
  auto reserve = [&] { return eval_seconds * data.final_cost * 1.2 + 1.0; };
  const bool tty = ::isatty(STDERR_FILENO) != 0;

  std::ostringstream log;
  log << train_log_header(o.task);
  // The progress line's numbers: the training numbers since the last row and the evaluation.
  auto numbers = [&](double loss, double train, double eval, const char* eval_note) {
    char text[160];
    if (masked) std::snprintf(text, sizeof text, "loss %.4f  fixed crops %.4f", loss, eval);
    else std::snprintf(text, sizeof text, "loss %.4f  train %.1f%%  test %.1f%%%s", loss, 100.0 * train, 100.0 * eval, eval_note);
    return std::string(text);
  };
  double loss_sum = 0.0, last_loss = 0.0, last_train = 0.0;
  int correct = 0, seen = 0, since = 0;
  StopOnSigint sigint;
  bool interrupted = false;
  int step = 0;
  while (step < trainer.settings().total_steps) {
    if (g_stop.load()) {
      interrupted = true;
      break;
    }
    if (timed && elapsed() >= budget - reserve()) break;  // the last evaluation fits the budget too
    const VitStepStats s = data.step(trainer);
    ++step;
    loss_sum += s.loss;
    correct += s.correct;
    seen += *o.batch;
    ++since;
    if (timed && (step == kTimingSteps || (step > kTimingSteps && step % log_every == 0 && elapsed() < budget * 0.75))) {
      // The steps that fit what is left of the budget at the speed so far (periodic evaluations
      // included), less the last evaluation's time; fixed from three quarters of the budget on, so that the
      // cosine ends where the run does.
      if (eval_seconds <= 0.0) eval_seconds = elapsed() / step / 3.0 * data.eval_images / *o.batch;  // a forward is about a third of a step
      const double per_step = elapsed() / step;
      const double n = (budget - reserve() - elapsed()) / per_step;
      VitTrainSettings st = trainer.settings();
      st.total_steps = static_cast<int>(std::max(step + 1.0, step + n));
      if (!o.warmup && step == kTimingSteps) st.warmup_steps = default_warmup_steps(st.total_steps, data.steps_per_epoch);
      trainer.set_settings(st);
      total_fixed = true;
    }
    const int total = trainer.settings().total_steps;
    if (step % log_every == 0 && step < total) {
      const double before = elapsed();
      const double eval = data.evaluate(trainer, false);
      const double sec = elapsed();
      eval_seconds = sec - before;
      last_loss = loss_sum / since;
      last_train = static_cast<double>(correct) / seen;
      log << train_log_row(o.task, step, last_loss, last_train, eval, sec);
      const double rate = static_cast<double>(step) / sec;
      const double left = total_fixed ? static_cast<double>(total - step) / std::max(rate, 1e-9) : budget - sec;
      const int width = 24, filled = total_fixed ? static_cast<int>(static_cast<std::int64_t>(width) * step / total) : 0;
      std::string bar(static_cast<std::size_t>(filled), '#');
      bar.resize(static_cast<std::size_t>(width), '.');
      std::fprintf(stderr, "%s[%s] step %lld/%d  %s  %.1f steps/s  %s left%s", tty ? "\r" : "", bar.c_str(), static_cast<long long>(step), total,
                   numbers(last_loss, last_train, eval, "").c_str(), rate, clock_text(left).c_str(), tty ? "  " : "\n");
      std::fflush(stderr);
      loss_sum = 0.0;
      correct = seen = since = 0;
    }
  }
  if (tty && step >= log_every) std::fputc('\n', stderr);
  if (interrupted) std::fprintf(stderr, "attnlab train: stopped by Ctrl-C after %lld steps; writing what it learned\n", static_cast<long long>(step));

  // The last row: the final evaluation (the whole test set); the training numbers of the steps
  // since the last row (or of that row, when none came after it).
  const double final_eval = data.evaluate(trainer, true);
  if (since > 0) {
    last_loss = loss_sum / since;
    last_train = static_cast<double>(correct) / seen;
  }
  log << train_log_row(o.task, step, last_loss, last_train, final_eval, elapsed());
  const std::string all = masked ? "" : " (all " + std::to_string(data.final_count) + ")";
  std::fprintf(stderr, "[%s] step %d/%d  %s  %.1f steps/s  %s\n", std::string(24, '#').c_str(), step, trainer.settings().total_steps,
               numbers(last_loss, last_train, final_eval, all.c_str()).c_str(), step / std::max(elapsed(), 1e-9), clock_text(elapsed()).c_str());
  write_train_checkpoint(out, trainer, log.str(), data.mean, data.std, data.labels);
  const double total = elapsed();
  if (masked) {
    std::printf("fixed crops loss %.5f after %lld steps in %s (%.2f steps/s); wrote %s\n", final_eval, static_cast<long long>(step),
                clock_text(total).c_str(), static_cast<double>(step) / total, (out / "model.safetensors").string().c_str());
  } else {
    std::printf("test accuracy %.4f (%d of %d) after %lld steps (%.1f epochs) in %s (%.2f steps/s); wrote %s\n", final_eval,
                static_cast<int>(std::lround(final_eval * data.final_count)), data.final_count, static_cast<long long>(step),
                static_cast<double>(step) / data.steps_per_epoch, clock_text(total).c_str(), static_cast<double>(step) / total,
                (out / "model.safetensors").string().c_str());
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace attnlab::app
