#pragma once
// `attnlab explain`: how faithful each class-relevance method is to a model, measured over a
// data set (deletion and insertion, SPEC §13), the table the papers print.
#include "app/commands/command_flags.hpp"

#include <string>
#include <vector>

namespace attnlab::app {

/// Runs `attnlab explain` with the arguments after the command name (see explain_usage()):
/// writes the CSV `method,deletion_auc,insertion_auc,images` (one row per method, then random)
/// to --out (written whole at the end, or not at all: Ctrl-C leaves no file) and a progress
/// line to stderr. Returns 0; throws Error (one line) for bad arguments, files, checkpoints and
/// an --out that exists (without --force).
int run_explain(const std::vector<std::string>& args);

/// The usage text of `attnlab explain`.
std::string explain_usage();

/// The flags of `attnlab explain`'s table, in its order.
std::vector<CommandFlagName> explain_flag_names();

}  // namespace attnlab::app
