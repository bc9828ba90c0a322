// Put before every compute shader, after the generated constants (core/hand_made/shader_constants.hpp)
// and the mask rule (mask_rule.glsl); see compile_embedded in core/gpu/gl.cpp.

const float NEG_INF = uintBitsToFloat(0xff800000u);
