// Video in and out (issue 40): core/io/video.hpp's reader and writer, `attnlab video` and
// `render --view overlay | --sweep`, with a ViT (--model) and with the hand-made heads (without),
// checked against FFmpeg's own command-line tools.
// The clips are made here with the ffmpeg command from the safari photo: a slow pan and zoom,
// and a scene change (safari, then the dog). The camera cannot be tested on this machine (no
// video device): it shares every step but the opening with the file path tested here.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/base/error.hpp"
#include "core/io/image.hpp"
#include "core/io/overlay.hpp"
#include "core/io/video.hpp"
#include "core/vit/relevance.hpp"
#include "core/vit/vit.hpp"
#include "command_support.hpp"
#include "test_support.hpp"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

struct Ran {
  int code;
  std::string out, err;
};

std::string q(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

// Runs a shell command line, capturing stdout and stderr.
Ran shell(const std::string& command) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto out = dir / ("attnlab-video-out-" + std::to_string(::getpid()));
  const auto err = dir / ("attnlab-video-err-" + std::to_string(::getpid()));
  const int status = std::system((command + " >" + q(out) + " 2>" + q(err)).c_str());
  Ran r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(out), read_file(err)};
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

Ran attnlab(const std::string& args) {
  return shell("env -u DISPLAY EGL_LOG_LEVEL=fatal '" + std::string(ATTNLAB_BINARY) + "' " + args);
}

void ffmpeg(const std::string& args) {
  const Ran r = shell("ffmpeg -nostdin -hide_banner -v error -y " + args);
  ASSERT_EQ(r.code, 0) << "ffmpeg " << args << "\n"
                       << r.err << "\n(the video tests need the ffmpeg command: ./setup.sh --tests)";
}

// ffprobe's count of decoded frames and the container's duration in seconds.
std::pair<int, double> probe(const std::filesystem::path& video) {
  const Ran frames = shell(
      "ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 " + q(video));
  const Ran duration = shell("ffprobe -v error -show_entries format=duration -of csv=p=0 " + q(video));
  EXPECT_EQ(frames.code, 0) << frames.err;
  EXPECT_EQ(duration.code, 0) << duration.err;
  return {std::atoi(frames.out.c_str()), std::atof(duration.out.c_str())};
}

// Frame k (from 0, in decoding order) of a video as a PNG, extracted by ffmpeg.
std::filesystem::path extract(const std::filesystem::path& video, int k, const std::filesystem::path& png) {
  ffmpeg("-i " + q(video) + " -vf 'select=eq(n\\," + std::to_string(k) + ")' -vsync 0 -frames:v 1 " + q(png));
  return png;
}

// The clips and the model, made once for the whole program.
class Video : public ::testing::Test {
 protected:
  static inline std::filesystem::path dir, pan, scene;
  static void SetUpTestSuite() {
    dir = std::filesystem::temp_directory_path() / ("attnlab-video-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    pan = dir / "pan.mp4";
    scene = dir / "scene.mp4";
    // 1.5 s at 10 frames/s, 192 × 128: a slow zoom in while the window pans right and down.
    ffmpeg("-loop 1 -framerate 10 -i " + q(asset("safari.jpg")) +
           " -vf \"zoompan=z='1+0.01*on':x='on*6':y='on*3':d=1:s=192x128:fps=10\" -frames:v 15 -c:v libx264 -pix_fmt "
           "yuv420p " +
           q(pan));
    // 2 s: the safari photo for 1 s, then the dog for 1 s.
    ffmpeg("-loop 1 -framerate 10 -t 1 -i " + q(asset("safari.jpg")) + " -loop 1 -framerate 10 -t 1 -i " +
           q(asset("dog.jpg")) +
           " -filter_complex '[0]scale=192:128,setsar=1[a];[1]scale=192:128,setsar=1[b];[a][b]concat=n=2:v=1[v]' -map "
           "'[v]'"
           " -c:v libx264 -pix_fmt yuv420p " +
           q(scene));
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir); }
  static std::string model() { return q(asset("fashion_vit")); }
  // The ViT's settings every video and still here shares (the bundled model, 96-pixel input).
  static std::string choice() { return " --resize 96 --layer 3 --head 1 --query 5,5"; }
  // `attnlab video` over the pan into `out`, with `flags` (each with its leading space) and the choice.
  static Ran video_of_pan(const std::filesystem::path& out, const std::string& flags = "") {
    return attnlab("video --model " + model() + " --in " + q(pan) + " --out " + q(out) + flags + choice());
  }
  // Two output frames each within `near` grey levels of its own frame's still and farther than
  // `far` from the other's.
  static void expect_two_frames_are_their_stills(const std::vector<Image>& outs, const std::vector<Image>& stills,
                                                 double near, double far) {
    ASSERT_EQ(outs.size(), 2u);
    ASSERT_EQ(stills.size(), 2u);
    EXPECT_LT(mean_grey_difference(outs[0], stills[0]), near);
    EXPECT_LT(mean_grey_difference(outs[1], stills[1]), near);
    EXPECT_GT(mean_grey_difference(outs[0], stills[1]), far);
    EXPECT_GT(mean_grey_difference(outs[1], stills[0]), far);
  }
};

TEST_F(Video, ReaderYieldsEveryFrameAsFfmpegDecodesIt) {
  VideoReader reader = VideoReader::open_file(pan, video_max_pixels(1LL << 30));
  EXPECT_EQ(reader.info().width, 192);
  EXPECT_EQ(reader.info().height, 128);
  EXPECT_NEAR(reader.info().fps, 10.0, 1e-6);
  EXPECT_NEAR(reader.info().duration, 1.5, 0.05);
  EXPECT_EQ(reader.info().codec, "h264");
  std::vector<Image> frames;
  double last = -1;
  while (auto f = reader.next()) {
    EXPECT_EQ(f->index, static_cast<std::int64_t>(frames.size()));
    EXPECT_GT(f->time, last);
    last = f->time;
    frames.push_back(std::move(f->image));
  }
  ASSERT_EQ(frames.size(), 15u);
  EXPECT_NEAR(last, 1.4, 1e-6);
  for (int k : {0, 9}) {
    const Image png = load_image(extract(pan, k, dir / ("reader-" + std::to_string(k) + ".png")));
    EXPECT_LT(mean_grey_difference(frames[static_cast<std::size_t>(k)], png), 1.5) << "frame " << k;
  }
  // The pan moves: consecutive frames differ, so the comparison above can tell frames apart.
  EXPECT_GT(mean_grey_difference(frames[0], frames[9]), 5.0);
}

TEST_F(Video, VideoFramesAreTheStillRendersOfTheFrames) {
  const auto out = dir / "pan-out.mp4";
  const Ran r = video_of_pan(out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("attnlab video: ["), std::string::npos) << "a progress line: " << r.err;
  const auto [frames, duration] = probe(out);
  EXPECT_EQ(frames, 15);
  EXPECT_NEAR(duration, 1.5, 0.11);
  const nlohmann::json side = read_json(dir / "pan-out.json");
  EXPECT_EQ(side["video"]["frames"], 15);
  EXPECT_EQ(side["overlay"]["layer"], 3);
  EXPECT_EQ(side["overlay"]["head"], "1");
  EXPECT_EQ(side["overlay"]["query"], "5,5");
  EXPECT_EQ(side["video"]["width"], 144);  // 192 × 128 scaled to a 96-pixel short side
  EXPECT_EQ(side["video"]["height"], 96);

  std::vector<Image> stills;
  for (int k : {2, 12}) {
    const auto frame = extract(pan, k, dir / ("pan-" + std::to_string(k) + ".png"));
    const auto still = dir / ("pan-still-" + std::to_string(k) + ".png");
    const Ran s = attnlab("render --model " + model() + " --image " + q(frame) + " --view overlay" + choice() +
                          " --out " + q(still));
    ASSERT_EQ(s.code, 0) << s.err;
    stills.push_back(load_image(still));
  }
  const Image v2 = load_image(extract(out, 2, dir / "out-2.png"));
  const Image v12 = load_image(extract(out, 12, dir / "out-12.png"));
  // Not the other frame's still: the map and the picture move.
  expect_two_frames_are_their_stills({v2, v12}, stills, 3.0, 6.0);
}

TEST_F(Video, SceneChangeFollowsTheNewScene) {
  const auto out = dir / "scene-out.mp4";
  const Ran r = attnlab("video --model " + model() + " --in " + q(scene) + " --out " + q(out) + choice());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(probe(out).first, 20);
  // The last frame of the safari and the first of the dog: each output frame is its own frame's
  // still, so the cut falls between the same two frames.
  std::vector<Image> stills, outs;
  for (int k : {9, 10}) {
    const auto still = dir / ("scene-still-" + std::to_string(k) + ".png");
    const auto frame = extract(scene, k, dir / ("scene-" + std::to_string(k) + ".png"));
    ASSERT_EQ(attnlab("render --model " + model() + " --image " + q(frame) + " --view overlay" + choice() + " --out " +
                      q(still))
                  .code,
              0);
    stills.push_back(load_image(still));
    outs.push_back(load_image(extract(out, k, dir / ("scene-out-" + std::to_string(k) + ".png"))));
  }
  expect_two_frames_are_their_stills(outs, stills, 3.0, 10.0);
}

TEST_F(Video, GifAtAChosenRateWithPalette) {
  const auto out = dir / "pan.gif";
  const Ran r = video_of_pan(out, " --fps 5");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto [frames, duration] = probe(out);
  EXPECT_EQ(frames, 8);  // 0, 0.2 … 1.4 s
  EXPECT_NEAR(duration, 1.6, 0.11);
  EXPECT_EQ(read_json(dir / "pan.json")["video"]["encoder"], "gif");
  // Frame 3 of the GIF is source frame 6 (0.6 s).
  const auto still = dir / "gif-still-6.png";
  ASSERT_EQ(attnlab("render --model " + model() + " --image " + q(extract(pan, 6, dir / "gif-6.png")) +
                    " --view overlay" + choice() + " --out " + q(still))
                .code,
            0);
  EXPECT_LT(mean_grey_difference(load_image(extract(out, 3, dir / "gif-out-3.png")), load_image(still)), 6.0);
}

TEST_F(Video, MaxSecondsStopsEarly) {
  const auto out = dir / "short.mp4";
  ASSERT_EQ(video_of_pan(out, " --max-seconds 0.5").code, 0);
  EXPECT_EQ(probe(out).first, 5);
}

TEST_F(Video, GifSweepFramesAreTheStills) {
  const auto out = dir / "sweep.gif";
  const auto image = asset("safari.jpg");
  const std::string common = " --resize 64 --head mean --query 6,6";
  const Ran r =
      attnlab("render --model " + model() + " --image " + q(image) + " --sweep layer" + common + " --out " + q(out));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(probe(out).first, 6);  // the bundled model's 6 layers
  const nlohmann::json side = read_json(dir / "sweep.json");
  EXPECT_EQ(side["sweep"]["kind"], "layer");
  EXPECT_EQ(side["sweep"]["values"].size(), 6u);
  std::vector<Image> stills, frames;
  for (int l = 0; l < 6; ++l) {
    const auto still = dir / ("sweep-still-" + std::to_string(l) + ".png");
    ASSERT_EQ(attnlab("render --model " + model() + " --image " + q(image) + " --view overlay --layer " +
                      std::to_string(l) + common + " --out " + q(still))
                  .code,
              0);
    stills.push_back(load_image(still));
    frames.push_back(load_image(extract(out, l, dir / ("sweep-frame-" + std::to_string(l) + ".png"))));
  }
  for (int l = 0; l < 6; ++l) {
    EXPECT_LT(mean_grey_difference(frames[static_cast<std::size_t>(l)], stills[static_cast<std::size_t>(l)]), 6.0)
        << "layer " << l;
    // Each frame is nearest to its own layer's still.
    for (int o = 0; o < 6; ++o) {
      if (o == l) continue;
      EXPECT_LT(mean_grey_difference(frames[static_cast<std::size_t>(l)], stills[static_cast<std::size_t>(l)]),
                mean_grey_difference(frames[static_cast<std::size_t>(l)], stills[static_cast<std::size_t>(o)]))
          << "frame " << l << " against layer " << o;
    }
  }
}

// Issue 49: the receptive field's layer sweep. Each frame is the field of the query after that
// layer (core's vit_receptive_field, coloured here over the model's input picture as the
// overlay colours it), and the field spreads: after the last layer a larger share of it lies
// outside the query's own patch than after the first.
TEST_F(Video, ReceptiveFieldSweepIsEachLayersFieldAndGrows) {
  const auto out = dir / "erf.gif";
  const auto image = asset("safari.jpg");
  const Ran r = attnlab("render --model " + model() + " --image " + q(image) + " --sweep layer --view erf --resize 64 --query 6,6 --out " + q(out));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(probe(out).first, 6);
  const nlohmann::json side = read_json(dir / "erf.json");
  EXPECT_EQ(side["overlay"]["view"], "erf");
  const VitModel vit = load_vit(asset("fashion_vit"));
  const Image photo = load_image(image);
  const VitInput input = vit_input(vit, photo, 64);
  const Image picture = crop_image(vit_scaled_image(photo, 64), input.cols * vit.arch.patch, input.rows * vit.arch.patch);
  const int P = vit.arch.patch, token = vit.arch.prefix() + 6 * input.cols + 6;
  std::vector<double> outside;
  for (int l = 0; l < 6; ++l) {
    const Matrix field = vit_receptive_field(vit, input, l, token, vit_memory_budget());
    ASSERT_EQ(field.cols(), picture.width);
    ASSERT_EQ(field.rows(), picture.height);
    const std::vector<float> values(field.data(), field.data() + field.size());
    const Image want = image_from_rgb8(picture.width, picture.height,
                                       overlay_heat_map(picture, values, picture.width, picture.height, kDefaultColormap,
                                                        Normalization::MinMax, kDefaultOverlayOpacity, false));
    const Image frame = load_image(extract(out, l, dir / ("erf-frame-" + std::to_string(l) + ".png")));
    EXPECT_LT(mean_grey_difference(frame, want), 6.0) << "layer " << l;
    const double inside = field.block(6 * P, 6 * P, P, P).sum();
    outside.push_back(1.0 - inside / field.sum());
  }
  EXPECT_GT(outside.back(), outside.front()) << "the field after the last layer reaches no farther than after the first";
  expect_one_line_error(attnlab("render --model " + model() + " --image " + q(image) + " --sweep head --view erf --out " + q(dir / "h.gif")),
                        "--sweep head");
  expect_one_line_error(attnlab("video --model " + model() + " --in " + q(pan) + " --view erf --out " + q(dir / "v.mp4")),
                        "--view erf");
}

TEST_F(Video, TauSweepAtOneIsTheModel) {
  const auto out = dir / "tau.gif";
  const auto image = asset("safari.jpg");
  const std::string common = " --resize 64 --layer 2 --head 0 --query 6,6";
  ASSERT_EQ(attnlab("render --model " + model() + " --image " + q(image) + " --sweep tau --sweep-values 0.2,1,5" +
                    common + " --out " + q(out))
                .code,
            0);
  EXPECT_EQ(probe(out).first, 3);
  const auto still = dir / "tau-still.png";
  ASSERT_EQ(
      attnlab("render --model " + model() + " --image " + q(image) + " --view overlay" + common + " --out " + q(still))
          .code,
      0);
  const Image s = load_image(still);
  EXPECT_LT(mean_grey_difference(load_image(extract(out, 1, dir / "tau-1.png")), s), 6.0);
  EXPECT_GT(mean_grey_difference(load_image(extract(out, 0, dir / "tau-0.png")), s), 6.0);
}

TEST_F(Video, NeverOverwritesWithoutForce) {
  const auto out = dir / "once.mp4";
  ASSERT_EQ(video_of_pan(out, " --max-seconds 0.3").code, 0);
  const auto size = std::filesystem::file_size(out);
  expect_one_line_error(video_of_pan(out), "exists");
  EXPECT_EQ(std::filesystem::file_size(out), size);
  ASSERT_EQ(video_of_pan(out, " --force").code, 0);
  EXPECT_EQ(probe(out).first, 15);
  // No temporary left beside it.
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_FALSE(e.path().filename().string().starts_with(".once")) << e.path();
}

TEST_F(Video, HostileFilesGiveOneLine) {
  const auto out = dir / "hostile.mp4";
  auto refused = [&](const std::filesystem::path& in, const std::string& part, const std::string& env = "") {
    const Ran r = shell(env + " env -u DISPLAY EGL_LOG_LEVEL=fatal '" + std::string(ATTNLAB_BINARY) +
                        "' video --model " + model() + " --in " + q(in) + " --out " + q(out) + choice());
    expect_one_line_error(r, part);
    EXPECT_FALSE(std::filesystem::exists(out)) << in;
  };
  write_file(dir / "empty.mp4", "");
  refused(dir / "empty.mp4", "empty");
  refused(dir / "missing.mp4", "no such file");
  const std::string bytes = read_file(pan);
  write_file(dir / "truncated.mp4", bytes.substr(0, bytes.size() / 2));
  refused(dir / "truncated.mp4", "truncated.mp4");
  write_file(dir / "noise.mp4", std::string(5000, '\x5a'));
  refused(dir / "noise.mp4", "not a video file");
  // An AVI whose codec tag this FFmpeg does not know.
  ffmpeg("-i " + q(pan) + " -c:v mpeg4 -f avi " + q(dir / "good.avi"));
  std::string avi = read_file(dir / "good.avi");
  for (auto at = avi.find("FMP4"); at != std::string::npos; at = avi.find("FMP4")) avi.replace(at, 4, "ZZZZ");
  write_file(dir / "unknown.avi", avi);
  refused(dir / "unknown.avi", "cannot be decoded");
  // Headers claiming huge pictures: FFmpeg's own limit, then the memory budget's.
  write_file(dir / "huge.y4m", "YUV4MPEG2 W100000 H100000 F25:1 Ip A1:1 C420jpeg\nFRAME\nabcdef");
  refused(dir / "huge.y4m", "huge.y4m");
  write_file(dir / "big.y4m", "YUV4MPEG2 W16000 H16000 F25:1 Ip A1:1 C420jpeg\nFRAME\nabcdef");
  refused(dir / "big.y4m", "16000x16000 pixels, more than");
  write_file(dir / "budget.y4m", "YUV4MPEG2 W4000 H4000 F25:1 Ip A1:1 C420jpeg\nFRAME\nabcdef");
  refused(dir / "budget.y4m", "ATTNLAB_MEMORY_BUDGET_MB", "ATTNLAB_MEMORY_BUDGET_MB=64");
  // Sound only.
  ffmpeg("-f lavfi -i sine=d=1 " + q(dir / "sound.m4a"));
  refused(dir / "sound.m4a", "no video stream");
}

TEST_F(Video, BadArgumentsGiveOneLine) {
  expect_one_line_error(attnlab("video --model " + model() + " --in " + q(pan) + " --out " + q(dir / "x.avi")),
                        ".mp4 or .gif");
  // Without --model the hand-made heads run: the flags that need a ViT are one line.
  expect_one_line_error(attnlab("video --in " + q(pan) + " --out " + q(dir / "x.mp4") + " --layer 2"), "one layer");
  expect_one_line_error(attnlab("video --in " + q(pan) + " --out " + q(dir / "x.mp4") + " --view rollout"),
                        "--view rollout needs --model");
  expect_one_line_error(attnlab("video --in " + q(pan) + " --out " + q(dir / "x.mp4") + " --resize 96"),
                        "'--resize' for video without --model");
  expect_one_line_error(attnlab("video --in " + q(pan) + " --out " + q(dir / "x.mp4") + " --patch 16 --query 30,2"),
                        "outside");
  expect_one_line_error(
      attnlab("video --model " + model() + " --in " + q(pan) + " --out " + q(dir / "x.mp4") + " --layer 9"), "--layer");
  expect_one_line_error(
      attnlab("video --model " + model() + " --in " + q(pan) + " --out " + q(dir / "x.mp4") + " --view nope"), "nope");
  expect_one_line_error(attnlab("render --model " + model() + " --image " + q(asset("safari.jpg")) +
                                " --sweep nope --out " + q(dir / "x.gif")),
                        "--sweep");
  EXPECT_FALSE(std::filesystem::exists(dir / "x.mp4"));
}

TEST_F(Video, NoCameraFoundIsNotAnError) {
  // This machine has no video device.
  const Ran list = attnlab("video --list-cameras");
  EXPECT_EQ(list.code, 0) << list.err;
  EXPECT_TRUE(list.out == "no camera found\n" || list.out.find("/dev/video") != std::string::npos) << list.out;
  expect_one_line_error(attnlab("video --model " + model() + " --camera /dev/video-none --out " + q(dir / "cam.mp4")),
                        "the camera '/dev/video-none'");
  expect_one_line_error(
      attnlab("video --model " + model() + " --camera /dev/video-none --in " + q(pan) + " --out " + q(dir / "cam.mp4")),
      "one of --in VIDEO and --camera DEVICE");
  EXPECT_FALSE(std::filesystem::exists(dir / "cam.mp4"));
}

TEST_F(Video, TruncatedAfterItsHeaderGivesWhatDecodes) {
  // attnlab's MP4s keep their index first (+faststart): cut after 9 of 15 frames' data, the
  // frames before the cut still come out; cut inside the first frame, one line.
  const auto whole = dir / "whole.mp4";
  ASSERT_EQ(attnlab("video --model " + model() + " --in " + q(pan) + " --out " + q(whole) + choice()).code, 0);
  const std::string bytes = read_file(whole);
  write_file(dir / "cut.mp4", bytes.substr(0, bytes.size() * 2 / 3));
  const auto out = dir / "cut-out.mp4";
  const Ran r = attnlab("video --model " + model() + " --in " + q(dir / "cut.mp4") + " --out " + q(out) + choice());
  ASSERT_EQ(r.code, 0) << r.err;
  const int frames = probe(out).first;
  EXPECT_GT(frames, 3);
  EXPECT_LT(frames, 15);
  write_file(dir / "stub.mp4", bytes.substr(0, 3000));
  expect_one_line_error(attnlab("video --model " + model() + " --in " + q(dir / "stub.mp4") + " --out " +
                                q(dir / "stub-out.mp4") + choice()),
                        "stub.mp4");
  EXPECT_FALSE(std::filesystem::exists(dir / "stub-out.mp4"));
}

TEST_F(Video, DamagedBytesNeverCrashTheReader) {
  // 60 copies of the clip, each with 16 bytes overwritten at seeded places (the first 40 in its
  // first 4 KiB, where the header and the index are; the rest anywhere), and 20 cut at a seeded
  // length: every one either decodes or throws one Error line, never crashes or hangs.
  const std::string bytes = read_file(pan);
  int refused = 0, read = 0;
  for (unsigned seed = 1; seed <= 80; ++seed) {
    std::string damaged = bytes;
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull;
    auto next = [&] {
      x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
      return x * 0x2545F4914F6CDD1Dull;
    };
    if (seed <= 60) {
      const std::size_t span = seed <= 40 ? std::min<std::size_t>(4096, damaged.size()) : damaged.size();
      for (int k = 0; k < 16; ++k) damaged[next() % span] = static_cast<char>(next() & 0xff);
    } else {
      damaged.resize(next() % damaged.size());
    }
    const auto file = dir / ("damaged-" + std::to_string(seed) + ".mp4");
    write_file(file, damaged);
    try {
      VideoReader reader = VideoReader::open_file(file, video_max_pixels(1LL << 30));
      int frames = 0;
      while (auto f = reader.next()) {
        EXPECT_GT(f->image.width, 0);
        ASSERT_LT(++frames, 1000) << "seed " << seed;
      }
      ++read;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      ++refused;
    }
    std::filesystem::remove(file);
  }
  EXPECT_EQ(refused + read, 80);
  std::printf("damaged clips: %d read, %d refused\n", read, refused);
}

TEST_F(Video, TheFuzzersFindingsAreReadOrRefused) {
  // tests/fuzz/regressions/video: Y4M files one pixel wide, whose conversion to RGB overran a
  // tight buffer (swscale writes whole blocks) and corrupted the heap.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(ATTNLAB_SOURCE_DIR) /
                                                           "tests/fuzz/regressions/video")) {
    ++files;
    try {
      VideoReader reader = VideoReader::open_file(e.path(), video_max_pixels(1LL << 30));
      while (auto f = reader.next())
        EXPECT_EQ(f->image.rgb.size(), static_cast<std::size_t>(f->image.width) * f->image.height * 3);
    } catch (const Error& err) {
      EXPECT_EQ(std::string(err.what()).find('\n'), std::string::npos);
    }
  }
  EXPECT_GE(files, 2);
}

TEST_F(Video, NoCameraIsAnEmptyList) {
  // This machine has no video device: none found, and no error.
  std::vector<CameraInfo> cameras;
  EXPECT_NO_THROW(cameras = list_cameras());
  for (const auto& c : cameras) EXPECT_FALSE(c.device.empty());
  // Opening one that is not there is one line.
  try {
    VideoReader::open_camera("/dev/video-none", 1 << 20);
    FAIL() << "opened a missing camera";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the camera '/dev/video-none'"), std::string::npos) << e.what();
  }
}

TEST_F(Video, WriterRoundTripsFrames) {
  // A writer's MP4, read back by the reader: the same pictures within H.264's loss.
  const auto out = dir / "roundtrip.mp4";
  const Image a = random_image(64, 48, 1);
  Image b = a;
  for (float& v : b.rgb) v = 1.0f - v;
  {
    VideoWriter w(out, 64, 48, 4, false);
    for (int i = 0; i < 4; ++i) w.write(image_to_rgb8(i % 2 ? b : a));
    w.finish();
    EXPECT_THROW(VideoWriter(out, 64, 48, 4, false), Error);  // exists
  }
  VideoReader r = VideoReader::open_file(out, 1 << 20);
  int n = 0;
  while (auto f = r.next()) {
    EXPECT_LT(mean_grey_difference(f->image, n % 2 ? b : a), mean_grey_difference(f->image, n % 2 ? a : b)) << n;
    ++n;
  }
  EXPECT_EQ(n, 4);
  // Abandoned before finish(): nothing is left.
  {
    VideoWriter w(dir / "abandoned.gif", 64, 48, 4, false);
    w.write(image_to_rgb8(a));
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "abandoned.gif"));
}

// The hand-made heads without --model (issue 40): each frame's picture is the whole frame with
// the row of A over the grid's cols·K × rows·K part.
class HandMadeVideo : public Video {
 protected:
  // A 200 × 150 still of the safari photo: K = 12, 24 and 32 leave pixels past the last patch.
  static std::filesystem::path photo() {
    const auto p = dir / "photo-200x150.png";
    if (!std::filesystem::exists(p)) ffmpeg("-i " + q(asset("safari.jpg")) + " -vf scale=200:150 " + q(p));
    return p;
  }
  // render --view overlay of `image` without a model, with `flags`, into `png`.
  static Image still(const std::filesystem::path& image, const std::string& flags, const std::filesystem::path& png) {
    const Ran r = attnlab("render --image " + q(image) + " --view overlay" + flags + " --out " + q(png));
    EXPECT_EQ(r.code, 0) << r.err;
    return load_image(png);
  }
  // Each of `frames` is nearest its own still among `stills`, and within `tolerance` of it.
  static void expect_each_nearest_its_own(const std::vector<Image>& frames, const std::vector<Image>& stills,
                                          double tolerance) {
    ASSERT_EQ(frames.size(), stills.size());
    for (std::size_t k = 0; k < frames.size(); ++k) {
      const double own = mean_grey_difference(frames[k], stills[k]);
      EXPECT_LT(own, tolerance) << "frame " << k;
      for (std::size_t o = 0; o < stills.size(); ++o)
        if (o != k) {
          EXPECT_LT(own, mean_grey_difference(frames[k], stills[o])) << "frame " << k << " against still " << o;
        }
    }
  }
};

TEST_F(HandMadeVideo, VideoFramesAreTheStillRendersOfTheFrames) {
  const auto out = dir / "hand-made.mp4";
  const std::string flags = " --patch 24 --query 4,2 --head colour --temperature 0.5";  // 8 × 5 patches of 192 × 128
  const Ran r = attnlab("video --in " + q(pan) + " --out " + q(out) + flags);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("attnlab video: ["), std::string::npos) << "a progress line: " << r.err;
  EXPECT_EQ(probe(out).first, 15);
  const nlohmann::json side = read_json(dir / "hand-made.json");
  EXPECT_EQ(side["source"], "hand_made");
  EXPECT_EQ(side["overlay"]["query"], "4,2");
  EXPECT_EQ(side["overlay"]["grid"]["K"], 24);
  EXPECT_EQ(side["overlay"]["map_pixels"]["height"], 120);
  EXPECT_EQ(side["video"]["width"], 192);  // the whole frame
  EXPECT_EQ(side["video"]["height"], 128);
  EXPECT_EQ(side["video"]["frames"], 15);
  std::vector<Image> stills, outs;
  for (int k : {2, 12}) {
    const auto frame = extract(pan, k, dir / ("hm-pan-" + std::to_string(k) + ".png"));
    stills.push_back(still(frame, flags, dir / ("hm-still-" + std::to_string(k) + ".png")));
    outs.push_back(load_image(extract(out, k, dir / ("hm-out-" + std::to_string(k) + ".png"))));
  }
  // Not the other frame's still: the map and the picture move.
  expect_two_frames_are_their_stills(outs, stills, 3.0, 6.0);
}

TEST_F(HandMadeVideo, KSweepFramesAreTheStillsAtEachK) {
  const auto out = dir / "k.gif";
  const Ran r = attnlab("render --image " + q(photo()) + " --query 6,4 --sweep K --out " + q(out));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(probe(out).first, 5);
  const nlohmann::json side = read_json(dir / "k.json");
  EXPECT_EQ(side["sweep"]["kind"], "K");
  EXPECT_EQ(side["sweep"]["width"], 200);  // every frame the photo's size
  EXPECT_EQ(side["sweep"]["height"], 150);
  ASSERT_EQ(side["sweep"]["values"].size(), 5u);
  // The query follows the pixel at the centre of K = 16's patch (6,4): (104, 72).
  const std::vector<std::pair<int, std::string>> expected = {{8, "13,9"}, {12, "8,6"}, {16, "6,4"}, {24, "4,3"}, {32, "3,2"}};
  std::vector<Image> stills, frames;
  for (std::size_t k = 0; k < expected.size(); ++k) {
    const auto& [K, query] = expected[k];
    EXPECT_EQ(side["sweep"]["values"][k]["K"], K);
    EXPECT_EQ(side["sweep"]["values"][k]["query"], query);
    stills.push_back(still(photo(), " --patch " + std::to_string(K) + " --query " + query,
                           dir / ("k-still-" + std::to_string(K) + ".png")));
    frames.push_back(load_image(extract(out, static_cast<int>(k), dir / ("k-frame-" + std::to_string(k) + ".png"))));
  }
  expect_each_nearest_its_own(frames, stills, 6.0);
}

TEST_F(HandMadeVideo, TauSweepFramesAreTheStillsAtEachTau) {
  const auto out = dir / "hm-tau.gif";
  const std::string common = " --patch 10 --query 9,7 --head position";
  const Ran r = attnlab("render --image " + q(photo()) + common + " --sweep tau --sweep-values 0.05,0.3,1,4 --out " + q(out));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(probe(out).first, 4);
  EXPECT_EQ(read_json(dir / "hm-tau.json")["sweep"]["values"].size(), 4u);
  std::vector<Image> stills, frames;
  int k = 0;
  for (const char* tau : {"0.05", "0.3", "1", "4"}) {
    stills.push_back(still(photo(), common + " --temperature " + tau, dir / ("hm-tau-still-" + std::string(tau) + ".png")));
    frames.push_back(load_image(extract(out, k, dir / ("hm-tau-frame-" + std::to_string(k) + ".png"))));
    ++k;
  }
  expect_each_nearest_its_own(frames, stills, 6.0);
}

TEST_F(HandMadeVideo, HeadAndQueryRowSweepsAreTheStillsOfEachHeadAndColumn) {
  const std::string common = " --patch 25 --query 5,2";  // 8 × 6 patches of the 200 × 150 photo
  const auto heads = dir / "hm-heads.gif";
  ASSERT_EQ(attnlab("render --image " + q(photo()) + common + " --sweep head --out " + q(heads)).code, 0);
  EXPECT_EQ(read_json(dir / "hm-heads.json")["sweep"]["values"][2], "colour+position");
  std::vector<Image> stills, frames;
  for (int h = 0; h < 6; ++h) {
    stills.push_back(still(photo(), common + " --head " + std::to_string(h), dir / ("hm-head-" + std::to_string(h) + ".png")));
    frames.push_back(load_image(extract(heads, h, dir / ("hm-head-frame-" + std::to_string(h) + ".png"))));
  }
  // The custom head (5) starts as the colour head (core/base/settings.hpp, CustomHead): its
  // frame is its still, and heads 0 … 4 each nearest their own.
  EXPECT_LT(mean_grey_difference(frames[5], stills[5]), 6.0);
  expect_each_nearest_its_own({frames.begin(), frames.begin() + 5}, {stills.begin(), stills.begin() + 5}, 6.0);
  const auto row = dir / "hm-row.gif";
  ASSERT_EQ(attnlab("render --image " + q(photo()) + common + " --sweep query-row --out " + q(row)).code, 0);
  const nlohmann::json values = read_json(dir / "hm-row.json")["sweep"]["values"];
  ASSERT_EQ(values.size(), 8u);
  EXPECT_EQ(values[7], "7,2");
  stills.clear();
  frames.clear();
  for (int c : {1, 5}) {
    stills.push_back(still(photo(), " --patch 25 --query " + std::to_string(c) + ",2", dir / ("hm-row-" + std::to_string(c) + ".png")));
    frames.push_back(load_image(extract(row, c, dir / ("hm-row-frame-" + std::to_string(c) + ".png"))));
  }
  expect_each_nearest_its_own(frames, stills, 6.0);
}

TEST_F(HandMadeVideo, WithoutAGpuTheCpuReferenceDrawsTheSameFrames) {
  // No EGL vendor: no headless context can be made, and the CPU reference computes the rows.
  const std::string no_gpu = "env -u DISPLAY EGL_LOG_LEVEL=fatal __EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent.json '" +
                             std::string(ATTNLAB_BINARY) + "' ";
  const std::string flags = " --patch 20 --query 4,3 --head texture --mask window:3";
  const auto out = dir / "hm-cpu.mp4";
  const Ran r = shell(no_gpu + "video --in " + q(pan) + " --out " + q(out) + " --max-seconds 0.5" + flags);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("using the CPU reference"), std::string::npos) << r.err;
  EXPECT_EQ(read_json(dir / "hm-cpu.json")["backend"], "CPU reference (Eigen)");
  EXPECT_EQ(probe(out).first, 5);
  const auto frame = extract(pan, 3, dir / "hm-cpu-3.png");
  const Image gpu = still(frame, flags, dir / "hm-gpu-still-3.png");
  EXPECT_NE(read_json(dir / "hm-gpu-still-3.json")["backend"].get<std::string>().find("GPU"), std::string::npos);
  EXPECT_LT(mean_grey_difference(load_image(extract(out, 3, dir / "hm-cpu-out-3.png")), gpu), 3.0);
}

TEST_F(HandMadeVideo, SweepsWithoutAModelRefuseWhatNeedsOne) {
  expect_one_line_error(attnlab("render --image " + q(photo()) + " --query 6,4 --sweep layer --out " + q(dir / "l.gif")),
                        "the hand-made heads have one layer");
  expect_one_line_error(attnlab("render --model " + model() + " --image " + q(photo()) + " --sweep K --out " +
                                q(dir / "l.gif")),
                        "--sweep K");
  expect_one_line_error(attnlab("render --image " + q(photo()) + " --query 6,4 --sweep head --sweep-values 1,2 --out " +
                                q(dir / "l.gif")),
                        "--sweep-values");
  expect_one_line_error(attnlab("render --image " + q(photo()) + " --query 6,4 --view overlay --out " + q(dir / "l.gif")),
                        ".png");
  EXPECT_FALSE(std::filesystem::exists(dir / "l.gif"));
}

TEST(Overlay, AGridSmallerThanThePhotoLeavesThePixelsPastItThePhotos) {
  const Image photo = random_image(40, 30, 3);
  const std::vector<float> values = {0, 1, 2, 3, 4, 5};  // 3 × 2 patches of 12 pixels: 36 × 24
  const auto on_grid = overlay_heat_map_on_grid(photo, values, 3, 2, 36, 24, Colormap::Heat, Normalization::MinMax, 0.5f, false);
  const auto photo8 = image_to_rgb8(photo);
  ASSERT_EQ(on_grid.size(), photo8.size());
  std::size_t same_inside = 0;
  for (int y = 0; y < 30; ++y)
    for (int x = 0; x < 40; ++x)
      for (int c = 0; c < 3; ++c) {
        const std::size_t i = (static_cast<std::size_t>(y) * 40 + x) * 3 + c;
        if (x >= 36 || y >= 24) EXPECT_EQ(on_grid[i], photo8[i]) << x << "," << y;
        else same_inside += on_grid[i] == photo8[i];
      }
  EXPECT_LT(same_inside, 36u * 24u);  // the map is blended over the grid
  // Patch (2,1) covers x 24…35, y 12…23: one colour blended over the photo there.
  const Image flat = [] {
    Image f = random_image(40, 30, 3);
    std::fill(f.rgb.begin(), f.rgb.end(), 0.0f);
    return f;
  }();
  const auto map = overlay_heat_map_on_grid(flat, values, 3, 2, 36, 24, Colormap::Heat, Normalization::MinMax, 1.0f, false);
  EXPECT_EQ(map[(13 * 40 + 24) * 3], map[(23 * 40 + 35) * 3]);
  EXPECT_NE(map[(13 * 40 + 24) * 3], map[(13 * 40 + 23) * 3]);
  // The whole photo as the grid is overlay_heat_map().
  EXPECT_EQ(overlay_heat_map_on_grid(photo, values, 3, 2, 40, 30, Colormap::Heat, Normalization::MinMax, 0.5f, true),
            overlay_heat_map(photo, values, 3, 2, Colormap::Heat, Normalization::MinMax, 0.5f, true));
}

}  // namespace
