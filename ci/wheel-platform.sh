#!/usr/bin/env bash
# The platform tag of forkcheck's wheel, from what the programs in STAGE need of the system:
#   Linux  manylinux_2_X_ARCH, X the newest glibc symbol version any ELF file needs (objdump -T)
#   macOS  macosx_X_Y_ARCH, X.Y the newest minimum macOS any Mach-O file was built for (otool -l:
#          LC_BUILD_VERSION's minos, or LC_VERSION_MIN_MACOSX's version). From macOS 11 on, pip
#          installs only tags whose minor is 0 (packaging's mac_platforms), so 14.2 is macosx_14_0.
#   ci/wheel-platform.sh STAGE
set -euo pipefail
stage=$1
arch=$(uname -m)
case $(uname -s) in
  Linux)
    glibc=$(find "$stage" -type f \( -perm -u+x -o -name '*.so*' \) -exec objdump -T {} + 2>/dev/null |
      grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2 -n -u | tail -1 || true)
    [ -n "$glibc" ] || { echo "wheel-platform: no glibc version found in $stage" >&2; exit 1; }
    echo "manylinux_2_${glibc#GLIBC_2.}_$arch"
    ;;
  Darwin)
    # otool prints the load commands of a Mach-O file and fails on any other.
    newest=$(find "$stage" -type f \( -perm -u+x -o -name '*.dylib' -o -name '*.so' \) -print |
      while IFS= read -r f; do otool -l "$f" 2>/dev/null || true; done |
      awk '$1 == "cmd" { cmd = $2 }
           (cmd == "LC_BUILD_VERSION" && $1 == "minos") ||
           (cmd == "LC_VERSION_MIN_MACOSX" && $1 == "version") { print $2 }' |
      sort -t. -k1,1n -k2,2n | tail -1)
    [ -n "$newest" ] || { echo "wheel-platform: no Mach-O file with a minimum macOS in $stage" >&2; exit 1; }
    major=${newest%%.*}
    minor=0
    if [ "$major" -lt 11 ]; then
      minor=${newest#*.}
      minor=${minor%%.*}
    fi
    echo "macosx_${major}_${minor}_$arch"
    ;;
  *)
    echo "wheel-platform: no wheel for $(uname -s)" >&2
    exit 1
    ;;
esac
