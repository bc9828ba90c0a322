#!/usr/bin/env bash
# po/update.sh ROOT VERSION [OUT.pot]: extracts the translatable strings of ROOT's core/ and app/
# (the keywords of core/base/translate.hpp) into ROOT/po/attnlab.pot, or into OUT.pot alone when
# given (tests/i18n/check_catalogs.sh compares it with the committed one), and without OUT merges
# the template into every po/<lang>.po (msgmerge: a changed string becomes fuzzy).
set -euo pipefail
root=$1 version=$2 out=${3:-}
: "${XGETTEXT:=xgettext}" "${MSGMERGE:=msgmerge}"
cd "$root"
pot=${out:-po/attnlab.pot}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
find core app -name '*.cpp' -o -name '*.hpp' | LC_ALL=C sort >"$tmp"
"$XGETTEXT" --from-code=UTF-8 --language=C++ --files-from="$tmp" -o "$pot.new" \
  --keyword=_ --keyword=N_ --keyword=tr_n:1,2 --keyword=tr_c:1c,2 \
  --flag=_:1:pass-c-format --flag=tr_n:1:pass-c-format --flag=tr_n:2:pass-c-format \
  --flag=text_format:1:c-format \
  --add-comments=TRANSLATORS: --add-location=file --sort-by-file --no-wrap \
  --package-name=attnlab --package-version="$version" --msgid-bugs-address=https://attnlab.org \
  --copyright-holder="the Attention Lab authors"
# The creation date alone would change the file on every run.
sed -i '/^"POT-Creation-Date:/d' "$pot.new"
mv "$pot.new" "$pot"
[[ -n $out ]] && exit 0
while read -r lang; do
  [[ $lang =~ ^[a-zA-Z_]+$ ]] || continue
  "$MSGMERGE" --quiet --update --backup=none --add-location=file --no-wrap "po/$lang.po" "$pot"
done <po/LINGUAS
