# Sourced by the *_catches.sh scripts. expect_reported NAME RC OUT WHERE...: a check run on a
# tree made to break it must exit 1 and report each WHERE ("file:line:") in OUT, and no other
# line of that form. Prints what is wrong (prefixed with NAME) and returns 1, else returns 0.
expect_reported() {
  local name=$1 rc=$2 out=$3
  shift 3
  local status=0 where reported
  if ((rc != 1)); then echo "$name: exit code $rc, expected 1"; status=1; fi
  for where in "$@"; do
    grep -q "^$where " <<<"$out" || { echo "$name: $where not reported"; status=1; }
  done
  reported=$(grep -c '^[a-z/_]*\.[a-z]*:[0-9]*: ' <<<"$out")
  if ((reported != $#)); then
    echo "$name: $reported lines reported, expected $#"
    status=1
  fi
  return $status
}
