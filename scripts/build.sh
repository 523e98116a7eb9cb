#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs what is missing (scripts/install-deps.sh) and builds UPTI with
# CMake into BUILD_DIR (default: build/ of the checkout). What apt-get and the
# build print goes to BUILD_DIR/build.log; a step that fails shows the end of
# it. Run by the README's two commands, scripts/demo.sh and scripts/test.sh.
#
#   sh scripts/build.sh [BUILD_DIR]
#
# Environment: JOBS (default nproc) compile jobs; CMAKE_FLAGS, more options
# for cmake's configure step. Everything before install-deps.sh is in a
# minbase Debian 12 (sh, coreutils).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
mkdir -p "$build"
build=$(cd "$build" && pwd)
log=$build/build.log
: >"$log"

# step WHAT COMMAND...: runs COMMAND with its output in the log.
step() {
    what=$1
    shift
    echo "== $what" >>"$log"
    if ! "$@" >>"$log" 2>&1; then
        echo "build: $what failed; the end of $log:" >&2
        tail -n 40 "$log" >&2
        exit 1
    fi
}

echo "build: installing what is missing, then building into $build (log: $log)"
step "installing the dependencies (scripts/install-deps.sh)" sh "$here/scripts/install-deps.sh"
for tool in cmake make cc python3; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "build: $tool is missing after scripts/install-deps.sh (see $log)" >&2
        exit 1
    }
done
# shellcheck disable=SC2086
step "configuring (cmake)" cmake -S "$here" -B "$build" ${CMAKE_FLAGS:-}
step "building (cmake --build)" cmake --build "$build" -j "${JOBS:-$(nproc)}"
echo "build: built"
