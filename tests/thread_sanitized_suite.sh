#!/usr/bin/env bash
# The tests that start threads, under ThreadSanitizer (issue 38): the scheduler, the Train tab's
# lane with the real TrainSession, the headless sessions, and the real window under Xvfb training
# a model, showing its similarity (CKA) tab and a ViT's rows, with the app itself built with TSan.
# Builds with clang (-DATTNLAB_SANITIZE_THREAD=ON) into the folder given (default build/tsan), only
# the executables those tests need, and runs that subset of its CTest. Any race or lock-order
# report fails the test that caused it (halt_on_error). Mesa's uninstrumented libraries are
# suppressed by library name (tests/sanitizers/tsan.supp), never our own code.
#   usage: tests/thread_sanitized_suite.sh [--no-build | --build-only] [BUILD_DIR] [-- CTEST_ARGS...]
#   --no-build runs only the CTest part on a tree built before, in the same environment (for
#   reruns: e.g. `tests/thread_sanitized_suite.sh --no-build -- -R Scheduler`).
#   --build-only builds the tree and stops: `./setup.sh --tests` does this, so that a cold
#   compiler cache is spent outside the CTest entry's time-out, whose own build is then a check
#   that nothing changed.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
source "$src/tests/sanitizers/suite_common.sh"
suite_args "$src/build/tsan" "$@"

if ((build)); then
  suite_configure -DATTNLAB_SANITIZE_THREAD=ON
  # Only what the chosen tests run (the app: the window tests start it), to keep a cold build short.
  cmake --build "$out" -j"$(nproc)" --target attnlab test_app_core test_app attnlab_keep_libraries_loaded
fi
((run)) || exit 0

# halt_on_error: the first report ends the process with exitcode 66, so the test fails even where
# the race happened in the app the window test started (its exit status is checked there).
# second_deadlock_stack: a lock-order report shows where both locks were taken.
# dlclose() does nothing (tests/sanitizers/keep_libraries_loaded.cpp): TSan ends a process that
# unloads a library named by a called_from_lib suppression (Mesa's driver, at eglTerminate).
export LD_PRELOAD="$out/lib/libattnlab_keep_libraries_loaded.so"
export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1:history_size=4:suppressions=$src/tests/sanitizers/tsan.supp:print_suppressions=0"
# In-process (test_app_core): the scheduler, the lane, two real TrainSessions, and the headless
# sessions and views whose work runs on the scheduler or in the GPU engine.
# The real window (test_app, the app TSan-built): runs A and B trained from the Train panel (the
# lane, the background thread) and the similarity (CKA) tab of A and of A against B computed on
# the pool; a dropped ViT's rows (VitSession). (TrainUnderXvfb's two runs side by side, an export
# sequence five times slower under TSan, timed out once on a loaded machine: TrainSession's
# in-process test covers the same.)
subset='^(Scheduler|TrainLane|TrainSession|HandMadeSession|MapSourceViews)\.'
subset+='|^CkaUnderXvfb\.TheModelBeingTrainedHasItsOwnSimilarityTab$'
subset+='|^AppUnderXvfb\.DroppedViTShowsTheEnginesRowsForClickedPatchLayerAndHead$'
# Closing the window while a checkpoint loads, a training chunk or a CKA job runs: every job
# told to stop at once (Scheduler::stop_all) while the window is torn down.
subset+='|^CloseUnderXvfb\.'
ctest --test-dir "$out" --output-on-failure -j"$(nproc)" -R "$subset" "${ctest_args[@]}"
