#!/bin/sh
# SPDX-License-Identifier: MIT
# The README's test command: installs what is missing and builds
# (scripts/build.sh), then runs every test (ctest). Works from a bare Debian 12
# (debootstrap --variant=minbase) as root, or as a user with sudo.
#
#   sh scripts/test.sh [BUILD_DIR]          (default: build/ of the checkout)
#
# Environment: JOBS (default nproc) for the build and ctest; CMAKE_FLAGS.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
sh "$here/scripts/build.sh" "$build"
cd "$build"
ctest --output-on-failure -j "${JOBS:-$(nproc)}"
