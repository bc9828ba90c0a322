#pragma once
// Which runner does a ViT's forward pass. Auto: on a hardware GPU, whichever of the GPU engine
// and the CPU path measured faster on the first pass of each (core/vit/vit_auto.hpp, remembered per
// renderer, CPU and model shape); the CPU path on a software rasterizer (llvmpipe, softpipe,
// SwiftShader run compute shaders on the CPU, several times slower than the CPU path's OpenBLAS
// products) or where no OpenGL 4.3 context can be made. One choice for `attnlab vit`,
// `render --model`, the app and the benchmark.
#include "core/gpu/context.hpp"
#include "core/vit/vit.hpp"
#include "core/vit/vit_auto.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace attnlab {

/// A runner, with the headless context the GPU runner needs (current on the thread that made
/// the choice; the runner is destroyed before it), and why it was chosen.
struct VitRunnerChoice {
  std::unique_ptr<HeadlessContext> context;  ///< null for the CPU path
  std::unique_ptr<VitRunner> runner;
  std::string why;  ///< one line: "auto: llvmpipe (…) is a software rasterizer; the CPU path is faster"
  VitAutoRunner* auto_runner = nullptr;  ///< `runner` when auto chose it (its timings), else null
  /// After a run: auto's timings and choice (vit_auto_summary(): "auto: cpu 71 ms, gpu 286 ms →
  /// cpu"), or `why` for a path asked for.
  std::string after_run() const;
  VitRunnerChoice() = default;
  VitRunnerChoice(VitRunnerChoice&& other) noexcept
      : context(std::move(other.context)),
        runner(std::move(other.runner)),
        why(std::move(other.why)),
        auto_runner(std::exchange(other.auto_runner, nullptr)) {}
  VitRunnerChoice& operator=(VitRunnerChoice&& other) noexcept {
    runner.reset();  // before the context it may use
    context = std::move(other.context);
    runner = std::move(other.runner);
    why = std::move(other.why);
    auto_runner = std::exchange(other.auto_runner, nullptr);
    return *this;
  }
  ~VitRunnerChoice() { runner.reset(); }
};

/// Auto: a VitAutoRunner; without a GPU to time (EGL lists no hardware device, so no context is
/// made; the renderer is a software rasterizer; no OpenGL 4.3 context) it runs the CPU path,
/// otherwise a headless context is made on this thread and the first pass of each path is
/// timed. Gpu: the GPU runner, or Error (one line) when no OpenGL 4.3 context can be made. Cpu:
/// the CPU path.
VitRunnerChoice choose_vit_runner(VitBackend requested);

}  // namespace attnlab
