#!/usr/bin/env bash
# Makes the README's pictures of the window on the hand-made heads (docs/app-safari-giraffe.png,
# docs/classroom-*.png): the real window under Xvfb, started with remembered settings (K = 20,
# the query pinned on the giraffe's flank), driven by xdotool keys, each picture exported with F12.
#   docs/window_pictures.sh [build/bin/attnlab]
# Needs xvfb and xdotool (./setup.sh installs them). Look at every picture before committing.
source "$(dirname "$0")/pictures_common.sh"

# hand_made_shot NAME EXTRA_SETTINGS KEYS...: on the safari photo, EXTRA_SETTINGS added to the
# remembered settings.
hand_made_shot() {
  local name=$1 extra=$2
  shift 2
  shot "$name" "{\"patch\": 20, \"hand_made\": {\"cell\": {\"col\": 12, \"row\": 8}, \"query_pinned\": true, \"head\": 0}$extra}" \
    2 assets/safari.jpg -- "$@"
}

hand_made_shot app-safari-giraffe ''
hand_made_shot classroom-ui-scale-1 ', "classroom": {"ui_scale": 1}'
hand_made_shot classroom-ui-scale-1.5 ', "classroom": {"ui_scale": 1.5}'
hand_made_shot classroom-ui-scale-2 ', "classroom": {"ui_scale": 2}'
hand_made_shot classroom-presentation ', "classroom": {"ui_scale": 1.5}' F5
hand_made_shot classroom-map-only ', "export_map_only": true, "classroom": {"ui_scale": 1.5}'
