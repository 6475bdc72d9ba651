# Installs what forkcheck needs on Windows the way its users get it, and writes where it all is for
# ci/build.sh (run that from Git Bash, in a Visual Studio developer environment: cl on PATH):
#   libtorch  the CPU build from PyTorch's own pip wheel
#               pip install torch --index-url https://download.pytorch.org/whl/cpu
#             found by CMake through torch.utils.cmake_prefix_path. No C++ ABI to choose on
#             Windows; the wheel is built with MSVC against the release runtime (/MD), so build
#             forkcheck Release or RelWithDebInfo, never Debug. Its DLLs (torch/lib) must be on
#             PATH when the programs run.
#   OpenMP    MSVC's own (/openmp, vcomp140.dll), which find_package(OpenMP) finds. The wheel's
#             libtorch brings Intel's (libiomp5md.dll); the two never meet in one process, since
#             the native repro program links MSVC's and the torch one links libtorch alone.
#   the rest  vcpkg: the runner's ($env:VCPKG_INSTALLATION_ROOT; else $env:VCPKG_ROOT) and its
#             toolchain file: boost-process, boost-filesystem, nlohmann-json, cli11, gtest,
#             pugixml, utfcpp, for the x64-windows triplet.
# The CMake settings go to build-deps\windows.cmake; FORKCHECK_CMAKE_CACHE names it. In CI this
# script sets that in $env:GITHUB_ENV and puts the DLL directories on $env:GITHUB_PATH; by hand,
# set the two things it prints.
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version Latest

$root = Split-Path -Parent $PSScriptRoot
$triplet = 'x64-windows'
$vcpkgRoot = $env:VCPKG_INSTALLATION_ROOT
if (-not $vcpkgRoot) { $vcpkgRoot = $env:VCPKG_ROOT }
if (-not $vcpkgRoot) { throw 'install-deps-windows: set VCPKG_ROOT to your vcpkg checkout' }

# vcpkg's binary cache, when the workflow restores one (actions/cache).
if ($env:VCPKG_DEFAULT_BINARY_CACHE) { New-Item -ItemType Directory -Force $env:VCPKG_DEFAULT_BINARY_CACHE | Out-Null }
& (Join-Path $vcpkgRoot 'vcpkg.exe') install --triplet $triplet `
    boost-process boost-filesystem nlohmann-json cli11 gtest pugixml utfcpp
if ($LASTEXITCODE -ne 0) { throw "vcpkg install failed ($LASTEXITCODE)" }

$python = if ($env:PYTHON) { $env:PYTHON } else { 'python' }
& $python -m pip install --quiet torch --index-url https://download.pytorch.org/whl/cpu
if ($LASTEXITCODE -ne 0) { throw "pip install torch failed ($LASTEXITCODE)" }
$torchPrefix = & $python -c 'import torch.utils; print(torch.utils.cmake_prefix_path)'
# No double quotes inside: PowerShell before 7.3 drops them when it calls a program.
$torchLib = & $python -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), ''lib''))'
$vcpkgBin = Join-Path $vcpkgRoot "installed\$triplet\bin"

function ForCMake([string]$path) { return $path -replace '\\', '/' }
$deps = Join-Path $root 'build-deps'
New-Item -ItemType Directory -Force $deps | Out-Null
$cache = Join-Path $deps 'windows.cmake'
@"
# Written by ci/install-deps-windows.ps1; ci/build.sh reads it (cmake -C).
set(CMAKE_TOOLCHAIN_FILE "$(ForCMake "$vcpkgRoot\scripts\buildsystems\vcpkg.cmake")" CACHE FILEPATH "")
set(VCPKG_TARGET_TRIPLET "$triplet" CACHE STRING "")
set(CMAKE_PREFIX_PATH "$(ForCMake $torchPrefix)" CACHE STRING "")
# MSVC, not one of the GCCs a Windows machine may have on PATH (Git's, Strawberry Perl's).
set(CMAKE_C_COMPILER cl CACHE STRING "")
set(CMAKE_CXX_COMPILER cl CACHE STRING "")
"@ | Set-Content -Encoding ascii $cache

Write-Host "install-deps-windows: libtorch from $torchPrefix"
if ($env:GITHUB_ENV) { "FORKCHECK_CMAKE_CACHE=$cache" | Out-File -Append -Encoding utf8 $env:GITHUB_ENV }
if ($env:GITHUB_PATH) {
  $torchLib | Out-File -Append -Encoding utf8 $env:GITHUB_PATH
  $vcpkgBin | Out-File -Append -Encoding utf8 $env:GITHUB_PATH
}
Write-Host "FORKCHECK_CMAKE_CACHE=$cache"
Write-Host "PATH must include: $torchLib;$vcpkgBin"
