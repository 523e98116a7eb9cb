#!/bin/sh
# SPDX-License-Identifier: MIT
# The README's demo command: installs what is missing and builds
# (scripts/build.sh), then traces sample programs with `upti run`: a vector
# add in OpenCL (on PoCL), the same in Vulkan (on lavapipe), and a program
# that uses both on one timeline. It prints what it traced, where the traces
# are and the last one's summary; the programs' and upti's own output go to
# demo.log beside the traces.
#
#   sh scripts/demo.sh [BUILD_DIR]          (default: build/ of the checkout)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
sh "$here/scripts/build.sh" "$build"
upti=$build/bin/upti
out=$(mktemp -d "${TMPDIR:-/tmp}/upti-demo.XXXXXX")
log=$out/demo.log
last=""

# trace NAME WHAT PROGRAM [ARGS...]: NAME.db and NAME.pftrace in $out.
trace() {
    name=$1 what=$2
    shift 2
    echo "\$ $upti run --sys-trace --format db,pftrace -d $out -o $name -- $*" >>"$log"
    if ! "$upti" run --sys-trace --format db,pftrace -d "$out" -o "$name" -- "$@" >>"$log" 2>&1; then
        echo "demo: tracing $1 failed; the end of $log:" >&2
        tail -n 20 "$log" >&2
        exit 1
    fi
    echo "demo: traced $(basename "$1"): $what"
    last=$name
}

trace opencl-vadd "a vector add in OpenCL, on PoCL" "$build/bin/ocl_vadd"
if [ -x "$build/bin/vk_vadd" ]; then
    trace vulkan-vadd "the same in Vulkan, on lavapipe" "$build/bin/vk_vadd"
    trace opencl-and-vulkan "OpenCL and Vulkan kernels on one timeline" "$build/bin/vk_ocl_mixed"
else
    echo "demo: no Vulkan sample in $build/bin (built without libvulkan-dev and glslang-tools)"
fi
echo "demo: traces in $out (a .db and a .pftrace per program; their output in demo.log)"
echo "demo: summary of $last.db (upti stats $out/$last.db):"
"$upti" stats "$out/$last.db" --report kern_sum,mem_time_sum,api_sum --top 5 --unit us
echo "demo: open a .pftrace at https://ui.perfetto.dev, or query a .db: sqlite3 $out/$last.db 'SELECT * FROM kernels'"
