#include "app/commands/video_command.hpp"

#include "app/commands/options.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/base/platform.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/io/files.hpp"
#include "core/gpu/vit_backend.hpp"
#include "core/io/overlay.hpp"
#include "core/base/parse.hpp"
#include "core/io/video.hpp"
#include "core/vit/vit_run.hpp"

namespace attnlab::app {

std::string video_usage() {
  std::string text = R"(  attnlab video --model PATH --in VIDEO|--camera DEVICE --out FILE.mp4|FILE.gif [--view map|rollout|norms]
              [--layer L] [--head H|mean|max|min] [--query cls|regN|COL,ROW]
              [--fps F] [--max-seconds S] [--resize S] [--bilinear] [--colormap NAME]
              [--normalization N] [--opacity A] [--backend auto|gpu|cpu] [--force]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           every frame of VIDEO (MP4, WebM, MKV, MOV, AVI, animated GIF…)
                           through the ViT, its map over the frame (as render --view
                           overlay draws a still), written as H.264 MP4 (MPEG-4 part 2
                           where this FFmpeg lacks libx264) or a GIF with one palette,
                           with a sidecar FILE.json; a progress line on stderr. --fps:
                           frames per second written (default the video's; frames are
                           dropped to it, never made up); --max-seconds: stop after S
                           seconds of video (default 600 for MP4, 30 for GIF, 10 for a
                           camera); --camera DEVICE: a camera (v4l2 on Linux) instead
)");
  text += R"(  attnlab video --in VIDEO|--camera DEVICE --out FILE.mp4|FILE.gif [--patch K]
              [--query COL,ROW] [--head NAME|H] [options of row] [--bilinear]
              [--colormap NAME] [--normalization N] [--opacity A] [--fps F]
              [--max-seconds S] [--force]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           without a ViT: the hand-made heads' row for the query (default
                           the middle patch) over each whole frame, on the GPU (the CPU
                           reference without one), as render --view overlay draws a still
)");
  text += R"(  attnlab video --list-cameras
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           the cameras FFmpeg finds, one a line, or "no camera found"
)");
  return text;
}

namespace {

// The output and its sidecar must be free (or --force) and the folder must exist: checked before
// any work.
void check_outputs(const std::filesystem::path& out, bool force, std::initializer_list<const char*> extensions) {
  if (out.empty()) throw Error(_("--out FILE is required"));
  std::string ext = out.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string names;
  bool ok = false;
  for (const char* e : extensions) {
    ok = ok || ext == e;
    // TRANSLATORS: a list of file extensions: ".mp4 or .gif".
    names = names.empty() ? std::string(e) : text_format(_("%s or %s"), names.c_str(), e);
  }
  // TRANSLATORS: the file extensions (".mp4 or .gif"), the file given.
  if (!ok) throw Error(text_format(_("--out must name a %s file, got '%s'"), names.c_str(), platform::utf8(out).c_str()));
  std::error_code ec;
  const auto dir = out.parent_path().empty() ? std::filesystem::path(".") : out.parent_path();
  if (!std::filesystem::is_directory(dir, ec))
    throw Error(text_format(_("cannot write '%s': the folder '%s' does not exist"),
                            platform::utf8(out).c_str(), platform::utf8(dir).c_str()));
  for (const auto& p : {out, sidecar_of(out)})
    if (!force && std::filesystem::exists(p, ec))
      throw Error(text_format(_("'%s' exists; nothing was written (use --force to replace it)"), platform::utf8(p).c_str()));
}

// The sidecar after the picture or video; if it fails, the picture goes again.
void write_sidecar(const std::filesystem::path& out, const nlohmann::json& j, bool force) {
  write_sidecar_or_remove(out, j.dump(2) + "\n", force);
}

// A progress line on stderr: redrawn in place on a terminal, every tenth frame otherwise.
class Progress {
 public:
  explicit Progress(double total) : total_(total), tty_(::isatty(2) != 0), start_(std::chrono::steady_clock::now()) {}
  void frame(int written, double t, bool last = false) {
    if (!last && !tty_ && written % 10 != 0) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double share = total_ > 0 ? std::clamp(t / total_, 0.0, 1.0) : 0.0;
    const int filled = static_cast<int>(std::lround(share * 20));
    // TRANSLATORS: attnlab video's progress line: the bar (# done, . to come), the percentage done, the
    // frames written, the seconds of video read, the frames written a second.
    const std::string line = text_format(_("attnlab video: [%s%s] %3.0f%% %d frame(s), %.1f s of video, %.1f frames/s"),
                                         std::string(static_cast<std::size_t>(filled), '#').c_str(),
                                         std::string(static_cast<std::size_t>(20 - filled), '.').c_str(), share * 100, written, t,
                                         s > 0 ? written / s : 0.0);
    std::fprintf(stderr, "%s%s%s", tty_ ? "\r" : "", line.c_str(), tty_ && !last ? "" : "\n");
    std::fflush(stderr);
  }

 private:
  double total_;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
};

// What `attnlab video` was asked, its arguments read.
struct VideoRequest {
  std::filesystem::path out;
  bool force = false;
  std::string input, camera, model;
  Document d;
  OverlayChoices choices;
  bool query_given = false;  // without --model: the hand-made heads' --query (else the grid's middle patch)
  double fps = 0, max_seconds = 0;
};

using Text = const std::string&;

// A flag whose text is read once the outputs are checked (--fps, --max-seconds): its name and text.
struct LaterFlag {
  std::string flag, text;
};

/// The row of `attnlab video --list-cameras`, which takes no other.
std::vector<CommandFlag> list_cameras_flags(bool& list) {
  return {
      {"--list-cameras", false, [&list](Text, Text) { list = true; }, "", true, true},
  };
}

/// The rows of `attnlab video`'s table besides the document's flags, bound to `v`: with a model
/// (`vit`) the ViT's choice (--layer, --head, --query as ChoiceFlags), without it --layer
/// refused in one line (the hand-made heads' --head and --query are the document's).
std::vector<CommandFlag> video_flags(VideoRequest& v, LaterFlag& fps, LaterFlag& max_seconds, bool vit) {
  std::vector<CommandFlag> out = {
      {"--force", false, [&v](Text, Text) { v.force = true; }, "", true},
      {"--out", true, [&v](Text t, Text) { v.out = t; }, "", true, true},
      {"--in", true, [&v](Text t, Text) { v.input = t; }, "", true, true},
      {"--camera", true, [&v](Text t, Text) { v.camera = t; }, "", true, true},
      {"--model", true, [&v](Text t, Text) { v.model = t; }, "", true, true},
      {"--view", true, [&v](Text t, Text) { v.choices.view = t; }},
      {"--fps", true, [&fps](Text t, Text f) { fps = {f, t}; }},
      {"--max-seconds", true, [&max_seconds](Text t, Text f) { max_seconds = {f, t}; }},
  };
  if (vit) {
    for (CommandFlag& f : choice_command_flags(v.choices.choice)) out.push_back(std::move(f));
  } else {  // --layer (the choice's first flag) refused; --head and --query are the document's
    out.push_back({choice_flag_names()[0], true, [](Text, Text flag) {
      throw Error(text_format(_("%s needs --model: the hand-made heads have one layer"), flag.c_str()));
    }});
  }
  return out;
}

// The flags of `attnlab video`: with --model the ViT's (render --model's document flags, --layer,
// --head, --query as ChoiceFlags); without it the hand-made heads' (render's document flags), and
// the flags that need a model refused in one line.
VideoRequest parse_video(const std::vector<std::string>& args) {
  VideoRequest v;
  LaterFlag fps, max_seconds;
  read_first_flags(args, video_flags(v, fps, max_seconds, false));  // --model: which table reads the rest
  if (v.model.empty()) {
    const auto given = parse_document_flags(args, kFlagsRender, v.d, video_flags(v, fps, max_seconds, false),
                                            // TRANSLATORS: the end of "unknown option 'X'".
                                            {N_(" for video without --model")});
    v.query_given = std::find(given.begin(), given.end(), flag_of_field("hand_made.cell")) != given.end();
  } else {
    // TRANSLATORS: the end of "unknown option 'X'".
    parse_document_flags(args, kFlagsRenderModel, v.d, video_flags(v, fps, max_seconds, true), {N_(" for video")});
  }
  if (v.choices.view == "erf")
    throw Error(
        _("--view erf takes a gradient pass per layer: draw it with attnlab render --sweep layer --view erf, not a video"));
  if (v.model.empty() && v.choices.view != "map")
    throw Error(text_format(_("--view %s needs --model (a ViT's); the hand-made heads draw --view map"), v.choices.view.c_str()));
  if (!v.d.image_path.empty())
    throw Error(_("attnlab video reads --in VIDEO, not an image (for a still: attnlab render --view overlay)"));
  if (v.input.empty() == v.camera.empty())
    throw Error(_("give one of --in VIDEO and --camera DEVICE (attnlab video --list-cameras lists them)"));
  check_outputs(v.out, v.force, {".mp4", ".gif"});
  const bool gif = video_encoder_for(v.out) == "gif";
  v.fps = fps.text.empty() ? 0.0 : parse_float(fps.text, fps.flag, 0.1f, 120.0f);
  v.max_seconds = max_seconds.text.empty() ? (gif ? 30.0 : 600.0) : parse_float(max_seconds.text, max_seconds.flag, 0.01f, 36000.0f);
  if (!v.model.empty()) {
    v.d.model_path = std::filesystem::absolute(v.model);
    v.d.source = ShownSource::Vit;
  }
  return v;
}

// The picture of every swept value, one frame each, into `out` with its sidecar.
int write_sweep(OverlaySource& source, const Image& image, const SweepRequest& sweep, const std::filesystem::path& out,
                bool force) {
  source.set_image(image);
  const nlohmann::json values = source.plan_sweep(sweep);
  if (values.empty()) throw Error(text_format(_("--sweep %s: nothing to sweep"), sweep.kind.c_str()));
  std::optional<VideoWriter> writer;
  int width = 0, height = 0;
  for (int k = 0; k < static_cast<int>(values.size()); ++k) {
    const OverlayPicture picture = source.draw(k);
    if (!writer) {
      width = picture.width;
      height = picture.height;
      writer.emplace(out, width, height, sweep.fps, force);
    } else if (picture.width != width || picture.height != height) {
      throw Error(text_format(_("--sweep %s: the picture changes size at frame %d; nothing was written"), sweep.kind.c_str(), k));
    }
    writer->write(picture.rgb);
  }
  writer->finish();
  nlohmann::json sidecar = source.sidecar();
  sidecar["sweep"] = {{"kind", sweep.kind},           {"values", values}, {"fps", sweep.fps}, {"frames", values.size()},
                      {"encoder", writer->encoder()}, {"width", width},   {"height", height}};
  write_sidecar(out, sidecar, force);
  // TRANSLATORS: the animation written, its frames, the encoder (h264, gif), its sidecar.
  std::printf(_("attnlab: wrote %s (%zu frames, %s) and %s\n"), platform::utf8(out).c_str(), values.size(),
              writer->encoder().c_str(), platform::utf8(sidecar_of(out)).c_str());
  return 0;
}

// The picture of the base choice as a PNG with its sidecar.
int write_still(OverlaySource& source, const Image& image, const std::filesystem::path& out, bool force) {
  source.set_image(image);
  const OverlayPicture picture = source.draw(-1);
  write_png(out, picture.width, picture.height, 3, picture.rgb, force);
  nlohmann::json sidecar = source.sidecar();
  sidecar["render"] = {{"view", "overlay"}, {"width", picture.width}, {"height", picture.height}, {"finished", true}};
  write_sidecar(out, sidecar, force);
  // TRANSLATORS: the picture written and its sidecar.
  std::printf(_("attnlab: wrote %s and %s\n"), platform::utf8(out).c_str(), platform::utf8(sidecar_of(out)).c_str());
  return 0;
}

// A sweep's kind and values, checked before any work.
void check_sweep(const SweepRequest& sweep) {
  if (sweep.kind != "layer" && sweep.kind != "head" && sweep.kind != "query-row" && sweep.kind != "tau" &&
      sweep.kind != "K")
    throw Error(text_format(_("--sweep must be layer, head, query-row, tau or K, got '%s'"), sweep.kind.c_str()));
  if (!sweep.values.empty() && sweep.kind != "tau" && sweep.kind != "K")
    throw Error(_("--sweep-values goes with --sweep tau or K"));
}

}  // namespace

int run_video(const std::vector<std::string>& args) {
  bool list = false;
  read_first_flags(args, list_cameras_flags(list));
  if (list) {
    FlagRules alone;
    alone.refused = [](const std::string& a) { return text_format(_("--list-cameras takes no other option, got '%s'"),
                                                                  a.c_str()); };
    parse_flags(args, list_cameras_flags(list), alone);
    const std::vector<CameraInfo> cameras = list_cameras();
    if (cameras.empty()) std::printf("%s\n", _("no camera found"));
    for (const CameraInfo& c : cameras) std::printf("%s\t%s\n", c.device.c_str(), c.name.c_str());
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  const VideoRequest v = parse_video(args);
  // The model first: a bad one is refused before the video is read. Without one, the hand-made
  // heads (one GPU context for the whole video, HandMadeRows).
  const std::unique_ptr<OverlaySource> overlay =
      v.model.empty() ? make_hand_made_overlay(v.d, !v.query_given) : make_vit_overlay(v.d, v.choices);
  // A camera and a file differ only in the opening (core/io/video.hpp).
  const std::int64_t max_pixels = video_max_pixels(overlay->memory_budget());
  VideoReader reader = v.camera.empty() ? VideoReader::open_file(v.input, max_pixels)
                                        : VideoReader::open_camera(v.camera, max_pixels);
  // TRANSLATORS: what the errors below name: "the camera '/dev/video0': no frame before --max-seconds; …".
  const std::string source = v.camera.empty() ? "'" + v.input + "'" : text_format(_("the camera '%s'"), v.camera.c_str());
  const VideoInfo info = reader.info();
  const double rate = v.fps > 0 ? v.fps : info.fps > 0 ? std::min(info.fps, 120.0) : 25.0;
  Progress progress(std::min(info.duration > 0 ? info.duration : v.max_seconds, v.max_seconds));
  std::optional<VideoWriter> writer;
  std::optional<BackgroundWriter> encoder;
  nlohmann::json sidecar;
  int width = 0, height = 0, written = 0;
  double next_time = 0, last_time = 0;
  // Pipelined (issue 49): the next frame decodes and the last one encodes while this one's
  // forward runs.
  FramePrefetch frames(reader);
  while (auto frame = frames.next()) {
    if (frame->time >= v.max_seconds - 1e-9) break;
    if (frame->time + 0.5 / rate < next_time) continue;  // dropped to the output's rate
    while (next_time <= frame->time + 0.5 / rate) next_time += 1.0 / rate;
    overlay->set_image(frame->image);  // the choice checked on the first frame's grid, again if the size changes
    OverlayPicture picture = overlay->draw(-1);
    if (!writer) {
      width = picture.width;
      height = picture.height;
      writer.emplace(v.out, width, height, rate, v.force);
      encoder.emplace(*writer);
      sidecar = overlay->sidecar();
    } else if (picture.width != width || picture.height != height) {
      // TRANSLATORS: the video or camera, the frame's number, its new width x height, the earlier width x height.
      throw Error(text_format(_("%s: the picture changes size at frame %lld (%dx%d after %dx%d); nothing was written"),
                              source.c_str(), static_cast<long long>(frame->index), picture.width, picture.height, width,
                              height));
    }
    encoder->write(std::move(picture.rgb));
    ++written;
    last_time = frame->time;
    progress.frame(written, last_time);
  }
  if (!writer) throw Error(text_format(_("%s: no frame before --max-seconds; nothing was written"), source.c_str()));
  encoder->finish();
  progress.frame(written, last_time, true);
  const bool gif = writer->encoder() == "gif";
  sidecar["video"] = {{"in", v.camera.empty() ? platform::utf8(std::filesystem::absolute(v.input)) : v.camera},
                      {"camera", !v.camera.empty()},
                      {"out", platform::utf8(v.out.filename())},
                      {"encoder", writer->encoder()},
                      {"frames", written},
                      {"fps", rate},
                      {"width", width & (gif ? ~0 : ~1)},
                      {"height", height & (gif ? ~0 : ~1)},
                      {"max_seconds", v.max_seconds},
                      {"source",
                       {{"width", info.width},
                        {"height", info.height},
                        {"fps", info.fps},
                        {"duration", info.duration},
                        {"codec", info.codec}}}};
  write_sidecar(v.out, sidecar, v.force);
  // TRANSLATORS: the video written, its frames, the encoder (h264, gif), its sidecar.
  std::printf(_("attnlab: wrote %s (%d frames, %s) and %s\n"), platform::utf8(v.out).c_str(), written,
              writer->encoder().c_str(), platform::utf8(sidecar_of(v.out)).c_str());
  return 0;
}

int run_overlay_still(const Document& d, const OverlayChoices& choices, const std::filesystem::path& out, bool force) {
  check_outputs(out, force, {".png"});
  const std::unique_ptr<OverlaySource> overlay = make_vit_overlay(d, choices);
  return write_still(*overlay, load_image(d.image_path), out, force);
}

int run_overlay_sweep(const Document& d, const OverlayChoices& choices, const SweepRequest& sweep,
                      const std::filesystem::path& out, bool force) {
  check_sweep(sweep);
  if (sweep.kind == "tau" && choices.view != "map")
    throw Error(_("--sweep tau varies a row of A: it takes --view map only"));
  if (sweep.kind == "K") throw Error(_("--sweep K varies the hand-made heads' patch size: leave out --model"));
  check_outputs(out, force, {".gif", ".mp4"});
  const std::unique_ptr<OverlaySource> overlay = make_vit_overlay(d, choices);
  return write_sweep(*overlay, load_image(d.image_path), sweep, out, force);
}

int run_hand_made_overlay(const Document& d, const SweepRequest& sweep, const std::filesystem::path& out, bool force) {
  if (!sweep.kind.empty()) {
    check_sweep(sweep);
    if (sweep.kind == "layer")
      throw Error(_("--sweep layer: the hand-made heads have one layer (sweep a ViT's layers with --model)"));
  }
  check_outputs(out, force, sweep.kind.empty() ? std::initializer_list<const char*>{".png"}
                                               : std::initializer_list<const char*>{".gif", ".mp4"});
  const Image image = load_image(d.image_path);
  const std::unique_ptr<OverlaySource> overlay = make_hand_made_overlay(d, false);
  return sweep.kind.empty() ? write_still(*overlay, image, out, force) : write_sweep(*overlay, image, sweep, out, force);
}

}  // namespace attnlab::app
