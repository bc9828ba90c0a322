#!/usr/bin/env bash
# Fetches the Windows build's dependencies as Debian source packages (`apt-get source`, from a
# deb-src line for the same Debian archive as the machine's) and cross-builds them with
# MinGW-w64 into build-windows/deps/prefix. Each package is built once: a stamp file
# prefix/.built-<package> skips it next time. Nothing here is committed but this script.
#   third_party/windows/build_deps.sh [build-windows]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$(mkdir -p "${1:-$root/build-windows}" && cd "${1:-$root/build-windows}" && pwd)/deps"
src="$out/src" prefix="$out/prefix"
mkdir -p "$src" "$prefix"
jobs="$(nproc)"
host=x86_64-w64-mingw32
toolchain="$here/mingw-w64.cmake"
export ATTNLAB_WINDOWS_DEPS="$prefix"
log="$out/build.log"

# The source of Debian package $1, unpacked under $src; prints its folder. Only the upstream
# tarball (.orig) is needed: Debian's own packaging (debian/) is not used to cross-build.
fetch() {
  local pkg="$1" dir
  dir="$(find "$src" -maxdepth 1 -mindepth 1 -type d -name "$2" | head -1)"
  if [[ -z $dir ]]; then
    # apt-get source stops on any missing piece (a mirror without the .debian.tar), after the
    # .orig tarball came: keep going from that tarball.
    (cd "$src" && apt-get source --download-only -qq "$pkg" >>"$log" 2>&1) || true
    local orig
    orig="$(ls "$src"/"${pkg}"_*.orig.tar.* 2>/dev/null | grep -v '\.asc$' | head -1)"
    [[ -n $orig ]] || { echo "build_deps: could not fetch Debian's source of $pkg (see $log; is there a deb-src line?)" >&2; exit 1; }
    tar -C "$src" -xf "$orig"
    dir="$(find "$src" -maxdepth 1 -mindepth 1 -type d -name "$2" | head -1)"
  fi
  echo "$dir"
}
# A finished prefix is kept in the user's cache folder (never in the repository) under a key of
# what it is built from: this script and its helper files, the cross compiler, and the versions
# of the Debian source packages. A fresh clone (CI) copies it in instead of building the same
# sources again (about 3 minutes of FFmpeg, curl and nettle on 2 cores). The prefix's own path,
# written into its pkg-config and CMake files, is replaced by the new one.
packages=(eigen3 nlohmann-json3 glfw3 googletest libzip curl libepoxy nettle imgui libstb ffmpeg gettext)
cache_root="${ATTNLAB_WINDOWS_DEPS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attnlab/windows-deps}"
key="$({
  cat "$here/build_deps.sh" "$here/mingw-w64.cmake"
  find "$here/imgui_stb" -type f | LC_ALL=C sort | xargs cat
  $host-gcc-posix --version | head -1
  for p in "${packages[@]}"; do apt-cache showsrc --only-source "$p" 2>/dev/null | grep -m1 '^Version:' || echo "$p ?"; done
} | sha256sum | cut -c1-16)"
cached="$cache_root/$key"
if [[ ! -f $prefix/.built-ffmpeg && -f $cached/.complete ]]; then
  cp -a "$cached/prefix/." "$prefix/"
  old="$(cat "$cached/prefix-path")"
  grep -rlIF --include='*.pc' --include='*.cmake' "$old" "$prefix" 2>/dev/null | while read -r f; do sed -i "s|$old|$prefix|g" "$f"; done
  echo "build_deps: the prefix built before from the same sources, copied from $cached"
fi
built() { [[ -f $prefix/.built-$1 ]]; }
stamp() { touch "$prefix/.built-$1"; echo "build_deps: $1 built"; }
cmake_dep() { # name source-dir cmake-args...
  local name="$1" dir="$2"; shift 2
  cmake -S "$dir" -B "$out/build/$name" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_PREFIX_PATH="$prefix" \
    -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=OFF "$@" >>"$log" 2>&1
  cmake --build "$out/build/$name" -j"$jobs" >>"$log" 2>&1
  cmake --install "$out/build/$name" >>"$log" 2>&1
}

# Header-only libraries: Eigen, nlohmann-json (installed as their CMake packages).
built eigen3 || { cmake_dep eigen "$(fetch eigen3 'eigen-*')" -DBUILD_TESTING=OFF -DEIGEN_BUILD_DOC=OFF; stamp eigen3; }
built nlohmann-json3 || { cmake_dep json "$(fetch nlohmann-json3 'json-*')" -DJSON_BuildTests=OFF; stamp nlohmann-json3; }
# zlib comes built from Debian (libz-mingw-w64-dev) in /usr/x86_64-w64-mingw32.
built glfw3 || { cmake_dep glfw "$(fetch glfw3 'glfw-*')" -DGLFW_BUILD_DOCS=OFF -DGLFW_BUILD_EXAMPLES=OFF -DGLFW_BUILD_TESTS=OFF; stamp glfw3; }
built googletest || { cmake_dep googletest "$(fetch googletest 'googletest-*')" -Dgtest_force_shared_crt=OFF; stamp googletest; }
built libzip || {
  cmake_dep libzip "$(fetch libzip 'libzip-*')" -DENABLE_BZIP2=OFF -DENABLE_LZMA=OFF -DENABLE_ZSTD=OFF \
    -DENABLE_GNUTLS=OFF -DENABLE_OPENSSL=OFF -DENABLE_MBEDTLS=OFF -DENABLE_COMMONCRYPTO=OFF \
    -DENABLE_WINDOWS_CRYPTO=OFF -DBUILD_TOOLS=OFF -DBUILD_REGRESS=OFF -DBUILD_EXAMPLES=OFF -DBUILD_DOC=OFF
  stamp libzip
}
# libcurl with Windows' own TLS (Schannel) and certificate store; HTTP(S) only.
built curl || {
  cmake_dep curl "$(fetch curl 'curl-*')" -DCURL_USE_SCHANNEL=ON -DCURL_USE_OPENSSL=OFF -DHTTP_ONLY=ON \
    -DCURL_DISABLE_LDAP=ON -DUSE_LIBIDN2=OFF -DCURL_USE_LIBSSH2=OFF -DCURL_USE_LIBPSL=OFF -DCURL_ZLIB=OFF \
    -DCURL_BROTLI=OFF -DCURL_ZSTD=OFF -DUSE_NGHTTP2=OFF -DBUILD_CURL_EXE=OFF -DBUILD_TESTING=OFF -DENABLE_MANUAL=OFF
  stamp curl
}
# libepoxy (the OpenGL function loader, through WGL): meson, with a cross file for MinGW.
built libepoxy || {
  dir="$(fetch libepoxy 'libepoxy-*')"
  cat >"$out/meson-cross.txt" <<CROSS
[binaries]
c = '$host-gcc-posix'
cpp = '$host-g++-posix'
ar = '$host-ar'
strip = '$host-strip'
windres = '$host-windres'
[host_machine]
system = 'windows'
cpu_family = 'x86_64'
cpu = 'x86_64'
endian = 'little'
CROSS
  rm -rf "$out/build/epoxy"
  meson setup "$out/build/epoxy" "$dir" --cross-file "$out/meson-cross.txt" --prefix "$prefix" --libdir lib \
    --default-library static --buildtype release -Degl=no -Dglx=no -Dx11=false -Dtests=false >>"$log" 2>&1
  ninja -C "$out/build/epoxy" install >>"$log" 2>&1
  stamp libepoxy
}
# Nettle, for SHA-256 (libnettle only: no public-key half, no GMP).
built nettle || {
  dir="$(fetch nettle 'nettle-*')"
  rm -rf "$out/build/nettle"; mkdir -p "$out/build/nettle"
  (cd "$out/build/nettle" && "$dir/configure" --host=$host CC=$host-gcc-posix --prefix="$prefix" --libdir="$prefix/lib" \
     --disable-shared --disable-public-key --disable-documentation --disable-openssl >>"$log" 2>&1 \
   && make -j"$jobs" libnettle.a >>"$log" 2>&1 && make install-headers install-static install-pkgconfig >>"$log" 2>&1) \
   || { echo "build_deps: nettle failed (see $log)" >&2; exit 1; }
  stamp nettle
}
# GNU gettext's libintl for the translations (core/base/translate.cpp, issue 52): gettext-runtime's
# intl/ only, static, without iconv (the catalogs and the program's text are both UTF-8). Its
# libintl.h replaces setlocale with libintl_setlocale, which knows LC_MESSAGES on Windows too.
built gettext || {
  dir="$(fetch gettext 'gettext-*')"
  rm -rf "$out/build/gettext"; mkdir -p "$out/build/gettext"
  (cd "$out/build/gettext" && "$dir/gettext-runtime/configure" --host=$host CC=$host-gcc-posix --prefix="$prefix" \
     --libdir="$prefix/lib" --disable-shared --enable-static --disable-java --disable-csharp --disable-libasprintf \
     --disable-openmp --disable-c++ --without-libiconv-prefix --enable-threads=windows >>"$log" 2>&1 \
   && make -C intl -j"$jobs" >>"$log" 2>&1 && make -C intl install >>"$log" 2>&1) \
   || { echo "build_deps: gettext failed (see $log)" >&2; exit 1; }
  stamp gettext
}
# Dear ImGui and stb, as Debian's binary packages build them (imgui_stb/CMakeLists.txt).
built imgui-stb || {
  cmake_dep imgui_stb "$here/imgui_stb" -DIMGUI_SOURCE="$(fetch imgui 'imgui-*')" -DSTB_SOURCE="$(fetch libstb 'libstb-*')"
  stamp imgui-stb
}
# FFmpeg's libraries for video in and out (core/io/video.cpp), as DLLs beside attnlab.exe: the
# LGPL build (no --enable-gpl, so no libx264: MP4s are MPEG-4 part 2, FFmpeg's own encoder), with
# only what the program reads and writes (docs/PLATFORMS.md, "Windows"): MP4/MOV, MKV/WebM, AVI,
# GIF and Y4M files of H.264, HEVC, VP8, VP9, MPEG-4, MJPEG and raw frames, cameras through
# DirectShow, the GIF palette filters. Its assembly is built with Debian's nasm: without it
# (--disable-x86asm) swscale's RGB to YUV 4:2:0 gave every MP4 frame magenta chroma (seen under
# Wine; the same code on Linux is right). zlib (for PNG frames and compressed MP4 headers) and the
# GCC runtime are linked into the DLLs, which then need only Windows' own.
built ffmpeg || {
  dir="$(fetch ffmpeg 'ffmpeg-*')"
  cc="$host-gcc-posix"
  command -v ccache >/dev/null && cc="ccache $cc"
  rm -rf "$out/build/ffmpeg"; mkdir -p "$out/build/ffmpeg"
  (cd "$out/build/ffmpeg" && "$dir/configure" --prefix="$prefix" --enable-cross-compile --arch=x86_64 --target-os=mingw32      --cross-prefix=$host- --cc="$cc" --pkg-config=false --enable-shared --disable-static      --extra-ldflags="-static-libgcc -static" --disable-programs --disable-doc --disable-network --disable-debug      --disable-autodetect --enable-w32threads --enable-zlib --disable-postproc --disable-swresample      --disable-everything --enable-indev=dshow --enable-demuxer=mov,matroska,gif,avi,yuv4mpegpipe      --enable-decoder=h264,hevc,vp8,vp9,mpeg4,mpeg2video,msmpeg4v3,h263,mjpeg,gif,rawvideo,png      --enable-parser=h264,hevc,vp8,vp9,mpeg4video,mpegvideo,h263,mjpeg,png,gif --enable-encoder=mpeg4,gif      --enable-muxer=mp4,gif --enable-protocol=file      --enable-filter=buffer,buffersink,split,palettegen,paletteuse,format,scale,null >>"$log" 2>&1    && make -j"$jobs" >>"$log" 2>&1 && make install >>"$log" 2>&1)    || { echo "build_deps: ffmpeg failed (see $log)" >&2; exit 1; }
  stamp ffmpeg
}
if [[ ! -f $cached/.complete ]]; then  # kept for the next clone: written whole, then named
  mkdir -p "$cache_root"
  # Older keys go (one prefix is enough): only the folders this script names, 16 hex digits.
  find "$cache_root" -mindepth 1 -maxdepth 1 -type d -regextype posix-extended -regex '.*/([0-9a-f]{16}|\.tmp\..{6})' -exec rm -rf {} +
  tmp="$(mktemp -d "$cache_root/.tmp.XXXXXX")"
  cp -a "$prefix" "$tmp/prefix" && echo "$prefix" >"$tmp/prefix-path" && touch "$tmp/.complete" && mv "$tmp" "$cached" \
    || { rm -rf "$tmp"; echo "build_deps: could not keep the prefix in $cache_root (it will be built again next time)" >&2; }
fi
echo "build_deps: all in $prefix"
