#!/usr/bin/env bash
# Issue 15: the command line's flags for the document's settings are parsed through its one
# field table (app/commands/document.cpp, for_each_field) and nowhere else. Reads the flags the
# table defines (Flag<…>{"--name" and FlagTo<…>{"--name") from the source tree at $1, then
# looks for each as a string literal ("--name") in every other source of app/: one line per
# hit (file:line: "--name": parsed outside the field table) and exit 1; otherwise one summary
# line, exit 0. The uses below are not the document's setting, or only ask whether it was given.
# Issue 39: the commands that write no document (`attnlab vit`, `attnlab train`) read their
# flags through a table of their own, rows of CommandFlag ({"--name", true|false, …},
# app/commands/command_flags.hpp). Issue 48 (item 6, one flag style): so do `render`, `figure`,
# `video`, `models pull` and the window's options, their own rows beside the field table's
# flags. Each file of `tables` below must hold such rows; a flag of its table appears nowhere
# else in it. No source of app/ compares an argument with a flag by hand (== "--name",
# "--name" !=, take_option/take_flag), but for the dispatcher's own words (`allowed_compared`).
# A row of a command's table may name a flag of the document's too (vit's --image is its own option).
set -u
root=${1:?usage: check_flags.sh REPO_ROOT}
root=${root%/}
table=$root/app/commands/document.cpp
[[ -f $table ]] || { echo "check_flags: $table is missing (is $root the repository's root?)" >&2; exit 2; }

# file|flag|why: a literal that is allowed there.
allowed=(
  "app/commands/source_choice.cpp|--head|a ViT's choice (vit, video, render --model): parse_source_choice, checked against the model"
  "app/commands/source_choice.cpp|--query|a ViT's choice (vit, video, render --model): parse_source_choice, checked against the model"
)
# file|flag|why: a comparison with a flag that is allowed there (no command's flag).
allowed_compared=(
  "app/cli.cpp|--help|the dispatcher: the usage text, for the program and each command"
  "app/cli.cpp|--version|the dispatcher: the program's version"
  "app/main.cpp|--lang|the language of every command and the window (issue 52), taken before the dispatcher"
)
# The files whose command reads its flags through a CommandFlag table of its own.
tables=(app/commands/vit_command.cpp app/commands/train_command.cpp app/commands/video_command.cpp
        app/commands/models_command.cpp app/commands/options.cpp app/gui/output/render_commands.cpp)
row='^[[:space:]]*\{"(--[a-z0-9-]+)", (true|false),'  # a CommandFlag row: {"--name", takes_value, set}
by_hand='[!=]=[[:space:]]*"--|"--[a-z0-9-]+"[[:space:]]*[!=]=|take_(option|flag)[[:space:]]*\('  # a flag compared or taken by hand

mapfile -t flags < <(grep -oE 'Flag(To)?<[^{]*>\{"--[a-z0-9-]+"' "$table" | grep -oE '"--[a-z0-9-]+"' | tr -d '"' | sort -u)
if ((${#flags[@]} == 0)); then
  echo "check_flags: no flags found in $table (has the table's syntax changed?)" >&2
  exit 2
fi

hits=0
files=0
declare -A compared  # file:line of the flags compared by hand, reported once
# The command tables: each file of `tables` holds rows.
for rel in "${tables[@]}"; do
  file=$root/$rel
  if [[ ! -f $file ]] || ! grep -qE "$row" "$file"; then
    echo "$rel: holds no flag table (rows {\"--name\", true|false, …}: app/commands/command_flags.hpp)"
    hits=$((hits + 1))
  fi
done
# The files of app/, and every "--flag" literal of a line: found with bash's own matching, since
# a program started per file or per flag (a fork costs ~15 ms on a small VM) made this take minutes.
mapfile -d '' -t app_files < <(find "$root/app" -type f \( -name '*.cpp' -o -name '*.hpp' \) -print0 | sort -z)
split_hit() {  # FILE:LINE:TEXT (a line of grep -nH) into file, rel, line and text
  file=${1%%:*}
  local rest=${1#*:}
  rel=${file#"$root"/}
  line=${rest%%:*}
  text=${rest#*:}
}
flags_in() {  # TEXT: the "--name" literals on it, into the array `found` (without the quotes)
  local rest=$1
  found=()
  while [[ $rest =~ \"(--[a-z0-9-]+)\" ]]; do
    found+=("${BASH_REMATCH[1]}")
    rest=${rest#*"${BASH_REMATCH[0]}"}
  done
}

# No source of app/ compares a flag by hand: a line that does is reported unless every flag on
# it is one allowed_compared allows in its file (and it takes nothing by hand).
while IFS= read -r hit; do  # FILE:LINE:TEXT
  split_hit "$hit"
  mine=()
  for entry in "${allowed_compared[@]}"; do
    if [[ $entry == "$rel|"* ]]; then entry=${entry#*|}; mine+=("${entry%%|*}"); fi
  done
  if ((${#mine[@]} > 0)) && [[ ! $text =~ take_(option|flag) ]]; then
    flags_in "$text"
    other=0
    for flag in "${found[@]}"; do
      ok=0
      for m in "${mine[@]}"; do [[ $flag == "$m" ]] && ok=1; done
      ((ok)) || other=1
    done
    ((other)) || continue
  fi
  echo "$rel:$line: a flag compared by hand, not read through the command's flag table"
  compared[$rel:$line]=1
  hits=$((hits + 1))
done < <(grep -nHE "$by_hand" -- "${app_files[@]}")

# Each flag of the field table is named in no other file of app/; the flags of a command's own
# table (its rows) in no other line of that file. The lines that name any of these flags are
# found with one grep; the flags on each such line are then read from its text.
declare -A own  # "FILE|--name": a flag of FILE's own table
patterns=$(mktemp)
trap 'rm -f "$patterns"' EXIT
printf '"%s"\n' "${flags[@]}" >"$patterns"
while IFS= read -r hit; do  # FILE:TEXT
  if [[ ${hit#*:} =~ $row ]]; then
    own[${hit%%:*}|${BASH_REMATCH[1]}]=1
    printf '"%s"\n' "${BASH_REMATCH[1]}" >>"$patterns"
  fi
done < <(grep -HE "$row" -- "${app_files[@]}")
declare -A is_flag
for flag in "${flags[@]}"; do is_flag[$flag]=1; done
others=()
for file in "${app_files[@]}"; do
  [[ ${file#"$root"/} == app/commands/document.cpp ]] || others+=("$file")
done
files=${#others[@]}
while IFS= read -r hit; do  # FILE:LINE:TEXT
  split_hit "$hit"
  flags_in "$text"
  declare -A seen=()
  for flag in "${found[@]}"; do
    # The file's own table's flags are checked in it as the field table's are everywhere.
    [[ -n ${is_flag[$flag]:-} || -n ${own[$file|$flag]:-} ]] || continue
    [[ -z ${seen[$flag]:-} ]] || continue
    seen[$flag]=1
    ok=0
    for entry in "${allowed[@]}"; do
      [[ $entry == "$rel|$flag|"* ]] && ok=1
    done
    ((ok)) && continue
    [[ $text =~ ^[[:space:]]*\{\"$flag\",[[:space:]](true|false), ]] && continue  # a row of a command's table
    [[ -n ${compared[$rel:$line]:-} ]] && continue  # reported above
    echo "$rel:$line: \"$flag\": parsed outside a flag table (app/commands/document.cpp, command_flags.hpp)"
    hits=$((hits + 1))
  done
  unset seen
done < <(grep -nHF -f "$patterns" -- "${others[@]}")

if ((hits > 0)); then
  echo "check_flags: $hits use(s) of flags outside their tables" >&2
  exit 1
fi
echo "check_flags: the ${#flags[@]} flags of the field table (${flags[*]}) appear in no other of $files files of app/;" \
  "${#tables[@]} files read theirs through their own tables (${tables[*]}); no flag is compared by hand"
