#pragma once
// GL errors made visible: a KHR_debug callback (core in OpenGL 4.3) that prints every GL
// error the driver reports and keeps them, so tests can fail on them. Debug builds
// (ATTNLAB_GL_DEBUG) ask for debug contexts and install it everywhere: headless contexts, the
// app's window, the CLI.
#include <string>
#include <vector>

namespace attnlab {

/// True in builds that install the callback on every context they make (Debug builds).
#ifdef ATTNLAB_GL_DEBUG
inline constexpr bool kGlDebugBuild = true;
#else
inline constexpr bool kGlDebugBuild = false;
#endif

/// Installs the callback on the current context, with synchronous output so a message names
/// the call that caused it. Messages of type error go to stderr as one line
/// "attnlab: GL error: …" and are kept for take_gl_errors(); other messages, and shader
/// compiler logs (compile_compute() reports those), are ignored.
/// Returns false when the context has no KHR_debug (OpenGL before 4.3 without the extension).
bool install_gl_debug_callback();

/// The GL errors reported since the last call (oldest first, at most 64 kept), and clears them.
/// Thread-safe; the callback may run on the driver's thread.
std::vector<std::string> take_gl_errors();

}  // namespace attnlab
