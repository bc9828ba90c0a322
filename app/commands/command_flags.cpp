#include "app/commands/command_flags.hpp"

#include "core/base/error.hpp"

#include <algorithm>

namespace attnlab::app {

std::vector<std::string> parse_flags(const std::vector<std::string>& args, const std::vector<CommandFlag>& flags,
                                     const std::vector<std::string>& known_extra,
                                     std::vector<std::pair<std::string, std::string>>* extra, std::string_view for_what) {
  std::vector<std::string> given;
  for (std::size_t n = 0; n < args.size(); ++n) {
    const std::string& a = args[n];
    auto value = [&]() -> std::string {
      if (n + 1 >= args.size()) throw Error("option " + a + " needs a value");
      return args[++n];
    };
    const auto f = std::find_if(flags.begin(), flags.end(), [&](const CommandFlag& c) { return c.name == a; });
    if (f != flags.end()) {
      f->set(f->takes_value ? value() : std::string(), f->name);
      given.push_back(a);
    } else if (extra && std::find(known_extra.begin(), known_extra.end(), a) != known_extra.end()) {
      extra->emplace_back(a, value());
    } else {
      throw Error("unknown option '" + a + "'" + std::string(for_what) + " (see attnlab --help)");
    }
  }
  return given;
}

std::vector<CommandFlagName> flag_names(const std::vector<CommandFlag>& flags) {
  std::vector<CommandFlagName> out;
  for (const CommandFlag& f : flags) out.push_back({f.name, f.takes_value});
  return out;
}

}  // namespace attnlab::app
