// A lesson's steps as documents (app/commands/lesson_steps.hpp).
#include "app/commands/lesson_steps.hpp"

#include "app/commands/options.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/base/platform.hpp"
#include "core/io/files.hpp"
#include "core/io/hub.hpp"
#include "core/vit/vit.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>

namespace attnlab::app {
namespace {

// The roles of a step's models and where the document keeps each (its JSON path: role.model).
constexpr const char* kModelRoles[] = {"vit", "compare", "cnn"};

// The text at state[role]["model"], "" when absent.
std::string model_in(const nlohmann::json& state, const std::string& role) {
  const auto r = state.find(role);
  if (r == state.end() || !r->is_object()) return "";
  const auto m = r->find("model");
  return m != r->end() && m->is_string() ? m->get<std::string>() : "";
}

// A model that is no file: the hand-made heads as Compare's B, the random ResNet-18.
bool built_in_model(const std::string& text) { return text.empty() || text == "hand-made" || text == kCnnRandomResnet18; }

// "ORG/NAME@COMMIT" when `path` is a Hub cache snapshot (…/models--ORG--NAME/snapshots/COMMIT[/file]).
std::string hub_reference(const std::filesystem::path& path) {
  std::vector<std::string> parts;
  for (const auto& p : path) parts.push_back(platform::utf8(p));
  for (std::size_t i = 0; i + 2 < parts.size(); ++i)
    if (parts[i].starts_with("models--") && parts[i + 1] == "snapshots") {
      std::string repo = parts[i].substr(8);
      const auto sep = repo.find("--");
      if (sep != std::string::npos) repo.replace(sep, 2, "/");
      return repo + "@" + parts[i + 2];
    }
  return "";
}

std::vector<std::uint8_t> read_photo(const std::filesystem::path& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  // TRANSLATORS: the photo's file, and why the system could not read it.
  if (ec) throw Error(text_format(_("cannot read the photo '%s' (%s)"), platform::utf8(path).c_str(), ec.message().c_str()));
  if (size > LessonLimits{}.max_image_bytes)
    throw Error(text_format(_("the photo '%s' is %llu bytes, more than a lesson embeds"), platform::utf8(path).c_str(),
                            static_cast<unsigned long long>(size)));
  std::ifstream in(path, std::ios::binary);
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
    throw Error(text_format(_("cannot read the photo '%s'"), platform::utf8(path).c_str()));
  return bytes;
}

// "step 3", counted from 1, for the errors.
std::string step_name(std::size_t index) { return text_format(_("step %zu"), index + 1); }

}  // namespace

std::string lesson_usage() {
  std::string text = R"(  attnlab lesson make --out L.attnlab [--title T] --step SIDECAR.json[::CAPTION]
                 [--caption LANG::TEXT]... ... [--force]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           a lesson from sidecars (render --out X.png writes X.json), a
                           step each, in order: its photo embedded, its models named by
                           SHA-256 (and repo@commit from the Hub); \n in CAPTION breaks
                           a line; --caption LANG::TEXT after a --step gives its
                           caption in another language (CAPTION's is the one of
                           --lang), shown where that language is in use
)");
  text += R"(  attnlab lesson slides L.attnlab --out L.pdf|DIR [--force]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           every step as a slide: its picture as render --from draws it,
                           its caption below; a PDF (a page a slide) or a new folder of PNGs
)");
  text += R"(  attnlab lesson check L.attnlab
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           what the lesson holds and needs, and what is missing here (exit 1)
)");
  text += "  attnlab L.attnlab        ";
  // TRANSLATORS: --help text: what `attnlab L.attnlab` does (after the command, on its line).
  text += _("open the lesson in the app, playing from step 1\n");
  return text;
}

LessonStep step_from_state(Lesson& lesson, nlohmann::json state, std::string title, std::string caption) {
  if (!state.is_object()) throw Error(_("a step's state must be a JSON object of settings"));
  for (const char* key : kMachineKeys) state.erase(key);
  // The recent files are this machine's, and name its folders: not a lesson's.
  if (const auto vit = state.find("vit"); vit != state.end() && vit->is_object()) vit->erase("recent");
  state.erase("lesson");
  {
    Document d;  // the values checked as the window will apply them (one line for a bad one)
    apply_json(state, d);
  }
  LessonStep step;
  step.title = std::move(title);
  step.caption = std::move(caption);
  if (const auto img = state.find("image"); img != state.end() && img->is_string() && !img->get<std::string>().empty()) {
    const std::string text = img->get<std::string>();
    if (!lesson.images.count(text)) {  // a path on this machine (an entry name is kept as it is)
      const std::filesystem::path photo = platform::path_from_utf8(text);
      *img = add_lesson_image(lesson, read_photo(photo), platform::utf8(photo.extension()));
    }
  }
  for (const std::string role : kModelRoles) {
    const std::string text = model_in(state, role);
    if (built_in_model(text)) continue;
    const std::filesystem::path path = platform::path_from_utf8(text);
    std::error_code ec;
    // TRANSLATORS: the model's role in the step (vit, compare, cnn: the settings' names), its file.
    if (!std::filesystem::exists(path, ec))
      throw Error(text_format(_("the %s model '%s' does not exist"), role.c_str(), text.c_str()));
    LessonModel m;
    m.role = role;
    m.sha256 = file_sha256(checkpoint_file(path));
    m.hub = hub_reference(path);
    m.file = m.hub.empty() ? platform::utf8(path.filename()) : m.hub.substr(0, m.hub.find('@'));
    step.models.push_back(std::move(m));
  }
  step.state = std::move(state);
  return step;
}

LessonStep step_from_sidecar(Lesson& lesson, const std::filesystem::path& sidecar, std::string caption) {
  const std::string what = platform::utf8(sidecar);
  std::ifstream in(sidecar);
  if (!in) throw Error(text_format(_("cannot read the sidecar '%s'"), what.c_str()));
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error(text_format(_("'%s' is not a JSON settings file (a render's or an export's sidecar)"), what.c_str()));
  if (!j.contains("render") && !(j.contains("export") && j.contains("window")))
    // TRANSLATORS: "render" is a key of the file: keep it.
    throw Error(text_format(_("'%s' was not written by attnlab render or an export (no \"render\" entry)"), what.c_str()));
  nlohmann::json state = j;
  if (!state.contains("render")) {  // an export: its main map at the window's size
    nlohmann::json r = j["window"].is_object() ? j["window"] : nlohmann::json::object();
    r["view"] = "map";
    state["render"] = r;
  }
  try {
    return step_from_state(lesson, std::move(state), platform::utf8(sidecar.stem()), std::move(caption));
  } catch (const Error& e) {
    throw Error("'" + what + "': " + e.what());
  }
}

void check_lesson_step(const Lesson& lesson, std::size_t index, const std::vector<std::string>& views) {
  const LessonStep& step = lesson.steps.at(index);
  const std::string where = step_name(index);
  try {
    Document d;
    apply_json(step.state, d);
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
  const auto render = step.state.find("render");
  if (render == step.state.end() || !render->is_object())
    // TRANSLATORS: "step 3 names no view …"; "render" is a key of the file: keep it.
    throw Error(text_format(_("%s names no view (its state has no \"render\" entry)"), where.c_str()));
  const auto view = render->find("view");
  // TRANSLATORS: "step 3 names no view".
  if (view == render->end() || !view->is_string()) throw Error(text_format(_("%s names no view"), where.c_str()));
  if (std::find(views.begin(), views.end(), view->get<std::string>()) == views.end())
    throw Error(text_format(_("%s shows the view '%s', which this attnlab does not have"), where.c_str(),
                            one_line(view->get<std::string>()).c_str()));
  for (const char* side : {"width", "height"}) {
    const auto v = render->find(side);
    if (v != render->end() && (!v->is_number_integer() || v->get<std::int64_t>() < 16 || v->get<std::int64_t>() > 8192))
      // TRANSLATORS: "step 3: its render width is …"; width or height, the file's key.
      throw Error(text_format(_("%s: its render %s is not a number of pixels from 16 to 8192"), where.c_str(), side));
  }
  const auto paths = setting_paths();
  for (const auto* names : {&step.locked, &step.hidden})
    for (const std::string& n : *names)
      if (std::find(paths.begin(), paths.end(), n) == paths.end())
        throw Error(text_format(_("%s locks or hides '%s', which is no setting of this attnlab"),
                                where.c_str(), one_line(n).c_str()));
}

std::string describe_lesson_model(const LessonModel& m) {
  // TRANSLATORS: the model's role in the step (vit, compare, cnn: the settings' names), its file.
  std::string s = text_format(_("the %s model '%s'"), m.role.c_str(), one_line(m.file).c_str());
  if (!m.sha256.empty()) s += " (SHA-256 " + m.sha256.substr(0, 12) + "…";
  if (!m.hub.empty()) s += std::string(m.sha256.empty() ? " (" : ", ") + "Hub " + one_line(m.hub);
  if (!m.sha256.empty() || !m.hub.empty()) s += ")";
  return s;
}

std::vector<FoundModel> find_lesson_models(const LessonStep& step) {
  std::vector<FoundModel> found;
  const auto matches = [](const std::filesystem::path& p, const std::string& sha) {
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) return false;
    try {
      return sha.empty() || file_sha256(checkpoint_file(p)) == sha;
    } catch (const Error&) {
      return false;
    }
  };
  for (const LessonModel& m : step.models) {
    FoundModel f{m, std::nullopt};
    // The installation's own copy first (a bundled lesson's model, wherever the lesson was made).
    if (!m.sha256.empty()) {  // a bundled model (assets/fashion_vit, assets/lessons/models/…) with that hash
      std::error_code ec;
      for (auto it = std::filesystem::recursive_directory_iterator(assets_dir(), ec); !ec && it != std::filesystem::recursive_directory_iterator();
           it.increment(ec)) {
        if (it.depth() >= 3) it.disable_recursion_pending();
        std::error_code dir_ec;
        if (it->is_directory(dir_ec) && std::filesystem::exists(it->path() / "config.json", dir_ec) && matches(it->path(), m.sha256)) {
          f.path = it->path();
          break;
        }
      }
    }
    if (!f.path && !m.hub.empty()) {
      try {
        const hub::RepoRef ref = hub::parse_repo_ref(m.hub);
        if (const auto snapshot = hub::cached_model(ref, hub::HubConfig::from_environment()); snapshot && matches(*snapshot, m.sha256))
          f.path = *snapshot;
      } catch (const Error&) {
      }
    }
    const std::string named = model_in(step.state, m.role);
    if (!f.path && !named.empty() && matches(platform::path_from_utf8(named), m.sha256)) f.path = platform::path_from_utf8(named);
    found.push_back(std::move(f));
  }
  return found;
}

LessonFolder::LessonFolder(const Lesson& lesson) {
  std::error_code ec;
  const auto tmp = std::filesystem::temp_directory_path(ec);
  if (ec) throw Error(text_format(_("no temporary folder for the lesson's photos (%s)"), ec.message().c_str()));
  if (const int err = platform::create_unique_folder(tmp, "attnlab-lesson-", 0700, dir_); err != 0)
    throw Error(text_format(_("cannot make a temporary folder for the lesson's photos in '%s' (%s)"), platform::utf8(tmp).c_str(),
                            std::error_code(err, std::generic_category()).message().c_str()));
  try {
    write_missing(lesson);
  } catch (...) {
    std::filesystem::remove_all(dir_, ec);
    throw;
  }
}

void LessonFolder::write_missing(const Lesson& lesson) {
  for (const auto& [name, bytes] : lesson.images) {
    const std::filesystem::path p = photo(name);
    if (platform::name_is_free(p))
      write_file_safely(p, std::span<const char>(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
}

LessonFolder::~LessonFolder() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::filesystem::path LessonFolder::photo(const std::string& name) const {
  if (!is_lesson_image_name(name)) throw Error(text_format(_("'%s' is not a lesson's photo"), one_line(name).c_str()));
  return dir_ / name.substr(7);  // the name after "images/": its SHA-256 and extension, checked
}

nlohmann::json step_sidecar(const Lesson& lesson, std::size_t index, const LessonFolder& folder) {
  const LessonStep& step = lesson.steps.at(index);
  nlohmann::json j = step.state;
  if (const auto img = j.find("image"); img != j.end() && img->is_string() && !img->get<std::string>().empty())
    *img = platform::utf8(folder.photo(img->get<std::string>()));
  for (const FoundModel& f : find_lesson_models(step)) {
    if (!f.path)
      throw Error(f.model.hub.empty()
                      // TRANSLATORS: "step 3 needs the vit model 'x' (SHA-256 …), which is not on this machine".
                      ? text_format(_("%s needs %s, which is not on this machine"), step_name(index).c_str(),
                                    describe_lesson_model(f.model).c_str())
                      // TRANSLATORS: as above, then the command that downloads the model from the Hub.
                      : text_format(_("%s needs %s, which is not on this machine: attnlab models pull %s"),
                                    step_name(index).c_str(),
                                    describe_lesson_model(f.model).c_str(), f.model.hub.c_str()));
    j[f.model.role]["model"] = platform::utf8(*f.path);
    if (f.model.role == "vit" && !f.model.sha256.empty()) j["vit_model_sha256"] = f.model.sha256;
    if (f.model.role == "compare" && !f.model.sha256.empty()) j["compare"]["vit_model_sha256"] = f.model.sha256;
  }
  return j;
}

}  // namespace attnlab::app
