# The catalog against the libtorch inside a user's torch (a pip or conda wheel), rather than the
# one installed for C++ (Debian's libtorch-dev): FORKCHECK_TORCH_FROM_PYTHON names the interpreter
# that imports it. Its torch.utils.cmake_prefix_path comes first on CMAKE_PREFIX_PATH, and
# configuring fails, saying why, unless find_package(Torch) finds the package there.
set(FORKCHECK_TORCH_FROM_PYTHON "" CACHE FILEPATH
    "A Python whose torch package (wheel) the torch cases are built against")

# Before find_package(Torch): where that torch's CMake package is.
macro(fc_torch_from_python_prefix)
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
    if(NOT EXISTS "${FC_TORCH_PREFIX}/Torch/TorchConfig.cmake")
      message(FATAL_ERROR
        "FORKCHECK_TORCH_FROM_PYTHON=${FORKCHECK_TORCH_FROM_PYTHON}: its "
        "torch.utils.cmake_prefix_path (${FC_TORCH_PREFIX}) holds no Torch/TorchConfig.cmake: "
        "that torch ships no CMake package (Debian's python3-torch has its package in "
        "libtorch-dev, found without this option)")
    endif()
    list(PREPEND CMAKE_PREFIX_PATH "${FC_TORCH_PREFIX}")
    # A Torch_DIR cached by an earlier configure would win over the prefix.
    set(Torch_DIR "${FC_TORCH_PREFIX}/Torch" CACHE PATH "Torch's CMake package" FORCE)
  endif()
endmacro()

# After find_package(Torch): the package found is that torch's, and its code can be linked with
# forkcheck's own (the torch program also links Boost, built with the C++11 ABI).
macro(fc_torch_from_python_check)
  if(FORKCHECK_TORCH_FROM_PYTHON)
    get_filename_component(fc_found "${Torch_DIR}" REALPATH)
    get_filename_component(fc_wanted "${FC_TORCH_PREFIX}/Torch" REALPATH)
    if(NOT fc_found STREQUAL fc_wanted)
      message(FATAL_ERROR "FORKCHECK_TORCH_FROM_PYTHON: Torch was found at ${Torch_DIR}, not in "
                          "${FC_TORCH_PREFIX}")
    endif()
    message(STATUS "The torch cases build against ${FORKCHECK_TORCH_FROM_PYTHON}'s torch: "
                   "${Torch_DIR}")
  endif()
  if(TORCH_CXX_FLAGS MATCHES "_GLIBCXX_USE_CXX11_ABI=0")
    message(FATAL_ERROR
      "This libtorch (${Torch_DIR}) was built with the pre-C++11 ABI "
      "(-D_GLIBCXX_USE_CXX11_ABI=0): forkcheck's torch program links it with code and Boost "
      "libraries built with the C++11 ABI, which cannot be mixed. Use a libtorch built with the "
      "C++11 ABI (its TORCH_CXX_FLAGS say -D_GLIBCXX_USE_CXX11_ABI=1).")
  endif()
endmacro()
