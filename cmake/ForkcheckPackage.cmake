# `cpack -G DEB` (from the build folder) makes two Debian packages from the two install
# components (ForkcheckInstall.cmake):
#   forkcheck      the tool. Its dependencies are worked out by dpkg-shlibdeps from the libraries
#                  its programs link (libtorch, libgomp, Boost, pugixml, ...; see
#                  package-depends.cmake), plus elfutils, whose eu-stack takes the stacks of a
#                  stuck tree.
#   forkcheck-dev  forkcheck::launch for C++ programs, and the -dev packages its header and CMake
#                  package need.
# tests/install/check_package.sh builds both and checks what they hold and depend on.
set(CPACK_PACKAGE_NAME forkcheck)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPackDeb would put it first in both packages'
# descriptions; each description below starts with its own synopsis line.
set(CPACK_PACKAGE_HOMEPAGE_URL ${PROJECT_HOMEPAGE_URL})
set(FORKCHECK_PACKAGE_MAINTAINER "forkcheck developers <forkcheck@localhost>"
    CACHE STRING "Maintainer field of the Debian packages")
set(CPACK_PACKAGE_CONTACT ${FORKCHECK_PACKAGE_MAINTAINER})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)

set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL forkcheck dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # NAME_VERSION_ARCH.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${FORKCHECK_PACKAGE_MAINTAINER})

set(CPACK_DEBIAN_FORKCHECK_PACKAGE_NAME forkcheck)
set(CPACK_DEBIAN_FORKCHECK_PACKAGE_SECTION utils)
# The libraries' packages come from cmake/package-depends.cmake at package time, run on the
# programs as the linker made them: forkcheck-repro-torch names ~120 of libtorch's own
# dependencies first for a faster start (cmake/TorchLoadOrder.cmake), which dpkg-shlibdeps on
# the staged copy would list one by one; its -plain twin needs exactly what it needs.
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_SOURCE_DIR}/cmake/package-depends.cmake)
set(CPACK_FORKCHECK_DEPENDS_EXTRA "elfutils")
set(CPACK_FORKCHECK_SHLIBDEPS_LIST ${PROJECT_BINARY_DIR}/cmake/forkcheck-shlibdeps-files.txt)
set(FC_SHLIBDEPS_FILES $<TARGET_FILE:forkcheck>)
foreach(t forkcheck-repro forkcheck-repro-libomp forkcheck_watch)
  if(TARGET ${t})
    list(APPEND FC_SHLIBDEPS_FILES $<TARGET_FILE:${t}>)
  endif()
endforeach()
get_property(fc_torch_plain GLOBAL PROPERTY FC_TORCH_LOAD_ORDER_PLAIN)
if(fc_torch_plain)
  list(APPEND FC_SHLIBDEPS_FILES $<TARGET_FILE:${fc_torch_plain}>)
elseif(TARGET forkcheck-repro-torch)
  list(APPEND FC_SHLIBDEPS_FILES $<TARGET_FILE:forkcheck-repro-torch>)
endif()
# gdb and CPython's debug build: the Python frames of a stuck Python program (without them, the
# report says so and shows native frames only).
set(CPACK_DEBIAN_FORKCHECK_PACKAGE_RECOMMENDS "gdb, python3-dbg")
set(CPACK_DEBIAN_FORKCHECK_DESCRIPTION
    "reproduces and diagnoses fork-safety failures of multiprocessing PyTorch programs
forkcheck runs the classic failures of fork-based multiprocessing in PyTorch and libtorch
programs, one process per case under a watchdog (libgomp hangs after fork, autograd after
fork, CUDA before fork, shared memory, ...), beside the fixed behaviour under spawn and
forkserver, and writes JSON, HTML, JUnit and Markdown reports. forkcheck exec and
forkcheck watch diagnose a user's own hanging or crashing program.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME forkcheck-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "nlohmann-json3-dev (>= 3.9), libboost-dev (>= 1.71), libboost-filesystem-dev (>= 1.71)")
set(CPACK_DEBIAN_DEV_DESCRIPTION
    "forkcheck's start methods for C++ programs (forkcheck::launch)
fork, spawn and forkserver with Python multiprocessing's semantics, as a static library with
a CMake package: find_package(forkcheck CONFIG REQUIRED), then link forkcheck::launch and
include <forkcheck/launch.h>. No torch and no OpenMP.")

# Debug sections out, symbol tables kept: the stacks forkcheck takes of its own hung repro
# programs still name their functions, at a fraction of the size.
find_program(FORKCHECK_OBJCOPY NAMES objcopy ${CMAKE_OBJCOPY})
if(FORKCHECK_OBJCOPY)
  set(CPACK_FORKCHECK_OBJCOPY ${FORKCHECK_OBJCOPY})
  set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/strip-debug.cmake)
endif()

include(CPack)
# CPackConfig.cmake is written at configure time; the programs' paths are known after generation.
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/cmake/forkcheck-shlibdeps-files.txt
     CONTENT "$<JOIN:${FC_SHLIBDEPS_FILES},\n>\n")
