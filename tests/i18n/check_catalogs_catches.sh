#!/usr/bin/env bash
# check_catalogs_catches.sh ROOT: check_catalogs.sh fails on a copy of the tree broken each way
# it exists to catch — an untranslated entry, a fuzzy one, a string changed in the code after the
# catalogs were made, a missing glossary, a translated "attnlab: " prefix — and passes on the copy unbroken.
set -euo pipefail
root=$(cd "$1" && pwd)
check=$root/tests/i18n/check_catalogs.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fresh() {
  rm -rf "$work/t" && mkdir -p "$work/t"
  cp -r "$root/core" "$root/app" "$root/po" "$root/CMakeLists.txt" "$work/t/"
}
expect_fail() {  # WHAT PATTERN
  if out=$(bash "$check" "$work/t" 2>&1); then echo "check_catalogs_catches: not caught: $1" >&2; exit 1; fi
  grep -q -- "$2" <<<"$out" || { echo "check_catalogs_catches: $1 failed for another reason: $out" >&2; exit 1; }
  echo "caught: $1"
}
fresh
bash "$check" "$work/t" >/dev/null || { echo "check_catalogs_catches: the unbroken copy fails" >&2; exit 1; }

# The first translated entry after the header: its msgstr emptied, then marked fuzzy.
first=$(grep -n '^msgstr "..*"$' "$work/t/po/de.po" | sed -n 2p | cut -d: -f1)
sed -i "${first}s/^msgstr \".*\"$/msgstr \"\"/" "$work/t/po/de.po"
expect_fail "an untranslated entry" "untranslated"

fresh
first=$(grep -n '^msgid "..*"$' "$work/t/po/fr.po" | sed -n 1p | cut -d: -f1)
sed -i "${first}i #, fuzzy" "$work/t/po/fr.po"
expect_fail "a fuzzy entry" "fuzzy"

fresh  # a string the code changes: the template is stale and the merged catalogs lack it
file=$work/t/core/hand_made/tokens.cpp
grep -q '_("the image is empty")' "$file"
sed -i 's/_("the image is empty")/_("the picture is empty")/' "$file"
expect_fail "a string changed in the code" "not what the sources mark now"
out=$(bash "$check" "$work/t" 2>&1) || true
grep -q "merged with the sources' strings.*untranslated" <<<"$out" ||
  { echo "check_catalogs_catches: the changed string is not reported untranslated in the merged catalogs" >&2; exit 1; }

fresh
rm "$work/t/po/glossary.es.md"
expect_fail "a missing glossary" "glossary.es.md is missing"

fresh  # French typography's space before the colon, in the program's prefix
line=$(grep -n '^msgstr "attnlab: ' "$work/t/po/fr.po" | sed -n 1p | cut -d: -f1)
sed -i "${line}s/^msgstr \"attnlab: /msgstr \"attnlab : /" "$work/t/po/fr.po"
expect_fail "a translated prefix" 'changes the prefix "attnlab: "'
