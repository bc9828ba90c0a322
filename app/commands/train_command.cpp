#include "app/commands/train_command.hpp"

#include "app/commands/train_files.hpp"

#include "core/error.hpp"
#include "core/fashion_mnist.hpp"
#include "core/parse.hpp"
#include "core/safetensors_write.hpp"
#include "core/vit_train.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace attnlab::app {

namespace {

/// The defaults: what learned best in 5 minutes on the project's 2-core machine (README, "Train
/// your own ViT").
struct TrainDefaults {
  static constexpr int depth = 4, heads = 4, dim = 96, patch = 7, batch = 128, mlp_ratio = 2, seed = 0;
  static constexpr double lr = 2e-3, minutes = 5.0;
};

}  // namespace

std::string train_usage() {
  return R"(  attnlab train [--data fashion-mnist] [--depth L] [--heads H] [--dim D] [--patch P]
                [--pool cls|avg] [--pos learned|sincos|none] [--batch B] [--lr X]
                [--steps N | --minutes M] [--seed S] [--mlp W] [--warmup N]
                [--augment on|off] [--threads T] --out DIR [--force]
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
)";
}

namespace {

struct TrainOptions {
  int depth = TrainDefaults::depth, heads = TrainDefaults::heads, dim = TrainDefaults::dim, patch = TrainDefaults::patch;
  int batch = TrainDefaults::batch, mlp = 0, threads = 0;
  std::optional<int> warmup;
  double lr = TrainDefaults::lr;
  std::optional<int> steps;
  std::optional<double> minutes;
  std::uint64_t seed = TrainDefaults::seed;
  VitPooling pool = VitPooling::Token;
  VitPosKind pos = VitPosKind::Learned;
  bool augment = false, force = false;
  std::string out;
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
      const std::string d = value();
      if (d != "fashion-mnist") throw Error("--data must be fashion-mnist (the only data set), got '" + d + "'");
    } else if (a == "--depth") o.depth = parse_int(value(), "--depth", 1, 64);
    else if (a == "--heads") o.heads = parse_int(value(), "--heads", 1, 4096);
    else if (a == "--dim") o.dim = parse_int(value(), "--dim", 1, 4096);
    else if (a == "--patch") o.patch = parse_int(value(), "--patch", 1, 28);
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
      if (!(o.lr > 0.0) || o.lr > 10.0) throw Error("--lr must be a positive rate (at most 10), got " + l);
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
  if (o.dim % o.heads != 0) throw Error("--heads " + std::to_string(o.heads) + " does not divide --dim " + std::to_string(o.dim));
  if (28 % o.patch != 0) throw Error("--patch " + std::to_string(o.patch) + " does not divide the 28-pixel images (1, 2, 4, 7, 14 or 28)");
  if (o.pos == VitPosKind::Sincos && o.dim % 4 != 0)
    throw Error("--pos sincos needs --dim to be a multiple of 4, got " + std::to_string(o.dim));
  if (o.batch > 60000) throw Error("--batch must be at most 60000 (the training set)");
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

int run_train(const std::vector<std::string>& args) {
  const TrainOptions o = parse(args);
  namespace fs = std::filesystem;
  const fs::path out = o.out;
  std::error_code ec;
  if (fs::exists(out, ec)) {  // refused before the data is read; prepare_checkpoint_folder() says it again below
    if (!o.force) throw Error(o.out + " exists: give --force to overwrite its model.safetensors, config.json and log.csv");
    if (!fs::is_directory(out, ec)) throw Error(o.out + " exists and is not a folder");
  }

  VitTrainShape shape;
  shape.D = o.dim;
  shape.depth = o.depth;
  shape.heads = o.heads;
  shape.patch = o.patch;
  shape.mlp_hidden = o.mlp > 0 ? o.mlp : TrainDefaults::mlp_ratio * o.dim;
  shape.pooling = o.pool;
  shape.pos = o.pos;
  shape.check();

  const FashionMnistSplit train = load_fashion_mnist(true), test = load_fashion_mnist(false);
  prepare_checkpoint_folder(out, o.force);

  const int steps_per_epoch = train.count / o.batch;
  VitTrainSettings settings;
  settings.lr = o.lr;
  settings.total_steps = o.steps.value_or(1000000);  // --minutes: set from the speed of the first steps
  settings.warmup_steps = o.warmup.value_or(std::min(steps_per_epoch / 2, std::max(1, settings.total_steps / 10)));
  VitTrainer trainer(shape, settings, o.seed, o.threads);
  FashionMnistBatches batches(train, o.batch, o.seed + 1, o.augment ? 2 : 0, o.augment);

  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - t0).count(); };
  const double budget = o.minutes.value_or(o.steps ? 0.0 : TrainDefaults::minutes) * 60.0;
  const bool timed = !o.steps;
  constexpr int kTimingSteps = 20, kSubset = 1000;
  const int log_every = 50;
  bool total_fixed = !timed;
  double eval_per_image = 0.0;  // seconds, measured on the periodic evaluations
  auto reserve = [&] { return eval_per_image * 10000 * 1.2 + 1.0; };
  const bool tty = ::isatty(STDERR_FILENO) != 0;

  std::ostringstream log;
  log << kTrainLogHeader;
  std::vector<float> images;
  std::vector<int> labels;
  double loss_sum = 0.0, last_loss = 0.0, last_train = 0.0;
  int correct = 0, seen = 0, since = 0;
  double last_test = -1.0;
  StopOnSigint sigint;
  bool interrupted = false;
  int step = 0;
  while (step < trainer.settings().total_steps) {
    if (g_stop.load()) {
      interrupted = true;
      break;
    }
    if (timed && elapsed() >= budget - reserve()) break;  // the last evaluation fits the budget too
    batches.next(images, labels);
    const VitStepStats s = trainer.train_step(images, labels);
    ++step;
    loss_sum += s.loss;
    correct += s.correct;
    seen += o.batch;
    ++since;
    if (timed && (step == kTimingSteps || (step > kTimingSteps && step % log_every == 0 && elapsed() < budget * 0.75))) {
      // The steps that fit what is left of the budget at the speed so far (periodic evaluations
      // included), less the last evaluation's time; fixed from three quarters of the budget on, so that the
      // cosine ends where the run does.
      if (eval_per_image <= 0.0) eval_per_image = elapsed() / step / o.batch / 3.0;  // a forward is about a third of a step
      const double per_step = elapsed() / step;
      const double n = (budget - reserve() - elapsed()) / per_step;
      VitTrainSettings st = trainer.settings();
      st.total_steps = static_cast<int>(std::max(step + 1.0, step + n));
      if (!o.warmup && step == kTimingSteps) st.warmup_steps = std::min(steps_per_epoch / 2, std::max(1, st.total_steps / 10));
      trainer.set_settings(st);
      total_fixed = true;
    }
    const int total = trainer.settings().total_steps;
    if (step % log_every == 0 && step < total) {
      const double before = elapsed();
      last_test = fashion_mnist_accuracy(trainer, test, kSubset);
      const double sec = elapsed();
      eval_per_image = (sec - before) / kSubset;
      last_loss = loss_sum / since;
      last_train = static_cast<double>(correct) / seen;
      char row[160];
      std::snprintf(row, sizeof row, "%lld,%.5f,%.4f,%.4f,%.2f\n", static_cast<long long>(step), last_loss, last_train, last_test, sec);
      log << row;
      const double rate = static_cast<double>(step) / sec;
      const double left = total_fixed ? static_cast<double>(total - step) / std::max(rate, 1e-9) : budget - sec;
      const int width = 24, filled = total_fixed ? static_cast<int>(static_cast<std::int64_t>(width) * step / total) : 0;
      std::string bar(static_cast<std::size_t>(filled), '#');
      bar.resize(static_cast<std::size_t>(width), '.');
      std::fprintf(stderr, "%s[%s] step %lld/%d  loss %.4f  train %.1f%%  test %.1f%%  %.1f steps/s  %s left%s", tty ? "\r" : "",
                   bar.c_str(), static_cast<long long>(step), total, last_loss, 100.0 * last_train, 100.0 * last_test, rate,
                   clock_text(left).c_str(), tty ? "  " : "\n");
      std::fflush(stderr);
      loss_sum = 0.0;
      correct = seen = since = 0;
    }
  }
  if (tty && step >= log_every) std::fputc('\n', stderr);
  if (interrupted) std::fprintf(stderr, "attnlab train: stopped by Ctrl-C after %lld steps; writing what it learned\n", static_cast<long long>(step));

  // The last row: the whole test set; the training numbers of the steps since the last row
  // (or of that row, when none came after it).
  const double final_accuracy = fashion_mnist_accuracy(trainer, test, test.count);
  if (since > 0) {
    last_loss = loss_sum / since;
    last_train = static_cast<double>(correct) / seen;
  }
  {
    char row[160];
    std::snprintf(row, sizeof row, "%lld,%.5f,%.4f,%.4f,%.2f\n", static_cast<long long>(step), last_loss, last_train, final_accuracy,
                  elapsed());
    log << row;
    std::fprintf(stderr, "[%s] step %d/%d  loss %.4f  train %.1f%%  test %.1f%% (all %d)  %.1f steps/s  %s\n", std::string(24, '#').c_str(),
                 step, trainer.settings().total_steps, last_loss, 100.0 * last_train, 100.0 * final_accuracy, test.count,
                 step / std::max(elapsed(), 1e-9), clock_text(elapsed()).c_str());
  }
  write_train_checkpoint(out, trainer, log.str());
  const double total = elapsed();
  std::printf("test accuracy %.4f (%d of %d) after %lld steps (%.1f epochs) in %s (%.2f steps/s); wrote %s\n", final_accuracy,
              static_cast<int>(std::lround(final_accuracy * test.count)), test.count, static_cast<long long>(step),
              static_cast<double>(step) / steps_per_epoch, clock_text(total).c_str(), static_cast<double>(step) / total,
              (out / "model.safetensors").string().c_str());
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace attnlab::app
