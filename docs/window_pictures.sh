#!/usr/bin/env bash
# Makes the README's pictures of the window on the hand-made heads (docs/app-safari-giraffe.png,
# docs/classroom-*.png): the real window under Xvfb, started with remembered settings (K = 20,
# the query pinned on the giraffe's flank), driven by xdotool keys as a teacher would, each
# picture exported with F12.
#   docs/window_pictures.sh [build/bin/attnlab]
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

# shot NAME SETTINGS KEYS...: starts the app on the safari photo with SETTINGS (JSON members
# added to the remembered settings), presses KEYS, exports and saves docs/NAME.png.
shot() {
  local name=$1 extra=$2
  shift 2
  printf '{"patch": 20, "hand_made": {"cell": {"col": 12, "row": 8}, "query_pinned": true, "head": 0}%s}\n' "$extra" \
    >"$work/config/attnlab/settings.json"
  rm -f "$work/exports"/*
  "$bin" assets/safari.jpg >"$work/app.log" 2>&1 &
  local pid=$!
  local window=""
  for _ in $(seq 60); do
    window=$(xdotool search --name "Attention Lab" 2>/dev/null | head -1) && [ -n "$window" ] && break
    sleep 0.5
  done
  sleep 2
  xdotool mousemove --window "$window" 5 990
  for k in "$@"; do
    xdotool key --window "$window" "$k"
    sleep 0.7
  done
  sleep 1
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

[ -z "${ONLY:-}" ] || { shot "$ONLY" "$ONLY_SETTINGS" ${ONLY_KEYS:-}; exit; }
shot app-safari-giraffe ''
shot classroom-ui-scale-1 ', "classroom": {"ui_scale": 1}'
shot classroom-ui-scale-1.5 ', "classroom": {"ui_scale": 1.5}'
shot classroom-ui-scale-2 ', "classroom": {"ui_scale": 2}'
shot classroom-presentation ', "classroom": {"ui_scale": 1.5}' F5
shot classroom-map-only ', "export_map_only": true, "classroom": {"ui_scale": 1.5}'
