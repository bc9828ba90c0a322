#!/usr/bin/env bash
# Makes the README's pictures of real ViTs in the app (docs/vit-*.png): the real window under
# Xvfb, driven by xdotool keys as a teacher would, each view exported with F12.
#   docs/vit_pictures.sh [build/bin/attnlab]
# Needs xvfb and xdotool (./setup.sh installs them). Look at every picture before committing.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build/bin/attnlab}")
work=$(mktemp -d)
trap 'kill $xvfb 2>/dev/null || true; rm -rf "$work"' EXIT
display=:$((90 + RANDOM % 100))
Xvfb "$display" -screen 0 1600x1000x24 >/dev/null 2>&1 &
xvfb=$!
sleep 1
export DISPLAY=$display XDG_CONFIG_HOME=$work/config ATTNLAB_EXPORT_DIR=$work/exports
mkdir -p "$work/config/attnlab" "$work/exports"

# shot NAME IMAGE RESIZE KEYS...: opens IMAGE with the bundled model (input short side RESIZE
# pixels, 0 for the model's 28), presses KEYS, exports and saves docs/NAME.png.
shot() {
  local name=$1 image=$2 resize=$3
  shift 3
  printf '{"vit": {"resize": %d}}\n' "$resize" >"$work/config/attnlab/settings.json"
  rm -f "$work/exports"/*
  "$bin" "$image" --model assets/fashion_vit >"$work/app.log" 2>&1 &
  local pid=$!
  local window=""
  for _ in $(seq 60); do
    window=$(xdotool search --name "Attention Lab" 2>/dev/null | head -1) && [ -n "$window" ] && break
    sleep 0.5
  done
  sleep 8  # the model loads and runs on the worker
  xdotool mousemove --window "$window" 5 990
  for k in "$@"; do
    xdotool key --window "$window" "$k"
    sleep 0.7
  done
  xdotool key --window "$window" F12
  for _ in $(seq 120); do  # a loaded machine can take a while
    ls "$work/exports"/*.png >/dev/null 2>&1 && break
    sleep 0.5
  done
  sleep 0.5
  cp "$(ls "$work/exports"/*.png | head -1)" "docs/$name.png"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  echo "docs/$name.png"
}

shot vit-fashion-shirt assets/fashion_vit/images/04_shirt.png 0
shot vit-fashion-bag assets/fashion_vit/images/14_bag.png 0
shot vit-safari-grid assets/safari.jpg 56
shot vit-safari-rollout assets/safari.jpg 56 r
shot vit-safari-masks assets/safari.jpg 56 0 d
shot vit-safari-norms assets/safari.jpg 56 Prior n
