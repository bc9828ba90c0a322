#include "app/commands/progress_line.hpp"

#include <unistd.h>

#include <cstdio>

namespace attnlab::app {

void show_progress(const char* command, const char* unit, int done, int count, std::chrono::steady_clock::time_point start) {
  static const bool tty = ::isatty(2) != 0;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (tty) {
    std::fprintf(stderr, "\r\033[K%s: %d/%d %s, %.1f s%s", command, done, count, unit, s, done == count ? "\n" : "");
  } else if (done == count || (done * 10 / count) != ((done - 1) * 10 / count)) {
    std::fprintf(stderr, "%s: %d/%d %s, %.1f s\n", command, done, count, unit, s);
  }
  std::fflush(stderr);
}

}  // namespace attnlab::app
