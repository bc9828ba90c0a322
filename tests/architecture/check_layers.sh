#!/usr/bin/env bash
# The folders and who may include whom (issue 15's layers, issue 39's folders; the picture at the top
# of docs/ARCHITECTURE.md), checked on the #include lines of the source tree at $1 (the repository's
# root). Every C++ file of core/ and app/gui/ lives in a folder that says what it is, and includes
# from the project only what its folder's row below allows:
#
#   folder            may include (besides its own folder)
#   core/base         nothing else of the project
#   core/io           core/base
#   core/vit          core/base core/io
#   core/vit/families core/base core/io core/vit            (one ModelFamily a file)
#   core/hand_made    core/base core/io core/vit shaders/   (the AttentionSource interface is vit's)
#   core/cnn          core/base core/io core/vit            (ResNets; the CKA across two models)
#   core/gpu          core/ shaders/
#   app/commands      core/                                  (window-free: attnlab_commands)
#   app/platform      core/base                              (the desktop's file dialog)
#   app/gui/state     core/ app/commands app/platform
#   app/gui/window    core/ app/gui/state
#   app/gui/sessions  core/ app/commands app/gui/state
#   app/gui/maps      core/ app/commands app/gui/{state,sessions}
#   app/gui/chapter   core/ app/commands app/gui/{state,sessions,maps}
#   app/gui/vit       core/ app/commands app/gui/{state,sessions,maps}
#   app/gui/train     core/ app/commands app/gui/{state,sessions,maps,vit}
#   app/gui/cnn       core/ app/commands app/gui/{state,sessions,maps,vit,train}   (the ViT beside a CNN)
#   app/gui/views     core/ app/commands app/gui/{state,sessions,maps,chapter,vit,train,cnn}
#   app/gui/output    core/ app/commands app/gui/{state,window,sessions,maps,chapter,vit,train,cnn,views}
#   app/gui/panels    core/ app/commands app/platform app/gui/{state,sessions,maps,output}
#   app/gui/shell     core/ app/commands app/platform app/gui/ (everything but app/cli.hpp)
#
# So: the views (maps, chapter, vit, train, panels) never include the shell; the sessions never
# include a view, output or the shell; the state includes only app/commands, app/platform and core;
# nothing under app/gui/ includes app/cli.hpp (the dispatcher is the program's). Besides, core/
# includes no ImGui, GLFW or epoxy (no window, no GL: that is core/gpu's, which includes no ImGui
# or GLFW), and app/commands no ImGui or GLFW. That attnlab_commands links no ImGui or GLFW is
# checked by CMake itself (app/CMakeLists.txt).
#
# Includes written relative to the file ("../gui/x.hpp") are resolved first. One line per offending
# include or misplaced file (file:line: include: rule) and exit 1; otherwise one summary line, exit 0.
set -u

root=${1:?usage: check_layers.sh REPO_ROOT}
root=${root%/}
for dir in core app/commands app/gui; do
  if [[ ! -d "$root/$dir" ]]; then
    echo "check_layers: $root/$dir is not a folder (is $root the repository's root?)" >&2
    exit 2
  fi
done

gui=app/gui
declare -A allowed=(
  [core/base]=""
  [core/io]="core/base"
  [core/vit]="core/base core/io"
  [core/vit/families]="core/base core/io core/vit"
  [core/hand_made]="core/base core/io core/vit shaders"
  [core/cnn]="core/base core/io core/vit"
  [core/gpu]="core shaders"
  [app/commands]="core"
  [app/platform]="core/base"
  [$gui/state]="core app/commands app/platform"
  [$gui/window]="core $gui/state"
  [$gui/sessions]="core app/commands $gui/state"
  [$gui/maps]="core app/commands $gui/state $gui/sessions"
  [$gui/chapter]="core app/commands $gui/state $gui/sessions $gui/maps"
  [$gui/vit]="core app/commands $gui/state $gui/sessions $gui/maps"
  [$gui/train]="core app/commands $gui/state $gui/sessions $gui/maps $gui/vit"
  [$gui/cnn]="core app/commands $gui/state $gui/sessions $gui/maps $gui/vit $gui/train"
  [$gui/views]="core app/commands $gui/state $gui/sessions $gui/maps $gui/chapter $gui/vit $gui/train $gui/cnn"
  [$gui/output]="core app/commands $gui/state $gui/window $gui/sessions $gui/maps $gui/chapter $gui/vit $gui/train $gui/cnn $gui/views"
  [$gui/panels]="core app/commands app/platform $gui/state $gui/sessions $gui/maps $gui/output"
  [$gui/shell]="core app/commands app/platform $gui/state $gui/window $gui/sessions $gui/maps $gui/chapter $gui/vit $gui/train $gui/cnn $gui/views $gui/output $gui/panels"
)

violations=0
files=0
includes=0

report() {  # FILE:LINE TEXT
  echo "$1: $2"
  violations=$((violations + 1))
}

# under PATH PREFIX: is PATH the folder PREFIX or below it?
under() { [[ $1 == "$2" || $1 == "$2"/* ]]; }

# check FILE FOLDER: every #include of FILE against FOLDER's row.
check() {
  local file=$1 folder=$2 rel=${1#"$root"/} line text path ok prefix
  files=$((files + 1))
  while IFS= read -r line; do
    text=${line#*:}
    line=${line%%:*}
    [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*[\<\"]([^\>\"]+)[\>\"] ]] || continue
    path=${BASH_REMATCH[1]}
    includes=$((includes + 1))
    if [[ $path == ./* || $path == ../* ]]; then  # relative to the file: as seen from the root
      path=$(realpath -m --relative-to="$root" "$(dirname "$file")/$path")
    fi
    if under "$folder" core && [[ $folder != core/gpu ]] && [[ $path =~ ^(.*/)?imgui || $path == GLFW/* || $path == epoxy/* ]]; then
      report "$rel:$line" "#include $path: core must not include ImGui, GLFW or epoxy (no window, no GL)"
      continue
    fi
    if [[ $folder == core/gpu && ($path =~ ^(.*/)?imgui || $path == GLFW/*) ]]; then
      report "$rel:$line" "#include $path: core/gpu must not include ImGui or GLFW (no window)"
      continue
    fi
    if [[ $folder == app/commands && ($path =~ ^(.*/)?imgui || $path == GLFW/*) ]]; then
      report "$rel:$line" "#include $path: app/commands must not include ImGui or GLFW (no window)"
      continue
    fi
    [[ $path == core/* || $path == app/* || $path == shaders/* ]] || continue  # a library's header
    under "$path" "$folder" && continue
    ok=0
    for prefix in ${allowed[$folder]}; do
      if under "$path" "$prefix"; then ok=1; break; fi
    done
    if ((!ok)); then
      report "$rel:$line" "#include $path: $folder may include only ${allowed[$folder]:-its own folder}${allowed[$folder]:+ and its own folder}"
    fi
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include' "$file")
}

# The folder a file belongs to, left in `folder`: the longest row of the table it lies under, or
# "" (misplaced). No subshell or program per file: a fork costs ~15 ms on a small VM, and this
# runs for every file.
folder_of() {
  local dir=${1%/*} f
  folder=""
  for f in "${!allowed[@]}"; do
    if under "$dir" "$f" && ((${#f} > ${#folder})); then folder=$f; fi
  done
}

while IFS= read -r -d '' file; do
  rel=${file#"$root"/}
  folder_of "$rel"
  if [[ -z $folder ]]; then
    files=$((files + 1))
    report "$rel:1" "not in a folder of the table: core/ and app/gui/ keep their files in folders that say what they are"
    continue
  fi
  check "$file" "$folder"
done < <(find "$root/core" "$root/app/commands" "$root/app/platform" "$root/app/gui" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.inc' -o -name '*.ipp' \) -print0 | sort -z)

if ((violations > 0)); then
  echo "check_layers: $violations offending include(s) or file(s) in $files files" >&2
  exit 1
fi
echo "check_layers: $includes includes in $files files (core/, app/commands, app/platform, app/gui/) keep the folders' rules"
