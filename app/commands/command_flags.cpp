#include "app/commands/command_flags.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <algorithm>

namespace attnlab::app {

namespace {

const CommandFlag* row_of(const std::vector<CommandFlag>& flags, const std::string& argument) {
  const auto f = std::find_if(flags.begin(), flags.end(), [&](const CommandFlag& c) { return c.name == argument; });
  return f == flags.end() ? nullptr : &*f;
}

// The value after args[n] for the row `f`, n moved onto it; throws the row's missing-value error.
const std::string& value_of(const std::vector<std::string>& args, std::size_t& n, const CommandFlag& f) {
  if (n + 1 >= args.size())
    throw Error(f.needs.empty() ? text_format(_("option %s needs a value"), f.name.c_str())
                                // TRANSLATORS: a flag and what its value is: "--model needs a path (…)".
                                : text_format(_("%s needs %s"), f.name.c_str(), _(f.needs.c_str())));
  return args[++n];
}

}  // namespace

std::vector<std::string> parse_flags(const std::vector<std::string>& args, const std::vector<CommandFlag>& flags,
                                     const FlagRules& rules) {
  std::vector<std::string> given;
  for (std::size_t n = 0; n < args.size(); ++n) {
    const std::string& a = args[n];
    if (const CommandFlag* f = row_of(flags, a)) {
      const std::string text = f->takes_value ? value_of(args, n, *f) : std::string();
      if (f->once && std::find(given.begin(), given.end(), f->name) != given.end())
        throw Error(text_format(_("%s given twice"), f->name.c_str()));
      f->set(text, f->name);
      given.push_back(f->name);
    } else if (rules.positional && !a.starts_with("-")) {
      rules.positional(a);
    } else if (rules.refused) {
      throw Error(rules.refused(a));
    } else {
      // TRANSLATORS: the second %s is empty or a command's words marked elsewhere (" of attnlab vit").
      throw Error(text_format(_("unknown option '%s'%s (see attnlab --help)"), a.c_str(),
                              rules.for_what.empty() ? "" : _(rules.for_what.c_str())));
    }
  }
  return given;
}

void read_first_flags(const std::vector<std::string>& args, const std::vector<CommandFlag>& flags) {
  for (std::size_t n = 0; n < args.size(); ++n) {
    const CommandFlag* f = row_of(flags, args[n]);
    if (f && f->first) f->set(f->takes_value ? value_of(args, n, *f) : std::string(), f->name);
  }
}

std::vector<CommandFlagName> flag_names(const std::vector<CommandFlag>& flags) {
  std::vector<CommandFlagName> out;
  for (const CommandFlag& f : flags) out.push_back({f.name, f.takes_value});
  return out;
}

}  // namespace attnlab::app
