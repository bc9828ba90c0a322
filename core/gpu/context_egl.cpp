// HeadlessContext through EGL (Linux): a GPU through the device platform, else Mesa's
// surfaceless platform (llvmpipe). core/gpu/context_wgl.cpp is the Windows counterpart.
#include "core/gpu/context.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include <cstring>
#include <map>
#include <mutex>
#include <vector>

namespace attnlab {

namespace {

// An EGL display is one per process and platform, and eglTerminate ends every context on it,
// other threads' too (the renderer's and a ViT job's headless contexts share it): count who
// initialized it, terminate with the last one.
std::mutex display_mutex;
std::map<EGLDisplay, int> display_users;

bool initialize_display(EGLDisplay display, EGLint& major, EGLint& minor) {
  const std::lock_guard lock(display_mutex);
  if (!eglInitialize(display, &major, &minor)) return false;
  ++display_users[display];
  return true;
}

void release_display(EGLDisplay display) {
  const std::lock_guard lock(display_mutex);
  const auto it = display_users.find(display);
  if (it == display_users.end() || --it->second > 0) return;
  display_users.erase(it);
  eglTerminate(display);
}

}  // namespace

struct HeadlessContext::Impl {
  EGLDisplay display = EGL_NO_DISPLAY;
  EGLContext context = EGL_NO_CONTEXT;
  // Released in this order: unbound, destroyed, the display terminated (Mesa destroys its screen
  // and joins llvmpipe's threads), then this thread's EGL state. No driver thread outlives it.
  ~Impl() {
    if (display != EGL_NO_DISPLAY) {
      eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      if (context != EGL_NO_CONTEXT) eglDestroyContext(display, context);
      release_display(display);
    }
    eglReleaseThread();
  }
};

namespace {

bool has_extension(const char* list, const char* name) {
  if (!list) return false;
  const size_t n = std::strlen(name);
  for (const char* p = list; (p = std::strstr(p, name)); p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return true;
  return false;
}

// Initializes `display`, binds desktop OpenGL and creates a context; false with `why` on failure.
bool try_display(EGLDisplay display, const HeadlessOptions& o, EGLDisplay& out_display, EGLContext& out_context,
                 std::string& why) {
  if (display == EGL_NO_DISPLAY) {
    why = _("no display");
    return false;
  }
  EGLint major = 0, minor = 0;
  if (!initialize_display(display, major, minor)) {
    why = _("eglInitialize failed");
    return false;
  }
  if (!eglBindAPI(EGL_OPENGL_API)) {
    why = _("no desktop OpenGL");
    release_display(display);
    return false;
  }
  const char* exts = eglQueryString(display, EGL_EXTENSIONS);
  EGLConfig config = EGL_NO_CONFIG_KHR;
  if (!has_extension(exts, "EGL_KHR_no_config_context")) {
    const EGLint attrs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
    EGLint count = 0;
    if (!eglChooseConfig(display, attrs, &config, 1, &count) || count == 0) {
      why = _("no OpenGL config");
      release_display(display);
      return false;
    }
  }
  std::vector<EGLint> ctx;
  if (o.major > 0) ctx = {EGL_CONTEXT_MAJOR_VERSION, o.major, EGL_CONTEXT_MINOR_VERSION, o.minor};
  if (o.major > 3 || (o.major == 3 && o.minor >= 2))
    ctx.insert(ctx.end(), {EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT});
  if (o.debug) ctx.insert(ctx.end(), {EGL_CONTEXT_OPENGL_DEBUG, EGL_TRUE});
  ctx.push_back(EGL_NONE);
  EGLContext context = eglCreateContext(display, config, EGL_NO_CONTEXT, ctx.data());
  if (context == EGL_NO_CONTEXT) {
    why = text_format(_("cannot create an OpenGL %d.%d context"), o.major, o.minor);
    release_display(display);
    return false;
  }
  if (!eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) {
    why = _("cannot make the context current without a surface");
    eglDestroyContext(display, context);
    release_display(display);
    return false;
  }
  out_display = display;
  out_context = context;
  return true;
}

}  // namespace

int hardware_egl_devices() {
  const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  if (!has_extension(client, "EGL_EXT_platform_device") || !has_extension(client, "EGL_EXT_device_enumeration")) return 0;
  EGLDeviceEXT devices[16];
  EGLint count = 0;
  if (!eglQueryDevicesEXT(16, devices, &count)) return 0;
  int hardware = 0;
  for (EGLint d = 0; d < count; ++d)
    if (!has_extension(eglQueryDeviceStringEXT(devices[d], EGL_EXTENSIONS), "EGL_MESA_device_software")) ++hardware;
  return hardware;
}

HeadlessContext::HeadlessContext(const HeadlessOptions& options) : impl_(std::make_unique<Impl>()) {
  std::string tried;
  const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  bool ok = false;
  // 1. A real GPU through the device platform (software devices are left to step 2).
  if (has_extension(client, "EGL_EXT_platform_device") && has_extension(client, "EGL_EXT_device_enumeration")) {
    EGLDeviceEXT devices[16];
    EGLint count = 0;
    if (eglQueryDevicesEXT(16, devices, &count))
      for (EGLint d = 0; d < count && !ok; ++d) {
        const char* dev_exts = eglQueryDeviceStringEXT(devices[d], EGL_EXTENSIONS);
        if (has_extension(dev_exts, "EGL_MESA_device_software")) continue;
        std::string why;
        ok = try_display(eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devices[d], nullptr), options, impl_->display, impl_->context, why);
        if (ok) info_.platform = "EGL device " + std::to_string(d);
        // TRANSLATORS: an EGL device's number, then why it gave no OpenGL context.
        else tried += text_format(_("device %d: %s"), static_cast<int>(d), why.c_str()) + "; ";
      }
  }
  // 2. Mesa's surfaceless platform: llvmpipe on the CPU when there is no GPU.
  if (!ok && has_extension(client, "EGL_MESA_platform_surfaceless")) {
    std::string why;
    ok = try_display(eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr), options,
                     impl_->display, impl_->context, why);
    if (ok) info_.platform = "EGL surfaceless (Mesa)";
    else tried += "surfaceless: " + why + "; ";
  }
  if (!ok && options.require_compute && has_extension(client, "EGL_MESA_platform_surfaceless")) {
    // No 4.3 context: make whatever context the driver offers, to say what it has.
    HeadlessOptions any = options;
    any.major = any.minor = 0;
    std::string why;
    if (try_display(eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr), any,
                    impl_->display, impl_->context, why))
      check_compute_support();  // throws, naming the version found
  }
  if (!ok) {
    if (tried.empty()) tried = std::string(_("this EGL has neither the device nor the surfaceless platform")) + "; ";
    tried.resize(tried.size() - 2);
    throw Error(text_format(_("no headless OpenGL context could be made (%s); install Mesa's EGL (libegl-mesa0, "
                              "libgl1-mesa-dri)"),
                            tried.c_str()));
  }
  const std::string platform = info_.platform;
  info_ = options.require_compute ? check_compute_support() : current_gl_info();
  info_.platform = platform;
  if (options.debug) install_gl_debug_callback();
}

HeadlessContext::~HeadlessContext() = default;

} // namespace attnlab
