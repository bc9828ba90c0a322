#!/usr/bin/env bash
# After a failed CTest run: the failure messages of each failed test, a few lines each, read from
# CTest's own log (Testing/Temporary/LastTest.log). A run's log can be long (the sanitized suite's
# is the output of 550 tests inside one test) and a reader of it may see only its end: these lines
# put why beside which.
#   usage: tests/failure_summary.sh BUILD_DIR [LINES_PER_TEST]
set -euo pipefail
dir="$1/Testing/Temporary"
per_test="${2:-24}"
[[ -s $dir/LastTestsFailed.log && -f $dir/LastTest.log ]] || exit 0
echo "--- why the failed tests failed (from $dir/LastTest.log; lines cut at 300 characters):"
while IFS= read -r line; do
  name="${line#*:}"
  echo "* $name"
  # The section of this test: from its "Testing: NAME" line to its "<end of output>".
  # GoogleTest's "file:line: Failure" and the four lines after it; a sanitizer's report, an
  # uncaught exception and a test's time-out by their first lines.
  awk -v name="$name" -v max="$per_test" '
    $0 ~ /^[0-9]+\/[0-9]+ Testing: / { inside = (substr($0, index($0, "Testing: ") + 9) == name); output = 0; next }
    !inside { next }
    /^Output:$/ { output = 1; next }
    !output { next }
    /^<end of output>/ { inside = 0; next }
    /: Failure$/ { after = 5 }
    /ERROR: (Address|Leak|Thread)Sanitizer|runtime error:|^SUMMARY: |terminate called|what\(\):|Timeout|Exception:/ { after = after > 1 ? after : 1 }
    after > 0 && printed < max { print "    " substr($0, 1, 300); ++printed; --after }
  ' "$dir/LastTest.log"
done < "$dir/LastTestsFailed.log"
