#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer, plus the
# libFuzzer targets for a bounded time. Builds with clang (Debian's clang and
# libclang-rt-14-dev, installed by setup.sh) into the folder given (default build/sanitize)
# and runs its CTest. Any sanitizer report fails the test that caused it. Mesa's own leaks are
# suppressed by library name (tests/sanitizers/lsan.supp), the leak check stays on.
#   usage: tests/sanitized_suite.sh [--no-build | --build-only] [BUILD_DIR] [-- CTEST_ARGS...]
#   --no-build runs only the CTest part on a tree built before, in the same environment (for
#   reruns: e.g. `tests/sanitized_suite.sh --no-build -- -R cli_stress`).
#   ATTNLAB_SANITIZE_ALL=1 runs every test; by default the long runs listed in `long_runs` below
#   are left out (each still runs in the plain tree).
#   --build-only builds the tree and stops: `./setup.sh --tests` does this, so that a cold
#   compiler cache (a fresh machine: about 15 minutes of clang on 2 cores) is spent outside the
#   CTest entry's time-out, whose own build is then a check that nothing changed.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
source "$src/tests/sanitizers/suite_common.sh"
suite_args "$src/build/sanitize" "$@"

if ((build)); then
  suite_configure -DATTNLAB_SANITIZE=ON -DATTNLAB_FUZZ=ON
  cmake --build "$out" -j"$(nproc)"
fi
((run)) || exit 0

supp="$src/tests/sanitizers"
# intercept_tls_get_addr=0: clang 14's runtime guesses the range of a dynamic TLS block from the
# 16 bytes before it when the block sits at a page offset of 16 (glibc 2.19's header; glibc 2.36
# has none there, it reads ASan's chunk header), and LeakSanitizer's tracer then scans that bogus
# range at exit and crashes (Tracer caught signal 11, exit 134). Mesa's libLLVM-15 block lands
# there by chance. Fixed upstream in LLVM 17 ("Fix tls_get_addr handling for glibc >=2.25").
# Nothing is lost: since glibc 2.25 these blocks are heap chunks from the dynamic linker, which
# LeakSanitizer scans as reachable anyway (tests/sanitizers/dtls_tracer.cpp, leak_found.cpp).
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1:intercept_tls_get_addr=0"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export LD_PRELOAD="$out/lib/libattnlab_keep_libraries_loaded.so"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Left out of this run (not of the plain tree's): end-to-end tests whose time goes to numerics over
# many inputs or to a large model — 500 test images, a ViT-S/16, clips decoded frame by frame,
# the CKA of every layer pair — through code that the shorter tests here reach too (the same
# loaders, passes, views and recorders on a smaller input). Under ASan each took 20–80 s; with
# them the run took 1 550 s on 2 cores, over its 1 500 s limit (docs/ROBUSTNESS.md).
long_runs=(
  'TrainUnderXvfb\.(MaskedPatchesOfThePhoto|TwoRunsSideBySideOnThePhoto)'
  'CkaUnderXvfb\.TheViTsSimilarityTabIsCoresMatrix'
  'RecordUnderXvfb\.RecordsTheMapWhileAVideoPlaysThrough'
  'VideoUnderXvfb\.PlaysThrough(ARandomViTS16|TheBundledViT)'
  'Video\.(SceneChangeFollowsTheNewScene|VideoFramesAreTheStillRendersOfTheFrames|GifAtAChosenRateWithPalette)'
  'CliVit\.(RowsRolloutDistanceAndTopMatchPyTorchOnGpuAndCpu|BundledFashionModelTopThreeMatchesPyTorch)'
  'CliVit\.(RelevanceAndReceptiveFieldMatchPyTorchAutograd|NormsMatchPyTorchWithAndWithoutRegisters)'
  'FashionVit\.FiveHundredTestImages' 'CliCka\.TheBundledModelOverFiveHundredTestImages'
  'Faithfulness\.CheferBeatsTheRandomOrderOnTheBundledModel'
  # The same window in each language (issue 52): the plain tree runs all eight; here Chinese at UI
  # scale 2 stays, the largest atlas (its CJK font) through the same code as the others.
  'Screens/FitUnderXvfb\.TheWindowFitsTheScreenAndEveryPanelIsReachable/1024x768_scale[12]_(de|es|fr)'
  'Screens/FitUnderXvfb\.TheWindowFitsTheScreenAndEveryPanelIsReachable/1024x768_scale1_zh_CN'
)
exclude=()
if [[ -z ${ATTNLAB_SANITIZE_ALL:-} ]]; then
  exclude=(-E "^($(IFS='|'; echo "${long_runs[*]}"))")
fi
status=0
ctest --test-dir "$out" --output-on-failure -j"$(nproc)" "${exclude[@]}" "${ctest_args[@]}" || status=$?
# Why, at the end: this suite's output is one test's output in the plain tree's CTest.
((status == 0)) || "$src/tests/failure_summary.sh" "$out"
exit "$status"
