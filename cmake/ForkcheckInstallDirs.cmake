# Where `cmake --install` (and the .deb) put forkcheck's parts, GNUInstallDirs' layout:
#   bin/forkcheck                                   the executable
#   libexec/forkcheck/forkcheck-repro{,-torch}      the repro programs, the bench peer script
#   lib/forkcheck/libforkcheck_watch.so             the shim `watch` preloads (private: not on the
#                                                   loader's path)
#   share/forkcheck/report.schema.json              report.json's JSON Schema
#   include/forkcheck/launch.h, lib/libforkcheck_launch.a, lib/cmake/forkcheck/
#                                                   the start methods for C++ programs
# forkcheck finds each part relative to its own directory (harness/platform/install_layout.h), so
# an installed tree works under any prefix, and moved. That needs the directories relative to
# the prefix (GNUInstallDirs' default); absolute ones are refused here rather than half-working.
include(GNUInstallDirs)

set(FORKCHECK_INSTALL_LIBEXECDIR ${CMAKE_INSTALL_LIBEXECDIR}/forkcheck)
set(FORKCHECK_INSTALL_PRIVATE_LIBDIR ${CMAKE_INSTALL_LIBDIR}/forkcheck)
set(FORKCHECK_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/forkcheck)
set(FORKCHECK_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/forkcheck)
set(FORKCHECK_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/forkcheck)

foreach(dir CMAKE_INSTALL_BINDIR FORKCHECK_INSTALL_LIBEXECDIR FORKCHECK_INSTALL_PRIVATE_LIBDIR
            FORKCHECK_INSTALL_DATADIR)
  if(IS_ABSOLUTE "${${dir}}")
    message(FATAL_ERROR "${dir} is absolute (${${dir}}): forkcheck finds its parts relative to "
                        "its own directory, so its install directories must be relative to the "
                        "prefix")
  endif()
endforeach()

# Each part's directory as seen from bin/ (harness/install_dirs.h.in).
file(RELATIVE_PATH FC_REL_LIBEXEC /p/${CMAKE_INSTALL_BINDIR} /p/${FORKCHECK_INSTALL_LIBEXECDIR})
file(RELATIVE_PATH FC_REL_PRIVATE_LIB /p/${CMAKE_INSTALL_BINDIR}
     /p/${FORKCHECK_INSTALL_PRIVATE_LIBDIR})
file(RELATIVE_PATH FC_REL_DATA /p/${CMAKE_INSTALL_BINDIR} /p/${FORKCHECK_INSTALL_DATADIR})

# Installed programs keep the paths of libraries found outside the system's directories (a
# libtorch unpacked in /opt, say) in their RPATH; Debian's own need none.
set(CMAKE_INSTALL_RPATH_USE_LINK_PATH ON)
