#pragma once
// `attnlab lesson make|slides|check` (SPEC §15, issue 51; README, "Lessons"): a lesson file built
// from sidecars, its steps drawn as slides (each step's picture that of `render --from` of its
// state, its caption in a strip below), and what a lesson needs on this machine.
#include <string>
#include <vector>

namespace attnlab::app {

/// The view names a lesson step may show: those `render --from` draws (the hand-made heads'
/// and a ViT's).
std::vector<std::string> lesson_view_names();

/// Runs `attnlab lesson …` (args after the command). Returns the exit code (`check`: 1 when
/// something the lesson needs is missing); throws Error for bad arguments or files (the caller
/// prints one line, exit 2).
int run_lesson(const std::vector<std::string>& args);

}  // namespace attnlab::app
