#pragma once
// A headless OpenGL context for the CLI, the tests and the benchmark: EGL on Linux (no window,
// no X server; context_egl.cpp), a hidden window through WGL on Windows (context_wgl.cpp).
// Core assumes some context is current; the app makes its own with GLFW.
#include "core/gpu/debug.hpp"

#include <memory>
#include <string>

namespace attnlab {

/// What the context got, for logs and the UI.
struct GlInfo {
  std::string platform;  ///< "EGL device (…)" or "EGL surfaceless (Mesa)"
  std::string vendor, renderer, version;
  int major = 0, minor = 0;
};

/// Throws Error unless the current context is OpenGL 4.3 or newer (compute shaders), naming
/// what was found. Fills `info` from the current context.
GlInfo check_compute_support();

/// Reads version/renderer strings of the current context.
GlInfo current_gl_info();

/// How many EGL devices are hardware (a GPU; not Mesa's software device), without initializing
/// any display or loading a driver: 0 where EGL has no device enumeration. Cheap enough to ask
/// before choosing a path.
int hardware_egl_devices();

struct HeadlessOptions {
  int major = 4, minor = 3;  ///< version asked for (tests ask for 3.3 to simulate no compute)
  bool debug = kGlDebugBuild;  ///< a debug context with the GL error callback (gpu/debug.hpp)
  bool require_compute = true;
};

/// An EGL context made current on this thread for its lifetime. Tries the EGL device platform
/// first, hardware devices only (a real GPU), then Mesa's surfaceless platform (llvmpipe).
/// Throws Error with one line saying what was tried and what failed; with require_compute, also
/// when the context has no OpenGL 4.3 compute shaders (naming the version found).
class HeadlessContext {
 public:
  explicit HeadlessContext(const HeadlessOptions& options = {});
  ~HeadlessContext();
  HeadlessContext(const HeadlessContext&) = delete;
  HeadlessContext& operator=(const HeadlessContext&) = delete;

  const GlInfo& info() const { return info_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  GlInfo info_;
};

} // namespace attnlab
