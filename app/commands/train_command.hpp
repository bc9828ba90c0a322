#pragma once
// `attnlab train`: trains a small ViT on Fashion-MNIST with the project's own trainer
// (core/vit/vit_train.hpp) and writes a timm checkpoint, its config.json and the training log.
#include "app/commands/command_flags.hpp"

#include <string>
#include <vector>

namespace attnlab::app {

/// Runs `attnlab train` with the arguments after the command name (see train_usage()). Progress
/// on stderr, a summary line on stdout; returns 0 (also when stopped by Ctrl-C, after writing).
/// Throws Error (one line) for bad arguments, an existing --out without --force, a missing
/// dataset and files that cannot be written.
int run_train(const std::vector<std::string>& args);

/// The usage text of `attnlab train`.
std::string train_usage();

/// The flags of `attnlab train`'s table (train_command.cpp), in its order.
std::vector<CommandFlagName> train_flag_names();

}  // namespace attnlab::app
