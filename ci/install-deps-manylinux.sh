#!/usr/bin/env bash
# What the portable build (ci/make-portable.sh) needs in a manylinux_2_28 container (AlmaLinux 8,
# glibc 2.28: what the release archive and wheel then run on), for the release workflow
# (.github/workflows/release.yml). The image has GCC (gcc-toolset), CMake and Python; AlmaLinux's
# own Boost (1.66) is older than forkcheck needs, so Boost (filesystem, static), pugixml (static),
# nlohmann/json, CLI11 and utfcpp are built from their release archives at the versions below,
# into /usr/local. Needs the network; not run by the test suite (it cannot run here).
set -euo pipefail
boost=1.83.0
pugixml=1.14
json=3.11.3
cli11=2.4.2
utfcpp=4.0.5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fetch() { curl -fsSL --retry 3 -o "$2" "$1"; }

# clang: the torch kit ships every Boost header GCC or Clang reads (cmake/ForkcheckTorchKit.cmake).
dnf install -y -q ninja-build help2man elfutils clang >/dev/null

fetch "https://archives.boost.io/release/$boost/source/boost_${boost//./_}.tar.gz" boost.tar.gz
tar -xzf boost.tar.gz
(cd "boost_${boost//./_}" && ./bootstrap.sh --with-libraries=filesystem >/dev/null &&
  ./b2 -j"$(nproc)" -d0 link=static cxxflags=-fPIC variant=release install --prefix=/usr/local)
# The licences the torch kit ships beside the headers it copies (cmake/ForkcheckTorchKit.cmake).
install -D -m 644 "boost_${boost//./_}/LICENSE_1_0.txt" /usr/local/share/licenses/boost/LICENSE_1_0.txt

cmake_install() {  # NAME URL [cmake options...]: a CMake project from its release archive
  local name=$1 url=$2
  shift 2
  fetch "$url" "$name.tar.gz"
  mkdir "$name" && tar -xzf "$name.tar.gz" -C "$name" --strip-components=1
  cmake -S "$name" -B "$name/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON "$@" >/dev/null
  cmake --build "$name/build" >/dev/null
  cmake --install "$name/build" >/dev/null
}
cmake_install pugixml "https://github.com/zeux/pugixml/archive/refs/tags/v$pugixml.tar.gz" \
  -DPUGIXML_BUILD_SHARED_AND_STATIC_LIBS=ON
cmake_install json "https://github.com/nlohmann/json/archive/refs/tags/v$json.tar.gz" \
  -DJSON_BuildTests=OFF
install -D -m 644 json/LICENSE.MIT /usr/local/share/licenses/nlohmann_json/LICENSE.MIT
cmake_install cli11 "https://github.com/CLIUtils/CLI11/archive/refs/tags/v$cli11.tar.gz" \
  -DCLI11_BUILD_TESTS=OFF -DCLI11_BUILD_EXAMPLES=OFF -DCLI11_BUILD_DOCS=OFF
cmake_install utfcpp "https://github.com/nemtrif/utfcpp/archive/refs/tags/v$utfcpp.tar.gz" \
  -DUTF8_TESTS=OFF -DUTF8_SAMPLES=OFF
echo "install-deps-manylinux: Boost $boost, pugixml $pugixml, nlohmann/json $json, CLI11 $cli11," \
  "utfcpp $utfcpp in /usr/local"
