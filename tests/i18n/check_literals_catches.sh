#!/usr/bin/env bash
# check_literals_catches.sh ROOT: check_literals.pl finds each kind of text that bypasses the
# catalog in a file made for it, and passes the same calls written through the keywords.
set -euo pipefail
root=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/bad.cpp" <<'CPP'
void f(int K, const std::string& path) {
  ImGui::Button("Open an image");
  ImGui::TextColored(ImVec4(1, 0, 0, 1), "K = %d is too large", K);
  if (K > 3) throw Error("cannot read '" + path + "'");
  std::fprintf(stderr, "attnlab: no such model\n");
  menu_item("View/Heads", "Heads", nullptr, &shown);
  ImGui::SetTooltip(
      "a tooltip on its own line");
}
CPP
cat >"$work/good.cpp" <<'CPP'
void f(int K, const std::string& path) {
  ImGui::Button(_("Open an image"));
  ImGui::TextColored(ImVec4(1, 0, 0, 1), _("K = %d is too large"), K);
  if (K > 3) throw Error(text_format(_("cannot read '%s'"), path.c_str()));
  std::fprintf(stderr, "%s\n", _("attnlab: no such model"));
  menu_item("View/Heads", _("Heads"), nullptr, &shown);
  ImGui::Begin("##overlay");
  ImGui::Text("%s", name.c_str());
  ImGui::Text("K");  // a symbol, not a word
  ImGui::SetTooltip("safetensors");  // i18n: English (a file format's name)
  std::printf("query,key,weight\n");
}
CPP
perl "$root/tests/i18n/check_literals.pl" "$work/good.cpp" || { echo "check_literals_catches: flags marked text" >&2; exit 1; }
if out=$(perl "$root/tests/i18n/check_literals.pl" "$work/bad.cpp"); then
  echo "check_literals_catches: found nothing in bad.cpp" >&2; exit 1
fi
for line in 2 3 4 5 6 8; do
  grep -q "bad.cpp:$line:" <<<"$out" || { echo "check_literals_catches: line $line of bad.cpp not caught; got: $out" >&2; exit 1; }
done
echo "caught: $(wc -l <<<"$out") literals in 6 calls"
