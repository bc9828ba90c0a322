#include "core/io/video.hpp"

#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/base/translate.hpp"
#include "core/io/files.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavdevice/avdevice.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include <algorithm>
#include <cmath>
#include <mutex>
#include <system_error>

namespace attnlab {
namespace {

std::string av_error(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, text, sizeof text);
  return text;
}

// FFmpeg's own log would print its warnings on stderr beside our one line: errors only, and
// only when ATTNLAB_FFMPEG_LOG is set (for debugging a file).
void quiet_ffmpeg() {
  static std::once_flag once;
  std::call_once(once, [] { av_log_set_level(std::getenv("ATTNLAB_FFMPEG_LOG") ? AV_LOG_INFO : AV_LOG_QUIET); });
}

std::string size_text(std::int64_t w, std::int64_t h) { return std::to_string(w) + "x" + std::to_string(h); }

// libavdevice's camera input on this system: DirectShow, AVFoundation or Video4Linux2.
const char* camera_driver() {
#if defined(_WIN32)
  return "dshow";
#elif defined(__APPLE__)
  return "avfoundation";
#else
  return "v4l2";
#endif
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Reading

struct VideoReader::Impl {
  std::string what;  // "'clip.mp4'" or "the camera '/dev/video0'"
  std::int64_t max_pixels = 0;
  AVFormatContext* fmt = nullptr;
  AVCodecContext* dec = nullptr;
  SwsContext* sws = nullptr;
  AVPacket* packet = nullptr;
  AVFrame* frame = nullptr;
  int stream = -1;
  bool flushing = false;
  std::int64_t index = 0;
  std::string last_error;
  VideoInfo info;

  ~Impl() {
    sws_freeContext(sws);
    av_frame_free(&frame);
    av_packet_free(&packet);
    avcodec_free_context(&dec);
    avformat_close_input(&fmt);
  }

  [[noreturn]] void fail(const std::string& why) const { throw Error(what + ": " + why); }

  void check_size(std::int64_t w, std::int64_t h, const char* where) const {
    if (w > 0 && h > 0 && w * h > max_pixels)
      // TRANSLATORS: %1$s is what was measured ("its picture", "a frame"), %2$s a size ("1920x1080"), %3$lld the
      // largest number of pixels accepted. ATTNLAB_MEMORY_BUDGET_MB is an environment variable: keep it.
      fail(text_format(_("%s is %s pixels, more than the %lld accepted (the memory budget, ATTNLAB_MEMORY_BUDGET_MB); "
                         "nothing was decoded"),
                       where, size_text(w, h).c_str(), static_cast<long long>(max_pixels)));
  }

  // Every step after the demuxer is open: the same for a file and a camera.
  void open_stream() {
    // The header's sizes, checked before the streams are probed (probing decodes frames).
    for (unsigned s = 0; s < fmt->nb_streams; ++s) {
      const AVCodecParameters* p = fmt->streams[s]->codecpar;
      // TRANSLATORS: a video file's header; completed by "is 1920x1080 pixels, more than the ... accepted".
      if (p->codec_type == AVMEDIA_TYPE_VIDEO) check_size(p->width, p->height, _("its header says the picture"));
    }
    if (const int rc = avformat_find_stream_info(fmt, nullptr); rc < 0)
      // TRANSLATORS: a video file's streams (video, audio); %s is FFmpeg's reason.
      fail(text_format(_("cannot read its streams (%s)"), av_error(rc).c_str()));
    const AVCodec* codec = nullptr;
    stream = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    if (stream == AVERROR_STREAM_NOT_FOUND) fail(_("it has no video stream"));
    if (stream == AVERROR_DECODER_NOT_FOUND || (stream >= 0 && !codec)) {
      // The stream exists but its codec is unknown to this FFmpeg: name the stream's tag.
      const AVCodecParameters* par = nullptr;
      for (unsigned s = 0; s < fmt->nb_streams && !par; ++s)
        if (fmt->streams[s]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO) par = fmt->streams[s]->codecpar;
      if (!par) fail(_("it has no video stream"));
      const char* name = avcodec_get_name(par->codec_id);
      char tag[AV_FOURCC_MAX_STRING_SIZE] = {};
      av_fourcc_make_string(tag, par->codec_tag);
      // TRANSLATORS: a video stream's FourCC tag, e.g. "tag XVID".
      const std::string codec_text = par->codec_id == AV_CODEC_ID_NONE ? text_format(_("tag %s"), tag) : std::string(name);
      // TRANSLATORS: %s is a codec's name ("h264") or its tag ("tag XVID").
      fail(text_format(_("its video codec (%s) cannot be decoded by this FFmpeg"), codec_text.c_str()));
    }
    if (stream < 0) fail(text_format(_("cannot find a video stream (%s)"), av_error(stream).c_str()));
    const AVCodecParameters* par = fmt->streams[stream]->codecpar;
    // TRANSLATORS: a video's picture; completed by "is 1920x1080 pixels, more than the ... accepted".
    check_size(par->width, par->height, _("its picture"));
    dec = avcodec_alloc_context3(codec);
    if (!dec) fail(_("out of memory opening the decoder"));
    if (const int rc = avcodec_parameters_to_context(dec, par); rc < 0)
      fail(text_format(_("cannot set up the decoder (%s)"), av_error(rc).c_str()));
    dec->max_pixels = max_pixels;  // the decoder itself refuses a larger frame
    if (const int rc = avcodec_open2(dec, codec, nullptr); rc < 0)
      // TRANSLATORS: %1$s is a codec's name ("h264"), %2$s FFmpeg's reason.
      fail(text_format(_("cannot open its %s decoder (%s)"), codec->name, av_error(rc).c_str()));
    packet = av_packet_alloc();
    frame = av_frame_alloc();
    if (!packet || !frame) fail(_("out of memory"));
    AVStream* st = fmt->streams[stream];
    info.width = par->width;
    info.height = par->height;
    const AVRational rate = av_guess_frame_rate(fmt, st, nullptr);
    info.fps = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 0.0;
    if (st->duration > 0)
      info.duration = static_cast<double>(st->duration) * av_q2d(st->time_base);
    else if (fmt->duration > 0)
      info.duration = static_cast<double>(fmt->duration) / AV_TIME_BASE;
    info.codec = codec->name;
    info.format = fmt->iformat ? fmt->iformat->name : "";
  }

  // Reads packets until the decoder has been given one of the video stream (or the end).
  void feed() {
    while (true) {
      const int rc = av_read_frame(fmt, packet);
      if (rc == AVERROR_EOF || (rc < 0 && avio_feof(fmt->pb))) {
        flushing = true;
        avcodec_send_packet(dec, nullptr);
        return;
      }
      if (rc < 0)
        // TRANSLATORS: %1$lld counts the frames read so far; %2$s is FFmpeg's reason.
        fail(text_format(_("reading failed after %lld frame(s) (%s)"), static_cast<long long>(index), av_error(rc).c_str()));
      if (packet->stream_index != stream) {
        av_packet_unref(packet);
        continue;
      }
      const int sent = avcodec_send_packet(dec, packet);
      av_packet_unref(packet);
      if (sent < 0 && sent != AVERROR(EAGAIN))
        last_error = av_error(sent);  // damaged: the decoder conceals what it can
      return;
    }
  }

  VideoFrame convert() {
    const int w = frame->width, h = frame->height;
    if (w <= 0 || h <= 0) fail(_("a frame has no size"));
    // TRANSLATORS: one picture of a video; completed by "is 1920x1080 pixels, more than the ... accepted".
    check_size(w, h, _("a frame"));
    const auto src_format = static_cast<AVPixelFormat>(frame->format);
    sws = sws_getCachedContext(sws, w, h, src_format, w, h, AV_PIX_FMT_RGB24, SWS_BICUBIC, nullptr, nullptr, nullptr);
    if (!sws)
      // TRANSLATORS: %s is a pixel format's name ("yuv420p").
      fail(text_format(_("cannot convert its pixel format %s to RGB"),
                       av_get_pix_fmt_name(src_format) ? av_get_pix_fmt_name(src_format) : "?"));
    // The frame's own colour matrix and range, as ffmpeg's scale filter reads them.
    const int space = frame->colorspace == AVCOL_SPC_UNSPECIFIED ? SWS_CS_DEFAULT : static_cast<int>(frame->colorspace);
    const bool full = frame->color_range == AVCOL_RANGE_JPEG || src_format == AV_PIX_FMT_YUVJ420P ||
                      src_format == AV_PIX_FMT_YUVJ422P || src_format == AV_PIX_FMT_YUVJ444P;
    sws_setColorspaceDetails(sws, sws_getCoefficients(space), full ? 1 : 0, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0,
                             1 << 16, 1 << 16);
    // swscale's vector code writes whole blocks: past the end of a row (a frame 1 pixel wide
    // overran a tight buffer; found by tests/fuzz/fuzz_video.cpp), so its destination is
    // FFmpeg's own padded, aligned buffer, copied out row by row.
    const int stride = FFALIGN(w * 3, 64);
    const std::size_t bytes = static_cast<std::size_t>(stride) * (static_cast<std::size_t>(h) + 1) + 256;
    std::unique_ptr<std::uint8_t, void (*)(void*)> padded(static_cast<std::uint8_t*>(av_mallocz(bytes)), av_free);
    if (!padded) fail(_("out of memory converting a frame"));
    std::uint8_t* dst[4] = {padded.get(), nullptr, nullptr, nullptr};
    const int dst_stride[4] = {stride, 0, 0, 0};
    sws_scale(sws, frame->data, frame->linesize, 0, h, dst, dst_stride);
    std::vector<std::uint8_t> rgb8(static_cast<std::size_t>(w) * h * 3);
    for (int y = 0; y < h; ++y)
      std::copy_n(padded.get() + static_cast<std::size_t>(y) * stride, static_cast<std::size_t>(w) * 3,
                  rgb8.begin() + static_cast<std::ptrdiff_t>(y) * w * 3);
    VideoFrame out;
    out.image = image_from_rgb8(w, h, rgb8);
    out.index = index++;
    const std::int64_t pts = frame->best_effort_timestamp;
    const AVStream* st = fmt->streams[stream];
    const std::int64_t start = st->start_time == AV_NOPTS_VALUE ? 0 : st->start_time;
    out.time = pts == AV_NOPTS_VALUE ? (info.fps > 0 ? static_cast<double>(out.index) / info.fps : 0.0)
                                     : static_cast<double>(pts - start) * av_q2d(st->time_base);
    av_frame_unref(frame);
    return out;
  }

  std::optional<VideoFrame> next() {
    while (true) {
      const int rc = avcodec_receive_frame(dec, frame);
      if (rc == 0) return convert();
      if (rc == AVERROR_EOF) {
        if (index == 0)
          fail(_("no frame could be decoded") + (last_error.empty() ? std::string() : " (" + last_error + ")"));
        return std::nullopt;
      }
      if (rc != AVERROR(EAGAIN)) {
        // TRANSLATORS: one picture of a video; completed by "is 1920x1080 pixels, more than the ... accepted".
        if (rc == AVERROR(ERANGE) || rc == AVERROR(EINVAL)) check_size(dec->width, dec->height, _("a frame"));
        // TRANSLATORS: %1$lld counts the frames decoded so far; %2$s is FFmpeg's reason.
        fail(text_format(_("decoding failed after %lld frame(s) (%s)"), static_cast<long long>(index), av_error(rc).c_str()));
      }
      if (flushing) return std::nullopt;
      feed();
    }
  }
};

VideoReader::VideoReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
VideoReader::VideoReader(VideoReader&&) noexcept = default;
VideoReader& VideoReader::operator=(VideoReader&&) noexcept = default;
VideoReader::~VideoReader() = default;
const VideoInfo& VideoReader::info() const { return impl_->info; }
std::optional<VideoFrame> VideoReader::next() { return impl_->next(); }

VideoReader VideoReader::open_file(const std::filesystem::path& path, std::int64_t max_pixels) {
  quiet_ffmpeg();
  auto impl = std::make_unique<Impl>();
  impl->what = "'" + platform::utf8(path) + "'";
  impl->max_pixels = max_pixels;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) impl->fail(_("no such file"));
  // TRANSLATORS: follows a file's name: "'clip.mp4': is a folder, not a video file".
  if (std::filesystem::is_directory(path, ec)) impl->fail(_("is a folder, not a video file"));
  if (std::filesystem::file_size(path, ec) == 0 && !ec) impl->fail(_("the file is empty (0 bytes)"));
  if (const int rc = avformat_open_input(&impl->fmt, platform::utf8(path).c_str(), nullptr, nullptr); rc < 0)
    impl->fail(text_format(_("not a video file FFmpeg can read, or its header is damaged (%s)"), av_error(rc).c_str()));
  impl->open_stream();
  return VideoReader(std::move(impl));
}

VideoReader VideoReader::open_camera(const std::string& device, std::int64_t max_pixels) {
  quiet_ffmpeg();
  avdevice_register_all();
  auto impl = std::make_unique<Impl>();
  // TRANSLATORS: %s is a camera's device name ("/dev/video0"); errors follow it ("the camera '/dev/video0': ...").
  impl->what = text_format(_("the camera '%s'"), device.c_str());
  impl->max_pixels = max_pixels;
  const char* driver = camera_driver();
  const AVInputFormat* input = av_find_input_format(driver);
  // TRANSLATORS: %s is FFmpeg's camera driver ("v4l2", "dshow", "avfoundation").
  if (!input) impl->fail(text_format(_("this FFmpeg has no %s camera input"), driver));
  // DirectShow names its input "video=NAME" (FFmpeg's dshow device); list_cameras() gives NAME.
  const std::string url = std::string(driver) == "dshow" && !device.starts_with("video=") ? "video=" + device : device;
  if (const int rc = avformat_open_input(&impl->fmt, url.c_str(), input, nullptr); rc < 0)
    // TRANSLATORS: follows a camera's name; %s is FFmpeg's reason.
    impl->fail(text_format(_("cannot be opened (%s)"), av_error(rc).c_str()));
  impl->open_stream();
  return VideoReader(std::move(impl));
}

std::vector<CameraInfo> list_cameras() {
  quiet_ffmpeg();
  avdevice_register_all();
  std::vector<CameraInfo> out;
  const char* driver = camera_driver();
  const AVInputFormat* input = av_find_input_format(driver);
  if (!input) return out;
  AVDeviceInfoList* list = nullptr;
  if (avdevice_list_input_sources(input, nullptr, nullptr, &list) >= 0 && list) {
    for (int i = 0; i < list->nb_devices; ++i) {
      const AVDeviceInfo* d = list->devices[i];
      bool video = d->nb_media_types == 0;
      for (int t = 0; t < d->nb_media_types; ++t) video = video || d->media_types[t] == AVMEDIA_TYPE_VIDEO;
      if (video && d->device_name)
        out.push_back({d->device_name, d->device_description ? d->device_description : d->device_name});
    }
  }
  avdevice_free_list_devices(&list);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Writing

std::string video_encoder_for(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".gif") return "gif";
  if (ext == ".mp4") return avcodec_find_encoder_by_name("libx264") ? "libx264" : "mpeg4";
  // TRANSLATORS: %1$s is a file name, %2$s its extension (".avi").
  throw Error(text_format(_("'%s': a video is written as .mp4 or .gif, not '%s'"), platform::utf8(path).c_str(), ext.c_str()));
}

struct VideoWriter::Impl {
  std::filesystem::path path, temp;
  bool overwrite = false, finished = false, gif = false;
  std::string encoder_name;
  int width = 0, height = 0;  // input frames
  int out_w = 0, out_h = 0;   // encoded (even for yuv420p)
  AVRational rate{0, 1};
  AVFormatContext* oc = nullptr;
  AVStream* st = nullptr;
  AVCodecContext* enc = nullptr;
  SwsContext* sws = nullptr;
  AVFrame* frame = nullptr;  // what the encoder (MP4) or the filter graph (GIF) takes
  AVFrame* filtered = nullptr;
  AVFrame* rgb = nullptr;  // MP4: the caller's RGB in a padded buffer for swscale
  AVPacket* packet = nullptr;
  AVFilterGraph* graph = nullptr;
  AVFilterContext* source = nullptr;
  AVFilterContext* sink = nullptr;
  std::int64_t pts = 0;
  int frames = 0;

  ~Impl() {
    avfilter_graph_free(&graph);
    sws_freeContext(sws);
    av_frame_free(&frame);
    av_frame_free(&filtered);
    av_frame_free(&rgb);
    av_packet_free(&packet);
    avcodec_free_context(&enc);
    if (oc) {
      if (oc->pb) avio_closep(&oc->pb);
      avformat_free_context(oc);
    }
    if (!finished && !temp.empty()) {
      std::error_code ec;
      std::filesystem::remove(temp, ec);
    }
  }

  [[noreturn]] void fail(const std::string& why) const {
    // TRANSLATORS: %1$s is a file name, %2$s the reason.
    throw Error(text_format(_("cannot write '%s': %s"), platform::utf8(path).c_str(), why.c_str()));
  }
  void check(int rc, const char* step) const {
    // TRANSLATORS: %1$s is a step of writing a video ("opening the encoder"), %2$s FFmpeg's reason.
    if (rc < 0) fail(text_format(_("%s failed (%s)"), step, av_error(rc).c_str()));
  }

  void open() {
    quiet_ffmpeg();
    encoder_name = video_encoder_for(path);
    gif = encoder_name == "gif";
    // TRANSLATORS: %s is a size in pixels ("1x1").
    if (width < 2 || height < 2) fail(text_format(_("a frame of %s pixels is too small"), size_text(width, height).c_str()));
    out_w = gif ? width : width & ~1;
    out_h = gif ? height : height & ~1;
    temp = temp_file_beside(path, overwrite);
    const AVCodec* codec = avcodec_find_encoder_by_name(encoder_name.c_str());
    // TRANSLATORS: %s is an encoder's name ("libx264", "gif").
    if (!codec) fail(text_format(_("this FFmpeg has no %s encoder"), encoder_name.c_str()));
    check(avformat_alloc_output_context2(&oc, nullptr, gif ? "gif" : "mp4", platform::utf8(temp).c_str()),
          _("setting up the file"));
    st = avformat_new_stream(oc, nullptr);
    enc = avcodec_alloc_context3(codec);
    packet = av_packet_alloc();
    frame = av_frame_alloc();
    filtered = av_frame_alloc();
    if (!st || !enc || !packet || !frame || !filtered) fail(_("out of memory"));
    enc->width = out_w;
    enc->height = out_h;
    enc->time_base = av_inv_q(rate);
    enc->framerate = rate;
    enc->pix_fmt = gif ? AV_PIX_FMT_PAL8 : AV_PIX_FMT_YUV420P;
    if (!gif) {
      enc->gop_size = std::max(1, static_cast<int>(std::lround(av_q2d(rate))) * 2);
      enc->colorspace = AVCOL_SPC_SMPTE170M;  // BT.601, what swscale converts with by default
      enc->color_range = AVCOL_RANGE_MPEG;
      if (encoder_name == "libx264") {
        av_opt_set(enc->priv_data, "preset", "fast", 0);
        av_opt_set(enc->priv_data, "crf", "12", 0);  // near-transparent: maps have sharp patch edges
      } else {
        enc->flags |= AV_CODEC_FLAG_QSCALE;
        enc->global_quality = FF_QP2LAMBDA * 3;
      }
    }
    if (oc->oformat->flags & AVFMT_GLOBALHEADER) enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    check(avcodec_open2(enc, codec, nullptr), _("opening the encoder"));
    check(avcodec_parameters_from_context(st->codecpar, enc), _("setting up the stream"));
    st->time_base = enc->time_base;
    st->avg_frame_rate = rate;
    check(avio_open(&oc->pb, platform::utf8(temp).c_str(), AVIO_FLAG_WRITE), _("opening the file"));
    AVDictionary* options = nullptr;
    if (!gif) av_dict_set(&options, "movflags", "+faststart", 0);
    const int rc = avformat_write_header(oc, &options);
    av_dict_free(&options);
    check(rc, _("writing the header"));
    if (gif)
      open_palette_graph();
    else {
      frame->format = enc->pix_fmt;
      frame->width = out_w;
      frame->height = out_h;
      check(av_frame_get_buffer(frame, 0), _("allocating a frame"));
      sws = sws_getContext(out_w, out_h, AV_PIX_FMT_RGB24, out_w, out_h, enc->pix_fmt, SWS_BICUBIC, nullptr, nullptr,
                           nullptr);
      // TRANSLATORS: %s is a pixel format's name ("yuv420p").
      if (!sws) fail(text_format(_("cannot convert RGB to %s"), av_get_pix_fmt_name(enc->pix_fmt)));
    }
  }

  // GIF: one palette for the whole animation, from every frame's colours (palettegen), each
  // frame mapped to it with ordered (Bayer) dithering, which does not crawl from frame to frame
  // the way error diffusion does. The frames wait in the graph until the palette is made at the
  // end (their memory is bounded by the caller's --max-seconds).
  void open_palette_graph() {
    graph = avfilter_graph_alloc();
    if (!graph) fail(_("out of memory"));
    const std::string args = "video_size=" + size_text(out_w, out_h) + ":pix_fmt=" + std::to_string(AV_PIX_FMT_RGB24) +
                             ":time_base=" + std::to_string(enc->time_base.num) + "/" +
                             std::to_string(enc->time_base.den) + ":pixel_aspect=1/1";
    check(avfilter_graph_create_filter(&source, avfilter_get_by_name("buffer"), "in", args.c_str(), nullptr, graph),
          _("making the GIF's filters"));
    check(avfilter_graph_create_filter(&sink, avfilter_get_by_name("buffersink"), "out", nullptr, nullptr, graph),
          _("making the GIF's filters"));
    const AVPixelFormat pal8 = AV_PIX_FMT_PAL8;
    check(av_opt_set_bin(sink, "pix_fmts", reinterpret_cast<const std::uint8_t*>(&pal8), static_cast<int>(sizeof pal8),
                         AV_OPT_SEARCH_CHILDREN),
          _("making the GIF's filters"));
    AVFilterInOut* outputs = avfilter_inout_alloc();
    AVFilterInOut* inputs = avfilter_inout_alloc();
    outputs->name = av_strdup("in");
    outputs->filter_ctx = source;
    inputs->name = av_strdup("out");
    inputs->filter_ctx = sink;
    const char* chain =
        "split[a][b];[a]palettegen=stats_mode=full:reserve_transparent=0[p];[b][p]paletteuse=dither=bayer:bayer_scale="
        "3";
    const int rc = avfilter_graph_parse_ptr(graph, chain, &inputs, &outputs, nullptr);
    avfilter_inout_free(&inputs);
    avfilter_inout_free(&outputs);
    check(rc, _("making the GIF's palette filters"));
    check(avfilter_graph_config(graph, nullptr), _("making the GIF's palette filters"));
  }

  void drain_encoder() {
    while (true) {
      const int rc = avcodec_receive_packet(enc, packet);
      if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return;
      // TRANSLATORS: a step of writing a video file (compressing its frames), completed by "failed (reason)".
      check(rc, _("encoding"));
      av_packet_rescale_ts(packet, enc->time_base, st->time_base);
      packet->stream_index = st->index;
      // TRANSLATORS: a step of writing a video file, completed by "failed (reason)".
      check(av_interleaved_write_frame(oc, packet), _("writing"));
    }
  }

  void encode(AVFrame* f) {
    check(avcodec_send_frame(enc, f), _("encoding"));
    drain_encoder();
  }

  void drain_graph() {
    while (true) {
      const int rc = av_buffersink_get_frame(sink, filtered);
      if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return;
      check(rc, _("making the GIF's palette"));
      filtered->pict_type = AV_PICTURE_TYPE_NONE;
      encode(filtered);
      av_frame_unref(filtered);
    }
  }

  void write(std::span<const std::uint8_t> rgb8) {
    if (finished) fail(_("the video is already finished"));
    if (rgb8.size() != static_cast<std::size_t>(width) * height * 3)
      // TRANSLATORS: %1$zu is a number of bytes, %2$s a size in pixels ("640x480").
      fail(text_format(_("a frame of %zu bytes is not %s RGB"), rgb8.size(), size_text(width, height).c_str()));
    const std::uint8_t* src[4] = {rgb8.data(), nullptr, nullptr, nullptr};
    const int src_stride[4] = {width * 3, 0, 0, 0};
    if (gif) {
      AVFrame* in = av_frame_alloc();
      if (!in) fail(_("out of memory"));
      in->format = AV_PIX_FMT_RGB24;
      in->width = out_w;
      in->height = out_h;
      int rc = av_frame_get_buffer(in, 0);
      if (rc >= 0) {
        av_image_copy(in->data, in->linesize, src, src_stride, AV_PIX_FMT_RGB24, out_w, out_h);
        in->pts = pts++;
        rc = av_buffersrc_add_frame(source, in);  // takes the frame's buffers
      }
      av_frame_free(&in);
      check(rc, _("making the GIF's palette"));
      drain_graph();
    } else {
      // swscale reads whole blocks too: the frame goes through FFmpeg's padded buffer first.
      if (!rgb) {
        rgb = av_frame_alloc();
        if (!rgb) fail(_("out of memory"));
        rgb->format = AV_PIX_FMT_RGB24;
        rgb->width = out_w;
        rgb->height = out_h;
        check(av_frame_get_buffer(rgb, 0), _("allocating a frame"));
      }
      av_image_copy(rgb->data, rgb->linesize, src, src_stride, AV_PIX_FMT_RGB24, out_w, out_h);
      check(av_frame_make_writable(frame), _("allocating a frame"));
      sws_scale(sws, rgb->data, rgb->linesize, 0, out_h, frame->data, frame->linesize);
      frame->pts = pts++;
      encode(frame);
    }
    ++frames;
  }

  void finish() {
    if (finished) return;
    if (frames == 0) fail(_("no frame to write"));
    if (gif) {
      check(av_buffersrc_add_frame(source, nullptr), _("making the GIF's palette"));
      drain_graph();
    }
    check(avcodec_send_frame(enc, nullptr), _("encoding"));
    drain_encoder();
    check(av_write_trailer(oc), _("finishing the file"));
    check(avio_closep(&oc->pb), _("closing the file"));
    publish_file(temp, path, overwrite);
    finished = true;
  }
};

VideoWriter::VideoWriter(const std::filesystem::path& path, int width, int height, double fps, bool overwrite)
    : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->width = width;
  impl_->height = height;
  impl_->overwrite = overwrite;
  // TRANSLATORS: --fps is a command-line flag (frames per second): keep it.
  if (!(fps > 0 && fps <= 240)) impl_->fail(text_format(_("--fps must be between 0 and 240, got %f"), fps));
  impl_->rate = av_d2q(fps, 100000);
  impl_->open();
}
VideoWriter::VideoWriter(VideoWriter&&) noexcept = default;
VideoWriter& VideoWriter::operator=(VideoWriter&&) noexcept = default;
VideoWriter::~VideoWriter() = default;
void VideoWriter::write(std::span<const std::uint8_t> rgb8) { impl_->write(rgb8); }
void VideoWriter::finish() { impl_->finish(); }
int VideoWriter::frames() const { return impl_->frames; }
const std::string& VideoWriter::encoder() const { return impl_->encoder_name; }

}  // namespace attnlab
