// libFuzzer target: the video reader (core/io/video.hpp) on arbitrary bytes, written to a file
// (the reader opens files, as FFmpeg's demuxers do). A file either gives frames that keep the
// reader's promises or one attnlab::Error with one line; anything else (a crash, a sanitizer
// report, another exception, a broken promise, a frame over the limit) is a finding. Seeds:
// tests/fuzz/corpus/video (tiny MP4, GIF, AVI and Y4M files made with the ffmpeg command);
// findings are kept in tests/fuzz/regressions/video and replayed by fuzz_video_replay.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/fuzz/fuzz_support.hpp"
#include "core/base/error.hpp"
#include "core/io/video.hpp"

namespace {

[[noreturn]] void broken(const std::string& what) { attnlab::fuzz::report_finding("fuzz_video", what); }

constexpr std::int64_t kMaxPixels = 1 << 20;  // small: the fuzzer's memory limit stays far

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path =
      (std::filesystem::temp_directory_path() / ("attnlab-fuzz-video-" + std::to_string(::getpid()) + ".bin")).string();
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    if (size) std::fwrite(data, 1, size, f);
    std::fclose(f);
  } else {
    return 0;
  }
  try {
    attnlab::VideoReader reader = attnlab::VideoReader::open_file(path, kMaxPixels);
    int frames = 0;
    while (auto frame = reader.next()) {
      const attnlab::Image& im = frame->image;
      if (im.width <= 0 || im.height <= 0) broken("a frame without a size");
      if (static_cast<std::int64_t>(im.width) * im.height > kMaxPixels) broken("a frame over the limit");
      if (im.rgb.size() != static_cast<std::size_t>(im.width) * im.height * 3)
        broken("a frame's pixels do not fit its size");
      for (float v : im.rgb)
        if (!(v >= 0.0f && v <= 1.0f)) broken("a value outside [0,1]");
      if (!std::isfinite(frame->time)) broken("a frame time that is not finite");
      if (++frames > 2000) break;  // a long stream: enough of it
    }
  } catch (const attnlab::Error& e) {
    const std::string message = e.what();
    if (message.empty() || message.find('\n') != std::string::npos) broken("an error message that is not one line");
  }
  return 0;
}
