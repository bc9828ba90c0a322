// attnlab-bench, issue 40: one frame of `attnlab video` on the CPU path.
//
//   VideoFrame/Cpu/S16_224  as attnlab video runs it, pipelined (issue 49): the next frame decoded
//                           (FramePrefetch) and the last one encoded (BackgroundWriter) while
//                           this one's forward runs. Per frame: decode the next frame of a
//                           224 × 224 H.264 clip (core/io/video.hpp;
//                           written once to a temporary file, 32 frames of random blocks, read
//                           again from the start when it ends), the forward pass of a ViT-S/16
//                           with random weights (D 384, 6 heads, 12 layers) at 224 (T = 197) on
//                           the CPU path, the CLS row of the last layer's heads' mean coloured
//                           and blended over the frame (core/io/overlay.hpp), and the frame encoded
//                           into an MP4 being written (libx264 where FFmpeg has it). Counters:
//                           frames_per_s (wall) and process_cpu_ms per frame (every thread).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <ctime>
#include <memory>
#include <optional>

#include "core/io/overlay.hpp"
#include "core/io/video.hpp"
#include "core/vit/vit_cpu.hpp"
#include "core/vit/vit_run.hpp"
#include "test_support.hpp"

namespace attnlab {
namespace {

void video_frame(benchmark::State& state) {
  const auto dir = std::filesystem::temp_directory_path() / ("attnlab-bench-video-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  try {
    const auto clip = dir / "clip.mp4";
    {
      VideoWriter w(clip, 224, 224, 25);
      for (int i = 0; i < 32; ++i) {
        Image frame = testing::random_image(28, 28, static_cast<unsigned>(i));
        Image big;  // 8 × 8 blocks: something H.264 compresses like a picture
        big.width = big.height = 224;
        big.rgb.resize(224 * 224 * 3);
        for (int y = 0; y < 224; ++y)
          for (int x = 0; x < 224; ++x)
            for (int c = 0; c < 3; ++c) big.at(x, y, c) = frame.at(x / 8, y / 8, c);
        w.write(image_to_rgb8(big));
      }
      w.finish();
    }
    auto model = std::make_shared<const VitModel>(testing::random_vit(384, 6, 12, 16, 0));
    VitCpuRunner cpu;
    const std::int64_t budget = vit_memory_budget();
    std::optional<VideoReader> reader = VideoReader::open_file(clip, video_max_pixels(budget));
    std::optional<FramePrefetch> prefetch(std::in_place, *reader);
    VideoWriter out(dir / "out.mp4", 224, 224, 25);
    BackgroundWriter encoder(out);
    const double cpu0 = testing::process_cpu_ms();
    for (auto _ : state) {
      std::optional<VideoFrame> frame = prefetch->next();
      if (!frame) {  // the clip again from the start (not timed apart: a reopening every 32 frames)
        prefetch.reset();
        reader = VideoReader::open_file(clip, video_max_pixels(budget));
        prefetch.emplace(*reader);
        frame = prefetch->next();
      }
      const VitRun run(model, frame->image, 224, cpu, budget);
      const std::vector<float> row = run.patch_row(run.layers() - 1, HeadChoice{-1, HeadFusion::Mean}, 0);
      encoder.write(overlay_heat_map(frame->image, row, run.grid().cols, run.grid().rows, kDefaultColormap,
                                     Normalization::MinMax, kDefaultOverlayOpacity, false));
    }
    encoder.finish();
    const double frames = static_cast<double>(state.iterations());
    state.counters["process_cpu_ms"] = (testing::process_cpu_ms() - cpu0) / frames;
    state.counters["frames_per_s"] = benchmark::Counter(frames, benchmark::Counter::kIsRate);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

const bool registered = [] {
  benchmark::RegisterBenchmark("VideoFrame/Cpu/S16_224", video_frame)->Unit(benchmark::kMillisecond)->UseRealTime();
  return true;
}();

}  // namespace
}  // namespace attnlab
