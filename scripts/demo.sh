#!/bin/sh
# make demo: traces sample programs with `upti run` and prints their summaries:
# a vector add in OpenCL (on PoCL), the same in Vulkan (on lavapipe), and a
# program that uses both on one timeline. Usage: scripts/demo.sh BUILD_DIR
set -eu
build=${1:-build}
out=$(mktemp -d /tmp/upti-demo.XXXXXX)
trace() { # NAME PROGRAM [ARGS...]
    name=$1
    shift
    echo "demo: $build/bin/upti run --sys-trace --stats --format db,pftrace -d $out -o $name -- $*"
    "$build/bin/upti" run --sys-trace --stats --format db,pftrace -d "$out" -o "$name" -- "$@"
    echo
}
trace opencl-vadd "$build/bin/ocl_vadd"
if [ -x "$build/bin/vk_vadd" ]; then
    trace vulkan-vadd "$build/bin/vk_vadd"
    trace opencl-and-vulkan "$build/bin/vk_ocl_mixed"
else
    echo "demo: no Vulkan sample in $build/bin (built without libvulkan-dev and glslang-tools)"
fi
echo "demo: outputs in $out:"
ls -l "$out"
echo "demo: query a database with: sqlite3 $out/opencl-vadd.db 'SELECT * FROM kernels'"
echo "demo: open a .pftrace file at https://ui.perfetto.dev"
