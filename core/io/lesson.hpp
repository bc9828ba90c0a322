#pragma once
// Lesson files (SPEC §15, issue 51): a lesson a teacher prepares once and replays on any
// classroom machine. One `.attnlab` file, a zip archive (core/io/zip_archive.hpp) of
//   mimetype                  "application/x-attnlab-lesson", first and stored (as ODF and EPUB
//                             do), so that the desktop's shared-mime-info tells it by its bytes;
//   lesson.json               the title and the ordered steps (lesson_to_json's layout below);
//   images/<SHA-256>.<ext>    each photo a step uses, its name its contents' SHA-256.
// A step's `state` is a sidecar's document (what `render --from` reads, app/commands/document.hpp)
// whose "image" names an embedded photo; its panels are the state's own "classroom" entry.
// Models are not embedded: a step names each by its file's SHA-256 and, for a Hub model,
// `repo@commit`. This layer knows nothing of documents or views: app/commands/lesson_steps.hpp
// checks and applies the states.
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnlab {

/// The MIME type of a lesson file (packaging/attnlab-lesson.xml) and its `mimetype` entry.
inline constexpr const char* kLessonMimeType = "application/x-attnlab-lesson";
/// The lesson.json layout this version writes; read_lesson() migrates older ones and refuses newer.
inline constexpr int kLessonFormatVersion = 1;

/// What a lesson file may hold, checked from what the archive declares before anything is
/// allocated for it (a hostile file is refused in one line within the memory budget).
struct LessonLimits {
  std::uint64_t max_entries = 4096;             ///< zip entries
  std::uint64_t max_json_bytes = 16ull << 20;   ///< lesson.json, uncompressed
  std::uint64_t max_image_bytes = 64ull << 20;  ///< one embedded photo
  std::uint64_t max_total_bytes = 512ull << 20; ///< every entry together, uncompressed
  std::size_t max_steps = 1000;
  std::size_t max_text_bytes = 64 << 10;        ///< one title or caption (UTF-8 bytes)
};

/// A model a step needs, by identity rather than by path.
struct LessonModel {
  std::string role;    ///< which of the state's models: "vit" (vit.model), "compare" (compare.model), "cnn" (cnn.model)
  std::string file;    ///< the file or folder name it had where the lesson was made (for messages)
  std::string sha256;  ///< the SHA-256 of its weights file, 64 lowercase hex digits ("" for a built-in one)
  std::string hub;     ///< "owner/name@commit" when it came from the Hugging Face Hub, else ""
  bool operator==(const LessonModel&) const = default;
};

/// One step of a lesson.
struct LessonStep {
  std::string title;    ///< a few words, shown in the step counter
  std::string caption;  ///< the lower third: a small Markdown subset (*emphasis*, **strong**, "- " lists, `math`), in the lesson's language
  /// The caption in other languages (issue 52), by catalog code ("de", "zh_CN"): caption_in()
  /// shows the one of the language in use, else `caption`. At most 16, each as a caption.
  std::map<std::string, std::string> captions;
  nlohmann::json state = nlohmann::json::object();  ///< the document, as a sidecar holds it; "image": "images/…"
  std::vector<std::string> locked;  ///< settings (their JSON paths, "patch", "pos.P") the class cannot change
  std::vector<std::string> hidden;  ///< settings not drawn at all while the step plays
  std::vector<LessonModel> models;  ///< the models its state names
  bool operator==(const LessonStep&) const = default;
};

struct Lesson {
  std::string title;
  /// The language its titles and `caption`s are written in ("en", "de"…; "" when not said): the
  /// lesson's first language, shown where a step has no caption in the language in use.
  std::string language;
  std::vector<LessonStep> steps;
  /// The embedded photos by entry name ("images/<sha256>.jpg"): their bytes as in the file.
  std::map<std::string, std::vector<std::uint8_t>> images;
  bool operator==(const Lesson&) const = default;
};

/// Step `step`'s caption in `language` (a catalog code): its captions' entry for it, else the
/// caption in the lesson's own language.
const std::string& caption_in(const LessonStep& step, const std::string& language);

/// Whether `code` can name a caption's language: 2 or 3 lowercase letters, then optionally "_"
/// and 2 capitals ("de", "zh_CN").
bool is_caption_language(const std::string& code);

/// Whether `name` is an embedded photo's entry name: "images/" + 64 lowercase hex digits + one
/// of .jpg .jpeg .png .bmp .gif .tga .ppm .pgm .pnm. Nothing else (no folder, no "..", no
/// absolute name) is ever an image of a lesson.
bool is_lesson_image_name(const std::string& name);

/// Embeds `bytes` (a photo file's contents; `extension` its file's, ".jpg") into `lesson` and
/// returns its entry name; the same bytes twice are stored once. Throws Error for an extension
/// is_lesson_image_name() refuses or bytes over LessonLimits' max_image_bytes.
std::string add_lesson_image(Lesson& lesson, std::vector<std::uint8_t> bytes, const std::string& extension);

/// lesson.json of `lesson` (kLessonFormatVersion): {"format": "attnlab-lesson", "format_version",
/// "title", "steps": [{"title", "caption", "state", "locked", "hidden", "models": [{"role",
/// "file", "sha256", "hub"}]}]}.
nlohmann::json lesson_to_json(const Lesson& lesson);

/// The lesson file's bytes: mimetype (stored, first), lesson.json, then each image (stored:
/// photos are compressed already).
std::vector<std::uint8_t> lesson_to_bytes(const Lesson& lesson);

/// Writes the lesson file at `path` whole (through a temporary beside it, core/io/files.hpp):
/// an existing file is replaced only with `overwrite`. Throws Error naming the path.
void write_lesson(const Lesson& lesson, const std::filesystem::path& path, bool overwrite = false);

/// Reads a lesson file. Checks, each refused with an Error of one line naming the file: not a
/// zip or a truncated one; more entries than the limit; an entry whose name is not mimetype,
/// lesson.json or an image name (is_lesson_image_name: "../x", "/etc/x", "a\\b" …); a declared
/// size over the limits (an entry, or all together) or different from the data; a mimetype that
/// is not kLessonMimeType; no lesson.json, or one that is not JSON or not a lesson; a
/// format_version newer than kLessonFormatVersion; more steps than the limit; a title or caption
/// over max_text_bytes; a step whose "image" is not embedded; an image whose contents do not
/// match its SHA-256 name; a model entry of the wrong shape. Nothing is written anywhere.
Lesson read_lesson(const std::filesystem::path& path, const LessonLimits& limits = {});

/// The same for the bytes of a lesson file (`what` names it in errors).
Lesson read_lesson_bytes(std::span<const std::uint8_t> bytes, const std::string& what, const LessonLimits& limits = {});

/// The lesson of `j` (lesson.json's text parsed), after migrating an older format_version. Throws
/// Error "<what>: …" as read_lesson(); the images are not checked here (lesson.images is empty).
Lesson lesson_from_json(const nlohmann::json& j, const std::string& what, const LessonLimits& limits = {});

}  // namespace attnlab
