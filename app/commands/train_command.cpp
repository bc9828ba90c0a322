#include "app/commands/train_command.hpp"

#include "app/commands/command_flags.hpp"
#include "app/commands/options.hpp"
#include "app/commands/train_files.hpp"

#include "core/base/budget.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
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
  std::string text = R"(  attnlab train [--task classify|masked] [--data fashion-mnist] [--depth L] [--heads H]
                [--dim D] [--patch P] [--pool cls|avg] [--pos learned|sincos|none]
                [--batch B] [--lr X] [--steps N | --minutes M] [--seed S] [--mlp W]
                [--warmup N] [--augment on|off] [--image IMG] [--crop S]
                [--mask-ratio R] [--threads T] --out DIR [--force]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           trains a small ViT on Fashion-MNIST (Debian's
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
)");
  return text;
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
  std::optional<std::string> image;
  std::optional<int> crop;
  std::optional<float> mask_ratio;
  std::vector<std::string> classify_flags, masked_flags;  ///< the flags given of one task only (--data, --pool, --augment; --image, --crop, --mask-ratio)
};

/// The flags of `attnlab train`, each bound to its option of `o`.
std::vector<CommandFlag> train_flags(TrainOptions& o) {
  using Text = const std::string&;
  // A number > 0 read as a float first, so that "-5" and "0.5" get the flag's own words (`what`,
  // marked N_(), translated here).
  auto positive = [](Text t, Text f, float hi, const char* what) {
    const float v = parse_float(t, f, -1e12f, 1e12f);
    // TRANSLATORS: the flag, what its value must be ("a positive duration"), the value given.
    if (!(v > 0.0f) || v > hi) throw Error(text_format(_("%s must be %s, got %s"), f.c_str(), _(what), t.c_str()));
    return v;
  };
  return {
      {"--data", true, [&o](Text t, Text f) {
         o.classify_flags.push_back(f);
         if (t != "fashion-mnist")
           throw Error(text_format(_("%s must be fashion-mnist (the only data set), got '%s'"), f.c_str(), t.c_str()));
       }},
      {"--task", true, [&o](Text t, Text f) {
         if (t == "classify") o.task = VitTask::Classify;
         else if (t == "masked") o.task = VitTask::MaskedPatches;
         else throw Error(text_format(_("%s must be classify or masked, got '%s'"), f.c_str(), t.c_str()));
       }},
      {"--image", true, [&o](Text t, Text f) {
         o.masked_flags.push_back(f);
         o.image = t;
       }},
      {"--crop", true, [&o](Text t, Text f) {
         o.masked_flags.push_back(f);
         o.crop = parse_int(t, f, 2, 512);
       }},
      {"--mask-ratio", true, [&o](Text t, Text f) {
         o.masked_flags.push_back(f);
         o.mask_ratio = parse_float(t, f, -1e9f, 1e9f);
         if (!(*o.mask_ratio > 0.0f && *o.mask_ratio < 1.0f))
           throw Error(text_format(_("%s must be between 0 and 1 (exclusive), got %s"), f.c_str(), t.c_str()));
       }},
      {"--depth", true, [&o](Text t, Text f) { o.depth = parse_int(t, f, 1, 64); }},
      {"--heads", true, [&o](Text t, Text f) { o.heads = parse_int(t, f, 1, 4096); }},
      {"--dim", true, [&o](Text t, Text f) { o.dim = parse_int(t, f, 1, 4096); }},
      {"--patch", true, [&o](Text t, Text f) { o.patch = parse_int(t, f, 1, 512); }},  // checked against the images' side in parse
      {"--mlp", true, [&o](Text t, Text f) { o.mlp = parse_int(t, f, 1, 16384); }},
      {"--pool", true, [&o](Text t, Text f) {
         o.classify_flags.push_back(f);
         if (t == "cls") o.pool = VitPooling::Token;
         else if (t == "avg") o.pool = VitPooling::Average;
         else throw Error(text_format(_("%s must be cls or avg, got '%s'"), f.c_str(), t.c_str()));
       }},
      {"--pos", true, [&o](Text t, Text f) {
         if (t == "learned") o.pos = VitPosKind::Learned;
         else if (t == "sincos") o.pos = VitPosKind::Sincos;
         else if (t == "none") o.pos = VitPosKind::None;
         else throw Error(text_format(_("%s must be learned, sincos or none, got '%s'"), f.c_str(), t.c_str()));
       }},
      {"--batch", true, [&o, positive](Text t, Text f) {
         // TRANSLATORS: what --batch must be, after "--batch must be ".
         if (const float v = positive(t, f, 1e9f, N_("a positive whole number")); v != std::floor(v))
           throw Error(text_format(_("%s must be a positive whole number, got %s"), f.c_str(), t.c_str()));
         o.batch = parse_int(t, f, 1, 60000);
       }},
      // TRANSLATORS: what --lr must be, after "--lr must be ".
      {"--lr", true, [&o, positive](Text t, Text f) { o.lr = positive(t, f, 10.0f, N_("a positive rate (at most 10)")); }},
      {"--steps", true, [&o, positive](Text t, Text f) {
         // TRANSLATORS: what --steps must be, after "--steps must be ".
         positive(t, f, 1e12f, N_("a positive number of steps"));
         o.steps = parse_int(t, f, 1, 100000000);
       }},
      // TRANSLATORS: what --minutes must be, after "--minutes must be ".
      {"--minutes", true, [&o, positive](Text t, Text f) { o.minutes = positive(t, f, 100000.0f, N_("a positive duration")); }},
      {"--warmup", true, [&o](Text t, Text f) { o.warmup = parse_int(t, f, 0, 100000000); }},
      {"--seed", true, [&o](Text t, Text f) { o.seed = static_cast<std::uint64_t>(parse_int(t, f, 0, 2147483647)); }},
      {"--augment", true, [&o](Text t, Text f) {
         o.classify_flags.push_back(f);
         if (t != "on" && t != "off") throw Error(text_format(_("%s must be on or off, got '%s'"), f.c_str(), t.c_str()));
         o.augment = t == "on";
       }},
      {"--threads", true, [&o](Text t, Text f) { o.threads = parse_int(t, f, 1, 256); }},
      {"--out", true, [&o](Text t, Text) { o.out = t; }},
      {"--force", false, [&o](Text, Text) { o.force = true; }},
  };
}

TrainOptions parse(const std::vector<std::string>& args) {
  TrainOptions o;
  // TRANSLATORS: the end of "unknown option 'X'".
  parse_flags(args, train_flags(o), {N_(" of attnlab train")});
  if (o.out.empty()) throw Error(_("--out DIR is required (the folder the checkpoint, config.json and log.csv go to)"));
  if (o.steps && o.minutes) throw Error(_("give --steps or --minutes, not both"));
  const bool masked = o.task == VitTask::MaskedPatches;
  // The options of the other task: refused, not silently ignored.
  if (masked && !o.classify_flags.empty())
    throw Error(text_format(_("%s is for --task classify (--task masked trains on --image's crops)"),
                            o.classify_flags[0].c_str()));
  if (!masked && !o.masked_flags.empty()) throw Error(text_format(_("%s is for --task masked"), o.masked_flags[0].c_str()));
  // The task's defaults where nothing was given.
  const TaskDefaults& d = task_defaults(o.task);
  o.depth = o.depth.value_or(d.depth);
  o.heads = o.heads.value_or(d.heads);
  o.dim = o.dim.value_or(d.dim);
  o.patch = o.patch.value_or(d.patch);
  o.batch = o.batch.value_or(d.batch);
  o.lr = o.lr.value_or(d.lr);
  o.pos = o.pos.value_or(d.pos);
  if (*o.dim % *o.heads != 0) throw Error(text_format(_("--heads %d does not divide --dim %d"), *o.heads, *o.dim));
  if (masked) {
    o.crop = o.crop.value_or(d.side);
    if (*o.crop % *o.patch != 0 || *o.crop / *o.patch < 2)
      throw Error(text_format(_("--patch %d must divide --crop %d into at least 2 patches a side"), *o.patch, *o.crop));
  } else if (d.side % *o.patch != 0) {
    throw Error(text_format(_("--patch %d does not divide the 28-pixel images (1, 2, 4, 7, 14 or 28)"), *o.patch));
  }
  if (*o.pos == VitPosKind::Sincos && *o.dim % 4 != 0)
    throw Error(text_format(_("--pos sincos needs --dim to be a multiple of 4, got %d"), *o.dim));
  if (*o.batch > 60000) throw Error(_("--batch must be at most 60000 (the training set)"));
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

namespace {

namespace fs = std::filesystem;

/// The model's shape from the options (o.mask_ratio gets its default); checked, and refused in
/// one line when it or its batch is too large for the memory budget (issue 38), before the data
/// are read or the folder made.
VitTrainShape train_shape(TrainOptions& o) {
  VitTrainShape shape;
  shape.task = o.task;
  shape.D = *o.dim;
  shape.depth = *o.depth;
  shape.heads = *o.heads;
  shape.patch = *o.patch;
  shape.mlp_hidden = o.mlp > 0 ? o.mlp : kDefaultMlpRatio * *o.dim;
  shape.pooling = o.pool.value_or(VitPooling::Token);
  shape.pos = *o.pos;
  if (o.task == VitTask::MaskedPatches) {
    o.mask_ratio = o.mask_ratio.value_or(kDefaultMaskRatio);
    shape.image_rows = shape.image_cols = *o.crop;
    shape.mask_ratio = *o.mask_ratio;
  }
  shape.check();
  vit_check_train_budget(shape, *o.batch, o.threads, memory_budget());
  return shape;
}

/// The task's data: crops of --image (default the safari photo), or Fashion-MNIST's splits.
TrainData read_train_data(const TrainOptions& o, const VitTrainShape& shape) {
  if (o.task == VitTask::MaskedPatches)
    return masked_data(o, load_image(o.image ? fs::path(*o.image) : assets_dir() / "safari.jpg"), shape);
  return fashion_data(o, std::make_shared<FashionMnistSplit>(load_fashion_mnist(true)),
                      std::make_shared<FashionMnistSplit>(load_fashion_mnist(false)));
}

/// The progress line's numbers: the training numbers since the last row and the evaluation.
std::string progress_numbers(bool masked, double loss, double train, double eval, const char* eval_note) {
  // TRANSLATORS: the masked task's progress numbers: the training loss and the loss on the fixed crops.
  if (masked) return text_format(_("loss %.4f  fixed crops %.4f"), loss, eval);
  // TRANSLATORS: the classifier's progress numbers: the training loss, the training and the test accuracy in
  // percent, then "" or " (all 10000)" (the test images of the final evaluation).
  return text_format(_("loss %.4f  train %.1f%%  test %.1f%%%s"), loss, 100.0 * train, 100.0 * eval, eval_note);
}

/// Where the training loop stands: the steps, the log's rows, the training numbers of the steps
/// since the last row (and of that row), the clock.
struct TrainProgress {
  int step = 0;
  bool interrupted = false;  ///< stopped by Ctrl-C
  std::ostringstream log;
  double loss_sum = 0.0, last_loss = 0.0, last_train = 0.0;
  int correct = 0, seen = 0, since = 0;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
  /// The mean loss and training accuracy since the last row, which then starts again.
  void close_row() {
    last_loss = loss_sum / since;
    last_train = static_cast<double>(correct) / seen;
    loss_sum = 0.0;
    correct = seen = since = 0;
  }
};

/// Trains until --steps, the --minutes budget less the last evaluation, or Ctrl-C: a log row and
/// a progress line on stderr every 50 steps. With --minutes the step count is fitted to the speed
/// measured (fixed after 3/4 of the time), so that the cosine ends where the run does.
void train_steps(const TrainOptions& o, TrainData& data, VitTrainer& trainer, TrainProgress& p) {
  const bool masked = o.task == VitTask::MaskedPatches;
  const double budget = o.minutes.value_or(o.steps ? 0.0 : kDefaultMinutes) * 60.0;
  const bool timed = !o.steps;
  constexpr int kTimingSteps = 20;
  const int log_every = 50;
  bool total_fixed = !timed;
  double eval_seconds = 0.0;  // of one periodic evaluation, measured
  auto reserve = [&] { return eval_seconds * data.final_cost * 1.2 + 1.0; };
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  p.log << train_log_header(o.task);
  while (p.step < trainer.settings().total_steps) {
    if (g_stop.load()) {
      p.interrupted = true;
      break;
    }
    if (timed && p.elapsed() >= budget - reserve()) break;  // the last evaluation fits the budget too
    const VitStepStats s = data.step(trainer);
    const int step = ++p.step;
    p.loss_sum += s.loss;
    p.correct += s.correct;
    p.seen += *o.batch;
    ++p.since;
    if (timed && (step == kTimingSteps || (step > kTimingSteps && step % log_every == 0 && p.elapsed() < budget * 0.75))) {
      // The steps that fit what is left of the budget at the speed so far (periodic evaluations
      // included), less the last evaluation's time.
      if (eval_seconds <= 0.0) eval_seconds = p.elapsed() / step / 3.0 * data.eval_images / *o.batch;  // a forward is about a third of a step
      const double n = (budget - reserve() - p.elapsed()) / (p.elapsed() / step);
      VitTrainSettings st = trainer.settings();
      st.total_steps = static_cast<int>(std::max(step + 1.0, step + n));
      if (!o.warmup && step == kTimingSteps) st.warmup_steps = default_warmup_steps(st.total_steps, data.steps_per_epoch);
      trainer.set_settings(st);
      total_fixed = true;
    }
    const int total = trainer.settings().total_steps;
    if (step % log_every != 0 || step >= total) continue;
    const double before = p.elapsed();
    const double eval = data.evaluate(trainer, false);
    const double sec = p.elapsed();
    eval_seconds = sec - before;
    p.close_row();
    p.log << train_log_row(o.task, step, p.last_loss, p.last_train, eval, sec);
    const double rate = static_cast<double>(step) / sec;
    const double left = total_fixed ? static_cast<double>(total - step) / std::max(rate, 1e-9) : budget - sec;
    const int width = 24, filled = total_fixed ? static_cast<int>(static_cast<std::int64_t>(width) * step / total) : 0;
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(static_cast<std::size_t>(width), '.');
    // TRANSLATORS: attnlab train's progress line: the bar, the step and the steps planned, the numbers
    // above ("loss …"), the steps a second, the time left (minutes:seconds).
    const std::string line = text_format(_("[%s] step %lld/%d  %s  %.1f steps/s  %s left"),
                                         bar.c_str(), static_cast<long long>(step), total,
                                         progress_numbers(masked, p.last_loss, p.last_train, eval, "").c_str(), rate,
                                         clock_text(left).c_str());
    std::fprintf(stderr, "%s%s%s", tty ? "\r" : "", line.c_str(), tty ? "  " : "\n");
    std::fflush(stderr);
  }
  if (tty && p.step >= log_every) std::fputc('\n', stderr);
  if (p.interrupted)
    std::fprintf(stderr, _("attnlab train: stopped by Ctrl-C after %lld steps; writing what it learned\n"),
                 static_cast<long long>(p.step));
}

/// The last row (the final evaluation: the whole test set; the training numbers of the steps
/// since the last row, or of that row when none came after it), the checkpoint, the summary.
void finish_training(const TrainOptions& o, TrainData& data, VitTrainer& trainer, TrainProgress& p) {
  const bool masked = o.task == VitTask::MaskedPatches;
  const int step = p.step;
  const double final_eval = data.evaluate(trainer, true);
  if (p.since > 0) p.close_row();
  p.log << train_log_row(o.task, step, p.last_loss, p.last_train, final_eval, p.elapsed());
  // TRANSLATORS: after the test accuracy of the final evaluation: all the test images it read.
  const std::string all = masked ? "" : text_format(_(" (all %d)"), data.final_count);
  // TRANSLATORS: attnlab train's last progress line: the bar, the step and the steps planned, the numbers
  // ("loss …"), the steps a second, the time it took (minutes:seconds).
  std::fprintf(stderr, _("[%s] step %d/%d  %s  %.1f steps/s  %s\n"), std::string(24, '#').c_str(), step,
               trainer.settings().total_steps,
               progress_numbers(masked, p.last_loss, p.last_train, final_eval, all.c_str()).c_str(), step / std::max(p.elapsed(), 1e-9),
               clock_text(p.elapsed()).c_str());
  const fs::path out = o.out;
  write_train_checkpoint(out, trainer, p.log.str(), data.mean, data.std, data.labels);
  const double total = p.elapsed();
  if (masked) {
    // TRANSLATORS: attnlab train's summary (masked task): the loss, the steps, the time (minutes:seconds), the speed, the file.
    std::printf(_("fixed crops loss %.5f after %lld steps in %s (%.2f steps/s); wrote %s\n"), final_eval,
                static_cast<long long>(step),
                clock_text(total).c_str(), static_cast<double>(step) / total, (out / "model.safetensors").string().c_str());
  } else {
    // TRANSLATORS: attnlab train's summary: the accuracy, the test images right of all, the steps, the epochs,
    // the time (minutes:seconds), the speed, the file.
    std::printf(_("test accuracy %.4f (%d of %d) after %lld steps (%.1f epochs) in %s (%.2f steps/s); wrote %s\n"), final_eval,
                static_cast<int>(std::lround(final_eval * data.final_count)), data.final_count, static_cast<long long>(step),
                static_cast<double>(step) / data.steps_per_epoch, clock_text(total).c_str(), static_cast<double>(step) / total,
                (out / "model.safetensors").string().c_str());
  }
}

}  // namespace

std::vector<CommandFlagName> train_flag_names() {
  TrainOptions o;
  return flag_names(train_flags(o));
}

int run_train(const std::vector<std::string>& args) {
  TrainOptions o = parse(args);
  const fs::path out = o.out;
  std::error_code ec;
  if (fs::exists(out, ec)) {  // refused before the data is read; prepare_checkpoint_folder() says it again below
    if (!o.force)
      throw Error(text_format(_("%s exists: give --force to overwrite its model.safetensors, config.json and log.csv"),
                              o.out.c_str()));
    if (!fs::is_directory(out, ec)) throw Error(text_format(_("%s exists and is not a folder"), o.out.c_str()));
  }
  const VitTrainShape shape = train_shape(o);
  TrainData data = read_train_data(o, shape);
  prepare_checkpoint_folder(out, o.force);

  VitTrainSettings settings;
  settings.lr = *o.lr;
  settings.total_steps = o.steps.value_or(1000000);  // --minutes: set from the speed of the first steps
  settings.warmup_steps = o.warmup.value_or(default_warmup_steps(settings.total_steps, data.steps_per_epoch));
  VitTrainer trainer(shape, settings, o.seed, o.threads);
  TrainProgress progress;
  StopOnSigint sigint;  // Ctrl-C stops the steps; the final evaluation and the checkpoint still come
  train_steps(o, data, trainer, progress);
  finish_training(o, data, trainer, progress);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace attnlab::app
