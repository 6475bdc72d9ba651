# The catalog against the libtorch inside a user's torch (a pip or conda wheel), rather than the
# one installed for C++ (Debian's libtorch-dev): FORKCHECK_TORCH_FROM_PYTHON names the interpreter
# that imports it. Its torch.utils.cmake_prefix_path comes first on CMAKE_PREFIX_PATH. A torch
# whose package ships no CMake files there (Debian's python3-torch: libtorch-dev has them) may be
# built against a CMake package found elsewhere only when that package's libtorch_cpu is the very
# file the interpreter loads (Linux: read from its /proc/self/maps after `import torch`).
set(FORKCHECK_TORCH_FROM_PYTHON "" CACHE FILEPATH
    "A Python whose torch package (wheel) the torch cases are built against")

# Before find_package(Torch): where that torch's CMake package is.
macro(fc_torch_from_python_prefix)
  set(FC_TORCH_FROM_PREFIX OFF)
  if(FORKCHECK_TORCH_FROM_PYTHON)
    execute_process(
      COMMAND "${FORKCHECK_TORCH_FROM_PYTHON}" -c
              "import torch.utils; print(torch.utils.cmake_prefix_path)"
      OUTPUT_VARIABLE FC_TORCH_PREFIX ERROR_VARIABLE fc_torch_error
      RESULT_VARIABLE fc_torch_rc OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT fc_torch_rc EQUAL 0)
      string(REGEX REPLACE ".*\n([^\n]+)\n*$" "\\1" fc_torch_error "\n${fc_torch_error}")
      message(FATAL_ERROR "FORKCHECK_TORCH_FROM_PYTHON=${FORKCHECK_TORCH_FROM_PYTHON}: "
                          "`import torch.utils` failed (${fc_torch_rc}): ${fc_torch_error}")
    endif()
    if(EXISTS "${FC_TORCH_PREFIX}/Torch/TorchConfig.cmake")
      set(FC_TORCH_FROM_PREFIX ON)
      list(PREPEND CMAKE_PREFIX_PATH "${FC_TORCH_PREFIX}")
      # A Torch_DIR cached by an earlier configure would win over the prefix.
      set(Torch_DIR "${FC_TORCH_PREFIX}/Torch" CACHE PATH "Torch's CMake package" FORCE)
    else()
      message(STATUS "FORKCHECK_TORCH_FROM_PYTHON: its torch.utils.cmake_prefix_path "
                     "(${FC_TORCH_PREFIX}) holds no Torch/TorchConfig.cmake; a CMake package "
                     "found elsewhere is used only if its libtorch_cpu is the one that torch loads")
    endif()
  endif()
endmacro()

# The real path of the libtorch_cpu a found Torch package links (its torch_cpu target, or the
# TORCH_CPU_LIBRARY it found), in `out`; "" when it does not say.
function(fc_torch_package_cpu_library out)
  set(found "")
  if(TARGET torch_cpu)
    get_target_property(configs torch_cpu IMPORTED_CONFIGURATIONS)
    foreach(config IN LISTS configs ITEMS "")
      if(config)
        get_target_property(location torch_cpu IMPORTED_LOCATION_${config})
      else()
        get_target_property(location torch_cpu IMPORTED_LOCATION)
      endif()
      if(location AND EXISTS "${location}")
        set(found "${location}")
        break()
      endif()
    endforeach()
  endif()
  if(NOT found AND TORCH_CPU_LIBRARY AND EXISTS "${TORCH_CPU_LIBRARY}")
    set(found "${TORCH_CPU_LIBRARY}")
  endif()
  if(found)
    get_filename_component(found "${found}" REALPATH)
  endif()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# After find_package(Torch): the package found is that torch's, and its code can be linked with
# forkcheck's own.
macro(fc_torch_from_python_check)
  if(FORKCHECK_TORCH_FROM_PYTHON AND FC_TORCH_FROM_PREFIX)
    get_filename_component(fc_found "${Torch_DIR}" REALPATH)
    get_filename_component(fc_wanted "${FC_TORCH_PREFIX}/Torch" REALPATH)
    if(NOT fc_found STREQUAL fc_wanted)
      message(FATAL_ERROR "FORKCHECK_TORCH_FROM_PYTHON: Torch was found at ${Torch_DIR}, not in "
                          "${FC_TORCH_PREFIX}")
    endif()
    message(STATUS "The torch cases build against ${FORKCHECK_TORCH_FROM_PYTHON}'s torch: "
                   "${Torch_DIR}")
  elseif(FORKCHECK_TORCH_FROM_PYTHON)
    fc_torch_package_cpu_library(fc_package_cpu)
    execute_process(
      COMMAND "${FORKCHECK_TORCH_FROM_PYTHON}" -c
              "import os, torch\nfor l in open('/proc/self/maps'):\n    if 'libtorch_cpu' in l:\n        print(os.path.realpath(l.split()[-1])); break"
      OUTPUT_VARIABLE fc_loaded RESULT_VARIABLE fc_torch_rc ERROR_QUIET
      OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT fc_torch_rc EQUAL 0 OR NOT fc_loaded OR NOT fc_package_cpu
       OR NOT fc_loaded STREQUAL fc_package_cpu)
      if(NOT fc_loaded)
        set(fc_loaded "not known (it could not be read from the interpreter's /proc/self/maps)")
      endif()
      message(FATAL_ERROR
        "FORKCHECK_TORCH_FROM_PYTHON=${FORKCHECK_TORCH_FROM_PYTHON}: its torch ships no CMake "
        "package (${FC_TORCH_PREFIX} holds no Torch/TorchConfig.cmake), and the one found at "
        "${Torch_DIR} is another libtorch: it links ${fc_package_cpu}, while that torch loads "
        "${fc_loaded}")
    endif()
    message(STATUS "The torch cases build against ${FORKCHECK_TORCH_FROM_PYTHON}'s torch: the "
                   "CMake package at ${Torch_DIR} links the libtorch_cpu it loads, ${fc_loaded}")
  endif()
  if(TORCH_CXX_FLAGS MATCHES "_GLIBCXX_USE_CXX11_ABI=0")
    if(FORKCHECK_TORCH_ONLY)
      # The torch program alone: every unit of it is compiled here with libtorch's ABI (Boost and
      # nlohmann/json as headers only), so nothing built with the other ABI is linked in.
      separate_arguments(fc_torch_flags UNIX_COMMAND "${TORCH_CXX_FLAGS}")
      add_compile_options(${fc_torch_flags})
      message(STATUS "This libtorch has the pre-C++11 ABI: the torch program is built with it")
    else()
      message(FATAL_ERROR
        "This libtorch (${Torch_DIR}) was built with the pre-C++11 ABI "
        "(-D_GLIBCXX_USE_CXX11_ABI=0): forkcheck's torch program links it with code and Boost "
        "libraries built with the C++11 ABI, which cannot be mixed. Use a libtorch built with the "
        "C++11 ABI (its TORCH_CXX_FLAGS say -D_GLIBCXX_USE_CXX11_ABI=1), or build the torch "
        "program alone against it (FORKCHECK_PARTS=torch, as a package's forkcheck does on first "
        "use).")
    endif()
  endif()
endmacro()
