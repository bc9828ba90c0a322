#pragma once
// `--backend auto` by measuring (issue 37): the first forward pass of each path on the real
// input is timed, the faster kept, and the choice remembered per (OpenGL renderer, CPU, model
// shape) in the user's settings folder (vit_backend.json), so that later runs on the same
// machine and model take the faster path at once. On a software rasterizer the GPU engine is
// not timed: it runs the compute shaders on the CPU, several times slower than the CPU path
// (docs/MODELS.md, "Real ViTs"), so auto takes the CPU path without asking.
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "core/vit/vit.hpp"

namespace attnlab {

/// The CPU's name as /proc/cpuinfo's first "model name" line gives it ("AMD EPYC 7B13"),
/// or "unknown CPU" where there is none.
std::string cpu_model_name();
/// The same, read from text in /proc/cpuinfo's format.
std::string cpu_model_name_from(std::istream& cpuinfo);

/// What auto knows for one (renderer, CPU, model shape).
struct VitAutoTiming {
  double cpu_ms = -1, gpu_ms = -1;  ///< each path's first pass, milliseconds; < 0: not timed
  std::string choice;               ///< "cpu" or "gpu"
  std::string measured;             ///< the day it was measured, "2026-11-26" (UTC)
  std::string note;                 ///< why the GPU was not timed, or its error (empty: it was)
  bool remembered = false;          ///< read back from the settings, not measured by this run
};

/// One line for `attnlab vit --info`, the Diagnostics panel and sidecars:
/// "auto: cpu 71 ms, gpu 286 ms → cpu", "auto: remembered cpu (cpu 71 ms, gpu 286 ms,
/// measured 2026-11-26)", "auto: cpu 71 ms, gpu not timed (llvmpipe is a software rasterizer) → cpu".
std::string vit_auto_summary(const VitAutoTiming& timing);

/// What a choice is remembered under: the renderer, the CPU and the model's shape on this input
/// ("NVIDIA H100 | AMD EPYC 7B13 | L12 D384 H6 MLP1536 P16 T197").
std::string vit_auto_key(const std::string& renderer, const std::string& cpu, const VitArchitecture& arch, int tokens);

/// The remembered choices: a JSON file of keys to timings, read and rewritten whole (atomically,
/// core/io/files.hpp) at each new measurement.
class VitAutoStore {
 public:
  /// The user's: user_config_dir()/vit_backend.json.
  VitAutoStore();
  explicit VitAutoStore(std::filesystem::path file) : file_(std::move(file)) {}
  /// The timing remembered under `key` (remembered = true), if any; a file that cannot be read
  /// or parsed holds none.
  std::optional<VitAutoTiming> find(const std::string& key) const;
  /// Remembers `timing` under `key` beside the others. Throws Error naming the file when it
  /// cannot be written.
  void remember(const std::string& key, const VitAutoTiming& timing) const;
  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path file_;
};

/// The runner `--backend auto` uses: the GPU engine or the CPU path, whichever the first pass
/// of each measured faster (or the settings remember) for this renderer, CPU and model shape.
/// Without a GPU runner (no hardware GPU, a software rasterizer, no OpenGL 4.3) it is the CPU
/// path, timed, and nothing is remembered.
class VitAutoRunner final : public VitRunner {
 public:
  /// Milliseconds on some steady clock (tests give a fake one).
  using Clock = std::function<double()>;
  /// Makes the GPU runner (compiling its shaders) when it is first needed: not at all when the
  /// settings remember the CPU path for this shape.
  using MakeRunner = std::function<std::unique_ptr<VitRunner>()>;
  /// `make_gpu` empty: no GPU to time, `gpu_note` says why. `renderer`: GL_RENDERER of the
  /// context the GPU runner will use (current on the thread that runs).
  VitAutoRunner(std::unique_ptr<VitRunner> cpu, MakeRunner make_gpu, std::string renderer, std::string gpu_note,
                std::string cpu_model, VitAutoStore store, Clock clock = {});
  ~VitAutoRunner() override;
  /// The path chosen by the last run ("cpu" before one).
  const char* path() const override { return chosen_ ? chosen_->path() : "cpu"; }
  /// The remembered path's pass; or, the first time for this shape, both paths' passes timed
  /// (the CPU's first, the GPU's within what is left of `budget` beside it), the faster one's
  /// kept and remembered. A GPU that fails (an error other than "cancelled") leaves the CPU
  /// path's pass, not remembered. Throws what the chosen path throws; Error("cancelled") when
  /// `stop` is set.
  VitPass run(const VitModel& model, const VitInput& input, std::int64_t budget,
              const std::atomic<bool>* stop = nullptr) override;
  /// What the last run measured or read back.
  const VitAutoTiming& timing() const { return timing_; }
  /// How many runs timed both paths (tests: a remembered choice is not measured again).
  int measurements() const { return measurements_; }

 private:
  VitRunner& gpu();  ///< made by make_gpu_ on first use

  std::unique_ptr<VitRunner> cpu_, gpu_;
  MakeRunner make_gpu_;
  std::string renderer_, gpu_note_, cpu_model_;
  VitAutoStore store_;
  Clock clock_;
  VitRunner* chosen_ = nullptr;
  VitAutoTiming timing_;
  int measurements_ = 0;
};

}  // namespace attnlab
