#!/usr/bin/env bash
# The man page (packaging/attnlab.1) keeps in step with `attnlab --help`: every command and
# every flag the usage text names is in the page, and the page names no flag the usage lacks.
#   usage: check_man_page.sh ATTNLAB_BINARY MAN_PAGE
set -euo pipefail
binary=$1 page=$2
usage=$("$binary" --help)
# roff writes a dash as \- ; the page's text with those undone.
text=$(sed -e 's/\\-/-/g' -e 's/\\(dq/"/g' "$page")
flags=$(grep -o -- '--[a-z][a-z-]*' <<<"$usage" | sort -u)
count=$(wc -l <<<"$flags")
((count >= 30)) || { echo "check_man_page: only $count flags found in --help; is the usage text read right?" >&2; exit 1; }
missing=()
for f in $flags; do grep -q -- "$f\b" <<<"$text" || missing+=("$f"); done
for c in row render figure vit explain cka train models video lesson; do
  grep -q "^  attnlab $c " <<<"$usage" || { echo "check_man_page: --help no longer names the command $c" >&2; exit 1; }
  grep -q "attnlab $c\b" <<<"$text" || missing+=("attnlab $c")
done
extra=()
for f in $(grep -o -- '--[a-z][a-z-]*' <<<"$text" | sort -u); do grep -q -- "$f\b" <<<"$usage" || extra+=("$f"); done
((${#missing[@]} == 0)) || { echo "check_man_page: $page lacks what attnlab --help names: ${missing[*]}" >&2; exit 1; }
((${#extra[@]} == 0)) || { echo "check_man_page: $page names flags attnlab --help does not: ${extra[*]}" >&2; exit 1; }
echo "check_man_page: the page names all $count flags and the 10 commands of --help"
