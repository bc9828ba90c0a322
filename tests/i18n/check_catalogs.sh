#!/usr/bin/env bash
# check_catalogs.sh ROOT (issue 52): the catalogs are whole and current.
#  1. po/attnlab.pot holds exactly the strings the sources mark now (po/update.sh into a temporary
#     template; messages, contexts and plurals compared, not line numbers);
#  2. every po/<lang>.po of po/LINGUAS, as it is and merged with that template (msgmerge, as
#     `--target attnlab_pot` does), passes msgfmt --check with no untranslated and no fuzzy entry:
#     a string changed in the code shows up here as fuzzy or untranslated;
#  3. a translation keeps its message's ImGui id ("...##id"), its line breaks' count and the
#     program's prefix "attnlab: " (scripts find the program's lines by it, in every language);
#  4. each language has its glossary (po/glossary.<lang>.md) naming the field's terms.
set -euo pipefail
root=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
say() { echo "check_catalogs: $*" >&2; fail=1; }

version=$(sed -n 's/^project(attnlab VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
bash "$root/po/update.sh" "$root" "$version" "$work/fresh.pot"
norm() { msgcat --no-location --no-wrap --sort-output "$1" | sed '1,/^$/d'; }
if ! diff <(norm "$root/po/attnlab.pot") <(norm "$work/fresh.pot") >"$work/pot.diff"; then
  say "po/attnlab.pot is not what the sources mark now; run: cmake --build build --target attnlab_pot"
  head -20 "$work/pot.diff" >&2
fi

langs=()
while read -r l; do [[ $l =~ ^[a-zA-Z_]+$ ]] && langs+=("$l"); done <"$root/po/LINGUAS"
((${#langs[@]} > 0)) || say "po/LINGUAS names no language"
for l in "${langs[@]}"; do
  po=$root/po/$l.po
  [[ -f $po ]] || { say "po/$l.po is missing"; continue; }
  msgmerge --quiet --no-fuzzy-matching --no-wrap "$po" "$work/fresh.pot" -o "$work/$l.merged.po" 2>/dev/null ||
    msgmerge --quiet --no-wrap "$po" "$work/fresh.pot" -o "$work/$l.merged.po"
  for what in "$po" "$work/$l.merged.po"; do
    name=po/$l.po; [[ $what == "$po" ]] || name="po/$l.po merged with the sources' strings"
    if ! stats=$(LC_ALL=C msgfmt --check --statistics -o /dev/null "$what" 2>&1); then
      say "$name: msgfmt --check fails: $(echo "$stats" | head -3)"
      continue
    fi
    if [[ $stats =~ fuzzy || $stats =~ untranslated ]]; then say "$name: $stats"; fi
  done
  # An ImGui id after "##" and the number of line breaks must survive translation.
  msgattrib --no-obsolete --translated --no-wrap "$po" 2>/dev/null | awk -v lang="$l" '
    function flush() {
      if (id != "" && str != "") {
        i1 = index(id, "##"); s1 = index(str, "##")
        if (i1 && (s1 == 0 || substr(id, i1) != substr(str, s1))) { print "po/" lang ".po: the translation of \"" id "\" loses its id " substr(id, i1); bad = 1 }
        n1 = gsub(/\\n/, "&", id); n2 = gsub(/\\n/, "&", str)
        if (substr(id, 1, 9) == "attnlab: " && substr(str, 1, 9) != "attnlab: ") { print "po/" lang ".po: the translation of \"" substr(id, 1, 60) "\" changes the prefix \"attnlab: \""; bad = 1 }
        if (n1 != n2 && !plural) { print "po/" lang ".po: the translation of \"" substr(id, 1, 60) "\" has " n2 " line breaks, the English " n1; bad = 1 }
      }
      id = ""; str = ""; plural = 0; mode = ""
    }
    /^msgid "/ { flush(); mode = "id"; id = substr($0, 8, length($0) - 8); next }
    /^msgid_plural/ { plural = 1; mode = "x"; next }
    /^msgstr "/ { mode = "str"; str = substr($0, 9, length($0) - 9); next }
    /^msgstr\[0\] "/ { mode = "str"; str = substr($0, 12, length($0) - 12); next }
    /^"/ { t = substr($0, 2, length($0) - 2); if (mode == "id") id = id t; else if (mode == "str") str = str t; next }
    /^msgstr\[/ { mode = "x"; next }
    END { flush(); exit bad }' >"$work/ids.txt" || { cat "$work/ids.txt" >&2; fail=1; }
  g=$root/po/glossary.$l.md
  if [[ ! -f $g ]]; then
    say "po/glossary.$l.md is missing"
  else
    for term in query key value head token patch "attention matrix" mask "positional code" temperature register; do
      grep -qi "^| *$term *|" "$g" || say "po/glossary.$l.md has no row for \"$term\""
    done
  fi
done
((fail == 0)) && echo "check_catalogs: ${#langs[@]} catalogs complete and current ($(grep -c '^msgid ' "$work/fresh.pot") messages)"
exit $fail
