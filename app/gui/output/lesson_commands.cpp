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
#include "core/base/translate.hpp"
#include "core/io/files.hpp"
#include "core/io/image.hpp"
#include "core/io/lesson.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

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
  struct StepArgument {
    std::string spec;                             // SIDECAR.json[::CAPTION]
    std::map<std::string, std::string> captions;  // --caption LANG::TEXT after it
  };
  std::vector<StepArgument> steps;
  const std::vector<CommandFlag> flags = {
      {"--out", true, [&](Text t, Text) { out = platform::path_from_utf8(t); }, "", true},
      {"--title", true, [&](Text t, Text) { title = t; }, "", true},
      {"--force", false, [&](Text, Text) { force = true; }, "", true},
      // TRANSLATORS: what --step needs, in "--step needs a sidecar, ...": SIDECAR.json and CAPTION are placeholders.
      {"--step", true, [&](Text t, Text) { steps.push_back({t, {}}); }, N_("a sidecar, SIDECAR.json[::CAPTION]")},
      // The caption of the --step before it in another language (issue 52).
      {"--caption", true,
       [&](Text t, Text) {
         if (steps.empty()) throw Error(_("--caption LANG::TEXT gives the caption of the --step before it, and none came before"));
         const auto sep = t.find("::");
         const std::string code = t.substr(0, sep);
         if (sep == std::string::npos || !is_caption_language(code))
           // TRANSLATORS: %s is the argument given; LANG::TEXT is a placeholder (a language code, "::", the caption).
           throw Error(text_format(_("--caption needs LANG::TEXT, a language code such as de or zh_CN before the '::', got '%s'"), t.c_str()));
         steps.back().captions[code] = caption_from_argument(t.substr(sep + 2));
       },
       // TRANSLATORS: what --caption needs, in "--caption needs ...": LANG::TEXT is a placeholder.
       N_("a caption in another language, LANG::TEXT")},
  };
  // TRANSLATORS: the end of "unknown option 'X' of attnlab lesson make (see attnlab --help)".
  parse_flags(args, flags, {N_(" of attnlab lesson make")});
  if (out.empty()) throw Error(_("--out L.attnlab is required"));
  if (out.extension() != ".attnlab") throw Error(text_format(_("--out must name a .attnlab file, got '%s'"), platform::utf8(out).c_str()));
  if (steps.empty()) throw Error(_("a lesson needs at least one --step SIDECAR.json[::CAPTION]"));
  std::error_code ec;
  if (!force && std::filesystem::exists(out, ec))
    throw Error(text_format(_("'%s' exists; nothing was written (use --force to replace it)"), platform::utf8(out).c_str()));
  Lesson lesson;
  lesson.title = title.empty() ? platform::utf8(out.stem()) : title;
  lesson.language = current_language();  // the captions of --step are in the language in use (--lang)
  for (const StepArgument& a : steps) {
    const auto sep = a.spec.find("::");
    const std::string sidecar = a.spec.substr(0, sep);
    const std::string caption = sep == std::string::npos ? "" : caption_from_argument(a.spec.substr(sep + 2));
    lesson.steps.push_back(step_from_sidecar(lesson, platform::path_from_utf8(sidecar), caption));
    lesson.steps.back().captions = a.captions;
    lesson.steps.back().captions.erase(lesson.language);  // that one is the step's own caption
  }
  check_steps(lesson, platform::utf8(out));
  write_lesson(lesson, out, force);
  const std::string steps_text = text_format(tr_n("%zu step", "%zu steps", lesson.steps.size()), lesson.steps.size());
  const std::string photos_text = text_format(tr_n("%zu photo", "%zu photos", lesson.images.size()), lesson.images.size());
  // TRANSLATORS: the lesson file written, then "3 steps" and "2 photos".
  std::printf(_("attnlab: wrote %s (%s, %s)\n"), platform::utf8(out).c_str(), steps_text.c_str(), photos_text.c_str());
  return 0;
}

// The lesson file named by the one positional argument of slides and check.
struct LessonArgs {
  std::filesystem::path lesson;
  FlagRules rules(const std::string& for_what) {
    FlagRules r{for_what};
    r.positional = [this, for_what](const std::string& a) {
      if (!lesson.empty())
        throw Error(text_format(_("one lesson at a time: '%s' after '%s'"), a.c_str(), platform::utf8(lesson).c_str()));
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
  // The caption in the language in use (--lang), else in the lesson's own.
  const CaptionPixels strip = caption_strip_pixels(parse_caption(caption_in(lesson.steps[index], current_language())), picture.width, ui_scale);
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
  parse_flags(args, flags, l.rules(N_(" of attnlab lesson slides")));
  if (l.lesson.empty()) throw Error(_("lesson slides needs a lesson file: attnlab lesson slides L.attnlab --out L.pdf|DIR"));
  if (out.empty()) throw Error(_("--out L.pdf or --out DIR (a new folder of PNG slides) is required"));
  const bool pdf = out.extension() == ".pdf";
  std::error_code ec;
  if (pdf && !force && std::filesystem::exists(out, ec))
    throw Error(text_format(_("'%s' exists; nothing was written (use --force to replace it)"), platform::utf8(out).c_str()));
  if (!pdf && std::filesystem::exists(out, ec))
    throw Error(text_format(_("'%s' exists; PNG slides go into a new folder"), platform::utf8(out).c_str()));
  if (pdf && !can_write_pdf()) write_slides_pdf({}, out, force);  // says this build writes none
  const std::string what = platform::utf8(l.lesson);
  const Lesson lesson = read_lesson(l.lesson);
  if (lesson.steps.empty()) throw Error(text_format(_("%s: a lesson without steps has no slides"), what.c_str()));
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
      pngs.push_back(encode_png(pages[i].width, pages[i].height, 3, pages[i].rgb, text_format(_("slide %zu"), i + 1)));
    for (std::size_t i = 0; i < pages.size(); ++i) {
      std::snprintf(name, sizeof name, "step-%02zu.png", i + 1);
      files.push_back({name, std::span<const char>(reinterpret_cast<const char*>(pngs[i].data()), pngs[i].size())});
    }
    write_new_folder(out, files);
  }
  std::printf(tr_n("attnlab: wrote %s (%zu slide)\n", "attnlab: wrote %s (%zu slides)\n", pages.size()), platform::utf8(out).c_str(),
              pages.size());
  return 0;
}

int lesson_check(const std::vector<std::string>& args) {
  LessonArgs l;
  parse_flags(args, {}, l.rules(N_(" of attnlab lesson check")));
  if (l.lesson.empty()) throw Error(_("lesson check needs a lesson file: attnlab lesson check L.attnlab"));
  const std::string what = platform::utf8(l.lesson);
  const Lesson lesson = read_lesson(l.lesson);
  check_steps(lesson, what);
  const std::string steps_text = text_format(tr_n("%zu step", "%zu steps", lesson.steps.size()), lesson.steps.size());
  const std::string photos_text =
      text_format(tr_n("%zu photo embedded", "%zu photos embedded", lesson.images.size()), lesson.images.size());
  // TRANSLATORS: the lesson file, its title in quotes, then "3 steps" and "2 photos embedded".
  std::printf(_("%s: \"%s\", %s, %s\n"), what.c_str(), one_line(lesson.title).c_str(), steps_text.c_str(), photos_text.c_str());
  int missing = 0;
  for (std::size_t i = 0; i < lesson.steps.size(); ++i) {
    const LessonStep& step = lesson.steps[i];
    const std::string view = step.state["render"].value("view", "map");
    // TRANSLATORS: a lesson's step: its number, its title, then the view's name (an identifier, kept as it is).
    std::printf(_("step %zu: %s (view %s)\n"), i + 1, one_line(step.title).c_str(), view.c_str());
    for (const FoundModel& f : find_lesson_models(step)) {
      if (f.path) {
        const std::string found =
            // TRANSLATORS: a model a lesson's step needs (its description), then where it was found.
            text_format(_("needs %s: found at %s"), describe_lesson_model(f.model).c_str(), platform::utf8(*f.path).c_str());
        std::printf("  %s\n", found.c_str());
      } else {
        ++missing;
        const std::string pull = f.model.hub.empty() ? "" : text_format(_(" (attnlab models pull %s)"), f.model.hub.c_str());
        // TRANSLATORS: a model a lesson's step needs and that is not here; %2$s says how to get it (or is empty).
        std::printf("  %s\n", text_format(_("needs %s: MISSING%s"), describe_lesson_model(f.model).c_str(), pull.c_str()).c_str());
      }
    }
  }
  if (missing > 0) {
    std::printf(tr_n("%d model is missing\n", "%d models are missing\n", missing), missing);
    return 1;
  }
  std::printf("%s\n", _("everything it needs is here"));
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
  // TRANSLATORS: make, slides and check are the lesson command's subcommands (typed as they are).
  throw Error(sub.empty() ? std::string(_("lesson needs make, slides or check (see attnlab --help)"))
                          // TRANSLATORS: make, slides and check are the lesson command's subcommands (typed as they are).
                          : text_format(_("unknown lesson command '%s' (expected make, slides or check)"), one_line(sub).c_str()));
}

}  // namespace attnlab::app
