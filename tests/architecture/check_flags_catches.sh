#!/usr/bin/env bash
# check_flags.sh must fail: a small tree made here has a field table of three flags and names
# them as literals elsewhere in app/ — twice where check_flags.sh must report them, and where
# it must not (the table itself, an allowed use, a longer flag that only starts the same). Its
# commands with tables of their own (vit, train, video, models, the window's options in
# options.cpp, render and figure) parse flags by hand: vit compares one, train names one of its
# table's flags outside the table, render takes two with take_flag/take_option, the window
# compares an argument with its --model; the dispatcher compares with --help (allowed) and with
# --model (not). The check must exit 1 and name every offending line, no other; on the same
# tree without the offending lines it must pass (exit 0); without a command's table it must
# fail; on a field table with no flags stop (exit 2).
set -u
here=$(cd "$(dirname "$0")" && pwd)
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/app/commands" "$tree/app/gui"

printf '%s\n' 'field("patch", s.patch, Flag<int>{"--patch", kRender});' \
  'field("mask", s.mask, FlagTo<Mask>{"--mask", kRender});' \
  'field("query", s.query, Flag<Cell>{"--query", kRender});' \
  'const char* doc = "--patch";  // the table itself may name its flags' > "$tree/app/commands/document.cpp"
# An allowed use (check_flags.sh's list: a ViT's --head, read by parse_source_choice).
printf '%s\n' 'static const std::vector<std::string> names = {"--layer", "--head"};' > "$tree/app/commands/source_choice.cpp"
# The window's table, and its --model compared by hand (line 5).
printf '%s\n' 'std::vector<CommandFlag> gui_flags(GuiArgs& g) {' '  return {' \
  '      {"--model", true, [&g](Text t, Text) { g.model = t; }, "a path", true},' '  };' \
  'if (args[n] == "--model") model = args[++n];  // by hand' > "$tree/app/commands/options.cpp"
# video's and models pull's tables, clean.
printf '%s\n' '  return {' '      {"--in", true, [&v](Text t, Text) { v.input = t; }},' '  };' > "$tree/app/commands/video_command.cpp"
printf '%s\n' '  const std::vector<CommandFlag> flags = {' '      {"--file", true, [&o](Text t, Text) { o.files.push_back(t); }},' \
  '  };' > "$tree/app/commands/models_command.cpp"
# render's table, and two of its flags taken by hand (lines 5 and 6).
mkdir -p "$tree/app/gui/output"
printf '%s\n' 'std::vector<CommandFlag> render_own_flags(RenderArgs& r) {' '  return {' \
  '      {"--out", true, [&r](Text t, Text) { r.out = t; }},' '  };' \
  'const std::string out = take_option(args, "--out");' 'const bool force = take_flag(args, "--force");' \
  > "$tree/app/gui/output/render_commands.cpp"
# The dispatcher: --help and --version are its own words (allowed); --model is the window's (line 3).
printf '%s\n' 'if (cmd == "--help" || cmd == "-h") return usage();' 'if (cmd == "--version") return version();' \
  'const bool gui = cmd == "--model";' > "$tree/app/cli.cpp"
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
          "app/commands/train_command.cpp:7:" "app/commands/options.cpp:5:" "app/gui/output/render_commands.cpp:5:"
          "app/gui/output/render_commands.cpp:6:" "app/cli.cpp:3:")

out=$(bash "$here/check_flags.sh" "$tree" 2>&1)
rc=$?
echo "$out"
source "$here/expect_reported.sh"
status=0
expect_reported check_flags_catches "$rc" "$out" "${expected[@]}" || status=1

# The same tree without the offending files and lines passes.
rm "$tree/app/gui/bad.cpp" "$tree/app/commands/bad.hpp"
sed -i '7d' "$tree/app/commands/vit_command.cpp" "$tree/app/commands/train_command.cpp"
sed -i '5d' "$tree/app/commands/options.cpp"
sed -i '5,6d' "$tree/app/gui/output/render_commands.cpp"
sed -i '3d' "$tree/app/cli.cpp"
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
