#!/usr/bin/env bash
# FORKCHECK_TORCH_FROM_PYTHON (cmake/ForkcheckTorchFromPython.cmake), configured for real:
#   1. an interpreter whose torch.utils.cmake_prefix_path holds a wheel-like Torch package (a
#      stand-in script and folder, the package being this machine's): configured, Torch_DIR
#      there and nowhere else;
#   2. each interpreter of this machine that has torch: configured with its package when its
#      prefix holds one, else (Debian's python3-torch has none there) with the package found
#      elsewhere, whose libtorch_cpu is the very file that torch loads;
#   3. an interpreter without torch: refused naming the import that failed;
#   4. an interpreter whose prefix holds no package and which loads another libtorch_cpu than
#      the package found elsewhere links: refused, naming both.
# Usage: check_torch_from_python.sh SOURCE_DIR WORK_DIR TORCH_DIR_OF_THIS_BUILD
set -euo pipefail
src=$1 work=$2 torch_dir=$3
rm -rf "$work"
mkdir -p "$work"
fail=0
configure() {  # NAME PYTHON: configures into $work/NAME, output in $work/NAME.log
  cmake -S "$src" -B "$work/$1" -DFORKCHECK_BUILD_TESTS=OFF -DFORKCHECK_TORCH_FROM_PYTHON="$2" \
    >"$work/$1.log" 2>&1
}
# CMake wraps its messages: the log's words on one line, single-spaced.
said() { tr '\n' ' ' <"$work/$1.log" | tr -s ' ' | grep -qF -- "$2"; }
cached_torch_dir() { sed -n 's/^Torch_DIR:PATH=//p' "$work/$1/CMakeCache.txt"; }

# 1. The stand-in: a wheel's layout (PREFIX/Torch/TorchConfig.cmake) whose package is this
# build's (its TorchConfig.cmake includes the real one, which finds its files from its own
# folder), and an interpreter that answers torch.utils.cmake_prefix_path with PREFIX. Torch_DIR
# must be the stand-in's, which no default search would find.
if [ ! -f "$torch_dir/TorchConfig.cmake" ]; then
  echo "FAIL: this build's Torch_DIR ($torch_dir) has no TorchConfig.cmake"
  exit 1
fi
prefix=$work/wheel/torch/share/cmake
mkdir -p "$prefix/Torch"
printf 'include("%s/TorchConfig.cmake")\n' "$torch_dir" >"$prefix/Torch/TorchConfig.cmake"
printf '#!/bin/sh\necho "%s"\n' "$prefix" >"$work/stand-in-python"
chmod +x "$work/stand-in-python"
if configure stand-in "$work/stand-in-python" &&
   [ "$(cached_torch_dir stand-in)" = "$prefix/Torch" ] &&
   said stand-in "build against $work/stand-in-python's torch"; then
  echo "ok: a Python whose torch.utils.cmake_prefix_path is $prefix: Torch_DIR $(cached_torch_dir stand-in)"
else
  echo "FAIL: the stand-in's prefix was not used"; cat "$work/stand-in.log"; fail=1
fi

# 2. The interpreters of this machine that have torch.
found=0
for py in /usr/bin/python3 $(command -v -a python3 2>/dev/null || true); do
  [ -x "$py" ] || continue
  p=$("$py" -c "import torch.utils; print(torch.utils.cmake_prefix_path)" 2>/dev/null) || continue
  found=1
  name=real-$(echo "$py" | tr '/' '_')
  if [ -f "$p/Torch/TorchConfig.cmake" ]; then
    if configure "$name" "$py" &&
       [ "$(realpath "$(cached_torch_dir "$name")")" = "$(realpath "$p/Torch")" ]; then
      echo "ok: $py's torch: configured against $p/Torch"
    else
      echo "FAIL: $py's torch ($p/Torch) was not used"; cat "$work/$name.log"; fail=1
    fi
  elif configure "$name" "$py" && said "$name" "links the libtorch_cpu it loads"; then
    echo "ok: $py's torch ships no CMake package at $p: configured with the package of the" \
      "libtorch_cpu it loads, $(cached_torch_dir "$name")"
  else
    echo "FAIL: $py's torch has no package at $p, and the package of the libtorch it loads was" \
      "not used"
    cat "$work/$name.log"; fail=1
  fi
  break
done
[ $found = 1 ] || echo "note: no interpreter with torch here: only the stand-in was configured"

# 3. An interpreter without torch.
printf '#!/bin/sh\necho "ModuleNotFoundError: No module named '"'"'torch'"'"'" >&2\nexit 1\n' \
  >"$work/no-torch-python"
chmod +x "$work/no-torch-python"
if ! configure no-torch "$work/no-torch-python" &&
   said no-torch "\`import torch.utils\` failed (1): ModuleNotFoundError: No module named 'torch'"; then
  echo "ok: a Python without torch: refused, naming the import that failed"
else
  echo "FAIL: a Python without torch was not refused as it should be"; cat "$work/no-torch.log"; fail=1
fi
# 4. A prefix without a package, and a libtorch_cpu loaded that is not the package's (the
# stand-in answers every question with the empty folder's name).
mkdir -p "$work/bare/share/cmake"
printf '#!/bin/sh\necho "%s"\n' "$work/bare/share/cmake" >"$work/bare-python"
chmod +x "$work/bare-python"
if ! configure bare "$work/bare-python" && said bare "is another libtorch"; then
  echo "ok: a torch without a CMake package, loading another libtorch: refused, naming both"
else
  echo "FAIL: a package of another libtorch was not refused"; cat "$work/bare.log"; fail=1
fi
[ $fail = 0 ] && rm -rf "$work"
exit $fail
