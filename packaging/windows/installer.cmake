# The Windows installer (issue 37): `cpack -G "NSIS;ZIP"` in build-windows makes
# attnlab-VERSION-win64.exe (Debian's nsis: a Start-menu entry, an uninstaller, the program in
# INSTDIR\bin with its photos and bundled model in INSTDIR\share\attnlab, where assets_dir()
# looks) and the portable attnlab-VERSION-win64.zip of the same files. Included from
# packaging/CMakeLists.txt for the Windows build instead of the .deb's rules.
install(TARGETS attnlab RUNTIME DESTINATION bin)
install(FILES ${ATTNLAB_FFMPEG_DLLS} DESTINATION bin)  # FFmpeg's (LGPL) DLLs: video in and out
install(FILES ${PROJECT_SOURCE_DIR}/assets/safari.jpg ${PROJECT_SOURCE_DIR}/assets/horses.jpg
              ${PROJECT_SOURCE_DIR}/assets/dog.jpg ${PROJECT_SOURCE_DIR}/assets/eagle.jpg
              ${PROJECT_SOURCE_DIR}/assets/README.md
        DESTINATION share/attnlab)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/assets/fashion_vit DESTINATION share/attnlab PATTERN "*.py" EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/assets/lessons DESTINATION share/attnlab PATTERN "*.sh" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright DESTINATION share/doc/attnlab)
# The UI's fonts for every script (issue 52; app/gui/window/ui_font.cpp looks in share/attnlab/fonts
# first): Debian's Noto Sans, Noto Sans CJK and DejaVu Sans (SIL OFL 1.1 and the Bitstream Vera
# licence, their copyright files beside them), when the building machine has them.
foreach(font truetype/noto/NotoSans-Regular.ttf opentype/noto/NotoSansCJK-Regular.ttc truetype/dejavu/DejaVuSans.ttf)
  if(EXISTS /usr/share/fonts/${font})
    install(FILES /usr/share/fonts/${font} DESTINATION share/attnlab/fonts)
  endif()
endforeach()
foreach(pkg fonts-noto-core fonts-noto-cjk fonts-dejavu-core)
  if(EXISTS /usr/share/doc/${pkg}/copyright)
    install(FILES /usr/share/doc/${pkg}/copyright DESTINATION share/attnlab/fonts RENAME ${pkg}.copyright)
  endif()
endforeach()
# Fashion-MNIST for `attnlab train`, the Train tab and CKA (core/io/fashion_mnist.cpp looks in
# share/attnlab/fashion-mnist when Debian's folder is not there): the four files of Debian's
# dataset-fashion-mnist (MIT, its copyright file beside them), when the building machine has it.
set(fashion_mnist /usr/share/datasets/fashion-mnist)
if(EXISTS ${fashion_mnist}/train-images-idx3-ubyte.gz)
  install(FILES ${fashion_mnist}/train-images-idx3-ubyte.gz ${fashion_mnist}/train-labels-idx1-ubyte.gz
                ${fashion_mnist}/t10k-images-idx3-ubyte.gz ${fashion_mnist}/t10k-labels-idx1-ubyte.gz
                /usr/share/doc/dataset-fashion-mnist/copyright
          DESTINATION share/attnlab/fashion-mnist)
endif()

set(CPACK_PACKAGE_NAME attnlab)
set(CPACK_PACKAGE_VENDOR "The Attention Lab developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Attention Lab: attention in vision transformers, live")
set(CPACK_PACKAGE_FILE_NAME "attnlab-${PROJECT_VERSION}-win64")
set(CPACK_PACKAGE_INSTALL_DIRECTORY "Attention Lab")
# A Start-menu entry "Attention Lab" for bin\attnlab.exe.
set(CPACK_PACKAGE_EXECUTABLES "attnlab;Attention Lab")
set(CPACK_NSIS_DISPLAY_NAME "Attention Lab")
set(CPACK_NSIS_PACKAGE_NAME "Attention Lab")
set(CPACK_NSIS_MUI_ICON "${ATTNLAB_ICO}")
set(CPACK_NSIS_MUI_UNIICON "${ATTNLAB_ICO}")
set(CPACK_NSIS_INSTALLED_ICON_NAME "bin\\\\attnlab.exe")
set(CPACK_NSIS_URL_INFO_ABOUT "${ATTNLAB_HOMEPAGE}")
set(CPACK_NSIS_ENABLE_UNINSTALL_BEFORE_INSTALL ON)
# Lesson files (issue 51): a double-click on a .attnlab opens it in the program. The keys go to
# SHCTX's Software\Classes, which Windows shows merged into HKEY_CLASSES_ROOT: CPack's installer
# asks for administrator rights and then installs for all users (SetShellVarContext all: SHCTX
# is HKLM), a user's own install writes to HKCU. .attnlab names the ProgID AttentionLab.Lesson,
# whose icon is the program's (its resource 1, packaging/windows/attnlab.rc) and whose open
# command passes the file to it; SHChangeNotify(SHCNE_ASSOCCHANGED) tells Explorer. The
# uninstaller deletes the ProgID, and .attnlab while it still names it, before the template
# deletes the files. Escaping: CPack writes these values unescaped into CPackConfig.cmake and
# reads them again, so one backslash of the NSIS script is \\\\ here and one double quote \\\";
# NSIS strings are in single quotes, $INSTDIR is NSIS's (CMake expands only ${...}).
set(CPACK_NSIS_EXTRA_INSTALL_COMMANDS "
  WriteRegStr SHCTX 'Software\\\\Classes\\\\.attnlab' '' 'AttentionLab.Lesson'
  WriteRegStr SHCTX 'Software\\\\Classes\\\\.attnlab' 'Content Type' 'application/x-attnlab-lesson'
  WriteRegStr SHCTX 'Software\\\\Classes\\\\AttentionLab.Lesson' '' 'Attention Lab lesson'
  WriteRegStr SHCTX 'Software\\\\Classes\\\\AttentionLab.Lesson\\\\DefaultIcon' '' '$INSTDIR\\\\bin\\\\attnlab.exe,0'
  WriteRegStr SHCTX 'Software\\\\Classes\\\\AttentionLab.Lesson\\\\shell\\\\open\\\\command' '' '\\\"$INSTDIR\\\\bin\\\\attnlab.exe\\\" \\\"%1\\\"'
  System::Call 'shell32::SHChangeNotify(i 0x08000000, i 0, p 0, p 0)'")
set(CPACK_NSIS_EXTRA_UNINSTALL_COMMANDS "
  DeleteRegKey SHCTX 'Software\\\\Classes\\\\AttentionLab.Lesson'
  ReadRegStr $0 SHCTX 'Software\\\\Classes\\\\.attnlab' ''
  StrCmp $0 'AttentionLab.Lesson' 0 +2
    DeleteRegKey SHCTX 'Software\\\\Classes\\\\.attnlab'
  System::Call 'shell32::SHChangeNotify(i 0x08000000, i 0, p 0, p 0)'")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/packaging/copyright")
# A 64-bit installer (Debian's nsis has the amd64-unicode stubs) for a 64-bit program, into
# "Program Files" rather than "Program Files (x86)".
set(CPACK_NSIS_DEFINES "Target amd64-unicode")
set(CPACK_NSIS_INSTALL_ROOT "$PROGRAMFILES64")
set(CPACK_GENERATOR "NSIS;ZIP")
include(CPack)
