#pragma once
// A lesson's steps as documents (SPEC §15, issue 51): made from a sidecar or the window's state,
// checked as the window and `render --from` will apply them, and turned back into a sidecar that
// `render --from` draws on this machine (its photo from the lesson, its models found here).
// The file format is core/io/lesson.hpp; the window's player is app/gui/shell/lesson_player.hpp.
#include "app/commands/document.hpp"
#include "core/io/lesson.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnlab::app {

/// The usage lines of `attnlab lesson` (part of usage()).
std::string lesson_usage();

/// The state keys a step does not keep from a sidecar: where this machine saves, which program
/// wrote it, and what the renderer reported (backend, grid, image_view, the export's window).
inline constexpr const char* kMachineKeys[] = {"export_dir", "program", "backend", "grid", "image_view", "export", "window", "vit_model_sha256"};

/// A step holding `state` (a sidecar's or the window's JSON: to_json plus its "render" entry):
/// the photo its "image" names read and embedded into `lesson` (the state then names the entry),
/// each model its vit.model, compare.model and cnn.model name referenced by its weights file's
/// SHA-256 (and `repo@commit` for a Hub snapshot folder, …/models--ORG--NAME/snapshots/COMMIT),
/// kMachineKeys and the recent files (vit.recent, lesson.recent) dropped. The state is checked with apply_json first. Throws Error in one line for
/// a photo that cannot be read, a model that does not exist, a bad value.
LessonStep step_from_state(Lesson& lesson, nlohmann::json state, std::string title, std::string caption);

/// step_from_state() of the JSON file `sidecar` (written by `render --out X.png` as X.json, or
/// by an export): its title the sidecar's name. Throws Error naming the file.
LessonStep step_from_sidecar(Lesson& lesson, const std::filesystem::path& sidecar, std::string caption);

/// Checks step `index` (from 0) of `lesson` as it will be applied: its state through apply_json
/// (a wrong type or a value out of range), its "render" view one of `views` (the views
/// `render --from` draws), every locked or hidden name a setting (setting_paths()). Throws Error
/// "step N: …" in one line.
void check_lesson_step(const Lesson& lesson, std::size_t index, const std::vector<std::string>& views);

/// A model a step needs and where it is on this machine (nullopt: missing).
struct FoundModel {
  LessonModel model;
  std::optional<std::filesystem::path> path;
};

/// Where each model of `step` is here: a model folder (with a config.json) among the bundled
/// assets with the recorded SHA-256 (assets_dir(), three levels down: assets/fashion_vit,
/// assets/lessons/models/NAME; the installation's own copy first); else the Hub cache's snapshot
/// of its `repo@commit` (HubConfig::from_environment); else the path its state names (where the
/// lesson was made) when that file's SHA-256 is the one recorded. A built-in model
/// (kCnnRandomResnet18) needs no file.
std::vector<FoundModel> find_lesson_models(const LessonStep& step);

/// "the vit model 'NAME' (SHA-256 1234abcd…, Hub repo@commit)": a model as one line names it.
std::string describe_lesson_model(const LessonModel& model);

/// The private folder a lesson's photos are written into while it is open or drawn (a new
/// folder attnlab-lesson-XXXXXX in the system's temporary folder, this user's only); removed
/// with everything in it when this goes. Nothing of a lesson is written anywhere else.
class LessonFolder {
 public:
  /// Writes every photo of `lesson` into a new folder. Throws Error when it cannot.
  explicit LessonFolder(const Lesson& lesson);
  ~LessonFolder();
  LessonFolder(const LessonFolder&) = delete;
  LessonFolder& operator=(const LessonFolder&) = delete;
  const std::filesystem::path& path() const { return dir_; }
  /// Writes the photos of `lesson` not written yet (a step added since). Throws Error when it cannot.
  void write_missing(const Lesson& lesson);
  /// Where the photo of entry `name` ("images/<sha>.jpg") was written.
  std::filesystem::path photo(const std::string& name) const;

 private:
  std::filesystem::path dir_;
};

/// The sidecar `render --from` draws step `index` of `lesson` from on this machine: its state,
/// "image" the photo in `folder`, each model's path where find_lesson_models() found it. Throws
/// Error "step N needs … which is not on this machine" for a missing model.
nlohmann::json step_sidecar(const Lesson& lesson, std::size_t index, const LessonFolder& folder);

}  // namespace attnlab::app
