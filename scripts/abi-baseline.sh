#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerates the ABI baselines under abi/ (abidw dumps, Debian's
# abigail-tools), the ones the abi.abidiff.* tests compare every build with:
#
#   sh scripts/abi-baseline.sh
#
# Run it only when a release changes the interface on purpose: after adding
# a version node for the symbols it adds (src/program/*/lib*.map) and the version in
# include/upti/defines.h, or when an incompatible change comes with a new
# major version. Commit abi/ with that change; review shows its diff.
#
# Reproducible: the libraries are built in a scratch tree with the default
# build type (RelWithDebInfo) and no tests, and dumped by scripts/abi-dump.sh
# (no paths, types named by a hash of what they are): the same sources give
# the same files. The scratch tree is then installed, and
# tests/abi/check_installed.py writes the exports of every installed library
# (abi/<lib>.exports: soname, version nodes, symbols) and the layouts and
# values of every installed header (abi/headers.layout), the ones
# abi.installed compares every build's installation with.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
command -v abidw >/dev/null || { echo "abi-baseline: abidw missing (sh scripts/install-deps.sh)" >&2; exit 1; }
BUILD=$(mktemp -d "${TMPDIR:-/tmp}/upti-abi.XXXXXX")
trap 'rm -rf "$BUILD"' EXIT
# GCC, the compiler the abi.abidiff.* tests run with (clang's debug
# information leaves out types no exported function reaches).
CC=${ABI_CC:-gcc} cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF \
    -DUPTI_SANITIZE= >/dev/null
cmake --build "$BUILD" -j "${JOBS:-2}" >/dev/null
mkdir -p abi
# Every installed library: those the build has (the layers need OpenCL and
# Vulkan headers; a machine without them cannot make their baselines).
for lib in libupti libuptx libupti-register libupti-trace libupti-opencl libupti-vulkan libupti-nvtx; do
    [ -e "$BUILD/lib/$lib.so" ] || { echo "abi-baseline: $lib not built here: abi/$lib.abi kept" >&2; continue; }
    # The file the SONAME names (libupti.so.1): the one programs load.
    so=$(readlink -f "$BUILD/lib/$lib.so")
    sh scripts/abi-dump.sh "$so" "$ROOT/include" "abi/$lib.abi"
    echo "abi-baseline: abi/$lib.abi"
done
python3 tests/abi/check_installed.py write cmake "$BUILD" "$ROOT" "${ABI_CC:-gcc}" "$BUILD/installed"
