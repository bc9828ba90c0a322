#!/usr/bin/env bash
# Issue 15: the command line's flags for the document's settings are parsed through its one
# field table (app/commands/document.cpp, for_each_field) and nowhere else. Reads the flags the
# table defines (Flag<…>{"--name" and FlagTo<…>{"--name") from the source tree at $1, then
# looks for each as a string literal ("--name") in every other source of app/: one line per
# hit (file:line: "--name": parsed outside the field table) and exit 1; otherwise one summary
# line, exit 0. The uses below are not the document's setting, or only ask whether it was given.
set -u
root=${1:?usage: check_flags.sh REPO_ROOT}
root=${root%/}
table=$root/app/commands/document.cpp
[[ -f $table ]] || { echo "check_flags: $table is missing (is $root the repository's root?)" >&2; exit 2; }

# file|flag|why: a literal that is allowed there.
allowed=(
  "app/commands/vit_command.cpp|--image|attnlab vit writes no document: its own options"
  "app/commands/vit_command.cpp|--head|attnlab vit: the ViT's head, checked against the model"
  "app/commands/vit_command.cpp|--query|attnlab vit: the ViT's query, checked against the model"
  "app/commands/vit_command.cpp|--resize|attnlab vit: its own input size"
  "app/commands/vit_command.cpp|--backend|attnlab vit writes no document: its own runner choice (parse_vit_backend, the same names)"
  "app/commands/vit_command.cpp|--cka-examples|attnlab vit --cka writes no document: its own examples (the same names)"
  "app/commands/vit_command.cpp|--cka-count|attnlab vit --cka writes no document: its own count of images"
  "app/gui/output/render_commands.cpp|--head|render --model: the ViT's head, read once the model is loaded"
  "app/gui/output/render_commands.cpp|--query|render --model: the ViT's query; figure passes its first query as --query"
  "app/commands/video_command.cpp|--head|attnlab video: the ViT's head, checked against the model"
  "app/commands/video_command.cpp|--query|attnlab video: the ViT's query, checked against the model's grid"
  "app/commands/options.cpp|--query|parse_query_options asks whether --query was given"
  "app/commands/train_command.cpp|--patch|attnlab train writes no document: the trained ViT's patch size"
  "app/commands/train_command.cpp|--pos|attnlab train: the trained ViT's position embedding (learned, sincos, none)"
  "app/commands/train_command.cpp|--seed|attnlab train: the trainer's seed"
  "app/commands/train_command.cpp|--image|attnlab train --task masked: the photo its crops are cut from"
)

mapfile -t flags < <(grep -oE 'Flag(To)?<[^{]*>\{"--[a-z0-9-]+"' "$table" | grep -oE '"--[a-z0-9-]+"' | tr -d '"' | sort -u)
if ((${#flags[@]} == 0)); then
  echo "check_flags: no flags found in $table (has the table's syntax changed?)" >&2
  exit 2
fi

hits=0
files=0
while IFS= read -r -d '' file; do
  rel=${file#"$root"/}
  [[ $rel == app/commands/document.cpp ]] && continue
  files=$((files + 1))
  for flag in "${flags[@]}"; do
    ok=0
    for entry in "${allowed[@]}"; do
      [[ $entry == "$rel|$flag|"* ]] && ok=1
    done
    ((ok)) && continue
    while IFS= read -r line; do
      echo "$rel:${line%%:*}: \"$flag\": parsed outside the field table (app/commands/document.cpp)"
      hits=$((hits + 1))
    done < <(grep -nF "\"$flag\"" "$file")
  done
done < <(find "$root/app" -type f \( -name '*.cpp' -o -name '*.hpp' \) -print0 | sort -z)

if ((hits > 0)); then
  echo "check_flags: $hits use(s) of the field table's flags outside it" >&2
  exit 1
fi
echo "check_flags: the ${#flags[@]} flags of the field table (${flags[*]}) appear in no other of $files files of app/"
