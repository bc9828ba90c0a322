#!/usr/bin/env bash
# Issue 13: the commands that start threads (render of every view, some with a worker thread,
# render --from, figure; llvmpipe's own threads in each), RUNS runs in all (default 50), while
# one busy loop per core keeps the machine loaded. Any non-zero exit fails the test. In the
# sanitized tree every exit runs LeakSanitizer's check, which stops each thread still alive.
#   usage: tests/cli/stress_cli.sh ATTNLAB_BINARY [RUNS]
set -uo pipefail
bin="$1"
runs="${2:-50}"
src="$(cd "$(dirname "$0")/../.." && pwd)"
image="$src/assets/safari.jpg"
work="$(mktemp -d)"
hogs=()
cleanup() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# The views as render names them ("unknown view '?' (expected map, heads, ...)").
list="$("$bin" render --image "$image" --patch 25 --query 0,0 --view '?' --out "$work/x.png" 2>&1)"
views="$(sed -n "s/.*(expected \(.*\))$/\1/p" <<<"$list" | tr -d ',')"
read -ra views <<<"$views"
if ((${#views[@]} < 2)); then
  echo "cannot read the view names from: $list"
  exit 1
fi
echo "views: ${views[*]}"

for ((c = 0; c < $(nproc); ++c)); do
  (while :; do :; done) &
  hogs+=($!)
done

# Small pictures and K = 25 (N = 400): quick under the sanitizers, and the matrix and
# permutation views still start their workers.
common=(--image "$image" --patch 25 --query 12,8)
kinds=$((${#views[@]} + 2))
failed=0
start=$SECONDS
for ((i = 0; i < runs; ++i)); do
  k=$((i % kinds))
  if ((k < ${#views[@]})); then
    cmd=("$bin" render "${common[@]}" --view "${views[k]}" --size 480x360 --out "$work/$i.png")
    [[ ${views[k]} == permutation || -z ${from:-} ]] && from="$work/$i.json"  # --from starts its worker too
  elif ((k == ${#views[@]})); then
    cmd=("$bin" render --from "$from" --out "$work/$i.png")
  else
    cmd=("$bin" figure "${common[@]}" --queries "12,8;3,3" --panel 96 --out "$work/$i.png")
  fi
  "${cmd[@]}" >"$work/out.txt" 2>&1
  rc=$?
  if ((rc != 0)); then
    ((++failed))
    echo "run $i: exit $rc: ${cmd[*]}"
    tail -n 40 "$work/out.txt"
  fi
done
echo "$runs runs under load ($(nproc) busy loops) in $((SECONDS - start)) s, $failed failed"
((failed == 0))
