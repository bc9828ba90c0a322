// libFuzzer target: the image loader (core/io/image.hpp) on arbitrary bytes.
// A file is either an image that keeps the loader's promises or one attnlab::Error with one
// line; anything else (a crash, a sanitizer report, another exception, a broken promise) is a
// finding. Seeds: the bundled photos and tests/fuzz/corpus/image; findings are kept in
// tests/fuzz/regressions/image and replayed by the fuzz_image_loader_corpus test.
#include "tests/fuzz/fuzz_support.hpp"
#include "core/base/error.hpp"
#include "core/io/image.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

namespace {

[[noreturn]] void broken(const std::string& what) { attnlab::fuzz::report_finding("fuzz_image_loader", what); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  attnlab::Image image;
  try {
    image = attnlab::load_image_from_memory(std::span<const std::uint8_t>(data, size), "fuzz input");
  } catch (const attnlab::Error& e) {
    const std::string message = e.what();
    if (message.empty() || message.find('\n') != std::string::npos) broken("an error that is not one line: " + message);
    return 0;
  }
  if (image.width <= 0 || image.height <= 0) broken("an image without pixels was accepted");
  if (static_cast<std::int64_t>(image.width) * image.height > attnlab::kMaxImagePixels) broken("over the pixel cap");
  if (image.rgb.size() != static_cast<std::size_t>(image.width) * image.height * 3) broken("rgb has the wrong size");
  for (const float v : image.rgb)
    if (!(v >= 0.0f && v <= 1.0f)) broken("a value outside [0,1]");
  return 0;
}
