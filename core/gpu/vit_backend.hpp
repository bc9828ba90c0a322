#pragma once
// Which runner does a ViT's forward pass: the GPU engine on a hardware GPU, the CPU path on a
// software rasterizer (llvmpipe, softpipe, SwiftShader run compute shaders on the CPU, several
// times slower than the CPU path's OpenBLAS products) or where no OpenGL 4.3 context can be made.
// One choice for `attnlab vit`, `render --model`, the app and the benchmark.
#include "core/gpu/context.hpp"
#include "core/vit.hpp"

#include <memory>
#include <string>
#include <string_view>

namespace attnlab {

/// A runner, with the headless context the GPU runner needs (current on the thread that made
/// the choice; the runner is destroyed before it), and why it was chosen.
struct VitRunnerChoice {
  std::unique_ptr<HeadlessContext> context;  ///< null for the CPU path
  std::unique_ptr<VitRunner> runner;
  std::string why;  ///< one line: "auto: llvmpipe (…) is a software rasterizer; the CPU path is faster"
  VitRunnerChoice() = default;
  VitRunnerChoice(VitRunnerChoice&&) noexcept = default;
  VitRunnerChoice& operator=(VitRunnerChoice&& other) noexcept {
    runner.reset();  // before the context it may use
    context = std::move(other.context);
    runner = std::move(other.runner);
    why = std::move(other.why);
    return *this;
  }
  ~VitRunnerChoice() { runner.reset(); }
};

/// Auto: the CPU path when EGL lists no hardware device (hardware_egl_devices(): no context is
/// made); otherwise a headless context on this thread, and the GPU runner when its renderer is
/// hardware, the CPU path when it is a software rasterizer or no context can be made. Gpu: the GPU runner,
/// or Error (one line) when no OpenGL 4.3 context can be made. Cpu: the CPU path.
VitRunnerChoice choose_vit_runner(VitBackend requested);

}  // namespace attnlab
