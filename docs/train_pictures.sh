#!/usr/bin/env bash
# Makes the README's pictures of the Train tab (docs/train-*.png): the real window under Xvfb,
# its buttons clicked as a teacher would (through the sidecar's widget rectangles), each picture
# exported with F12. Run A (the default model) alone: at step 0, after 1 minute and after 5
# (train-step0, train-1min, train-5min), and the distance-vs-step plot cut out of the last
# (train-distance); then in a new window run A (cls) and run B (average pooling) trained together
# for 3 minutes side by side (train-runs), and the safari photo as their probe (train-photo).
# The pictures test (tests/gui/test_train_xvfb.cpp, TrainPictures) prints each picture's step,
# test accuracy and the machine's load average: write them into the README with the pictures.
#   docs/train_pictures.sh [build]                 (about 10 minutes)
# ATTNLAB_TRAIN_PICTURE_MINUTES and ATTNLAB_TRAIN_RUNS_MINUTES change the 5 and the 3.
# Needs xvfb and xdotool (./setup.sh --tests installs them) and the built test_app. Look at every
# picture before committing.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ATTNLAB_TRAIN_PICTURES=$out "$build/tests/test_app" --gtest_also_run_disabled_tests --gtest_filter='TrainUnderXvfb.DISABLED_TrainPictures'
for f in "$out"/train-*.png; do
  cp "$f" docs/
  echo "docs/$(basename "$f")"
done
