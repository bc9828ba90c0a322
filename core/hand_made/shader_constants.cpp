#include "core/hand_made/shader_constants.hpp"

namespace attnlab::shader {

std::string shader_constant_defines() {
  std::string out;
#define ATTNLAB_SHADER_DEFINE(name, value) out += "#define " #name " " + std::to_string(name) + "\n";
  ATTNLAB_SHADER_CONSTANTS(ATTNLAB_SHADER_DEFINE)
#undef ATTNLAB_SHADER_DEFINE
  return out;
}

}  // namespace attnlab::shader
