# The imported targets of third_party/CMakeLists.txt for the Windows build, found in the
# prefix that build_deps.sh fills (ATTNLAB_WINDOWS_DEPS, set by the toolchain file). Static
# libraries throughout, but FFmpeg's (LGPL: DLLs the user can replace, beside attnlab.exe): each
# target names the Windows system libraries it needs.
set(deps "${ATTNLAB_WINDOWS_DEPS}")
if(NOT deps OR NOT EXISTS "${deps}/.built-imgui-stb" OR NOT EXISTS "${deps}/.built-ffmpeg")
  message(FATAL_ERROR "The Windows dependencies are not built: run ./setup.sh --windows (third_party/windows/build_deps.sh)")
endif()
find_package(Eigen3 3.4 REQUIRED NO_MODULE GLOBAL)
find_package(Threads REQUIRED GLOBAL)
find_package(glfw3 REQUIRED GLOBAL)
find_package(nlohmann_json 3 REQUIRED GLOBAL)
# zlib as a static archive (Debian's libz-mingw-w64-dev has both), so the .exe needs no zlib1.dll.
find_library(ZLIB_LIBRARY NAMES libz.a REQUIRED)
find_package(ZLIB REQUIRED GLOBAL)
find_package(libzip REQUIRED GLOBAL)
find_package(CURL REQUIRED CONFIG GLOBAL)
if(ATTNLAB_TESTS)
  find_package(GTest REQUIRED GLOBAL)
endif()

function(attnlab_static_library name lib include)
  find_library(${name}_LIBRARY NAMES ${lib} PATHS "${deps}/lib" NO_DEFAULT_PATH REQUIRED)
  add_library(attnlab_${name} INTERFACE)
  target_include_directories(attnlab_${name} SYSTEM INTERFACE "${deps}/include/${include}")
  target_link_libraries(attnlab_${name} INTERFACE ${${name}_LIBRARY} ${ARGN})
  add_library(attnlab::${name} ALIAS attnlab_${name})
endfunction()

# libepoxy through WGL; a static epoxy exports nothing (EPOXY_PUBLIC without dllimport).
attnlab_static_library(gl epoxy "" opengl32 gdi32)
target_compile_definitions(attnlab_gl INTERFACE "EPOXY_PUBLIC=extern")
attnlab_static_library(stb stb stb)
attnlab_static_library(imgui imgui imgui attnlab::stb glfw attnlab::gl)
attnlab_static_library(nettle nettle "")

add_library(attnlab_eigen INTERFACE)
target_link_libraries(attnlab_eigen INTERFACE Eigen3::Eigen)
add_library(attnlab::eigen ALIAS attnlab_eigen)
add_library(attnlab_json INTERFACE)
target_link_libraries(attnlab_json INTERFACE nlohmann_json::nlohmann_json)
add_library(attnlab::json ALIAS attnlab_json)
add_library(attnlab_libzip INTERFACE)
target_link_libraries(attnlab_libzip INTERFACE libzip::zip)
add_library(attnlab::libzip ALIAS attnlab_libzip)
add_library(attnlab_curl INTERFACE)
target_link_libraries(attnlab_curl INTERFACE CURL::libcurl)
add_library(attnlab::curl ALIAS attnlab_curl)
# The Open dialog (IFileOpenDialog, COM): Windows' own libraries.
# No cairo in the Windows build: `lesson slides` writes PNG pages there (slides_pdf_unavailable.cpp).
add_library(attnlab_pdf INTERFACE)
add_library(attnlab::pdf ALIAS attnlab_pdf)
set(ATTNLAB_PDF OFF CACHE INTERNAL "PDF slides through cairo")

add_library(attnlab_file_dialog INTERFACE)
target_link_libraries(attnlab_file_dialog INTERFACE ole32 shell32 uuid)
add_library(attnlab::file_dialog ALIAS attnlab_file_dialog)
# The CPU path's matrix products: Eigen's own (core/base/blas.cpp), see docs/PLATFORMS.md, "Windows".
add_library(attnlab_blas INTERFACE)
add_library(attnlab::blas ALIAS attnlab_blas)
# FFmpeg's DLLs (build_deps.sh): linked through their import libraries; ATTNLAB_FFMPEG_DLLS are
# copied beside attnlab.exe in the build tree and installed with it (app/CMakeLists.txt,
# packaging/windows/installer.cmake).
add_library(attnlab_ffmpeg INTERFACE)
target_include_directories(attnlab_ffmpeg SYSTEM INTERFACE "${deps}/include")
foreach(lib avdevice avfilter avformat avcodec swscale avutil)
  find_library(ffmpeg_${lib}_LIBRARY NAMES lib${lib}.dll.a PATHS "${deps}/lib" NO_DEFAULT_PATH REQUIRED)
  target_link_libraries(attnlab_ffmpeg INTERFACE ${ffmpeg_${lib}_LIBRARY})
endforeach()
add_library(attnlab::ffmpeg ALIAS attnlab_ffmpeg)
file(GLOB ATTNLAB_FFMPEG_DLLS "${deps}/bin/*.dll")
set(ATTNLAB_FFMPEG_DLLS "${ATTNLAB_FFMPEG_DLLS}" CACHE INTERNAL "FFmpeg's DLLs for the Windows build")
