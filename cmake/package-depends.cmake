# CPack project config file (CPACK_PROJECT_CONFIG_FILE, ForkcheckPackage.cmake): at package
# time, the forkcheck package's Depends from dpkg-shlibdeps run on the programs as built
# (listed in CPACK_FORKCHECK_SHLIBDEPS_LIST), plus CPACK_FORKCHECK_DEPENDS_EXTRA.
if(NOT CPACK_GENERATOR STREQUAL "DEB")
  return()
endif()
find_program(FC_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(NOT FC_DPKG_SHLIBDEPS)
  message(FATAL_ERROR "the forkcheck .deb needs dpkg-shlibdeps for its dependencies "
                      "(Debian: apt-get install dpkg-dev)")
endif()
file(STRINGS "${CPACK_FORKCHECK_SHLIBDEPS_LIST}" fc_programs)
set(fc_args)
foreach(p ${fc_programs})
  if(NOT EXISTS "${p}")
    message(FATAL_ERROR "${p} is not built: build forkcheck before packaging it")
  endif()
  list(APPEND fc_args "-e${p}")
endforeach()
# dpkg-shlibdeps reads debian/control from its working directory.
set(fc_work "${CPACK_PACKAGE_DIRECTORY}/_forkcheck_shlibdeps")
file(WRITE "${fc_work}/debian/control" "Source: forkcheck\n\nPackage: forkcheck\nArchitecture: any\n")
execute_process(COMMAND "${FC_DPKG_SHLIBDEPS}" -O ${fc_args}
                WORKING_DIRECTORY "${fc_work}"
                OUTPUT_VARIABLE fc_out ERROR_VARIABLE fc_err RESULT_VARIABLE fc_rc)
file(REMOVE_RECURSE "${fc_work}")
if(NOT fc_rc EQUAL 0 OR NOT fc_out MATCHES "shlibs:Depends=([^\n]*)")
  message(FATAL_ERROR "dpkg-shlibdeps failed (${fc_rc}): ${fc_err}")
endif()
set(CPACK_DEBIAN_FORKCHECK_PACKAGE_DEPENDS "${CPACK_FORKCHECK_DEPENDS_EXTRA}, ${CMAKE_MATCH_1}")
