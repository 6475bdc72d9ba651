# fc_torch_load_order(<target> <objects>): builds <target> from the object library <objects>
# twice: <target>-plain, linked as usual, and <target>, which names libtorch's costliest
# dependencies first in its DT_NEEDED so that each torch process (the zygote, every spawn worker,
# every forkserver) starts faster. Debian's libtorch binds ~290 libraries at start-up and most
# lookups walk far along the scope; cmake/torch-load-order.sh says why and how. The list is worked
# out at build time from <target>-plain, the program itself, so contests between strong
# definitions keep the order they have there; the test repros.torch_load_order compares the two.
# Linux only; elsewhere <target> is linked as usual and there is no <target>-plain.
option(FORKCHECK_TORCH_LOAD_ORDER "Name libtorch's costliest dependencies first (Linux)" ON)

function(fc_torch_load_order target objects)
  add_executable(${target})
  target_link_libraries(${target} PRIVATE ${objects})
  set_property(GLOBAL PROPERTY FC_TORCH_LOAD_ORDER_PLAIN "")
  if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux" OR CMAKE_CROSSCOMPILING OR NOT FORKCHECK_TORCH_LOAD_ORDER)
    return()
  endif()
  find_program(FC_BASH bash)
  find_program(FC_NM nm)
  if(NOT FC_BASH OR NOT FC_NM)
    message(STATUS "torch load order: ${target} linked as usual (needs bash and nm)")
    return()
  endif()

  add_executable(${target}-plain)
  target_link_libraries(${target}-plain PRIVATE ${objects})
  set(script ${PROJECT_SOURCE_DIR}/cmake/torch-load-order.sh)
  set(options ${CMAKE_CURRENT_BINARY_DIR}/${target}-load-order.ld)
  add_custom_command(
    OUTPUT ${options}
    COMMAND ${CMAKE_COMMAND} -E env NM=${FC_NM}
            ${FC_BASH} ${script} ld-options $<TARGET_FILE:${target}-plain> ${options}
    DEPENDS ${target}-plain ${script}
    COMMENT "Working out which libraries ${target} names first"
    VERBATIM)
  add_custom_target(${target}-load-order DEPENDS ${options})
  add_dependencies(${target} ${target}-load-order)
  # ld reads the options from the file; link options come before the objects and libraries on the
  # link line, so these NEEDED entries come first.
  # -Wl, spelled out: CMake's LINKER: becomes -Xlinker for Clang, whose driver then reads the
  # @file itself and refuses the linker options in it.
  target_link_options(${target} PRIVATE "-Wl,@${options}")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${options})
  set_property(GLOBAL PROPERTY FC_TORCH_LOAD_ORDER_PLAIN ${target}-plain)
endfunction()
