#pragma once
#include "app/commands/options.hpp"

#include <string>

namespace attnlab::app {
/// Opens the app's window on `image` (empty: the bundled safari photo) and runs until it is
/// closed. Returns the exit code (0 when the window was closed normally). Throws Error when no
/// window can be opened at all (no display). A `model` path (a ViT checkpoint) is opened on
/// the worker once the window is up, and its maps shown; a bad one is a banner. With a
/// `hover_bench` path the window runs the hover benchmark (hover_bench.hpp) and closes; it
/// returns 1 if the benchmark could not finish.
int run_gui(const GuiArgs& args);
}  // namespace attnlab::app
