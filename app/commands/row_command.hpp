#pragma once
// `attnlab row` (README, "Command line"): one row of the attention matrix A as CSV.
#include <string>
#include <vector>

namespace attnlab::app {

/// Runs `attnlab row` with the arguments after the command name (the options of
/// parse_query_options, no others). Prints row i of A for the query as CSV on stdout: H/K lines
/// of W/K weights, in the patch grid's layout, computed on the GPU engine, or on the CPU
/// reference when no GPU context can be made (said on stderr). Returns 0, or 1 when stdout
/// cannot be flushed; throws Error (one line) for bad arguments and files.
int run_row(const std::vector<std::string>& args);

}  // namespace attnlab::app
