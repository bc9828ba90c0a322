#pragma once
// The command line's one loop over flags: every command's flags are a table of CommandFlag rows
// ({name, takes_value, set, …}) read by parse_flags — `row`, `render`, `figure` and `video`
// through the document's field table (document.cpp, parse_document_flags) with their own rows
// beside, the commands that write no document through tables of their own (`attnlab vit`:
// vit_command.cpp, `attnlab train`: train_command.cpp, `attnlab models pull`:
// models_command.cpp), and the window's options (options.cpp, parse_gui_args). No flag is
// compared by hand: tests/architecture/check_flags.sh finds any that is. No window: this is
// attnlab_commands.
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
  /// the errors. Called once per time the flag is given (a repeatable flag, `models pull
  /// --file`, collects; any other keeps the last). Throws Error naming the flag for a bad value.
  std::function<void(const std::string& text, const std::string& flag)> set;
  /// What the missing value is, for its error "NAME needs <needs>" ("a path (…)" for the
  /// window's --model); empty: "option NAME needs a value". English, marked N_() where written:
  /// parse_flags translates it when it reports the error.
  std::string needs = {};
  bool once = false;   ///< a second one is refused: "NAME given twice"
  /// Read before the rest (read_first_flags), wherever it stands: what the command's table
  /// holds depends on it (render's and video's --model, render's --from) or its error comes
  /// first (--out, figure's --queries).
  bool first = false;
};

/// What parse_flags does with an argument that is no flag of the table.
struct FlagRules {
  /// The end of "unknown option 'X'<for_what> (see attnlab --help)": " of attnlab vit". English,
  /// marked N_() where written: parse_flags translates it when it reports the error.
  std::string for_what = {};
  /// An argument that does not start with '-' (the window's IMAGE, `models pull`'s REPO), in
  /// order; null: such an argument is refused as an unknown option is.
  std::function<void(const std::string& argument)> positional = {};
  /// The error of an argument the table refuses (render --from's "takes only --out and
  /// --force, got 'X'"); null: the unknown-option line above.
  std::function<std::string(const std::string& argument)> refused = {};
};

/// Reads `args` through `flags`, in any order: a flag's value is the argument after it.
/// Throws Error "option X needs a value" (or the row's `needs`), "X given twice" (a row with
/// `once`), the refusal of `rules` for anything else, and the flags' own errors, at the first
/// argument in error. Returns the names of the flags given, in order.
std::vector<std::string> parse_flags(const std::vector<std::string>& args, const std::vector<CommandFlag>& flags,
                                     const FlagRules& rules = {});

/// Reads the rows of `flags` marked `first`, each where it stands in `args` and whatever the
/// arguments around it are (the table the rest is read through depends on them); their value
/// is the argument after them. Throws a missing value's error as parse_flags does. The full
/// parse_flags reads them again (and refuses one given twice).
void read_first_flags(const std::vector<std::string>& args, const std::vector<CommandFlag>& flags);

/// A command's flag as the tests and the usage check see it.
struct CommandFlagName {
  std::string flag;  ///< --top
  bool takes_value;  ///< false for a switch
};
/// The names of a table's flags, in its order.
std::vector<CommandFlagName> flag_names(const std::vector<CommandFlag>& flags);

}  // namespace attnlab::app
