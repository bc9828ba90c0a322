#pragma once
// The command line's one loop over flags: every command's flags are a table of CommandFlag rows
// ({name, takes_value, set}) read by parse_flags — the document's field table
// (document.cpp, parse_document_flags) and the tables of the commands that write no document
// (`attnlab vit`: vit_command.cpp, `attnlab train`: train_command.cpp). No flag is compared by
// hand: tests/architecture/check_flags.sh finds any that is. No window: this is attnlab_commands.
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlab::app {

/// One flag of a command: `--name VALUE`, or `--name` alone for a switch.
struct CommandFlag {
  std::string name;          ///< "--top"
  bool takes_value = true;   ///< false: a switch (--info, --force)
  /// Sets the command's option from the value's text ("" for a switch); `flag` is `name`, for
  /// the errors. Throws Error naming the flag for a bad value.
  std::function<void(const std::string& text, const std::string& flag)> set;
};

/// Reads `args` through `flags`, in any order (the last of a repeated flag wins): a flag's value
/// is the argument after it. Flags in `known_extra` are the caller's: their values go to `extra`
/// (which may be null when there are none). Throws Error "option X needs a value" and "unknown
/// option 'X'<for_what> (see attnlab --help)", and the flags' own errors. Returns the names of
/// the flags of `flags` given, in order.
std::vector<std::string> parse_flags(const std::vector<std::string>& args, const std::vector<CommandFlag>& flags,
                                     const std::vector<std::string>& known_extra,
                                     std::vector<std::pair<std::string, std::string>>* extra, std::string_view for_what);

/// A command's flag as the tests and the usage check see it.
struct CommandFlagName {
  std::string flag;  ///< --top
  bool takes_value;  ///< false for a switch
};
/// The names of a table's flags, in its order.
std::vector<CommandFlagName> flag_names(const std::vector<CommandFlag>& flags);

}  // namespace attnlab::app
