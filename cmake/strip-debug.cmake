# CPack pre-build script (ForkcheckPackage.cmake): removes the debug sections of every ELF file
# and static library staged for a package, keeping symbol tables (function names in
# forkcheck's stacks; a static library must keep them to be linked).
file(GLOB_RECURSE staged LIST_DIRECTORIES false "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*")
foreach(f ${staged})
  if(IS_SYMLINK "${f}")
    continue()
  endif()
  file(READ "${f}" magic LIMIT 4 HEX)
  if(magic STREQUAL "7f454c46" OR magic STREQUAL "213c6172")  # \x7fELF, !<arch>
    execute_process(COMMAND "${CPACK_FORKCHECK_OBJCOPY}" --strip-debug "${f}"
                    RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "objcopy --strip-debug ${f} failed")
    endif()
  endif()
endforeach()
