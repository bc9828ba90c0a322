#include "core/gpu/debug.hpp"

#include <epoxy/gl.h>

#include <cstdio>
#include <mutex>
#include <utility>

namespace attnlab {

namespace {

std::mutex errors_mutex;
std::vector<std::string> errors;

void GLAPIENTRY on_gl_message(GLenum source, GLenum type, GLuint id, GLenum /*severity*/, GLsizei length,
                              const GLchar* message, const void* /*user*/) {
  // A shader that fails to compile is not a misuse of the API: compile_compute() throws with
  // the driver's log (Mesa also sends that log here, typed as an error).
  if (type != GL_DEBUG_TYPE_ERROR || source == GL_DEBUG_SOURCE_SHADER_COMPILER) return;
  std::string text = length >= 0 ? std::string(message, static_cast<size_t>(length)) : std::string(message);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  text += " (id " + std::to_string(id) + ")";
  std::fprintf(stderr, "attnlab: GL error: %s\n", text.c_str());  // i18n: English (a developers' debug log, debug builds only)
  const std::lock_guard lock(errors_mutex);
  if (errors.size() < 64) errors.push_back(std::move(text));
}

}  // namespace

bool install_gl_debug_callback() {
  if (!(epoxy_gl_version() >= 43 || epoxy_has_gl_extension("GL_KHR_debug"))) return false;
  glEnable(GL_DEBUG_OUTPUT);
  glEnable(GL_DEBUG_OUTPUT_SYNCHRONOUS);
  glDebugMessageCallback(on_gl_message, nullptr);
  // Only errors are wanted; leave the others off so the driver does not format them.
  glDebugMessageControl(GL_DONT_CARE, GL_DONT_CARE, GL_DONT_CARE, 0, nullptr, GL_FALSE);
  glDebugMessageControl(GL_DONT_CARE, GL_DEBUG_TYPE_ERROR, GL_DONT_CARE, 0, nullptr, GL_TRUE);
  return true;
}

std::vector<std::string> take_gl_errors() {
  const std::lock_guard lock(errors_mutex);
  return std::exchange(errors, {});
}

}  // namespace attnlab
