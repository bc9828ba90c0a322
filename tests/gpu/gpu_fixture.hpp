#pragma once
// One headless OpenGL context (EGL, llvmpipe without a GPU) per GPU test suite, and the
// float32 tolerance the GPU is held to against the CPU reference.
#include "core/gpu/context.hpp"
#include "core/gpu/debug.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace attnlab::testing {

// |gpu − ref| <= kRel·|ref| + kAbs for weights: the GPU sums in float and llvmpipe's exp and
// sin are float approximations; the reference sums in double.
constexpr double kRel = 1e-4, kAbs = 1e-7;

// A debug context in every build: any GL error the driver reports during a test fails it.
class GpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { context_ = std::make_unique<HeadlessContext>(HeadlessOptions{.debug = true}); }
  void SetUp() override { take_gl_errors(); }
  void TearDown() override {
    for (const std::string& e : take_gl_errors()) ADD_FAILURE() << "GL error: " << e;
  }
  static void TearDownTestSuite() { context_.reset(); }
  static const HeadlessContext& context() { return *context_; }

 private:
  static inline std::unique_ptr<HeadlessContext> context_;
};

}  // namespace attnlab::testing
