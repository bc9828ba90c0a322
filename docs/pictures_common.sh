# Shared by docs/window_pictures.sh and docs/vit_pictures.sh (sourced, not run): an Xvfb screen,
# a private config and export folder, and `shot`, which starts the app, presses keys as a teacher
# would, exports with F12 and copies the picture into docs/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin=$(realpath "${1:-build/bin/attnlab}")
work=$(mktemp -d)
trap 'kill $xvfb 2>/dev/null || true; rm -rf "$work"' EXIT
display=:$((90 + RANDOM % 100))
Xvfb "$display" -screen 0 1600x1000x24 >/dev/null 2>&1 &
xvfb=$!
sleep 1
export DISPLAY=$display XDG_CONFIG_HOME=$work/config ATTNLAB_EXPORT_DIR=$work/exports
mkdir -p "$work/config/attnlab" "$work/exports"

# shot NAME SETTINGS SETTLE_S APP_ARGS... -- KEYS...: starts the app with SETTINGS as its
# remembered settings and APP_ARGS, waits SETTLE_S seconds after its window appears, presses
# KEYS, exports and saves docs/NAME.png.
shot() {
  local name=$1 settings=$2 settle=$3
  shift 3
  local args=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  printf '%s\n' "$settings" >"$work/config/attnlab/settings.json"
  rm -f "$work/exports"/*
  "$bin" "${args[@]}" >"$work/app.log" 2>&1 &
  local pid=$!
  local window=""
  for _ in $(seq 60); do
    window=$(xdotool search --name "Attention Lab" 2>/dev/null | head -1) && [ -n "$window" ] && break
    sleep 0.5
  done
  sleep "$settle"
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
