#pragma once
// The progress line of a long command (`attnlab explain`, `attnlab cka`) on stderr: redrawn in
// place on a terminal, else one line every 10 % (a log or a pipe gets no carriage returns).
#include <chrono>

namespace attnlab::app {

/// Writes "COMMAND: DONE/COUNT UNIT, S s" for `done` of `count` (`done` counting from 1), the
/// seconds since `start`; on a terminal the line is redrawn and ends with the last one. The
/// line's words are translated; `unit` is passed translated (_("images")), `command` is the name.
void show_progress(const char* command, const char* unit, int done, int count, std::chrono::steady_clock::time_point start);

}  // namespace attnlab::app
