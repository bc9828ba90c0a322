#!/usr/bin/env bash
# Installs the Debian packages Attention Lab needs (only those missing, quietly when all are
# there), then configures and builds it into build/. Warnings are errors when CI is set.
#   ./setup.sh           what building and running the app needs; builds the app only
#   ./setup.sh --tests   adds the test tools (Xvfb, xdotool, clang for the sanitized suite,
#                        the packaging checkers) and builds everything, tests included
#   ./setup.sh --windows [--tests]
#                        the Windows build: MinGW-w64, Wine and NSIS; the dependencies from
#                        Debian's source packages (third_party/windows/build_deps.sh), then
#                        build-windows/bin/attnlab.exe and its installer; with --tests also the
#                        Linux build and the `windows` CTest label, run under Wine
set -euo pipefail
cd "$(dirname "$0")"

tests=0 windows=0
for arg in "$@"; do
  case "$arg" in
    --tests) tests=1 ;;
    --windows) windows=1 ;;
    *) echo "setup.sh: unknown option '$arg' (use no option for the app, --tests for the tests too, --windows for the Windows build)" >&2; exit 2 ;;
  esac
done

# The app: compiler, build tools and the libraries it links; OpenGL through Mesa (llvmpipe
# when there is no GPU), headless EGL and real windows.
packages=(
  cmake g++ make pkg-config ccache
  libimgui-dev libglfw3-dev libeigen3-dev libstb-dev libepoxy-dev nlohmann-json3-dev nettle-dev
  libopenblas-pthread-dev zlib1g-dev
  # the desktop's Open dialog (app/platform/file_dialog_gtk.cpp): GTK 3's native file chooser
  libgtk-3-dev
  # PyTorch checkpoints (.pth, pytorch_model.bin) are zip archives (core/io/pytorch_checkpoint.cpp)
  libzip-dev
  # downloads from the Hugging Face Hub (core/io/hub.cpp)
  libcurl4-openssl-dev
  # video in and out (core/io/video.cpp): FFmpeg's libraries
  libavformat-dev libavcodec-dev libavdevice-dev libavfilter-dev libswscale-dev libavutil-dev
  # a lesson's slides as PDF pages (app/gui/output/slides_pdf.cpp): cairo
  libcairo2-dev
  # the app in the class's language (po/, issue 52): msgfmt compiles the catalogs, xgettext and
  # msgmerge keep them current; Noto Sans (Latin, Greek) and Noto Sans CJK draw every script
  gettext fonts-noto-core fonts-noto-cjk fonts-dejavu-core
  # Fashion-MNIST for `attnlab train` (core/io/fashion_mnist.cpp reads its gzip-compressed IDX files)
  dataset-fashion-mnist
  libegl1 libegl-mesa0 libgl1 libgl1-mesa-dri
)
if ((tests)); then
  packages+=(
    git python3 libgtest-dev libbenchmark-dev
    # the video tests make their clips and check the outputs with ffmpeg and ffprobe
    ffmpeg
    # the lesson tests count a slides PDF's pages and draw them (pdfinfo, pdftoppm)
    poppler-utils
    # what the tests use to run the real app headless: a virtual X server and real input
    xvfb xauth xdotool
    # the sanitized build and the fuzzers (tests/sanitized_suite.sh): clang with its runtimes,
    # llvm-symbolizer for readable reports
    clang libclang-rt-14-dev llvm
    # the install test (tests/install/): the .deb (cpack, dpkg-shlibdeps) and its checkers
    dpkg-dev file desktop-file-utils appstream lintian man-db
    # ... and the lesson file type as a desktop sees it: the MIME database, xdg-mime, which asks
    # File::MimeInfo's `mimetype` (no GNOME) or `gio info` (GNOME)
    shared-mime-info xdg-utils libfile-mimeinfo-perl libglib2.0-bin
  )
fi
if ((windows)); then
  packages+=(
    # the cross compiler (POSIX threads for std::thread), Windows' zlib, Wine to run the .exe,
    # NSIS for the installer, icoutils for its .ico; meson, ninja and m4 build the dependencies,
    # nasm FFmpeg's assembly
    g++-mingw-w64-x86-64-posix gcc-mingw-w64-x86-64-posix mingw-w64-tools libz-mingw-w64-dev
    wine wine64 nsis icoutils zip meson ninja-build m4 nasm dpkg-dev xvfb xauth xdotool
  )
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Debian's source packages for the Windows build's dependencies: a deb-src line for the same
# archive and suites as the machine's own deb lines.
if ((windows)) && ! apt-get source --print-uris -qq glfw3 >/dev/null 2>&1; then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo=sudo
  echo "setup: adding deb-src lines for Debian's source packages (/etc/apt/sources.list.d/attnlab-src.sources)"
  . /etc/os-release
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$VERSION_CODENAME" "$VERSION_CODENAME" | $sudo tee /etc/apt/sources.list.d/attnlab-src.sources >/dev/null
  $sudo apt-get update -qq
fi

werror=OFF
[[ -n ${CI:-} ]] && werror=ON
# ccache: a second build of the same sources (the sanitized tree, a fresh clone in CI) reuses
# the first one's objects.
# Paths inside this tree are hashed relative to it, so a clone elsewhere hits the same objects.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
export CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"
export CMAKE_C_COMPILER_LAUNCHER="${CMAKE_C_COMPILER_LAUNCHER:-ccache}"
windows_tests=()
((windows)) && windows_tests=(-DATTNLAB_WINDOWS_BUILD="$PWD/build-windows")
if ((tests)); then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNLAB_WERROR="$werror" -DATTNLAB_TESTS=ON "${windows_tests[@]}" >/dev/null
  cmake --build build -j"$(nproc)"
  # The sanitized tree (clang, ASan + UBSan, the fuzzers) is built here, outside the time-out of
  # the CTest entry that runs it (sanitized_suite): a cold compiler cache must not push it over.
  bash tests/sanitized_suite.sh --build-only build/sanitize
  bash tests/thread_sanitized_suite.sh --build-only build/tsan  # the same for thread_sanitized_suite
elif ((!windows)); then
  # A tree configured with the tests before keeps them (this only builds less).
  with_tests=OFF
  grep -qs '^ATTNLAB_TESTS:BOOL=ON' build/CMakeCache.txt && with_tests=ON
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNLAB_WERROR="$werror" -DATTNLAB_TESTS="$with_tests" >/dev/null
  cmake --build build -j"$(nproc)" --target attnlab attnlab_docs
fi

if ((windows)); then
  # The dependencies (built once, kept in build-windows/deps and in the user's cache folder for
  # the next clone), then the program and its installer with the same sources
  # (third_party/windows/mingw-w64.cmake).
  bash third_party/windows/build_deps.sh build-windows
  export ATTNLAB_WINDOWS_DEPS="$PWD/build-windows/deps/prefix"
  cmake -S . -B build-windows -G Ninja -DCMAKE_TOOLCHAIN_FILE=third_party/windows/mingw-w64.cmake \
    -DCMAKE_BUILD_TYPE=Release -DATTNLAB_WERROR="$werror" -DATTNLAB_TESTS=OFF >/dev/null
  cmake --build build-windows --target attnlab
  (cd build-windows && cpack -G "NSIS;ZIP" >/dev/null)
  echo "setup: built build-windows/bin/attnlab.exe and $(cd build-windows && ls attnlab-*-win64.exe attnlab-*-win64.zip | tr '\n' ' ')"
fi
