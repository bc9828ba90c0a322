#pragma once
// A scope in which this thread's subnormal floats are flushed to zero (the trainers'; core/vit/vit_train.cpp,
// core/cnn/cnn_train.cpp).
#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

namespace attnlab {

/// Subnormal floats flushed to zero for a scope, on this thread (x86's MXCSR flags FTZ and DAZ,
/// as torch.set_flush_denormal(True)): the masked keys' weights, exp(−∞) in the vectorized exp,
/// and gradients that decay towards 0 would otherwise be subnormal, and arithmetic on them costs
/// a hundred times a normal number's. Nothing a model learns lives below 1e-38.
class FlushSubnormals {
 public:
#if defined(__SSE2__)
  FlushSubnormals() : before_(_mm_getcsr()) { _mm_setcsr(before_ | 0x8040u); }
  ~FlushSubnormals() { _mm_setcsr(before_); }
#else
  FlushSubnormals() = default;
#endif
  FlushSubnormals(const FlushSubnormals&) = delete;
  FlushSubnormals& operator=(const FlushSubnormals&) = delete;

 private:
  [[maybe_unused]] unsigned before_ = 0;
};

}  // namespace attnlab
