#!/usr/bin/env bash
# Makes the README's pictures of the Train tab (docs/train-*.png): the real window under Xvfb,
# its buttons clicked as a teacher would (through the sidecar's widget rectangles), each picture
# exported with F12. Run A (the default model) alone: at step 0, after 1 minute and after 5
# (train-step0, train-1min, train-5min), and the distance-vs-step plot cut out of the last
# (train-distance); then in a new window run A (cls) and run B (average pooling) trained together
# for 3 minutes side by side (train-runs), and the safari photo as their probe (train-photo);
# then the masked-patch task on the safari photo after 1 and 5 minutes (train-masked-1min,
# train-masked-5min).
# The pictures test (tests/gui/test_train_xvfb.cpp, TrainPictures) prints each picture's step,
# test accuracy and the machine's load average: write them into the README with the pictures.
#   docs/train_pictures.sh [build] [all|classify|masked]     (about 16 minutes for all)
# ATTNLAB_TRAIN_PICTURE_MINUTES and ATTNLAB_TRAIN_RUNS_MINUTES change the 5 and the 3.
# Needs xvfb and xdotool (./setup.sh --tests installs them) and the built test_app. Look at every
# picture before committing.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
case "${2:-all}" in
  all) filter='TrainUnderXvfb.DISABLED_TrainPictures:TrainUnderXvfb.DISABLED_MaskedPictures' ;;
  classify) filter='TrainUnderXvfb.DISABLED_TrainPictures' ;;
  masked) filter='TrainUnderXvfb.DISABLED_MaskedPictures' ;;
  *) echo "train_pictures.sh: which pictures: all, classify or masked, not '$2'" >&2; exit 2 ;;
esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ATTNLAB_TRAIN_PICTURES=$out "$build/tests/test_app" --gtest_also_run_disabled_tests --gtest_filter="$filter"
for f in "$out"/train-*.png; do
  cp "$f" docs/
  echo "docs/$(basename "$f")"
done
