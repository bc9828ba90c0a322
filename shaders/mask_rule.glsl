// The mask rule of section 26.10 (docs/MATH.md, "Masks"), written once for both sides: every
// compute shader gets this file before its own text (core/gpu/gl.cpp), and the CPU reference
// compiles the same lines as C++ (core/hand_made/mask.cpp includes this file), so the GPU and the
// reference cannot disagree on which keys a query may see. Keep it in the subset that both
// languages read: ints, `uint`, `abs`, no vectors.
//
// May query i attend to key j? kind = MASK_*, radius = the window's radius in patches,
// cols = the grid's columns, keep_j = the key's keep flag (random and painted masks drop the
// same keys for every query; 1 = kept).
bool mask_allowed(int kind, int radius, int cols, int i, int j, uint keep_j) {
  if (kind == MASK_CAUSAL) return j <= i;
  if (kind == MASK_STRICT) return j < i;
  if (kind == MASK_WINDOW) return abs(i % cols - j % cols) <= radius && abs(i / cols - j / cols) <= radius;
  if (kind == MASK_RANDOM || kind == MASK_PAINTED) return keep_j != 0u;
  return true;
}
