#!/usr/bin/env bash
# Issue 30: Attention Lab installs like a desktop app.
#   usage: test_install.sh SOURCE_DIR BUILD_DIR
# 1. `cmake --install BUILD --prefix P` into a temporary P; every file a desktop app needs is
#    there (program, photos, bundled ViT, desktop entry, icons, metainfo, man page).
# 2. Nothing is moved, but the source and build trees are hidden (an empty tmpfs mounted over
#    each, in a private mount namespace); from another folder the installed program renders the
#    default photo (no --image) and the bundled ViT, finding its assets beside itself.
# 3. desktop-file-validate and appstreamcli validate pass on the installed files.
# 4. The desktop knows a lesson (issue 51): with the prefix's MIME database and desktop entry
#    cache made (update-mime-database, update-desktop-database) and only the prefix and
#    /usr/share in XDG_DATA_DIRS, `xdg-mime query filetype` calls a lesson made by the
#    installed program application/x-attnlab-lesson (by its name and, renamed, by its first
#    bytes) and a plain zip application/zip, both as a desktop without GNOME does it
#    (File::MimeInfo's `mimetype`) and as GNOME does it (`gio info`); `xdg-mime query default`
#    names the program's desktop entry.
# 5. `cpack -G DEB` makes a package that lists the same files, whose dependencies were
#    computed by dpkg-shlibdeps, and in which lintian finds no error.
set -euo pipefail
src="$(cd "$1" && pwd)"
build="$(cd "$2" && pwd)"
fail() { echo "test_install: $*" >&2; exit 1; }
phase() { echo "test_install: ${SECONDS}s: $*"; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
case "$work/" in "$src/"* | "$build/"*) fail "the temporary folder $work is inside the trees it must hide" ;; esac
prefix="$work/prefix"
app_id=org.attnlab.AttentionLab

# --- 1. the prefix install -------------------------------------------------------------
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install failed"; }
expected=(
  bin/attnlab
  share/attnlab/safari.jpg share/attnlab/horses.jpg share/attnlab/dog.jpg share/attnlab/eagle.jpg
  share/attnlab/README.md
  share/attnlab/fashion_vit/model.safetensors share/attnlab/fashion_vit/config.json
  share/attnlab/fashion_vit/images/14_bag.png
  share/attnlab/lessons/tour.attnlab share/attnlab/lessons/learned-maps.attnlab share/attnlab/lessons/pooling.attnlab
  share/attnlab/lessons/models/pool-cls/model.safetensors share/attnlab/lessons/models/pool-avg/model.safetensors
  share/applications/$app_id.desktop
  share/metainfo/$app_id.metainfo.xml
  share/icons/hicolor/scalable/apps/$app_id.svg
  share/mime/packages/attnlab-lesson.xml
  share/icons/hicolor/scalable/mimetypes/application-x-attnlab-lesson.svg
  share/man/man1/attnlab.1.gz
  share/doc/attnlab/copyright
)
for size in 16 24 32 48 64 128 256 512; do
  expected+=("share/icons/hicolor/${size}x${size}/apps/$app_id.png"
             "share/icons/hicolor/${size}x${size}/mimetypes/application-x-attnlab-lesson.png")
done
for f in "${expected[@]}"; do [[ -e $prefix/$f ]] || fail "cmake --install did not install $f"; done
[[ -x $prefix/bin/attnlab ]] || fail "bin/attnlab is not executable"
for size in 16 48 256; do
  file "$prefix/share/icons/hicolor/${size}x${size}/apps/$app_id.png" | grep -q "PNG image data, $size x $size" ||
    fail "the ${size}x${size} icon is not a ${size}x${size} PNG"
done

phase "prefix install checked"
# --- 2. the installed program, with the source and build trees out of reach ---------------
run="$work/elsewhere"
mkdir -p "$run"
ns=(unshare --mount)
[[ $(id -u) -ne 0 ]] && ns=(unshare --mount --map-root-user)
cat >"$work/hidden.sh" <<'INNER'
set -euo pipefail
src=$1 build=$2 prefix=$3 run=$4
mount -t tmpfs none "$src"
[[ $build == "$src"/* ]] || mount -t tmpfs none "$build"
[[ -z $(ls -A "$src") ]] || { echo "test_install: the source tree is still visible" >&2; exit 1; }
cd "$run"
export EGL_LOG_LEVEL=fatal
"$prefix/bin/attnlab" --version
"$prefix/bin/attnlab" render --size 640x480 --out "$run/default.png"
"$prefix/bin/attnlab" render --model "$prefix/share/attnlab/fashion_vit" \
  --image "$prefix/share/attnlab/fashion_vit/images/14_bag.png" --size 640x480 --out "$run/vit.png"
"$prefix/bin/attnlab" vit --model "$prefix/share/attnlab/fashion_vit" \
  --image "$prefix/share/attnlab/fashion_vit/images/14_bag.png" --top 1 --backend cpu
# The bundled lessons on a machine that has only the installed files: every model they name is
# found there by its SHA-256, and their slides draw.
for l in tour learned-maps pooling; do "$prefix/bin/attnlab" lesson check "$prefix/share/attnlab/lessons/$l.attnlab"; done
"$prefix/bin/attnlab" lesson slides "$prefix/share/attnlab/lessons/pooling.attnlab" --out "$run/pooling.pdf"
INNER
"${ns[@]}" bash "$work/hidden.sh" "$src" "$build" "$prefix" "$run" >"$work/hidden.log" 2>&1 ||
  { cat "$work/hidden.log"; fail "the installed program failed with the source tree out of reach (needs unshare --mount)"; }
grep -q '^attnlab ' "$work/hidden.log" || { cat "$work/hidden.log"; fail "--version printed no version"; }
grep -qiE '^[0-9]+,bag,' "$work/hidden.log" || { cat "$work/hidden.log"; fail "attnlab vit --top 1 did not call the bundled ViT's bag a bag"; }
for f in default.png default.json vit.png vit.json; do [[ -s $run/$f ]] || fail "the installed program wrote no $f"; done
file "$run/default.png" | grep -q "PNG image data, 640 x 480" || fail "default.png is not a 640x480 PNG"
file "$run/vit.png" | grep -q "PNG image data, 640 x 480" || fail "vit.png is not a 640x480 PNG"
# The default render drew the installed safari photo, the ViT render the installed model.
grep -q "\"$prefix/share/attnlab/safari.jpg\"" "$run/default.json" || fail "default.json names no $prefix/share/attnlab/safari.jpg"
grep -q "$prefix/share/attnlab/fashion_vit" "$run/vit.json" || fail "vit.json names no installed model"
grep -q "found at $prefix/share/attnlab/lessons/models/pool-avg" "$work/hidden.log" || { cat "$work/hidden.log"; fail "the pooling lesson's model was not found among the installed files"; }
[[ -s $run/pooling.pdf ]] || fail "the installed program drew no slides of the pooling lesson"

phase "installed program ran with the trees hidden"
# --- 3. the desktop entry and the metainfo -----------------------------------------------
desktop-file-validate "$prefix/share/applications/$app_id.desktop" || fail "desktop-file-validate failed"
appstreamcli validate --no-net --explain "$prefix/share/metainfo/$app_id.metainfo.xml" || fail "appstreamcli validate failed"
grep -q '<screenshot' "$prefix/share/metainfo/$app_id.metainfo.xml" || fail "the metainfo has no screenshot"
grep -q '<project_license>' "$prefix/share/metainfo/$app_id.metainfo.xml" || fail "the metainfo names no licence"

phase "desktop entry and metainfo valid"
# --- 4. lessons: the desktop knows the file type -----------------------------------------------
lesson_type=application/x-attnlab-lesson
for tool in update-mime-database update-desktop-database xdg-mime mimetype gio; do
  command -v "$tool" >/dev/null || fail "$tool is missing (./setup.sh --tests installs it)"
done
# A desktop of the prefix alone: its data and /usr/share's, a user's folders and settings of
# its own (no mimeapps.list of this machine's), no session to detect; each query names its
# desktop (X-Generic: xdg-mime asks `mimetype`; GNOME: `gio info`, local files only).
mkdir -p "$work/xdg/data" "$work/xdg/config" "$work/xdg/config-dirs" "$work/xdg/runtime"
chmod 700 "$work/xdg/runtime"
desktop=(env -u DESKTOP_SESSION -u KDE_FULL_SESSION -u GNOME_DESKTOP_SESSION_ID -u MATE_DESKTOP_SESSION_ID
         -u LXQT_SESSION_CONFIG -u XDG_MENU_PREFIX -u DBUS_SESSION_BUS_ADDRESS
         XDG_DATA_DIRS="$prefix/share:/usr/share" XDG_DATA_HOME="$work/xdg/data"
         XDG_CONFIG_HOME="$work/xdg/config" XDG_CONFIG_DIRS="$work/xdg/config-dirs"
         XDG_RUNTIME_DIR="$work/xdg/runtime" GIO_USE_VFS=local)
"${desktop[@]}" update-mime-database "$prefix/share/mime" >"$work/mime.log" 2>&1 ||
  { cat "$work/mime.log"; fail "update-mime-database failed"; }
[[ ! -s $work/mime.log ]] || { cat "$work/mime.log"; fail "update-mime-database complained about share/mime/packages/attnlab-lesson.xml"; }
"${desktop[@]}" update-desktop-database "$prefix/share/applications" >"$work/desktop-db.log" 2>&1 ||
  { cat "$work/desktop-db.log"; fail "update-desktop-database failed"; }
grep -qx "$lesson_type=$app_id.desktop;" "$prefix/share/applications/mimeinfo.cache" ||
  fail "update-desktop-database found no $lesson_type in the desktop entry's MimeType="
# A lesson as the installed program makes it (`attnlab lesson make`, one step: the default
# render's sidecar of section 2), the same under a name without .attnlab, a plain zip x.zip.
mkdir -p "$work/lessons"
EGL_LOG_LEVEL=fatal "$prefix/bin/attnlab" lesson make --out "$work/lessons/L.attnlab" --step "$run/default.json::A step" \
  >"$work/lesson.log" 2>&1 || { cat "$work/lesson.log"; fail "the installed program made no lesson"; }
cp "$work/lessons/L.attnlab" "$work/lessons/renamed-lesson"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1], "w").writestr("lesson.json", "{}")' "$work/lessons/x.zip"
for desk in X-Generic GNOME; do
  for case in "L.attnlab $lesson_type" "renamed-lesson $lesson_type" "x.zip application/zip"; do
    read -r f want <<<"$case"
    got="$("${desktop[@]}" XDG_CURRENT_DESKTOP=$desk xdg-mime query filetype "$work/lessons/$f" 2>&1)"
    [[ $got == "$want" ]] || fail "xdg-mime query filetype $f as $desk: '$got', not $want"
  done
done
got="$("${desktop[@]}" XDG_CURRENT_DESKTOP=X-Generic xdg-mime query default $lesson_type 2>&1)"
[[ $got == "$app_id.desktop" ]] || fail "xdg-mime query default $lesson_type: '$got', not $app_id.desktop"
icons="$("${desktop[@]}" gio info -a standard::icon "$work/lessons/L.attnlab" 2>&1)"
[[ $icons == *"standard::icon: application-x-attnlab-lesson,"* ]] || fail "gio names no application-x-attnlab-lesson icon for a lesson: $icons"
echo "test_install: a lesson is $lesson_type (by name and by content), x.zip application/zip, opened by $app_id.desktop"

phase "lesson file type known"
# --- 5. the Debian package -----------------------------------------------------------------
(cd "$work" && cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/deb" >"$work/cpack.log") ||
  { cat "$work/cpack.log"; fail "cpack -G DEB failed"; }
debs=("$work"/deb/attnlab_*.deb)
[[ -f ${debs[0]} ]] || fail "cpack made no attnlab_*.deb"
deb=${debs[0]}
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./||' >"$work/deb-contents"
for f in "${expected[@]}"; do grep -qx "usr/$f" "$work/deb-contents" || fail "the package does not hold /usr/$f"; done
grep -qx "usr/share/doc/attnlab/changelog.gz" "$work/deb-contents" || fail "the package has no changelog"
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libc6 libstdc++6 libglfw3 libepoxy0 libnettle8 libzip4 libgl1-mesa-dri; do
  [[ $depends == *"$lib"* ]] || fail "the package's Depends lacks $lib (dpkg-shlibdeps): $depends"
done
lintian --fail-on error --suppress-tags-from-file /dev/null "$deb" >"$work/lintian.log" 2>&1 ||
  { cat "$work/lintian.log"; fail "lintian found errors in the package"; }
phase "package made and checked"
cat "$work/lintian.log"
echo "test_install: ok ($(basename "$deb"), $(wc -l <"$work/deb-contents") entries)"
