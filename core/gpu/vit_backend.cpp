#include "core/gpu/vit_backend.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/gpu/vit_engine.hpp"
#include "core/vit/vit_auto.hpp"
#include "core/vit/vit_cpu.hpp"

namespace attnlab {
namespace {

// Auto without a GPU to time: the CPU path (timed for the record), `note` saying why.
VitRunnerChoice auto_cpu_only(const std::string& note) {
  VitRunnerChoice choice;
  auto runner = std::make_unique<VitAutoRunner>(std::make_unique<VitCpuRunner>(), nullptr, std::string(), note,
                                                cpu_model_name(), VitAutoStore());
  choice.auto_runner = runner.get();
  choice.runner = std::move(runner);
  // TRANSLATORS: %s says why the GPU was not timed; follows "auto: " (the backend's name).
  choice.why = "auto: " + text_format(_("%s; the CPU path is faster"), note.c_str());
  return choice;
}

}  // namespace

std::string VitRunnerChoice::after_run() const { return auto_runner ? vit_auto_summary(auto_runner->timing()) : why; }

VitRunnerChoice choose_vit_runner(VitBackend requested) {
  VitRunnerChoice choice;
  if (requested == VitBackend::Cpu) {
    choice.runner = std::make_unique<VitCpuRunner>();
    // TRANSLATORS: after "cpu: " (the backend's name): the user chose this backend.
    choice.why = std::string("cpu: ") + _("asked for");
    return choice;
  }
  // No GPU among EGL's devices: a context would be Mesa's llvmpipe, so auto need not make one.
  if (requested == VitBackend::Auto && hardware_egl_devices() == 0)
    return auto_cpu_only(_("no hardware GPU among EGL's devices, OpenGL would be a software rasterizer"));
  try {
    choice.context = std::make_unique<HeadlessContext>();
  } catch (const Error& e) {
    if (requested == VitBackend::Gpu) throw Error(std::string("--backend gpu: ") + e.what());  // i18n: English (the flag)
    return auto_cpu_only(text_format(_("no OpenGL 4.3 context: %s"), e.what()));
  }
  const std::string renderer = choice.context->info().renderer;
  if (requested == VitBackend::Auto && is_software_renderer(renderer)) {
    choice.context.reset();
    // TRANSLATORS: %s is the OpenGL renderer's name (llvmpipe ...).
    return auto_cpu_only(text_format(_("%s is a software rasterizer"), renderer.c_str()));
  }
  if (requested == VitBackend::Gpu) {
    choice.runner = std::make_unique<VitGpuRunner>();
    // TRANSLATORS: after "gpu: " (the backend's name): the user chose this backend; %s is the renderer's name.
    choice.why = "gpu: " + text_format(_("asked for (%s)"), renderer.c_str());
    return choice;
  }
  // A hardware GPU: both paths, the faster by measuring (remembered per renderer, CPU and shape).
  // The GPU runner (its shaders) is made only when measured, or remembered as the faster.
  auto make_gpu = [] { return std::unique_ptr<VitRunner>(std::make_unique<VitGpuRunner>()); };
  auto runner = std::make_unique<VitAutoRunner>(std::make_unique<VitCpuRunner>(), make_gpu, renderer, std::string(),
                                                cpu_model_name(), VitAutoStore());
  choice.auto_runner = runner.get();
  choice.runner = std::move(runner);
  // TRANSLATORS: after "auto: " (the backend's name); %s is the renderer's name.
  choice.why = "auto: " + text_format(_("a hardware GPU (%s), the faster path by measuring"), renderer.c_str());
  return choice;
}

}  // namespace attnlab
