#!/bin/sh
# make demo: traces a sample OpenCL program (vector add on PoCL) with
# `upti run` and prints its summary. Usage: scripts/demo.sh BUILD_DIR
set -eu
build=${1:-build}
out=$(mktemp -d /tmp/upti-demo.XXXXXX)
echo "demo: $build/bin/upti run --sys-trace --stats --format db,pftrace -d $out -- $build/bin/ocl_vadd"
"$build/bin/upti" run --sys-trace --stats --format db,pftrace -d "$out" -- "$build/bin/ocl_vadd"
echo
echo "demo: outputs in $out:"
ls -l "$out"
echo "demo: query the database with: sqlite3 $out/*.db 'SELECT * FROM kernels'"
echo "demo: open the .pftrace file at https://ui.perfetto.dev"
