#!/usr/bin/env bash
# Installs what forkcheck needs on macOS the way its users get it, and writes where it all is for
# ci/build.sh:
#   libtorch  the CPU build from PyTorch's own pip wheel
#               pip install torch --index-url https://download.pytorch.org/whl/cpu
#             found by CMake through torch.utils.cmake_prefix_path. No C++ ABI to choose: libc++
#             has one (the pre-/cxx11 ABI question is libstdc++'s, i.e. Linux wheels').
#   OpenMP    Apple's clang has no OpenMP runtime: Homebrew's libomp gives omp.h. The wheel
#             bundles its own libomp.dylib (torch/lib), which libtorch loads; two OpenMP runtimes
#             in one process abort ("OMP: Error #15 ... already initialized") or misbehave, so
#             our OpenMP code links the very copy the wheel ships, and Homebrew's only when the
#             wheel has none. Both are LLVM's libomp, so Homebrew's omp.h fits either.
#   the rest  Homebrew: cmake, ninja, boost, nlohmann-json, cli11, googletest, pugixml, utf8cpp.
# Python: $PYTHON, else python3; use a virtual environment when yours is "externally managed".
# The CMake settings go to build-deps/macos.cmake; FORKCHECK_CMAKE_CACHE names it (in CI through
# $GITHUB_ENV; by hand, export the line this prints). Runs with macOS's bash 3.2.
set -euo pipefail
cd "$(dirname "$0")/.."

brew install --quiet cmake ninja boost nlohmann-json cli11 googletest pugixml utf8cpp libomp

python=${PYTHON:-python3}
"$python" -m pip install --quiet torch --index-url https://download.pytorch.org/whl/cpu
torch_prefix=$("$python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
torch_lib=$("$python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')

libomp=$(brew --prefix libomp)
omp_library="$libomp/lib/libomp.dylib"
if [ -f "$torch_lib/libomp.dylib" ]; then omp_library="$torch_lib/libomp.dylib"; fi

mkdir -p build-deps
cache="$PWD/build-deps/macos.cmake"
cat > "$cache" <<EOF
# Written by ci/install-deps-macos.sh; ci/build.sh reads it (cmake -C).
set(CMAKE_PREFIX_PATH "$torch_prefix;$(brew --prefix)" CACHE STRING "")
# OpenMP by hand: FindOpenMP knows no OpenMP for AppleClang on its own.
foreach(lang C CXX)
  set(OpenMP_\${lang}_FLAGS "-Xpreprocessor -fopenmp -I$libomp/include" CACHE STRING "")
  set(OpenMP_\${lang}_LIB_NAMES omp CACHE STRING "")
endforeach()
set(OpenMP_omp_LIBRARY "$omp_library" CACHE FILEPATH "")
EOF
echo "install-deps-macos: libtorch from $torch_prefix, OpenMP runtime $omp_library"
if [ -n "${GITHUB_ENV:-}" ]; then echo "FORKCHECK_CMAKE_CACHE=$cache" >> "$GITHUB_ENV"; fi
echo "export FORKCHECK_CMAKE_CACHE=$cache"
