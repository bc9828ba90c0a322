// Inserted after the #version line of every compute shader (see core/gpu/gl.cpp).

// Mask kinds, in the order of attnlab::MaskKind (core/settings.hpp). Section 26.10.
#define MASK_NONE 0
#define MASK_CAUSAL 1
#define MASK_STRICT 2
#define MASK_WINDOW 3
#define MASK_RANDOM 4
#define MASK_PAINTED 5

// May query i attend to key j? cols = grid columns; keep_j = the key's keep flag (random and
// painted masks drop the same keys for every query).
bool mask_allowed(int kind, int radius, int cols, int i, int j, uint keep_j) {
  if (kind == MASK_CAUSAL) return j <= i;
  if (kind == MASK_STRICT) return j < i;
  if (kind == MASK_WINDOW) return abs(i % cols - j % cols) <= radius && abs(i / cols - j / cols) <= radius;
  if (kind == MASK_RANDOM || kind == MASK_PAINTED) return keep_j != 0u;
  return true;
}

const float NEG_INF = uintBitsToFloat(0xff800000u);
