#!/usr/bin/env bash
# Renders the app's icon (attnlab.svg, the project's own drawing: a 4×4 patch grid coloured by
# one query's attention row, the query outlined, lines to the keys it attends to most) and a
# lesson file's icon (attnlab-lesson.svg: the same on a page) to the PNG sizes installed in
# share/icons/hicolor/ (apps/ and mimetypes/). Run by hand after editing an SVG; the PNGs are
# committed so that the build needs no SVG renderer. Needs rsvg-convert (librsvg2-bin).
set -euo pipefail
cd "$(dirname "$0")"
for s in 16 24 32 48 64 128 256 512; do
  rsvg-convert -w "$s" -h "$s" attnlab.svg -o "attnlab-$s.png"
  rsvg-convert -w "$s" -h "$s" attnlab-lesson.svg -o "attnlab-lesson-$s.png"
done
