// `attnlab lesson make|slides|check` (issue 51, SPEC §15) as a teacher runs them, without a
// display: a lesson made from three sidecars, its slides as a PDF of three pages whose pages,
// drawn by poppler's pdftoppm, equal the PNG slides; each slide's picture is `render --from` of
// the step's state; the lesson still opens once its photos are deleted from disk; what it needs
// and lacks is listed; hostile lessons are refused in one line, within a memory limit, nothing
// written outside the lesson's own temporary folder.
#include "command_support.hpp"
#include "core/io/image.hpp"
#include "core/io/lesson.hpp"
#include "core/io/zip_archive.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

using namespace attnlab;
using namespace attnlab::testing;

namespace {

CommandRun lesson_cli(const std::string& args, const std::string& prefix = "") {
  return run_attnlab_binary(ATTNLAB_BINARY, args, "lesson", prefix);
}

std::string q(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

// What a shell command prints on its standard output.
std::string run_capture(const std::string& cmd) {
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    while (const std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

// The shell's address-space limit of 1 GiB before a run; none under AddressSanitizer, whose
// shadow memory alone reserves terabytes of address space (the limit is the plain tree's check).
std::string memory_limit() {
#if defined(__SANITIZE_ADDRESS__)
  return "";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return "";
#else
  return "ulimit -v 1048576; ";
#endif
#else
  return "ulimit -v 1048576; ";
#endif
}

// A fresh folder for one test.
std::filesystem::path fresh(const std::string& name) {
  const auto dir = temp_dir() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// The largest difference of one channel between `a` and the rows [top, top + a.height) of `b`,
// in grey levels (0 … 255); 255 when the widths differ or `b` is too short.
int max_difference(const Image& a, const Image& b, int top = 0) {
  if (a.width != b.width || top + a.height > b.height) return 255;
  float worst = 0;
  for (int y = 0; y < a.height; ++y)
    for (int x = 0; x < a.width; ++x)
      for (int c = 0; c < 3; ++c) worst = std::max(worst, std::fabs(a.at(x, y, c) - b.at(x, y + top, c)));
  return static_cast<int>(std::lround(worst * 255));
}

// Three sidecars as a teacher makes them with render: the colour head's row, a causal mask at
// K = 32, the tokenization view; on a copy of the safari photo in `dir` (deleted later).
std::vector<std::filesystem::path> three_sidecars(const std::filesystem::path& dir) {
  const auto photo = dir / "giraffe.jpg";
  std::filesystem::copy_file(asset("safari.jpg"), photo);
  const std::string image = " --image " + q(photo) + " --size 640x480";
  const std::string renders[] = {"render --view map --query 12,8" + image + " --out " + q(dir / "s1.png"),
                                 "render --view map --patch 32 --mask causal --query 5,3" + image + " --out " + q(dir / "s2.png"),
                                 "render --view tokenization" + image + " --out " + q(dir / "s3.png")};
  for (const std::string& r : renders) {
    const CommandRun run = lesson_cli(r);
    EXPECT_EQ(run.code, 0) << r << ": " << run.err;
  }
  return {dir / "s1.json", dir / "s2.json", dir / "s3.json"};
}

}  // namespace

TEST(LessonCli, MakeAndSlidesFromThreeSidecarsGiveAPdfOfThreePagesEqualToThePngSlides) {
  const auto dir = fresh("lesson_cli_slides");
  const auto sidecars = three_sidecars(dir);
  const auto lesson = dir / "giraffe.attnlab";
  const CommandRun made = lesson_cli("lesson make --out " + q(lesson) + " --title 'The giraffe' --step " + q(sidecars[0]) +
                                     "::'The *colour* head for one query' --step " + q(sidecars[1]) +
                                     "::'A causal mask:\\n- keys after the query\\n- get no weight' --step " + q(sidecars[2]));
  ASSERT_EQ(made.code, 0) << made.err;
  EXPECT_NE(made.out.find("(3 steps, 1 photo)"), std::string::npos) << made.out;
  // Made again without --force: refused, the lesson as it was.
  expect_one_line_error(lesson_cli("lesson make --out " + q(lesson) + " --step " + q(sidecars[0])), "exists");

  // The photos are embedded: deleting them from disk changes nothing.
  std::filesystem::remove(dir / "giraffe.jpg");
  const CommandRun check = lesson_cli("lesson check " + q(lesson));
  ASSERT_EQ(check.code, 0) << check.err;
  EXPECT_NE(check.out.find("3 steps, 1 photo embedded"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("step 3: s3 (view tokenization)"), std::string::npos) << check.out;

  const CommandRun pdf = lesson_cli("lesson slides " + q(lesson) + " --out " + q(dir / "giraffe.pdf"));
  ASSERT_EQ(pdf.code, 0) << pdf.err;
  const CommandRun png = lesson_cli("lesson slides " + q(lesson) + " --out " + q(dir / "slides"));
  ASSERT_EQ(png.code, 0) << png.err;
  const std::string info = run_capture("pdfinfo " + q(dir / "giraffe.pdf") + " 2>&1");
  EXPECT_NE(info.find("Pages:           3"), std::string::npos) << info;

  // poppler (Splash) smooths a picture drawn at its own size; at 4 × (288 dpi for a pixel a
  // point) it draws each pixel as a block of 4 × 4: the block's centre is the pixel.
  ASSERT_EQ(std::system(("pdftoppm -r 288 " + q(dir / "giraffe.pdf") + " " + q(dir / "page")).c_str()), 0);
  for (int i = 1; i <= 3; ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    const Image slide = load_image(dir / "slides" / ("step-0" + std::to_string(i) + ".png"));
    const Image page = load_image(dir / ("page-" + std::to_string(i) + ".ppm"));
    ASSERT_EQ(page.width, 4 * slide.width);
    ASSERT_EQ(page.height, 4 * slide.height);
    Image sampled;
    sampled.width = slide.width, sampled.height = slide.height;
    sampled.rgb.resize(slide.rgb.size());
    for (int y = 0; y < slide.height; ++y)
      for (int x = 0; x < slide.width; ++x)
        for (int c = 0; c < 3; ++c) sampled.at(x, y, c) = page.at(4 * x + 2, 4 * y + 2, c);
    EXPECT_LE(max_difference(slide, sampled), 3);
    // The slide is the step's render --from picture (what render drew first), its caption below.
    const Image rendered = load_image(dir / ("s" + std::to_string(i) + ".png"));
    EXPECT_EQ(max_difference(rendered, slide), 0);
    EXPECT_EQ(rendered.width, 640);
    if (i < 3) EXPECT_GT(slide.height, rendered.height + 20) << "no caption strip below the picture";
    else EXPECT_EQ(slide.height, rendered.height) << "a step without a caption has no strip";
  }
  // A folder of PNG slides goes into a new folder only.
  expect_one_line_error(lesson_cli("lesson slides " + q(lesson) + " --out " + q(dir / "slides")), "exists");
  std::filesystem::remove_all(dir);
}

TEST(LessonCli, CheckSaysWhichModelIsMissingAndSlidesRefuseToDrawWithoutIt) {
  const auto dir = fresh("lesson_cli_models");
  // A copy of the bundled ViT with one weight changed: its own SHA-256, not the bundled one's.
  const auto model = dir / "my_vit";
  std::filesystem::copy(asset("fashion_vit"), model, std::filesystem::copy_options::recursive);
  {
    std::fstream f(model / "model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-4, std::ios::end);
    char c = 0;
    f.read(&c, 1);
    f.seekp(-4, std::ios::end);
    c = static_cast<char>(c ^ 1);
    f.write(&c, 1);
  }
  const CommandRun r = lesson_cli("render --model " + q(model) + " --image " + q(asset("fashion_vit") / "images" / "14_bag.png") +
                                  " --size 400x300 --out " + q(dir / "v.png"));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lesson = dir / "vit.attnlab";
  ASSERT_EQ(lesson_cli("lesson make --out " + q(lesson) + " --step " + q(dir / "v.json")).code, 0);
  const CommandRun found = lesson_cli("lesson check " + q(lesson));
  EXPECT_EQ(found.code, 0) << found.out << found.err;
  EXPECT_NE(found.out.find("needs the vit model 'my_vit'"), std::string::npos) << found.out;
  EXPECT_NE(found.out.find("found at"), std::string::npos) << found.out;
  const CommandRun drawn = lesson_cli("lesson slides " + q(lesson) + " --out " + q(dir / "with"));
  EXPECT_EQ(drawn.code, 0) << drawn.err;

  std::filesystem::remove_all(model);
  const CommandRun missing = lesson_cli("lesson check " + q(lesson));
  EXPECT_EQ(missing.code, 1) << missing.out << missing.err;
  EXPECT_NE(missing.out.find("MISSING"), std::string::npos) << missing.out;
  EXPECT_NE(missing.out.find("1 model is missing"), std::string::npos) << missing.out;
  expect_one_line_error(lesson_cli("lesson slides " + q(lesson) + " --out " + q(dir / "without")),
                        "step 1 needs the vit model 'my_vit'");
  EXPECT_FALSE(std::filesystem::exists(dir / "without"));
  std::filesystem::remove_all(dir);
}

TEST(LessonCli, HostileLessonsAreRefusedInOneLineWithinAMemoryLimitWritingNothing) {
  const auto dir = fresh("lesson_cli_hostile");
  const auto work = dir / "work";
  std::filesystem::create_directories(work);
  Lesson base;
  base.title = "hostile";
  const std::string photo = add_lesson_image(base, [] {
    std::ifstream in(asset("safari.jpg"), std::ios::binary);
    return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
  }(), ".jpg");
  LessonStep step;
  step.title = "a step";
  step.state = {{"image", photo}, {"render", {{"view", "map"}, {"width", 320}, {"height", 240}}}};
  base.steps = {step};
  const auto write = [&](const std::string& name, const std::vector<std::uint8_t>& bytes) {
    std::ofstream(dir / name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return dir / name;
  };
  // A step naming a view that does not exist.
  Lesson no_view = base;
  no_view.steps[0].state["render"]["view"] = "crystal-ball";
  const auto bad_view = write("view.attnlab", lesson_to_bytes(no_view));
  expect_one_line_error(lesson_cli("lesson check " + q(bad_view)), "shows the view 'crystal-ball', which this attnlab does not have");
  // A step locking a setting that does not exist.
  Lesson no_setting = base;
  no_setting.steps[0].locked = {"warp.factor"};
  expect_one_line_error(lesson_cli("lesson check " + q(write("lock.attnlab", lesson_to_bytes(no_setting)))), "'warp.factor', which is no setting");
  // A bad value in a step's state, as apply_json refuses it.
  Lesson bad_value = base;
  bad_value.steps[0].state["patch"] = "huge";
  expect_one_line_error(lesson_cli("lesson check " + q(write("value.attnlab", lesson_to_bytes(bad_value)))), "step 1: ");
  // An entry named outside the lesson, drawn as slides from a folder inside `dir`: refused, and
  // nothing appears outside (the lesson's temporary folder is gone too).
  const std::string json = lesson_to_json(base).dump();
  const auto& photo_bytes = base.images.begin()->second;
  const std::vector<ZipFileToAdd> evil = {
      {"mimetype", std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(kLessonMimeType), std::strlen(kLessonMimeType)), false},
      {"lesson.json", std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(json.data()), json.size()), true},
      {photo, photo_bytes, false},
      {"../evil.jpg", photo_bytes, false}};
  const auto evil_lesson = write("evil.attnlab", zip_bytes(evil, "test"));
  // The run's own temporary folder (TMPDIR): the lesson's photos would go there, and nothing is left.
  const auto tmp = dir / "tmp";
  std::filesystem::create_directories(tmp);
  expect_one_line_error(lesson_cli("lesson slides " + q(evil_lesson) + " --out " + q(work / "out"), "cd " + q(work) + " && TMPDIR=" + q(tmp) + " "),
                        "an entry named '../evil.jpg'");
  EXPECT_TRUE(std::filesystem::is_empty(tmp));
  EXPECT_FALSE(std::filesystem::exists(dir / "evil.jpg"));
  EXPECT_FALSE(std::filesystem::exists(work / "out"));
  // A caption of 100 MB, under a 1 GiB address-space limit: refused from what the zip declares.
  Lesson huge = base;
  huge.steps[0].caption.assign(100u << 20, 'x');
  const auto big = write("caption.attnlab", lesson_to_bytes(huge));
  huge = Lesson{};
  expect_one_line_error(lesson_cli("lesson check " + q(big), memory_limit()), "more than the 16777216 it may hold");
  // A future format: what to do said in the line.
  nlohmann::json future = lesson_to_json(base);
  future["format_version"] = 99;
  const std::string ftext = future.dump();
  const std::vector<ZipFileToAdd> fut = {
      {"mimetype", std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(kLessonMimeType), std::strlen(kLessonMimeType)), false},
      {"lesson.json", std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(ftext.data()), ftext.size()), true},
      {photo, photo_bytes, false}};
  expect_one_line_error(lesson_cli("lesson check " + q(write("future.attnlab", zip_bytes(fut, "test")))), "update attnlab to open it");
  std::filesystem::remove_all(dir);
}
