#include "core/gpu/context.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <epoxy/gl.h>

#include <cstdio>

namespace attnlab {

GlInfo current_gl_info() {
  GlInfo info;
  auto str = [](GLenum e) {
    const auto* s = reinterpret_cast<const char*>(glGetString(e));
    return std::string(s ? s : "?");
  };
  info.vendor = str(GL_VENDOR);
  info.renderer = str(GL_RENDERER);
  info.version = str(GL_VERSION);
  glGetIntegerv(GL_MAJOR_VERSION, &info.major);
  glGetIntegerv(GL_MINOR_VERSION, &info.minor);
  if (info.major == 0) std::sscanf(info.version.c_str(), "%d.%d", &info.major, &info.minor);
  return info;
}

GlInfo check_compute_support() {
  GlInfo info = current_gl_info();
  if (info.major < 4 || (info.major == 4 && info.minor < 3))
    // TRANSLATORS: %d.%d is the OpenGL version found; then the driver's version string and the renderer's name.
    throw Error(text_format(_("OpenGL 4.3 with compute shaders is needed, but this context is OpenGL %d.%d ('%s' on '%s')"),
                            info.major, info.minor, info.version.c_str(), info.renderer.c_str()));
  return info;
}

} // namespace attnlab
