# What `cmake --install build --prefix P` installs (directories: ForkcheckInstallDirs.cmake), in
# two components, which are also the two Debian packages (ForkcheckPackage.cmake):
#   forkcheck  the tool: executable, repro programs, watch shim, schema, documentation
#   dev        forkcheck::launch for C++ programs: header, static library, CMake package
# Only the targets this configuration builds are installed (cross builds make fewer).

# The tool.
install(TARGETS forkcheck RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT forkcheck)
# forkcheck-repro-libomp: gomp-fork-hang's libomp variants, found beside forkcheck-repro.
foreach(program forkcheck-repro forkcheck-repro-torch forkcheck-repro-libomp)
  if(TARGET ${program})
    install(TARGETS ${program} RUNTIME DESTINATION ${FORKCHECK_INSTALL_LIBEXECDIR}
            COMPONENT forkcheck)
  endif()
endforeach()
if(TARGET forkcheck-repro-torch)
  install(FILES ${PROJECT_SOURCE_DIR}/repros/python/bench_peer.py
          DESTINATION ${FORKCHECK_INSTALL_LIBEXECDIR} RENAME forkcheck_bench_peer.py
          COMPONENT forkcheck)
endif()
if(TARGET forkcheck_watch)
  install(TARGETS forkcheck_watch LIBRARY DESTINATION ${FORKCHECK_INSTALL_PRIVATE_LIBDIR}
          COMPONENT forkcheck)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/reports/report.schema.json
        DESTINATION ${FORKCHECK_INSTALL_DATADIR} COMPONENT forkcheck)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/harness/python/ DESTINATION ${FORKCHECK_INSTALL_DATADIR}/python
        COMPONENT forkcheck FILES_MATCHING PATTERN "*.py")
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT forkcheck)
# Debian's machine-readable copyright file, one per package (policy 12.5): the licence's text,
# each line indented by one space (a blank one as " .").
file(READ ${PROJECT_SOURCE_DIR}/LICENSE FORKCHECK_LICENSE_TEXT)
string(STRIP "${FORKCHECK_LICENSE_TEXT}" FORKCHECK_LICENSE_TEXT)
string(REGEX REPLACE "\n\n" "\n.\n" FORKCHECK_LICENSE_INDENTED "${FORKCHECK_LICENSE_TEXT}")
string(REGEX REPLACE "\n" "\n " FORKCHECK_LICENSE_INDENTED " ${FORKCHECK_LICENSE_INDENTED}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/debian-copyright.in
               ${PROJECT_BINARY_DIR}/cmake/copyright @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cmake/copyright DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/forkcheck
        COMPONENT forkcheck)
install(FILES ${PROJECT_BINARY_DIR}/cmake/copyright
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/forkcheck-dev COMPONENT dev)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
        COMPONENT forkcheck)

# The start methods. The library's own name and its exported one: libforkcheck_launch.a,
# forkcheck::launch.
set_target_properties(fc_launch PROPERTIES OUTPUT_NAME forkcheck_launch EXPORT_NAME launch)
add_library(forkcheck::launch ALIAS fc_launch)
install(TARGETS fc_launch EXPORT forkcheckTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(FILES ${PROJECT_SOURCE_DIR}/include/forkcheck/launch.h
        DESTINATION ${FORKCHECK_INSTALL_INCLUDEDIR} COMPONENT dev)
install(EXPORT forkcheckTargets NAMESPACE forkcheck:: DESTINATION ${FORKCHECK_INSTALL_CMAKEDIR}
        COMPONENT dev)
include(CMakePackageConfigHelpers)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/forkcheckConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/cmake/forkcheckConfig.cmake
                              INSTALL_DESTINATION ${FORKCHECK_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/forkcheckConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/forkcheckConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/forkcheckConfigVersion.cmake
        DESTINATION ${FORKCHECK_INSTALL_CMAKEDIR} COMPONENT dev)
