#!/usr/bin/env bash
# Makes the pictures of Export → Record (docs/record-menu.png, docs/record-sweep-tau.gif): the
# real window under Xvfb on the safari photo (K = 20, the query pinned on the giraffe's flank,
# the colour head, F12 saving the map only), the Export menu opened and its "Sweep the
# temperature" clicked with "Record as GIF" on, as a teacher would.
#   docs/record_pictures.sh [build/bin/attnlab]
# Needs xvfb, xdotool and jq. Look at the pictures before committing.
source "$(dirname "$0")/pictures_common.sh"

printf '%s\n' '{"patch": 20, "hand_made": {"cell": {"col": 12, "row": 8}, "query_pinned": true, "head": 0},
  "export_map_only": true}' >"$work/config/attnlab/settings.json"
"$bin" assets/safari.jpg >"$work/app.log" 2>&1 &
pid=$!
window=""
for _ in $(seq 60); do
  window=$(xdotool search --name "Attention Lab" 2>/dev/null | head -1) && [ -n "$window" ] && break
  sleep 0.5
done
sleep 2

# The newest export's sidecar after F12 (the widgets drawn in that frame, menus included).
export_sidecar() {
  local before
  before=$(ls "$work/exports"/*.json 2>/dev/null | wc -l)
  xdotool key --window "$window" F12
  for _ in $(seq 60); do
    [ "$(ls "$work/exports"/*.json 2>/dev/null | wc -l)" -gt "$before" ] && break
    sleep 0.5
  done
  sleep 0.3
  ls -t "$work/exports"/attnlab-*.json | grep -v record | head -1
}
# click_item SIDECAR NAME: the centre of a widget the sidecar recorded.
click_item() {
  local x y
  read -r x y < <(jq -r --arg n "$2" '.widgets[$n] | "\(.[0] + .[2] / 2 | floor) \(.[1] + .[3] / 2 | floor)"' "$1")
  xdotool mousemove --window "$window" "$x" "$y" click 1
  sleep 0.7
}
open_export_menu() {
  click_item "$(export_sidecar)" "menu:Export"
}

open_export_menu
click_item "$(export_sidecar)" "menu:Export/record_gif"
open_export_menu
xdotool mousemove --window "$window" 5 700
sidecar=$(export_sidecar)
jq -r '.widgets["menu:Export/sweep:tau"]' "$sidecar" >/dev/null
x=$(jq -r '.widgets["menu:Export/sweep:tau"] | .[0] + 40 | floor' "$sidecar")
y=$(jq -r '.widgets["menu:Export/sweep:tau"] | .[1] + .[3] / 2 | floor' "$sidecar")
xdotool mousemove --window "$window" "$x" "$y"
sleep 0.7
import -window root -crop 1040x700+0+0 +repage "docs/record-menu.png"
xdotool click 1
xdotool mousemove --window "$window" 5 700
for _ in $(seq 120); do
  ls "$work/exports"/attnlab-record-*.json >/dev/null 2>&1 && break
  sleep 0.5
done
cp "$(ls "$work/exports"/attnlab-record-*.gif | head -1)" docs/record-sweep-tau.gif
kill "$pid"
wait "$pid" 2>/dev/null || true
echo docs/record-menu.png docs/record-sweep-tau.gif
