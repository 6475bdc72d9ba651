# FORKCHECK_PORTABLE: programs that need nothing of the machine but the C library and the kernel,
# for the release archive and the wheel (ci/make-portable.sh). libstdc++, libgcc, Boost and
# pugixml are linked in. libgomp, whose behaviour after fork the native cases show, is shipped
# beside the watch shim (lib/forkcheck) and found there through the repro program's RUNPATH, as
# the shared library programs load (a static libgomp is not what a user's program has). No
# libtorch: a portable build is FORKCHECK_PARTS=native (or harness). Linux only.
option(FORKCHECK_PORTABLE
       "Link libstdc++, Boost and pugixml statically; ship libgomp (release archive, wheel)" OFF)
set(FC_PUGIXML_TARGET pugixml::pugixml)
if(FORKCHECK_PORTABLE)
  if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
    message(FATAL_ERROR "FORKCHECK_PORTABLE is for Linux builds")
  endif()
  if(FORKCHECK_PARTS STREQUAL "all")
    message(FATAL_ERROR "FORKCHECK_PORTABLE needs FORKCHECK_PARTS=native or harness: libtorch is "
                        "not linked into a portable package")
  endif()
  set(Boost_USE_STATIC_LIBS ON)
  add_link_options(-static-libstdc++ -static-libgcc)
  set(FC_PUGIXML_TARGET pugixml::static)
endif()

# After the targets: where a portable build's repro program finds the libgomp shipped with it.
function(fc_portable_install)
  if(NOT FORKCHECK_PORTABLE OR NOT TARGET forkcheck-repro)
    return()
  endif()
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libgomp.so.1
                  OUTPUT_VARIABLE gomp OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT IS_ABSOLUTE "${gomp}" OR NOT EXISTS "${gomp}")
    message(FATAL_ERROR "FORKCHECK_PORTABLE: the compiler's libgomp.so.1 was not found (${gomp})")
  endif()
  get_filename_component(gomp "${gomp}" REALPATH)  # file(REAL_PATH) needs CMake 3.19
  install(FILES ${gomp} DESTINATION ${FORKCHECK_INSTALL_PRIVATE_LIBDIR} RENAME libgomp.so.1
          COMPONENT forkcheck)
  file(RELATIVE_PATH to_lib /p/${FORKCHECK_INSTALL_LIBEXECDIR} /p/${FORKCHECK_INSTALL_PRIVATE_LIBDIR})
  set_target_properties(forkcheck-repro PROPERTIES INSTALL_RPATH "$ORIGIN/${to_lib}")
endfunction()
