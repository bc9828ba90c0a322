#pragma once
// Shader sources embedded at build time from the files in shaders/ (see shaders/embed.cmake).
#include <optional>
#include <string_view>
#include <vector>

namespace attnlab {
/// The text of the shader file `name` (e.g. "row.comp"), without a #version line, or nullopt.
std::optional<std::string_view> embedded_shader(std::string_view name);
/// Every embedded file name, for diagnostics and tests.
std::vector<std::string_view> embedded_shader_names();
} // namespace attnlab
