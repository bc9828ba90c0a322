#include "app/commands/progress_line.hpp"

#include "core/base/translate.hpp"

#include <unistd.h>

#include <cstdio>

namespace attnlab::app {

void show_progress(const char* command, const char* unit, int done, int count, std::chrono::steady_clock::time_point start) {
  static const bool tty = ::isatty(2) != 0;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // TRANSLATORS: a long command's progress on stderr: "explain: 40/500 images, 12.3 s" (the command,
  // the items done and their count, what they are, the seconds since the start).
  const auto line = [&] { return text_format(_("%s: %d/%d %s, %.1f s"), command, done, count, unit, s); };
  if (tty) {
    std::fprintf(stderr, "\r\033[K%s%s", line().c_str(), done == count ? "\n" : "");
  } else if (done == count || (done * 10 / count) != ((done - 1) * 10 / count)) {
    std::fprintf(stderr, "%s\n", line().c_str());
  }
  std::fflush(stderr);
}

}  // namespace attnlab::app
