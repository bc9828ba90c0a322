#pragma once
// One headless OpenGL context (EGL, llvmpipe without a GPU) per GPU test suite, and the
// float32 tolerance the GPU is held to against the CPU reference.
#include "core/gpu/context.hpp"

#include <gtest/gtest.h>

#include <memory>

namespace attnlab::testing {

// |gpu − ref| <= kRel·|ref| + kAbs for weights: the GPU sums in float and llvmpipe's exp and
// sin are float approximations; the reference sums in double.
constexpr double kRel = 1e-4, kAbs = 1e-7;

class GpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { context_ = std::make_unique<HeadlessContext>(); }
  static void TearDownTestSuite() { context_.reset(); }
  static const HeadlessContext& context() { return *context_; }

 private:
  static inline std::unique_ptr<HeadlessContext> context_;
};

}  // namespace attnlab::testing
