#!/usr/bin/env bash
# Fetches and unpacks the Debian source package of an installed binary package, at the installed
# version, from the archive this machine's apt already uses: its sources, read as deb-src, with
# lists and cache of our own (no root, nothing of the system's apt state touched). apt checks the
# files against the archive's signed Sources index.
#
# Needs apt-get and dpkg-source (dpkg-dev), and the archive reachable unless DEST_DIR has it.
# Usage: ci/fetch-debian-source.sh BINARY_PACKAGE DEST_DIR
# Prints the unpacked source directory. Reuses an earlier unpacking of the same version in DEST_DIR.
set -euo pipefail
package=$1
dest=$2
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)

fields=$(dpkg-query -W -f='${source:Package} ${source:Version}' "$package" 2>/dev/null) ||
  { echo "fetch-debian-source: $package is not installed" >&2; exit 1; }
read -r src version <<<"$fields"
upstream=${version#*:}
upstream=${upstream%-*}
dir="$dest/$src-$upstream"

# One fetch at a time into DEST (two checks may share it): the second waits, then reuses.
exec 9>"$dest/.lock"
flock 9
if [ -f "$dir/.fetched-$version" ]; then
  echo "$dir"
  exit 0
fi

apt_dir="$dest/apt"
rm -rf "$apt_dir" "$dir"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/sources"
# The system's sources as deb-src: deb822 files (Types: deb) and one-line lists (deb URI ...).
shopt -s nullglob
for f in /etc/apt/sources.list.d/*.sources; do
  sed -E 's/^Types:.*/Types: deb-src/' "$f" >"$apt_dir/sources/$(basename "$f")"
done
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
  [ -f "$f" ] && sed -nE 's/^deb[[:space:]]+/deb-src /p' "$f" >"$apt_dir/sources/$(basename "$f")"
done
apt_options=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt_dir/sources"
             -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
             -o "Debug::NoLocking=1" -o "APT::Sandbox::User=$(id -un)" -q)
# Some configured archives may carry no sources (a vendor's binary-only repository): what counts
# is whether the package's source is found below.
apt-get "${apt_options[@]}" update >"$apt_dir/update.log" 2>&1 || true
if ! (cd "$dest" && apt-get "${apt_options[@]}" source --download-only "$src=$version") \
       >"$apt_dir/source.log" 2>&1; then
  echo "fetch-debian-source: could not fetch the source of $src $version:" >&2
  tail -n 5 "$apt_dir/update.log" "$apt_dir/source.log" >&2
  exit 1
fi
(cd "$dest" && dpkg-source --no-check -x "${src}_${version#*:}.dsc" "$dir") >"$apt_dir/unpack.log" 2>&1 ||
  { echo "fetch-debian-source: could not unpack $src $version" >&2; cat "$apt_dir/unpack.log" >&2; exit 1; }
touch "$dir/.fetched-$version"
echo "$dir"
