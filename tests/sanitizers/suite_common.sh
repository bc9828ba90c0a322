# Sourced by tests/sanitized_suite.sh and tests/thread_sanitized_suite.sh: what both do before
# their own part. Needs $src (the repository's root) set by the caller.
#
# suite_args DEFAULT_OUT ARGS...: reads [--no-build | --build-only] [BUILD_DIR] [-- CTEST_ARGS...]
# into build (0/1), run (0/1), out (the build folder, made and absolute: BUILD_DIR or DEFAULT_OUT),
# werror (ON under CI, else OFF) and the array ctest_args.
suite_args() {
  out=$1
  shift
  build=1 run=1
  if [[ ${1:-} == --no-build ]]; then
    build=0
    shift
  elif [[ ${1:-} == --build-only ]]; then
    run=0
    shift
  fi
  if [[ $# -gt 0 && $1 != -- ]]; then
    out=$1
    shift
  fi
  [[ ${1:-} == -- ]] && shift
  ctest_args=("$@")
  mkdir -p "$out" && out="$(cd "$out" && pwd)"
  werror=OFF
  if [[ -n ${CI:-} ]]; then werror=ON; fi
}

# suite_configure CMAKE_ARGS...: configures $out from $src as a clang Debug tree with the given
# options, through ccache where installed (setup.sh installs it): a rebuild of this tree, from
# this clone or a fresh one at the same path, compiles only what changed.
suite_configure() {
  local launcher=()
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$src}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  cmake -S "$src" -B "$out" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DATTNLAB_WERROR="$werror" "${launcher[@]}" "$@" >/dev/null
}
