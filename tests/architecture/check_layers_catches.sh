#!/usr/bin/env bash
# check_layers.sh must fail: a small tree made here breaks each of its rules once (and keeps one
# allowed include per folder); the check must exit 1 and name every offending include, no other.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/core/gpu" "$tree/app/commands" "$tree/app/gui"

printf '#include "core/base/types.hpp"\n#include "core/gpu/gl.hpp"\n#include "app/gui/state/app_state.hpp"\n#include <imgui.h>\n#include <GLFW/glfw3.h>\n  #  include <epoxy/gl.h>\n' > "$tree/core/bad.cpp"
printf '#include "core/base/types.hpp"\n#include "app/commands/options.hpp"\n' > "$tree/core/gpu/bad.hpp"
printf '#include "core/gpu/hand_made_gpu_engine.hpp"\n#include "app/gui/state/app_state.hpp"\n#include "../gui/hand_made_session.hpp"\n#include "app/cli.hpp"\n#include <imgui.h>\n#include <backends/imgui_impl_glfw.h>\n#include <GLFW/glfw3.h>\n' > "$tree/app/commands/bad.cpp"
printf '#include "app/commands/options.hpp"\n#include <imgui.h>\n#include "app/cli.hpp"\n' > "$tree/app/gui/bad.cpp"
expected=(
  "core/bad.cpp:2:" "core/bad.cpp:3:" "core/bad.cpp:4:" "core/bad.cpp:5:" "core/bad.cpp:6:"
  "core/gpu/bad.hpp:2:"
  "app/commands/bad.cpp:2:" "app/commands/bad.cpp:3:" "app/commands/bad.cpp:4:" "app/commands/bad.cpp:5:"
  "app/commands/bad.cpp:6:" "app/commands/bad.cpp:7:"
  "app/gui/bad.cpp:3:"
)

out=$(bash "$here/check_layers.sh" "$tree" 2>&1)
rc=$?
echo "$out"
source "$here/expect_reported.sh"
expect_reported check_layers_catches "$rc" "$out" "${expected[@]}" || exit 1
echo "check_layers_catches: all ${#expected[@]} violations reported, exit 1"
