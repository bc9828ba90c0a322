// `attnlab lesson make|slides|check` (app/gui/output/lesson_commands.hpp).
#include "app/gui/output/lesson_commands.hpp"

#include "app/commands/caption_text.hpp"
#include "app/commands/command_flags.hpp"
#include "app/commands/lesson_steps.hpp"
#include "app/gui/output/render_commands.hpp"
#include "app/gui/output/slides_pdf.hpp"
#include "app/gui/output/caption_strip.hpp"
#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/io/files.hpp"
#include "core/io/image.hpp"
#include "core/io/lesson.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

namespace attnlab::app {
namespace {

using Text = const std::string&;

// "\n" typed in a --step caption (a shell argument) is a line break: lists need them.
std::string caption_from_argument(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == 'n') {
      out += '\n';
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

// Every step checked (check_lesson_step), the first problem thrown naming the lesson.
void check_steps(const Lesson& lesson, const std::string& what) {
  const auto views = lesson_view_names();
  for (std::size_t i = 0; i < lesson.steps.size(); ++i) {
    try {
      check_lesson_step(lesson, i, views);
    } catch (const Error& e) {
      throw Error(what + ": " + e.what());
    }
  }
}

int lesson_make(const std::vector<std::string>& args) {
  std::filesystem::path out;
  std::string title;
  bool force = false;
  std::vector<std::string> steps;
  const std::vector<CommandFlag> flags = {
      {"--out", true, [&](Text t, Text) { out = platform::path_from_utf8(t); }, "", true},
      {"--title", true, [&](Text t, Text) { title = t; }, "", true},
      {"--force", false, [&](Text, Text) { force = true; }, "", true},
      {"--step", true, [&](Text t, Text) { steps.push_back(t); }, "a sidecar, SIDECAR.json[::CAPTION]"},
  };
  parse_flags(args, flags, {" of attnlab lesson make"});
  if (out.empty()) throw Error("--out L.attnlab is required");
  if (out.extension() != ".attnlab") throw Error("--out must name a .attnlab file, got '" + platform::utf8(out) + "'");
  if (steps.empty()) throw Error("a lesson needs at least one --step SIDECAR.json[::CAPTION]");
  std::error_code ec;
  if (!force && std::filesystem::exists(out, ec))
    throw Error("'" + platform::utf8(out) + "' exists; nothing was written (use --force to replace it)");
  Lesson lesson;
  lesson.title = title.empty() ? platform::utf8(out.stem()) : title;
  for (const std::string& s : steps) {
    const auto sep = s.find("::");
    const std::string sidecar = s.substr(0, sep);
    const std::string caption = sep == std::string::npos ? "" : caption_from_argument(s.substr(sep + 2));
    lesson.steps.push_back(step_from_sidecar(lesson, platform::path_from_utf8(sidecar), caption));
  }
  check_steps(lesson, platform::utf8(out));
  write_lesson(lesson, out, force);
  std::printf("attnlab: wrote %s (%zu step%s, %zu photo%s)\n", platform::utf8(out).c_str(), lesson.steps.size(),
              lesson.steps.size() == 1 ? "" : "s", lesson.images.size(), lesson.images.size() == 1 ? "" : "s");
  return 0;
}

// The lesson file named by the one positional argument of slides and check.
struct LessonArgs {
  std::filesystem::path lesson;
  FlagRules rules(const std::string& for_what) {
    FlagRules r{for_what};
    r.positional = [this, for_what](const std::string& a) {
      if (!lesson.empty()) throw Error("one lesson at a time: '" + a + "' after '" + platform::utf8(lesson) + "'");
      lesson = platform::path_from_utf8(a);
    };
    return r;
  }
};

// Step `index`'s slide: `render --from` of its state (drawn in `folder`), its caption's strip below.
SlidePage draw_slide(const Lesson& lesson, std::size_t index, const LessonFolder& folder) {
  const nlohmann::json sidecar = step_sidecar(lesson, index, folder);
  const std::string stem = "step-" + std::to_string(index + 1);
  const std::filesystem::path from = folder.path() / (stem + ".json"), png = folder.path() / (stem + ".png");
  write_file_safely(from, sidecar.dump(2) + "\n", true);
  render_from_quietly(from, png);
  const Image picture = load_image(png);
  float ui_scale = 1.0f;
  if (const auto c = sidecar.find("classroom"); c != sidecar.end() && c->is_object())
    if (const auto s = c->find("ui_scale"); s != c->end() && s->is_number()) ui_scale = std::clamp(s->get<float>(), 0.5f, 4.0f);
  const CaptionPixels strip = caption_strip_pixels(parse_caption(lesson.steps[index].caption), picture.width, ui_scale);
  SlidePage page;
  page.width = picture.width;
  page.height = picture.height + strip.height;
  page.rgb.reserve(static_cast<std::size_t>(page.width) * static_cast<std::size_t>(page.height) * 3);
  for (const float v : picture.rgb) page.rgb.push_back(static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f)));
  page.rgb.insert(page.rgb.end(), strip.rgb.begin(), strip.rgb.end());
  return page;
}

int lesson_slides(const std::vector<std::string>& args) {
  LessonArgs l;
  std::filesystem::path out;
  bool force = false;
  const std::vector<CommandFlag> flags = {
      {"--out", true, [&](Text t, Text) { out = platform::path_from_utf8(t); }, "", true},
      {"--force", false, [&](Text, Text) { force = true; }, "", true},
  };
  parse_flags(args, flags, l.rules(" of attnlab lesson slides"));
  if (l.lesson.empty()) throw Error("lesson slides needs a lesson file: attnlab lesson slides L.attnlab --out L.pdf|DIR");
  if (out.empty()) throw Error("--out L.pdf or --out DIR (a new folder of PNG slides) is required");
  const bool pdf = out.extension() == ".pdf";
  std::error_code ec;
  if (pdf && !force && std::filesystem::exists(out, ec))
    throw Error("'" + platform::utf8(out) + "' exists; nothing was written (use --force to replace it)");
  if (!pdf && std::filesystem::exists(out, ec))
    throw Error("'" + platform::utf8(out) + "' exists; PNG slides go into a new folder");
  if (pdf && !can_write_pdf()) write_slides_pdf({}, out, force);  // says this build writes none
  const std::string what = platform::utf8(l.lesson);
  const Lesson lesson = read_lesson(l.lesson);
  if (lesson.steps.empty()) throw Error(what + ": a lesson without steps has no slides");
  check_steps(lesson, what);
  const LessonFolder folder(lesson);
  std::vector<SlidePage> pages;
  for (std::size_t i = 0; i < lesson.steps.size(); ++i) {
    try {
      pages.push_back(draw_slide(lesson, i, folder));
    } catch (const Error& e) {
      throw Error(what + ": " + e.what());
    }
  }
  if (pdf) {
    write_slides_pdf(pages, out, force);
  } else {
    std::vector<std::vector<std::uint8_t>> pngs;
    std::vector<FileToWrite> files;
    char name[32];
    for (std::size_t i = 0; i < pages.size(); ++i)
      pngs.push_back(encode_png(pages[i].width, pages[i].height, 3, pages[i].rgb, "slide " + std::to_string(i + 1)));
    for (std::size_t i = 0; i < pages.size(); ++i) {
      std::snprintf(name, sizeof name, "step-%02zu.png", i + 1);
      files.push_back({name, std::span<const char>(reinterpret_cast<const char*>(pngs[i].data()), pngs[i].size())});
    }
    write_new_folder(out, files);
  }
  std::printf("attnlab: wrote %s (%zu slide%s)\n", platform::utf8(out).c_str(), pages.size(), pages.size() == 1 ? "" : "s");
  return 0;
}

int lesson_check(const std::vector<std::string>& args) {
  LessonArgs l;
  parse_flags(args, {}, l.rules(" of attnlab lesson check"));
  if (l.lesson.empty()) throw Error("lesson check needs a lesson file: attnlab lesson check L.attnlab");
  const std::string what = platform::utf8(l.lesson);
  const Lesson lesson = read_lesson(l.lesson);
  check_steps(lesson, what);
  std::printf("%s: \"%s\", %zu step%s, %zu photo%s embedded\n", what.c_str(), one_line(lesson.title).c_str(),
              lesson.steps.size(), lesson.steps.size() == 1 ? "" : "s", lesson.images.size(), lesson.images.size() == 1 ? "" : "s");
  int missing = 0;
  for (std::size_t i = 0; i < lesson.steps.size(); ++i) {
    const LessonStep& step = lesson.steps[i];
    const std::string view = step.state["render"].value("view", "map");
    std::printf("step %zu: %s (view %s)\n", i + 1, one_line(step.title).c_str(), view.c_str());
    for (const FoundModel& f : find_lesson_models(step)) {
      if (f.path) {
        std::printf("  needs %s: found at %s\n", describe_lesson_model(f.model).c_str(), platform::utf8(*f.path).c_str());
      } else {
        ++missing;
        std::printf("  needs %s: MISSING%s\n", describe_lesson_model(f.model).c_str(),
                    f.model.hub.empty() ? "" : (" (attnlab models pull " + f.model.hub + ")").c_str());
      }
    }
  }
  if (missing > 0) {
    std::printf("%d model%s missing\n", missing, missing == 1 ? " is" : "s are");
    return 1;
  }
  std::printf("everything it needs is here\n");
  return 0;
}

}  // namespace

std::vector<std::string> lesson_view_names() {
  std::vector<std::string> names = render_view_names();
  for (std::string& v : render_vit_view_names())
    if (std::find(names.begin(), names.end(), v) == names.end()) names.push_back(std::move(v));
  return names;
}

int run_lesson(const std::vector<std::string>& args) {
  const std::string sub = args.empty() ? "" : args[0];
  const std::vector<std::string> rest(args.begin() + (args.empty() ? 0 : 1), args.end());
  if (sub == "make") return lesson_make(rest);
  if (sub == "slides") return lesson_slides(rest);
  if (sub == "check") return lesson_check(rest);
  throw Error(sub.empty() ? "lesson needs make, slides or check (see attnlab --help)"
                          : "unknown lesson command '" + one_line(sub) + "' (expected make, slides or check)");
}

}  // namespace attnlab::app
