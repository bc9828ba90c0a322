// Video in and out in a build configured with -DATTNLAB_VIDEO=OFF (no FFmpeg's libraries):
// every entry point of core/io/video.hpp says so in one line; no camera is listed.
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/io/video.hpp"

namespace attnlab {
namespace {
[[noreturn]] void no_video() {
  // TRANSLATORS: -DATTNLAB_VIDEO=OFF is a build option: keep it as it is.
  throw Error(_("video is not in this build of Attention Lab (built with -DATTNLAB_VIDEO=OFF: no FFmpeg)"));
}
}  // namespace

struct VideoReader::Impl {};
struct VideoWriter::Impl {
  int frames = 0;
  std::string encoder_name;
};

VideoReader::VideoReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
VideoReader::VideoReader(VideoReader&&) noexcept = default;
VideoReader& VideoReader::operator=(VideoReader&&) noexcept = default;
VideoReader::~VideoReader() = default;
const VideoInfo& VideoReader::info() const { no_video(); }
std::optional<VideoFrame> VideoReader::next() { no_video(); }
VideoReader VideoReader::open_file(const std::filesystem::path&, std::int64_t) { no_video(); }
VideoReader VideoReader::open_camera(const std::string&, std::int64_t) { no_video(); }
std::vector<CameraInfo> list_cameras() { return {}; }
std::string video_encoder_for(const std::filesystem::path&) { no_video(); }

VideoWriter::VideoWriter(const std::filesystem::path&, int, int, double, bool) { no_video(); }
VideoWriter::VideoWriter(VideoWriter&&) noexcept = default;
VideoWriter& VideoWriter::operator=(VideoWriter&&) noexcept = default;
VideoWriter::~VideoWriter() = default;
void VideoWriter::write(std::span<const std::uint8_t>) { no_video(); }
void VideoWriter::finish() { no_video(); }
int VideoWriter::frames() const { return 0; }
const std::string& VideoWriter::encoder() const { no_video(); }

}  // namespace attnlab
