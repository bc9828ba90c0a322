#!/usr/bin/env bash
# The layers of issue 15 (docs/ARCHITECTURE.md, "Targets"), checked on the #include lines of the
# source tree at $1 (the repository's root):
#   core/*        no core/gpu/, no app/, no <imgui…>, <GLFW/…>, <epoxy/…>
#   core/gpu/*    no app/
#   app/commands/ no app/gui/, no app/cli.hpp, no <imgui…>, <GLFW/…>
#   app/gui/*     no app/cli.hpp
# Includes written relative to the file ("../gui/x.hpp") are resolved first. One line per
# offending include (file:line: include: rule) and exit 1; otherwise one summary line, exit 0.
# That attnlab_commands links no ImGui or GLFW is checked by CMake itself (app/CMakeLists.txt).
set -u

root=${1:?usage: check_layers.sh REPO_ROOT}
root=${root%/}
for dir in core core/gpu app/commands app/gui; do
  if [[ ! -d "$root/$dir" ]]; then
    echo "check_layers: $root/$dir is not a folder (is $root the repository's root?)" >&2
    exit 2
  fi
done

violations=0
files=0
includes=0

# check FILE LAYER: every #include of FILE against the rules of LAYER.
check() {
  local file=$1 layer=$2 rel=${1#"$root"/} line text path rule
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
    rule=""
    case $layer in
      core)
        if [[ $path == core/gpu/* ]]; then rule="core must not include core/gpu/ (attnlab_core is below attnlab_gpu)"
        elif [[ $path == app/* ]]; then rule="core must not include app/"
        elif [[ $path =~ ^(.*/)?imgui || $path == GLFW/* || $path == epoxy/* ]]; then
          rule="core must not include ImGui, GLFW or epoxy (no GL, no window)"
        fi ;;
      gpu)
        if [[ $path == app/* ]]; then rule="core/gpu must not include app/"; fi ;;
      commands)
        if [[ $path == app/gui/* ]]; then rule="app/commands must not include app/gui/ (attnlab_commands is below attnlab_gui)"
        elif [[ $path == app/cli.hpp ]]; then rule="app/commands must not include app/cli.hpp (the dispatcher is the program's)"
        elif [[ $path =~ ^(.*/)?imgui || $path == GLFW/* ]]; then rule="app/commands must not include ImGui or GLFW (no window)"
        fi ;;
      gui)
        if [[ $path == app/cli.hpp ]]; then rule="app/gui must not include app/cli.hpp (the dispatcher is the program's)"; fi ;;
    esac
    if [[ -n $rule ]]; then
      echo "$rel:$line: #include $path: $rule"
      violations=$((violations + 1))
    fi
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include' "$file")
}

# scan DIR LAYER [MAXDEPTH]: the C++ sources and headers under DIR.
scan() {
  local file
  while IFS= read -r -d '' file; do
    check "$file" "$2"
  done < <(find "$root/$1" ${3:+-maxdepth "$3"} -type f \
             \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.inc' -o -name '*.ipp' \) -print0 | sort -z)
}

scan core core 1
scan core/gpu gpu
scan app/commands commands
scan app/gui gui

if ((violations > 0)); then
  echo "check_layers: $violations offending include(s) in $files files" >&2
  exit 1
fi
echo "check_layers: $includes includes in $files files (core, core/gpu, app/commands, app/gui) keep the layers"
