# CMake toolchain for the Windows build made on Debian: MinGW-w64 with POSIX threads
# (g++-mingw-w64-x86-64-posix; std::thread needs them), a static runtime so the .exe needs no
# DLL beyond Windows' own. Used by ./setup.sh --windows for the dependencies
# (third_party/windows/build_deps.sh) and for Attention Lab itself.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
# The dependencies built from Debian's source packages live in build-windows/deps/prefix.
# ATTNLAB_WINDOWS_DEPS (a variable or the environment's) names another place.
if(NOT ATTNLAB_WINDOWS_DEPS AND DEFINED ENV{ATTNLAB_WINDOWS_DEPS})
  set(ATTNLAB_WINDOWS_DEPS "$ENV{ATTNLAB_WINDOWS_DEPS}")
elseif(NOT ATTNLAB_WINDOWS_DEPS)
  get_filename_component(ATTNLAB_WINDOWS_DEPS "${CMAKE_CURRENT_LIST_DIR}/../../build-windows/deps/prefix" ABSOLUTE)
endif()
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32 ${ATTNLAB_WINDOWS_DEPS})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Prefer static archives (libz.a over libz.dll.a).
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static -static-libgcc -static-libstdc++")
# Tests run the .exe under Wine (CTest label `windows`).
set(CMAKE_CROSSCOMPILING_EMULATOR wine)
