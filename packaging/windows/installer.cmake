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
install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright DESTINATION share/doc/attnlab)
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
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/packaging/copyright")
# A 64-bit installer (Debian's nsis has the amd64-unicode stubs) for a 64-bit program, into
# "Program Files" rather than "Program Files (x86)".
set(CPACK_NSIS_DEFINES "Target amd64-unicode")
set(CPACK_NSIS_INSTALL_ROOT "$PROGRAMFILES64")
set(CPACK_GENERATOR "NSIS;ZIP")
include(CPack)
