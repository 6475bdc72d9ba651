# fc_torch_load_order(<target>): names libtorch's costliest dependencies first in <target>'s
# DT_NEEDED, so that each torch process (the zygote, every spawn worker, every forkserver) starts
# faster: Debian's libtorch binds ~290 libraries at start-up and most lookups walk far along the
# scope (cmake/torch-load-order.sh says why and how). Linux only. The list is worked out at
# configure time from a probe program, used only if torch-load-order.sh check finds that no strong
# symbol would bind differently, and cached until libtorch or the script changes.
# Global properties for the test that checks the built program: FC_TORCH_LOAD_PROBE (the plain
# probe) and FC_TORCH_LOAD_ORDER_USED (whether <target> names libraries first).
option(FORKCHECK_TORCH_LOAD_ORDER "Name libtorch's costliest dependencies first (Linux)" ON)

function(fc_torch_load_order target)
  set_property(GLOBAL PROPERTY FC_TORCH_LOAD_PROBE "")
  set_property(GLOBAL PROPERTY FC_TORCH_LOAD_ORDER_USED OFF)
  if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux" OR CMAKE_CROSSCOMPILING OR NOT FORKCHECK_TORCH_LOAD_ORDER)
    return()
  endif()
  find_program(FC_BASH bash)
  find_program(FC_NM nm)
  if(NOT FC_BASH OR NOT FC_NM)
    message(STATUS "torch load order: not worked out (needs bash and nm)")
    return()
  endif()

  set(script ${PROJECT_SOURCE_DIR}/cmake/torch-load-order.sh)
  set(dir ${CMAKE_BINARY_DIR}/torch-load-order)
  set(probe ${dir}/probe-plain)
  file(SHA256 ${script} script_hash)
  set(key "${script_hash};${TORCH_LIBRARIES}")
  foreach(lib IN LISTS TORCH_LIBRARIES)
    if(TARGET ${lib})
      get_target_property(location ${lib} IMPORTED_LOCATION)
      if(location)
        file(TIMESTAMP ${location} stamp)
        list(APPEND key "${location}@${stamp}")
      endif()
    endif()
  endforeach()

  if(NOT "${key}" STREQUAL "${FC_TORCH_LOAD_ORDER_KEY}" OR NOT EXISTS ${probe})
    file(MAKE_DIRECTORY ${dir})
    file(WRITE ${dir}/probe.cc "int main() { return 0; }\n")
    try_compile(plain_ok ${dir}/plain SOURCES ${dir}/probe.cc LINK_LIBRARIES ${TORCH_LIBRARIES}
                OUTPUT_VARIABLE log COPY_FILE ${probe})
    set(order "")
    set(why "")
    if(NOT plain_ok)
      set(why "the probe linked with libtorch did not build")
    else()
      execute_process(COMMAND ${FC_BASH} ${script} order ${probe} RESULT_VARIABLE rc
                      OUTPUT_VARIABLE order ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
      string(REPLACE "\n" ";" order "${order}")
      if(NOT rc EQUAL 0 OR NOT order)
        set(why "torch-load-order.sh order failed: ${err}")
        set(order "")
      endif()
    endif()
    if(order)
      try_compile(hoist_ok ${dir}/hoist SOURCES ${dir}/probe.cc
                  LINK_OPTIONS -Wl,--no-as-needed ${order} -Wl,--as-needed
                  LINK_LIBRARIES ${TORCH_LIBRARIES} OUTPUT_VARIABLE log COPY_FILE ${dir}/probe-hoist)
      if(NOT hoist_ok)
        set(why "the probe with the libraries named first did not build")
        set(order "")
      else()
        execute_process(COMMAND ${FC_BASH} ${script} check ${probe} ${dir}/probe-hoist
                        RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                        OUTPUT_STRIP_TRAILING_WHITESPACE)
        if(NOT rc EQUAL 0)
          set(why "it would bind strong symbols differently: ${err}")
          set(order "")
        else()
          set(why "${out}")
        endif()
      endif()
    endif()
    set(FC_TORCH_LOAD_ORDER "${order}" CACHE INTERNAL "libraries named first in ${target}")
    set(FC_TORCH_LOAD_ORDER_WHY "${why}" CACHE INTERNAL "why (not)")
    set(FC_TORCH_LOAD_ORDER_KEY "${key}" CACHE INTERNAL "what the list was worked out for")
  endif()

  if(FC_TORCH_LOAD_ORDER)
    list(LENGTH FC_TORCH_LOAD_ORDER n)
    message(STATUS "torch load order: ${n} libraries named first in ${target} (${FC_TORCH_LOAD_ORDER_WHY})")
    # Link options come before the objects and libraries on the link line, so these NEEDED
    # entries come first.
    target_link_options(${target} PRIVATE -Wl,--no-as-needed ${FC_TORCH_LOAD_ORDER} -Wl,--as-needed)
    set_property(GLOBAL PROPERTY FC_TORCH_LOAD_ORDER_USED ON)
  else()
    message(STATUS "torch load order: unchanged (${FC_TORCH_LOAD_ORDER_WHY})")
  endif()
  if(EXISTS ${probe})
    set_property(GLOBAL PROPERTY FC_TORCH_LOAD_PROBE ${probe})
  endif()
endfunction()
