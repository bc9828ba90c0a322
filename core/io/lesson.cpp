// Lesson files: reading with every check before trust, writing whole (core/io/lesson.hpp).
#include "core/io/lesson.hpp"

#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/base/translate.hpp"
#include "core/io/files.hpp"
#include "core/io/zip_archive.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <optional>
#include <string_view>

namespace attnlab {
namespace {

constexpr const char* kFormatName = "attnlab-lesson";
constexpr std::array<std::string_view, 9> kImageExtensions = {".jpg", ".jpeg", ".png", ".bmp", ".gif",
                                                              ".tga", ".ppm", ".pgm", ".pnm"};

std::string quote(const std::string& s) {
  return "'" + one_line(s.size() > 80 ? s.substr(0, 80) + "…" : s) + "'";
}

bool is_hex_sha256(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// Whether `j` nests deeper than `limit` arrays and objects (a state is a sidecar's few levels;
// a hostile one of a million levels would overflow the stack of whatever walks it later).
bool nests_deeper(const nlohmann::json& j, int limit) {
  if (!j.is_structured()) return false;
  if (limit == 0) return true;
  for (const auto& v : j) if (nests_deeper(v, limit - 1)) return true;
  return false;
}

// The string at j[key] (absent: ""), at most `max` bytes. Throws Error naming `where`.
std::string text_of(const nlohmann::json& j, const char* key, std::size_t max, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  // TRANSLATORS: %s is a key of the lesson's file (title, caption, role, file, sha256, hub).
  if (!it->is_string()) throw Error(where + ": " + text_format(_("its %s is not text"), key));
  const std::string& s = it->get_ref<const std::string&>();
  if (s.size() > max)
    throw Error(where + ": " +
                // TRANSLATORS: a key of the lesson's file (title, caption, ...), then two sizes in bytes.
                text_format(_("its %s is %zu bytes, more than the %zu a lesson's text may hold"), key, s.size(), max));
  return s;
}

std::vector<std::string> names_of(const nlohmann::json& j, const char* key, const std::string& where) {
  std::vector<std::string> out;
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  // TRANSLATORS: %s is a key of the lesson's file (locked, hidden).
  if (!it->is_array()) throw Error(where + ": " + text_format(_("its %s is not a list of settings"), key));
  // TRANSLATORS: a key of the lesson's file (locked, hidden), then a count.
  if (it->size() > 1000) throw Error(where + ": " + text_format(_("its %s lists %zu settings"), key, it->size()));
  for (const auto& v : *it) {
    if (!v.is_string() || v.get_ref<const std::string&>().size() > 200)
      // TRANSLATORS: %s is a key of the lesson's file (locked, hidden).
      throw Error(where + ": " + text_format(_("its %s holds something that is not a setting's name"), key));
    out.push_back(v.get<std::string>());
  }
  return out;
}

LessonModel model_of(const nlohmann::json& m, const std::string& where) {
  if (!m.is_object()) throw Error(where + ": " + _("a model entry that is not an object"));
  LessonModel model;
  model.role = text_of(m, "role", 16, where);
  if (model.role != "vit" && model.role != "compare" && model.role != "cnn")
    // TRANSLATORS: %s is the role the file names, in quotes; vit, compare and cnn are the file format's words.
    throw Error(where + ": " + text_format(_("a model's role %s is not vit, compare or cnn"), quote(model.role).c_str()));
  model.file = text_of(m, "file", 4096, where);
  model.sha256 = text_of(m, "sha256", 64, where);
  if (!model.sha256.empty() && !is_hex_sha256(model.sha256))
    // TRANSLATORS: sha256 is the lesson file's key.
    throw Error(where + ": " + _("a model's sha256 is not a SHA-256"));
  model.hub = text_of(m, "hub", 512, where);
  if (!model.hub.empty() && (model.hub.find('@') == std::string::npos || model.hub.find('/') == std::string::npos))
    // TRANSLATORS: %s is a Hugging Face Hub reference in quotes; owner/name@commit is its form (keep it as is).
    throw Error(where + ": " + text_format(_("a model's hub reference %s is not owner/name@commit"), quote(model.hub).c_str()));
  return model;
}

// lesson.json as this version writes it, from an older layout. There is one layout so far
// (format_version 1); a later change adds its step here, as migrate_json does for settings.
nlohmann::json migrate_lesson(nlohmann::json j, int from_version) {
  (void)from_version;
  return j;
}

}  // namespace

bool is_lesson_image_name(const std::string& name) {
  constexpr std::string_view kFolder = "images/";
  if (!name.starts_with(kFolder)) return false;
  const std::string_view rest = std::string_view(name).substr(kFolder.size());
  if (rest.size() < 64 || !is_hex_sha256(rest.substr(0, 64))) return false;
  const std::string_view ext = rest.substr(64);
  return std::find(kImageExtensions.begin(), kImageExtensions.end(), ext) != kImageExtensions.end();
}

std::string add_lesson_image(Lesson& lesson, std::vector<std::uint8_t> bytes, const std::string& extension) {
  std::string ext = extension;
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const LessonLimits limits;
  if (bytes.size() > limits.max_image_bytes)
    throw Error(text_format(_("a photo of %zu bytes, more than the %llu a lesson embeds"), bytes.size(),
                            static_cast<unsigned long long>(limits.max_image_bytes)));
  const std::string name = "images/" + bytes_sha256(bytes) + ext;
  if (!is_lesson_image_name(name))
    // TRANSLATORS: %s is a file's extension in quotes ('.webp').
    throw Error(text_format(_("a photo of type %s cannot go into a lesson"), quote(extension).c_str()));
  lesson.images.emplace(name, std::move(bytes));
  return name;
}

const std::string& caption_in(const LessonStep& step, const std::string& language) {
  const auto it = step.captions.find(language);
  return it != step.captions.end() ? it->second : step.caption;
}

bool is_caption_language(const std::string& code) {
  const auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
  const auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
  const std::size_t n = code.find('_') == std::string::npos ? code.size() : code.find('_');
  if (n < 2 || n > 3 || !std::all_of(code.begin(), code.begin() + static_cast<std::ptrdiff_t>(n), lower)) return false;
  if (n == code.size()) return true;
  return code.size() == n + 3 && upper(code[n + 1]) && upper(code[n + 2]);
}

nlohmann::json lesson_to_json(const Lesson& lesson) {
  nlohmann::json steps = nlohmann::json::array();
  for (const LessonStep& s : lesson.steps) {
    nlohmann::json models = nlohmann::json::array();
    for (const LessonModel& m : s.models)
      models.push_back({{"role", m.role}, {"file", m.file}, {"sha256", m.sha256}, {"hub", m.hub}});
    nlohmann::json step = {{"title", s.title}, {"caption", s.caption}, {"state", s.state},
                           {"locked", s.locked}, {"hidden", s.hidden}, {"models", models}};
    if (!s.captions.empty()) step["captions"] = s.captions;
    steps.push_back(std::move(step));
  }
  nlohmann::json j = {{"format", kFormatName}, {"format_version", kLessonFormatVersion}, {"title", lesson.title}, {"steps", steps},
                      {"program", {{"name", "attnlab"}, {"version", ATTNLAB_VERSION}}}};
  if (!lesson.language.empty()) j["language"] = lesson.language;
  return j;
}

std::vector<std::uint8_t> lesson_to_bytes(const Lesson& lesson) {
  const std::string mime = kLessonMimeType;
  const std::string json = lesson_to_json(lesson).dump(2) + "\n";
  const auto as_bytes = [](const std::string& s) {
    return std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  };
  std::vector<ZipFileToAdd> files = {{"mimetype", as_bytes(mime), false}, {"lesson.json", as_bytes(json), true}};
  for (const auto& [name, bytes] : lesson.images) files.push_back({name, bytes, false});
  // TRANSLATORS: names the lesson in messages such as "the lesson: cannot make a zip archive in memory".
  return zip_bytes(files, _("the lesson"));
}

void write_lesson(const Lesson& lesson, const std::filesystem::path& path, bool overwrite) {
  const std::vector<std::uint8_t> bytes = lesson_to_bytes(lesson);
  write_file_safely(path, std::span<const char>(reinterpret_cast<const char*>(bytes.data()), bytes.size()), overwrite);
}

Lesson lesson_from_json(const nlohmann::json& in, const std::string& what, const LessonLimits& limits) {
  if (!in.is_object() || in.value("format", std::string()) != kFormatName)
    // TRANSLATORS: lesson.json is a file's name; "format": "attnlab-lesson" is what it lacks (keep it as is).
    throw Error(what + ": " + _("its lesson.json is not an attnlab lesson (no \"format\": \"attnlab-lesson\")"));
  const auto v = in.find("format_version");
  if (v == in.end() || !v->is_number_integer() || v->get<std::int64_t>() < 1)
    // TRANSLATORS: lesson.json and format_version are the file format's names (keep them as they are).
    throw Error(what + ": " + _("its lesson.json has no format_version"));
  const std::int64_t version = v->get<std::int64_t>();
  if (version > kLessonFormatVersion)
    throw Error(what + ": " +
                // TRANSLATORS: two version numbers of the lesson format; attnlab is the program's name.
                text_format(_("a lesson of format %lld, written by a newer attnlab (this one reads up to %d): update attnlab to "
                              "open it"),
                            static_cast<long long>(version), kLessonFormatVersion));
  const nlohmann::json j = migrate_lesson(in, static_cast<int>(version));
  Lesson lesson;
  lesson.title = text_of(j, "title", limits.max_text_bytes, what);
  lesson.language = text_of(j, "language", 16, what);
  if (!lesson.language.empty() && !is_caption_language(lesson.language))
    throw Error(what + ": " + text_format(_("%s is not a language's code"), quote(lesson.language).c_str()));
  const auto steps = j.find("steps");
  if (steps == j.end() || !steps->is_array()) throw Error(what + ": " + _("its lesson.json has no list of steps"));
  if (steps->size() > limits.max_steps)
    throw Error(what + ": " +
                text_format(_("a lesson of %zu steps, more than the %zu it may hold"), steps->size(), limits.max_steps));
  for (std::size_t i = 0; i < steps->size(); ++i) {
    const nlohmann::json& s = (*steps)[i];
    // TRANSLATORS: a lesson's step, by its number (from 1), before ": <the problem>".
    const std::string where = what + ": " + text_format(_("step %zu"), i + 1);
    // TRANSLATORS: %zu is a lesson's step number (from 1).
    if (!s.is_object()) throw Error(what + ": " + text_format(_("step %zu is not an object"), i + 1));
    LessonStep step;
    step.title = text_of(s, "title", limits.max_text_bytes, where);
    step.caption = text_of(s, "caption", limits.max_text_bytes, where);
    if (const auto captions = s.find("captions"); captions != s.end() && !captions->is_null()) {
      if (!captions->is_object() || captions->size() > 16)
        throw Error(where + ": " + _("its captions are not a table of at most 16 languages"));
      for (const auto& [code, text] : captions->items()) {
        // TRANSLATORS: %s is what a lesson's file gives as a caption's language code (e.g. 'de', 'zh_CN').
        if (!is_caption_language(code)) throw Error(where + ": " + text_format(_("%s is not a language's code"), quote(code).c_str()));
        step.captions[code] = text_of(*captions, code.c_str(), limits.max_text_bytes, where);
      }
    }
    const auto state = s.find("state");
    if (state == s.end() || !state->is_object())
      // TRANSLATORS: %zu is a lesson's step number (from 1); a sidecar is the .json file of settings beside an export.
      throw Error(what + ": " + text_format(_("step %zu holds no state (a sidecar's settings)"), i + 1));
    if (nests_deeper(*state, 16)) throw Error(where + ": " + _("its state nests deeper than a sidecar's settings do"));
    step.state = *state;
    step.locked = names_of(s, "locked", where);
    step.hidden = names_of(s, "hidden", where);
    if (const auto models = s.find("models"); models != s.end() && !models->is_null()) {
      if (!models->is_array() || models->size() > 8) throw Error(where + ": " + _("its models are not a list of at most 8"));
      for (const auto& m : *models) step.models.push_back(model_of(m, where));
    }
    lesson.steps.push_back(std::move(step));
  }
  return lesson;
}

namespace {

// The lesson in an open archive (read_lesson, read_lesson_bytes).
Lesson read_archive(const ZipArchive& zip, const std::string& what, const LessonLimits& limits) {
  // Every entry's name and declared size, before any is read.
  std::uint64_t total = 0;
  std::vector<ZipEntry> images;
  std::optional<ZipEntry> json, mime;
  for (std::uint64_t i = 0; i < zip.entry_count(); ++i) {
    ZipEntry e = zip.entry(i);
    if (e.name == "mimetype") mime = e;
    else if (e.name == "lesson.json") json = e;
    else if (is_lesson_image_name(e.name)) images.push_back(e);
    else
      // TRANSLATORS: %s is an entry's name in quotes; mimetype, lesson.json and images/<SHA-256>.<ext> are names in the
      // file (keep them as they are).
      zip.fail(text_format(_("an entry named %s: a lesson holds only mimetype, lesson.json and images/<SHA-256>.<ext> (no "
                             "folders, no '..', no absolute names)"),
                           quote(e.name).c_str()));
    const std::uint64_t max = e.name == "lesson.json" ? limits.max_json_bytes : e.name == "mimetype" ? 64 : limits.max_image_bytes;
    if (e.size > max)
      // TRANSLATORS: an entry's name in quotes, then two sizes in bytes.
      zip.fail(text_format(_("the entry %s declares %llu bytes, more than the %llu it may hold"), quote(e.name).c_str(),
                           static_cast<unsigned long long>(e.size), static_cast<unsigned long long>(max)));
    total += e.size;
    if (total > limits.max_total_bytes)
      zip.fail(text_format(_("its entries declare more than %llu bytes together"),
                           static_cast<unsigned long long>(limits.max_total_bytes)));
  }
  if (mime) {
    const auto m = zip.read(*mime, 64);
    if (std::string(m.begin(), m.end()) != kLessonMimeType)
      // TRANSLATORS: mimetype is an entry's name; %s is the MIME type a lesson has (keep both as they are).
      zip.fail(text_format(_("its mimetype entry is not %s"), kLessonMimeType));
  }
  // TRANSLATORS: lesson.json is a file's name (keep it as is).
  if (!json) zip.fail(_("not a lesson: no lesson.json in the archive"));
  const std::vector<std::uint8_t> text = zip.read(*json, limits.max_json_bytes);
  const nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  // TRANSLATORS: lesson.json is a file's name (keep it as is).
  if (j.is_discarded()) zip.fail(_("its lesson.json is not JSON"));
  Lesson lesson = lesson_from_json(j, what, limits);
  for (const ZipEntry& e : images) {
    std::vector<std::uint8_t> b = zip.read(e, limits.max_image_bytes);
    if (bytes_sha256(b) != e.name.substr(7, 64))
      // TRANSLATORS: %s is an entry's name in quotes (images/<SHA-256>.jpg).
      zip.fail(text_format(_("the photo %s does not match its SHA-256 name (a corrupt lesson)"), quote(e.name).c_str()));
    lesson.images.emplace(e.name, std::move(b));
  }
  for (std::size_t i = 0; i < lesson.steps.size(); ++i) {
    const auto img = lesson.steps[i].state.find("image");
    if (img == lesson.steps[i].state.end() || img->is_null()) continue;
    if (!img->is_string() || !lesson.images.count(img->get<std::string>()))
      // TRANSLATORS: a lesson's step number (from 1), then the name of a photo in quotes.
      zip.fail(text_format(_("step %zu names the photo %s, which the lesson does not hold"), i + 1,
                           quote(img->is_string() ? img->get<std::string>() : img->dump()).c_str()));
  }
  return lesson;
}

[[noreturn]] void not_a_lesson(const std::string& what) {
  throw Error(what + ": " + _("not a lesson (an .attnlab file is a zip archive)"));
}

}  // namespace

Lesson read_lesson_bytes(std::span<const std::uint8_t> bytes, const std::string& what, const LessonLimits& limits) {
  if (!is_zip_magic(bytes)) not_a_lesson(what);
  return read_archive(ZipArchive::open_memory(bytes, what, limits.max_entries), what, limits);
}

Lesson read_lesson(const std::filesystem::path& path, const LessonLimits& limits) {
  const std::string what = platform::utf8(path);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(what + ": " + _("a folder, not a lesson file"));
  const auto size = std::filesystem::file_size(path, ec);
  // TRANSLATORS: a file's name, then the system's reason.
  if (ec) throw Error(text_format(_("cannot read the lesson '%s' (%s)"), what.c_str(), ec.message().c_str()));
  std::array<std::uint8_t, 4> first{};
  {
    std::ifstream in(path, std::ios::binary);
    // TRANSLATORS: %s is a file's name.
    if (!in) throw Error(text_format(_("cannot read the lesson '%s'"), what.c_str()));
    in.read(reinterpret_cast<char*>(first.data()), first.size());
    if (in.gcount() != 4 || size < 4) not_a_lesson(what);
  }
  if (!is_zip_magic(first)) not_a_lesson(what);
  return read_archive(ZipArchive::open_file(path, what, limits.max_entries), what, limits);
}

}  // namespace attnlab
