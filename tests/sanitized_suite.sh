#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer, plus the
# libFuzzer targets for a bounded time. Builds with clang (Debian's clang and
# libclang-rt-14-dev, installed by setup.sh) into the folder given (default build/sanitize)
# and runs its CTest. Any sanitizer report fails the test that caused it. Mesa's own leaks are
# suppressed by library name (tests/sanitizers/lsan.supp), the leak check stays on.
#   usage: tests/sanitized_suite.sh [--no-build] [BUILD_DIR] [-- CTEST_ARGS...]
#   --no-build runs only the CTest part on a tree built before, in the same environment (for
#   reruns: e.g. `tests/sanitized_suite.sh --no-build -- -R CliStress`).
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build=1
if [[ ${1:-} == --no-build ]]; then
  build=0
  shift
fi
out="$src/build/sanitize"
if [[ $# -gt 0 && $1 != -- ]]; then
  out="$1"
  shift
fi
[[ ${1:-} == -- ]] && shift
mkdir -p "$out" && out="$(cd "$out" && pwd)"
werror=OFF
[[ -n ${CI:-} ]] && werror=ON

if ((build)); then
  cmake -S "$src" -B "$out" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DATTNLAB_SANITIZE=ON -DATTNLAB_FUZZ=ON -DATTNLAB_WERROR="$werror" >/dev/null
  cmake --build "$out" -j"$(nproc)"
fi

supp="$src/tests/sanitizers"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export LD_PRELOAD="$out/lib/libattnlab_keep_libraries_loaded.so"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --test-dir "$out" --output-on-failure -j"$(nproc)" "$@"
