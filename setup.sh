#!/usr/bin/env bash
# Installs the Debian packages Attention Lab needs (only those missing, quietly when all are
# there), then configures and builds it into build/. Warnings are errors when CI is set.
set -euo pipefail
cd "$(dirname "$0")"

packages=(
  cmake g++ make pkg-config git
  libimgui-dev libglfw3-dev libeigen3-dev libstb-dev libepoxy-dev libgtest-dev libbenchmark-dev
  nlohmann-json3-dev nettle-dev libopenblas-pthread-dev python3
  # OpenGL through Mesa (llvmpipe when there is no GPU), headless EGL and real windows
  libegl1 libegl-mesa0 libgl1 libgl1-mesa-dri
  # what the tests use to run the real app headless: a virtual X server and real input
  xvfb xauth xdotool
  # the sanitized build and the fuzzers (tests/sanitized_suite.sh): clang with its runtimes,
  # llvm-symbolizer for readable reports
  clang libclang-rt-14-dev llvm
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

werror=OFF
[[ -n ${CI:-} ]] && werror=ON
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNLAB_WERROR="$werror" >/dev/null
cmake --build build -j"$(nproc)"
