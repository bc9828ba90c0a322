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
# No source of app/ compares a flag by hand: a line that does is reported unless every flag on
# it is one allowed_compared allows in its file (and it takes nothing by hand).
while IFS= read -r -d '' file; do
  rel=${file#"$root"/}
  mine=()
  for entry in "${allowed_compared[@]}"; do
    [[ $entry == "$rel|"* ]] && mine+=("$(cut -d'|' -f2 <<<"$entry")")
  done
  while IFS= read -r line; do
    text=${line#*:}
    if ((${#mine[@]} > 0)) && ! grep -qE 'take_(option|flag)' <<<"$text" &&
      [[ -z $(grep -oE '"--[a-z0-9-]+"' <<<"$text" | tr -d '"' | grep -vxF "${mine[@]/#/-e}") ]]; then
      continue
    fi
    echo "$rel:${line%%:*}: a flag compared by hand, not read through the command's flag table"
    compared[$rel:${line%%:*}]=1
    hits=$((hits + 1))
  done < <(grep -nE "$by_hand" "$file")
done < <(find "$root/app" -type f \( -name '*.cpp' -o -name '*.hpp' \) -print0 | sort -z)

while IFS= read -r -d '' file; do
  rel=${file#"$root"/}
  [[ $rel == app/commands/document.cpp ]] && continue
  files=$((files + 1))
  # The file's own table's flags are checked in it as the field table's are everywhere.
  mapfile -t own < <(grep -oE "$row" "$file" | grep -oE '"--[a-z0-9-]+"' | tr -d '"' | sort -u)
  for flag in $(printf '%s\n' "${flags[@]}" "${own[@]}" | sort -u); do
    ok=0
    for entry in "${allowed[@]}"; do
      [[ $entry == "$rel|$flag|"* ]] && ok=1
    done
    ((ok)) && continue
    while IFS= read -r line; do
      [[ ${line#*:} =~ ^[[:space:]]*\{\"$flag\",[[:space:]](true|false), ]] && continue  # a row of a command's table
      [[ -n ${compared[$rel:${line%%:*}]:-} ]] && continue  # reported above
      echo "$rel:${line%%:*}: \"$flag\": parsed outside a flag table (app/commands/document.cpp, command_flags.hpp)"
      hits=$((hits + 1))
    done < <(grep -nF "\"$flag\"" "$file")
  done
done < <(find "$root/app" -type f \( -name '*.cpp' -o -name '*.hpp' \) -print0 | sort -z)

if ((hits > 0)); then
  echo "check_flags: $hits use(s) of flags outside their tables" >&2
  exit 1
fi
echo "check_flags: the ${#flags[@]} flags of the field table (${flags[*]}) appear in no other of $files files of app/;" \
  "${#tables[@]} files read theirs through their own tables (${tables[*]}); no flag is compared by hand"
