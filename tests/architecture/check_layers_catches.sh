#!/usr/bin/env bash
# check_layers.sh must fail: a small tree made here breaks each rule of its table once (a file per
# folder, each with one allowed include beside its offending ones, and a file outside any folder);
# the check must exit 1 and name every offending include and file, no other.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT

# put FILE LINE...: FILE under the tree with one #include line per LINE (<x> or "x").
put() {
  local file=$tree/$1
  shift
  mkdir -p "$(dirname "$file")"
  : > "$file"
  local inc
  for inc in "$@"; do
    if [[ $inc == \<* ]]; then echo "#include $inc" >> "$file"; else echo "#include \"$inc\"" >> "$file"; fi
  done
}

put core/base/bad.hpp core/base/types.hpp core/io/image.hpp '<imgui.h>' '<epoxy/gl.h>'
put core/io/bad.cpp core/base/error.hpp core/hand_made/tokens.hpp
put core/vit/bad.cpp core/io/image.hpp core/hand_made/heads.hpp core/gpu/gl.hpp app/commands/options.hpp
put core/hand_made/bad.cpp core/vit/vit.hpp core/gpu/gl.hpp
put core/gpu/bad.hpp core/vit/vit.hpp '<epoxy/gl.h>' app/commands/options.hpp '<GLFW/glfw3.h>'
put core/loose.cpp core/base/error.hpp
put app/commands/bad.cpp core/gpu/hand_made_gpu_engine.hpp app/gui/state/app_state.hpp ../gui/sessions/hand_made_session.hpp \
  app/cli.hpp '<imgui.h>' '<backends/imgui_impl_glfw.h>' '<GLFW/glfw3.h>'
put app/platform/bad.cpp core/base/error.hpp app/gui/state/app_state.hpp
put app/gui/state/bad.cpp app/commands/options.hpp '<imgui.h>' app/gui/sessions/vit_session.hpp
put app/gui/window/bad.cpp app/gui/state/ui_common.hpp app/gui/sessions/vit_session.hpp
put app/gui/sessions/bad.cpp app/gui/state/scheduler.hpp app/gui/chapter/teaching_view.hpp app/gui/output/export.hpp \
  app/gui/shell/app.hpp
put app/gui/maps/bad.cpp app/gui/sessions/vit_session.hpp app/gui/vit/vit_views.hpp
put app/gui/chapter/bad.cpp app/gui/maps/map_pictures.hpp app/gui/shell/keys.hpp
put app/gui/vit/bad.cpp app/gui/maps/map_source.hpp app/gui/train/train_views.hpp
put app/gui/train/bad.cpp app/gui/vit/vit_views.hpp app/gui/shell/app.hpp
put app/gui/panels/bad.cpp app/gui/output/export.hpp app/gui/shell/keys.hpp
put app/gui/output/bad.cpp app/gui/train/cka_view.hpp app/gui/panels/panels.hpp app/gui/shell/app.hpp
put app/gui/shell/bad.cpp app/gui/panels/panels.hpp app/cli.hpp
put app/gui/loose.cpp app/gui/state/app_state.hpp

expected=(
  "core/base/bad.hpp:2:" "core/base/bad.hpp:3:" "core/base/bad.hpp:4:"
  "core/io/bad.cpp:2:"
  "core/vit/bad.cpp:2:" "core/vit/bad.cpp:3:" "core/vit/bad.cpp:4:"
  "core/hand_made/bad.cpp:2:"
  "core/gpu/bad.hpp:3:" "core/gpu/bad.hpp:4:"
  "core/loose.cpp:1:"
  "app/commands/bad.cpp:2:" "app/commands/bad.cpp:3:" "app/commands/bad.cpp:4:" "app/commands/bad.cpp:5:"
  "app/commands/bad.cpp:6:" "app/commands/bad.cpp:7:"
  "app/platform/bad.cpp:2:"
  "app/gui/state/bad.cpp:3:"
  "app/gui/window/bad.cpp:2:"
  "app/gui/sessions/bad.cpp:2:" "app/gui/sessions/bad.cpp:3:" "app/gui/sessions/bad.cpp:4:"
  "app/gui/maps/bad.cpp:2:"
  "app/gui/chapter/bad.cpp:2:"
  "app/gui/vit/bad.cpp:2:"
  "app/gui/train/bad.cpp:2:"
  "app/gui/panels/bad.cpp:2:"
  "app/gui/output/bad.cpp:2:" "app/gui/output/bad.cpp:3:"
  "app/gui/shell/bad.cpp:2:"
  "app/gui/loose.cpp:1:"
)

out=$(bash "$here/check_layers.sh" "$tree" 2>&1)
rc=$?
echo "$out"
source "$here/expect_reported.sh"
expect_reported check_layers_catches "$rc" "$out" "${expected[@]}" || exit 1
echo "check_layers_catches: all ${#expected[@]} violations reported, exit 1"
