// HeadlessContext on Windows: WGL has no surfaceless contexts, so a hidden 16 × 16 window gives
// the device context, a legacy context finds wglCreateContextAttribsARB, and that makes the
// OpenGL 4.3 core context (WGL_ARB_create_context_profile), as GLFW does for a window.
// core/gpu/context_egl.cpp is the Linux counterpart.
#include "core/gpu/context.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <windows.h>

#include <epoxy/gl.h>
#include <epoxy/wgl.h>

#include <mutex>

// libepoxy keeps its WGL dispatch tables in thread-local storage that its DllMain sets up for
// every thread. Linked statically (the .exe needs no DLL) nobody calls that DllMain, so a TLS
// callback of this program does, for the process and for each thread, as Windows would for the DLL.
extern "C" BOOL WINAPI DllMain(HINSTANCE dll, DWORD reason, LPVOID reserved);
namespace {
void NTAPI epoxy_thread_callback(PVOID module, DWORD reason, PVOID reserved) {
  DllMain(static_cast<HINSTANCE>(module), reason, reserved);
}
}  // namespace
extern "C" __attribute__((section(".CRT$XLF"), used)) const PIMAGE_TLS_CALLBACK attnlab_epoxy_tls_callback =
    epoxy_thread_callback;

namespace attnlab {

namespace {
const wchar_t* const kWindowClass = L"attnlab_headless_gl";

void register_window_class() {
  static std::once_flag once;
  std::call_once(once, [] {
    WNDCLASSEXW wc{};
    wc.cbSize = sizeof wc;
    wc.style = CS_OWNDC;
    wc.lpfnWndProc = DefWindowProcW;
    wc.hInstance = GetModuleHandleW(nullptr);
    wc.lpszClassName = kWindowClass;
    RegisterClassExW(&wc);
  });
}
}  // namespace

struct HeadlessContext::Impl {
  HWND window = nullptr;
  HDC dc = nullptr;
  HGLRC context = nullptr;
  ~Impl() {
    if (context) {
      wglMakeCurrent(nullptr, nullptr);
      wglDeleteContext(context);
    }
    if (dc) ReleaseDC(window, dc);
    if (window) DestroyWindow(window);
  }
};

int hardware_egl_devices() { return 0; }

HeadlessContext::HeadlessContext(const HeadlessOptions& options) : impl_(std::make_unique<Impl>()) {
  auto fail = [](const std::string& why) {
    throw Error(text_format(_("no headless OpenGL context could be made (WGL: %s); update the graphics driver"), why.c_str()));
  };
  register_window_class();
  impl_->window = CreateWindowExW(0, kWindowClass, L"Attention Lab (headless)", WS_OVERLAPPEDWINDOW, 0, 0, 16, 16, nullptr,
                                  nullptr, GetModuleHandleW(nullptr), nullptr);
  if (!impl_->window) fail(_("cannot create a hidden window"));
  impl_->dc = GetDC(impl_->window);
  PIXELFORMATDESCRIPTOR pfd{};
  pfd.nSize = sizeof pfd;
  pfd.nVersion = 1;
  pfd.dwFlags = PFD_DRAW_TO_WINDOW | PFD_SUPPORT_OPENGL | PFD_DOUBLEBUFFER;
  pfd.iPixelType = PFD_TYPE_RGBA;
  pfd.cColorBits = 32;
  pfd.cDepthBits = 24;
  pfd.iLayerType = PFD_MAIN_PLANE;
  const int format = ChoosePixelFormat(impl_->dc, &pfd);
  if (format == 0 || !SetPixelFormat(impl_->dc, format, &pfd)) fail(_("no OpenGL pixel format"));
  // A legacy context first: wglCreateContextAttribsARB is only found with one current.
  HGLRC legacy = wglCreateContext(impl_->dc);
  if (!legacy || !wglMakeCurrent(impl_->dc, legacy)) fail(_("cannot create an OpenGL context"));
  if (options.major > 0) {
    if (!epoxy_has_wgl_extension(impl_->dc, "WGL_ARB_create_context_profile")) {
      wglMakeCurrent(nullptr, nullptr);
      wglDeleteContext(legacy);
      fail(_("the driver cannot make core-profile contexts"));
    }
    int flags = options.debug ? WGL_CONTEXT_DEBUG_BIT_ARB : 0;
    const int attrs[] = {WGL_CONTEXT_MAJOR_VERSION_ARB, options.major, WGL_CONTEXT_MINOR_VERSION_ARB, options.minor,
                         WGL_CONTEXT_PROFILE_MASK_ARB,
                         (options.major > 3 || (options.major == 3 && options.minor >= 2)) ? WGL_CONTEXT_CORE_PROFILE_BIT_ARB
                                                                                          : WGL_CONTEXT_COMPATIBILITY_PROFILE_BIT_ARB,
                         WGL_CONTEXT_FLAGS_ARB, flags, 0};
    impl_->context = wglCreateContextAttribsARB(impl_->dc, nullptr, attrs);
    wglMakeCurrent(nullptr, nullptr);
    wglDeleteContext(legacy);
    if (!impl_->context) {
      if (!options.require_compute) fail(text_format(_("cannot create an OpenGL %d.%d context"), options.major, options.minor));
      // Say what the driver has: its default context's version.
      HGLRC any = wglCreateContext(impl_->dc);
      if (any && wglMakeCurrent(impl_->dc, any)) {
        try {
          check_compute_support();  // throws, naming the version found
        } catch (...) {
          wglMakeCurrent(nullptr, nullptr);
          wglDeleteContext(any);
          throw;
        }
        wglMakeCurrent(nullptr, nullptr);
      }
      if (any) wglDeleteContext(any);
      fail(text_format(_("cannot create an OpenGL %d.%d context"), options.major, options.minor));
    }
  } else {
    impl_->context = legacy;
  }
  if (!wglMakeCurrent(impl_->dc, impl_->context)) fail(_("cannot make the context current"));
  info_ = options.require_compute ? check_compute_support() : current_gl_info();
  info_.platform = "WGL hidden window";
  if (options.debug) install_gl_debug_callback();
}

HeadlessContext::~HeadlessContext() = default;

}  // namespace attnlab
