#!/usr/bin/env bash
# check_flags.sh must fail: a small tree made here has a field table of three flags and names
# them as literals elsewhere in app/ — twice where check_flags.sh must report them, and where
# it must not (the table itself, an allowed use, a longer flag that only starts the same). Its
# two commands with tables of their own (vit, train) parse a flag by hand: vit compares one,
# train names one of its table's flags outside the table. The check must exit 1 and name every
# offending line, no other; on the same tree without the offending lines it must pass (exit 0);
# without a command's table it must fail; on a field table with no flags stop (exit 2).
set -u
here=$(cd "$(dirname "$0")" && pwd)
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/app/commands" "$tree/app/gui"

printf '%s\n' 'field("patch", s.patch, Flag<int>{"--patch", kRender});' \
  'field("mask", s.mask, FlagTo<Mask>{"--mask", kRender});' \
  'field("query", s.query, Flag<Cell>{"--query", kRender});' \
  'const char* doc = "--patch";  // the table itself may name its flags' > "$tree/app/commands/document.cpp"
# An allowed use (check_flags.sh's list: options.cpp asks whether --query was given).
printf '%s\n' 'bool given = has(args, "--query");' > "$tree/app/commands/options.cpp"
# Offending: a table flag parsed by hand in app/gui and in app/commands.
printf '%s\n' '// no flag here' 'if (arg == "--patch") patch = std::stoi(next());' 'x = "--patchy";  // another flag' \
  'if (arg == "--mask") mask = parse_mask(next());' > "$tree/app/gui/bad.cpp"
printf '%s\n' '#pragma once' 'constexpr const char* kQuery = "--query";' > "$tree/app/commands/bad.hpp"
# The commands' own tables (CommandFlag rows, which may name a field table flag: --patch), and
# a flag of each parsed by hand.
printf '%s\n' 'std::vector<CommandFlag> vit_flags(VitOptions& o) {' '  return {' \
  '      {"--top", true, [&o](Text t, Text f) { o.top = parse_int(t, f, 1, 9); }},' \
  '      {"--patch", true, [&o](Text t, Text) { o.patch = t; }},' '  };' '}' \
  'if (args[n] == "--top") top = 3;  // by hand' > "$tree/app/commands/vit_command.cpp"
printf '%s\n' 'std::vector<CommandFlag> train_flags(TrainOptions& o) {' '  return {' \
  '      {"--steps", true, [&o](Text t, Text f) { o.steps = parse_int(t, f, 1, 9); }},' \
  '      {"--force", false, [&o](Text, Text) { o.force = true; }},' '  };' '}' \
  'const std::string s = take_option(args, "--steps");  // by hand' 'throw Error("--steps must be > 0");  // a message' \
  > "$tree/app/commands/train_command.cpp"
expected=("app/commands/bad.hpp:2:" "app/gui/bad.cpp:2:" "app/gui/bad.cpp:4:" "app/commands/vit_command.cpp:7:"
          "app/commands/train_command.cpp:7:")

out=$(bash "$here/check_flags.sh" "$tree" 2>&1)
rc=$?
echo "$out"
source "$here/expect_reported.sh"
status=0
expect_reported check_flags_catches "$rc" "$out" "${expected[@]}" || status=1

# The same tree without the offending files and lines passes.
rm "$tree/app/gui/bad.cpp" "$tree/app/commands/bad.hpp"
sed -i '7d' "$tree/app/commands/vit_command.cpp" "$tree/app/commands/train_command.cpp"
out=$(bash "$here/check_flags.sh" "$tree" 2>&1)
rc=$?
if ((rc != 0)); then echo "$out"; echo "check_flags_catches: exit code $rc on a clean tree, expected 0"; status=1; fi

# A command that lost its table (its flags parsed by hand again) fails the check.
printf '%s\n' 'if (args[n] == "--steps") steps = next();' > "$tree/app/commands/train_command.cpp"
out=$(bash "$here/check_flags.sh" "$tree" 2>&1)
rc=$?
if ((rc != 1)) || ! grep -q '^app/commands/train_command.cpp: holds no flag table' <<<"$out"; then
  echo "$out"; echo "check_flags_catches: exit code $rc without train's table, expected 1 naming it"; status=1
fi

# A table in which no flag can be found stops the check rather than passing it.
printf '%s\n' 'field("patch", s.patch);' > "$tree/app/commands/document.cpp"
out=$(bash "$here/check_flags.sh" "$tree" 2>&1)
rc=$?
if ((rc != 2)); then echo "$out"; echo "check_flags_catches: exit code $rc with no flags in the table, expected 2"; status=1; fi

((status == 0)) && echo "check_flags_catches: all ${#expected[@]} uses reported (exit 1), a clean tree passes, a command without its table fails, an empty table stops"
exit $status
