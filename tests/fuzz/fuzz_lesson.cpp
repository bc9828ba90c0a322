// libFuzzer target: lesson files (issue 51; core/io/lesson.hpp) on arbitrary bytes. A file is
// either read with the reader's promises kept, or refused with one attnlab::Error of one line
// naming the file; anything else (a crash, a sanitizer report, another exception, a broken
// promise) is a finding. The promises: every photo is named images/<SHA-256>.<ext> and holds the
// bytes that hash to it, every step has a state object naming a photo the lesson holds (or
// none), no text is over the limits, and the lesson written again reads back the same. Inputs
// that do not start like a zip archive are lesson.json's text, so that mutations of the JSON
// reach the steps' checks past the zip's CRCs. Seeds: tests/fuzz/corpus/lesson (lessons made by
// `attnlab lesson make` from the sidecars of renders of assets/fashion_vit/images/14_bag.png,
// and their lesson.json); findings are kept in tests/fuzz/regressions/lesson and replayed by
// the fuzz_lesson_replay test.
#include <cstdint>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/fuzz/fuzz_support.hpp"
#include "core/base/error.hpp"
#include "core/io/files.hpp"
#include "core/io/lesson.hpp"

namespace {

[[noreturn]] void broken(const std::string& what) { attnlab::fuzz::report_finding("fuzz_lesson", what); }

void check_error(const attnlab::Error& e) {
  const std::string message = e.what();
  if (message.empty() || message.find('\n') != std::string::npos) broken("an error that is not one line: " + message);
  if (message.rfind("fuzz.attnlab", 0) != 0) broken("an error that does not name the file: " + message);
}

// The promises of a lesson the reader accepted.
void check_lesson(const attnlab::Lesson& lesson, bool with_images) {
  const attnlab::LessonLimits limits;
  if (lesson.steps.size() > limits.max_steps) broken("more steps than the limit");
  if (lesson.title.size() > limits.max_text_bytes) broken("a title over the limit");
  for (const auto& [name, bytes] : lesson.images) {
    if (!attnlab::is_lesson_image_name(name)) broken("a photo named " + name);
    if (attnlab::bytes_sha256(bytes) != name.substr(7, 64)) broken("a photo whose bytes are not its name's SHA-256");
  }
  for (const attnlab::LessonStep& s : lesson.steps) {
    if (!s.state.is_object()) broken("a step without a state object");
    if (s.caption.size() > limits.max_text_bytes || s.title.size() > limits.max_text_bytes) broken("a step's text over the limit");
    const auto img = s.state.find("image");
    if (with_images && img != s.state.end() && !img->is_null() && !(img->is_string() && lesson.images.count(img->get<std::string>())))
      broken("a step naming a photo the lesson does not hold");
    for (const attnlab::LessonModel& m : s.models)
      if (m.role != "vit" && m.role != "compare" && m.role != "cnn") broken("a model of role " + m.role);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  if (size >= 2 && data[0] == 'P' && data[1] == 'K') {
    attnlab::Lesson lesson;
    try {
      lesson = attnlab::read_lesson_bytes(bytes, "fuzz.attnlab");
    } catch (const attnlab::Error& e) {
      check_error(e);
      return 0;
    }
    check_lesson(lesson, true);
    // Written again, it reads back the same (a lesson the app opens, it can save).
    try {
      if (!(attnlab::read_lesson_bytes(attnlab::lesson_to_bytes(lesson), "fuzz.attnlab") == lesson))
        broken("a lesson written again reads back different");
    } catch (const attnlab::Error& e) {
      broken(std::string("a lesson written again is refused: ") + e.what());
    }
    return 0;
  }
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;
  try {
    check_lesson(attnlab::lesson_from_json(j, "fuzz.attnlab"), false);
  } catch (const attnlab::Error& e) {
    check_error(e);
  }
  return 0;
}
