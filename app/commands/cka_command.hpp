#pragma once
// `attnlab cka`: the linear CKA between every layer of two models over the same images (SPEC §14),
// as a CSV. No window: part of attnlab_commands.
#include "app/commands/command_flags.hpp"

#include <string>
#include <vector>

namespace attnlab::app {

/// Runs `attnlab cka` with the arguments after the command name (see cka_usage()): writes the CSV
/// `layer,<B's layers…>`, one row per layer of A, to --out (whole at the end, or not at all),
/// a progress line and the time split to stderr. Returns 0; throws Error (one line) for bad
/// arguments (--model given other than twice), files, checkpoints, and an --out that exists
/// (without --force).
int run_cka(const std::vector<std::string>& args);

/// The usage text of `attnlab cka`.
std::string cka_usage();

/// The flags of `attnlab cka`, in its table's order.
std::vector<CommandFlagName> cka_flag_names();

}  // namespace attnlab::app
