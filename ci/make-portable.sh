#!/usr/bin/env bash
# The portable Linux package: forkcheck built with FORKCHECK_PORTABLE (libstdc++, libgcc, Boost
# and pugixml linked in; libgomp shipped beside the watch shim; FORKCHECK_PARTS=native, so no
# libtorch), installed into BUILD/stage and packed as DIST/forkcheck-VERSION-linux-ARCH.tar.gz,
# whose one top folder has the same name. Its programs need the C library and the kernel only;
# the glibc they need is the build machine's (the release workflow builds in a manylinux_2_28
# container: glibc 2.28 and later). ci/make-wheel.sh packs the same staging folder as a wheel.
# On macOS (FORKCHECK_PORTABLE is Linux's) the same parts are built against Homebrew's libraries
# and the OpenMP runtime ci/install-deps-macos.sh chose (FORKCHECK_CMAKE_CACHE), and delocate-path
# (pip install delocate) copies every library they load from outside the system into
# lib/forkcheck, pointing the programs at those copies: forkcheck-VERSION-macos-ARCH.tar.gz (no
# torch kit: its build is Linux's, cmake/ForkcheckTorchKit.cmake). Its minimum macOS is
# MACOSX_DEPLOYMENT_TARGET's where set (the release workflow sets its runner's).
#   ci/make-portable.sh BUILD DIST [cmake options...]
# Prints the archive's path last.
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/.." && pwd)
build=$1
dist=$2
shift 2
jobs=${FORKCHECK_JOBS:-$(nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2)}
args=()
if command -v ninja >/dev/null && [ ! -f "$build/Makefile" ]; then args+=(-G Ninja); fi
if [ -n "${FORKCHECK_CMAKE_CACHE:-}" ]; then args+=(-C "$FORKCHECK_CMAKE_CACHE"); fi
os=linux
if [ "$(uname -s)" = Darwin ]; then os=macos; else args+=(-DFORKCHECK_PORTABLE=ON); fi
cmake ${args[@]+"${args[@]}"} -S "$source_dir" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DFORKCHECK_PARTS=native -DFORKCHECK_BUILD_TESTS=OFF "$@"
cmake --build "$build" -j "$jobs"
version=$("$build/bin/forkcheck" --version)
name=forkcheck-$version-$os-$(uname -m)
rm -rf "$build/stage"
cmake --install "$build" --prefix "$build/stage/$name" --component forkcheck
mkdir -p "$dist"
if [ "$os" = macos ]; then
  delocate-path -L lib/forkcheck "$build/stage/$name"
  # bsdtar: no AppleDouble ._* entries for extended attributes.
  tar -C "$build/stage" --uid 0 --gid 0 --numeric-owner --no-mac-metadata \
    -czf "$dist/$name.tar.gz" "$name"
else
  tar -C "$build/stage" --owner=0 --group=0 --numeric-owner -czf "$dist/$name.tar.gz" "$name"
fi
echo "$dist/$name.tar.gz"
