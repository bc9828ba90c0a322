#pragma once
// `attnlab vit`: a real ViT checkpoint's attention on an image, from the command line.
#include "app/commands/command_flags.hpp"

#include <string>
#include <vector>

namespace attnlab::app {

/// Runs `attnlab vit` with the arguments after the command name (see vit_usage()). Prints to
/// stdout and returns 0; throws Error (one line) for bad arguments, files and checkpoints.
int run_vit(const std::vector<std::string>& args);

/// The usage text of `attnlab vit`.
std::string vit_usage();

/// The flags of `attnlab vit`'s table (vit_command.cpp), in its order.
std::vector<CommandFlagName> vit_flag_names();

}  // namespace attnlab::app
