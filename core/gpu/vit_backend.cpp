#include "core/gpu/vit_backend.hpp"

#include "core/error.hpp"
#include "core/gpu/vit_engine.hpp"
#include "core/vit_cpu.hpp"


namespace attnlab {

VitRunnerChoice choose_vit_runner(VitBackend requested) {
  VitRunnerChoice choice;
  if (requested == VitBackend::Cpu) {
    choice.runner = std::make_unique<VitCpuRunner>();
    choice.why = "cpu: asked for";
    return choice;
  }
  // No GPU among EGL's devices: a context would be Mesa's llvmpipe, so auto need not make one.
  if (requested == VitBackend::Auto && hardware_egl_devices() == 0) {
    choice.runner = std::make_unique<VitCpuRunner>();
    choice.why = "auto: no hardware GPU among EGL's devices (OpenGL would be a software rasterizer); the CPU path is faster";
    return choice;
  }
  try {
    choice.context = std::make_unique<HeadlessContext>();
  } catch (const Error& e) {
    if (requested == VitBackend::Gpu) throw Error(std::string("--backend gpu: ") + e.what());
    choice.runner = std::make_unique<VitCpuRunner>();
    choice.why = std::string("auto: no OpenGL 4.3 context (") + e.what() + "); the CPU path";
    return choice;
  }
  const std::string renderer = choice.context->info().renderer;
  if (requested == VitBackend::Auto && is_software_renderer(renderer)) {
    choice.context.reset();
    choice.runner = std::make_unique<VitCpuRunner>();
    choice.why = "auto: " + renderer + " is a software rasterizer; the CPU path is faster";
    return choice;
  }
  choice.runner = std::make_unique<VitGpuRunner>();
  choice.why = std::string(requested == VitBackend::Gpu ? "gpu: asked for" : "auto: a hardware GPU") + " (" + renderer + ")";
  return choice;
}

}  // namespace attnlab
